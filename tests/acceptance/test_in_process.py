"""The in-process runs the tests rely on (``invoke_cli``) say what a real process says.

Most acceptance tests run the CLI in the test process, for speed; each command runs here once
more as a real ``python -m dflash_check`` process, and the two must agree byte for byte on
stdout, stderr and the exit code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import QWEN3_4B, QWEN35_4B, REPO, SEED_DRAFT, invoke_cli, run_cli
from tests.support.hubserver import serve

COMMANDS = {
    "pair": ("pair", str(SEED_DRAFT), str(QWEN35_4B), "--verbose"),
    "pair-json": ("pair", str(SEED_DRAFT), str(QWEN35_4B), "-f", "json"),
    "registry": ("registry", "tests/fixtures/registry/pairs.yaml", "-f", "junit", "-j", "1"),
    "rules": ("rules",),
    "explain": ("explain", "DF004"),
    "runtimes": ("runtimes",),
    "formats": ("formats",),
    "usage-error": ("pair", str(SEED_DRAFT), str(QWEN35_4B), "-r", "no-such-runtime"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_in_process_run_equals_a_real_process(name: str) -> None:
    args = COMMANDS[name]
    real = run_cli(*args, cwd=REPO)
    ours = invoke_cli(*args, cwd=REPO)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    assert real.stdout or real.stderr  # something was said


@pytest.mark.parametrize("target", ["Qwen/Qwen3-4B", "Qwen/Qwen3.5-4B", "nobody/nothing"])
def test_in_process_hub_run_equals_a_real_process(tmp_path: Path, target: str) -> None:
    """Against the loopback Hub, each from an empty HF_HOME: the same report (commits and
    bytes fetched included) or the same error; then the same answer offline from that cache."""
    with serve() as hub:
        hub.add("z-lab/Qwen3-4B-DFlash-b16", SEED_DRAFT)
        hub.add("Qwen/Qwen3-4B", QWEN3_4B)
        hub.add("Qwen/Qwen3.5-4B", QWEN35_4B)
        args = ("pair", "z-lab/Qwen3-4B-DFlash-b16", target, "-f", "json")
        for extra in ((), ("--offline",)):
            real = run_cli(*args, *extra, env=hub.env(tmp_path / "real"))
            ours = invoke_cli(*args, *extra, env=hub.env(tmp_path / "ours"))
            assert (ours.returncode, ours.stdout, ours.stderr) == (
                real.returncode,
                real.stdout,
                real.stderr,
            )
    # The in-process run cached into its own HF_HOME, as the process did into its one.
    for home in ("real", "ours"):
        assert list((tmp_path / home / "hub").glob("models--z-lab--*/snapshots/*/config.json"))
