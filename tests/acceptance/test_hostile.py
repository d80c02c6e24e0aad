"""Hostile and careless input: poisoned caches, escaping names, hangs, huge bodies.

Every case ends quickly with one clear line (or the clean-cache verdict), writes nothing
outside HF_HOME, and reads nothing outside the given folder, the HF cache and the Hub.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dflash_check.sources.safetensors_header import encode_header
from tests.support.helpers import (
    QWEN3_4B,
    SEED_DRAFT,
    fc_tensors,
    invoke_cli,
    run_cli,
    seed_draft_config,
)
from tests.support.hubserver import LoopbackHub, commit_of, read_folder, serve

DRAFT = "z-lab/Qwen3-4B-DFlash-b16"
TARGET = "Qwen/Qwen3-4B"
BAD_FC = "org/bad-fc-DFlash"


def bad_fc_draft() -> dict[str, bytes]:
    """The seed draft with an fc.weight one target layer too narrow (DF005 on a clean run)."""
    cfg = seed_draft_config()
    return {
        "config.json": json.dumps(cfg).encode(),
        "model.safetensors": encode_header(fc_tensors(cfg, fc_in=4 * 2560)),
    }


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """A loopback Hub with the seed pair and a draft whose fc width is wrong."""
    with serve() as server:
        server.add(DRAFT, SEED_DRAFT)
        server.add(TARGET, QWEN3_4B)
        server.add(BAD_FC, bad_fc_draft())
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HF_HOME."""
    return tmp_path / "hf_home"


def cli(hub: LoopbackHub, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process against the loopback Hub (huggingface_hub pointed at it and
    at ``home`` as a new process would be); memory and blocking on FIFOs are measured on a
    real process below."""
    return invoke_cli(*args, env={**hub.env(home), **env})


def error_line(proc: subprocess.CompletedProcess[str], code: int = 3) -> str:
    """Assert the exit code, one 'Error:' line, no traceback, no catch-all; return the line."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "unexpected" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def plain(text: str) -> str:
    """Return typer's boxed usage error as one line of words."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def verdict(proc: subprocess.CompletedProcess[str]) -> tuple[int, list[str]]:
    """Return the exit code and the rule ids of a JSON report."""
    rules = sorted(f["rule"] for f in json.loads(proc.stdout)["findings"]) if proc.stdout else []
    return proc.returncode, rules


# -- 1. what a run stores cannot stand in for another role's facts ------------------------


def test_swapped_run_does_not_poison_the_cache(hub: LoopbackHub, home: Path) -> None:
    """After `pair TARGET DRAFT`, `pair DRAFT TARGET` gets the clean-cache verdict: online,
    pinned, offline and in JSON alike."""
    clean = cli(hub, home.parent / "clean", "pair", BAD_FC, TARGET, "-f", "json")
    assert clean.returncode == 1 and "DF005" in verdict(clean)[1]
    swapped = cli(hub, home, "pair", TARGET, BAD_FC)
    assert "not a DFlash draft" in error_line(swapped)
    commit = commit_of(bad_fc_draft())
    runs = [
        cli(hub, home, "pair", BAD_FC, TARGET, "-f", "json"),
        cli(hub, home, "pair", f"{BAD_FC}@{commit}", TARGET, "-f", "json"),
        cli(hub, home, "pair", BAD_FC, TARGET, "-f", "json", "--offline"),
        cli(hub, home, "pair", BAD_FC, TARGET, "-f", "json", HF_HUB_OFFLINE="1"),
    ]
    for proc in runs:
        assert verdict(proc) == verdict(clean), proc.stderr
    assert cli(hub, home, "pair", BAD_FC, TARGET).returncode == 1


def test_swapped_run_offline_first_lists_the_fc_width_as_not_checked(
    hub: LoopbackHub, home: Path
) -> None:
    """Offline after only a swapped run: the draft's header was never read, so the run gets
    what a folder without safetensors gets (DF005 not checked, the DF010 warning; --strict
    fails it), never facts the swapped run stored for the target role."""
    cli(hub, home, "pair", TARGET, BAD_FC)
    # the swapped run read the draft as a target: its config is cached, its header is not
    proc = cli(hub, home, "pair", BAD_FC, TARGET, "--offline", "-f", "json")
    assert verdict(proc) == (0, ["DF010"]), proc.stderr
    (not_checked,) = json.loads(proc.stdout)["not_checked"]
    assert not_checked["rule"] == "DF005" and "offline cache" in not_checked["reason"]
    assert cli(hub, home, "pair", BAD_FC, TARGET, "--offline", "--strict").returncode == 1


def test_manifest_of_another_repo_or_config_is_ignored(hub: LoopbackHub, home: Path) -> None:
    """A manifest copied from another repo, edited, truncated or of the wrong shape is
    rebuilt, never trusted."""
    assert cli(hub, home, "pair", DRAFT, TARGET).returncode == 0
    good = next((home / "dflash-check").glob("models--z-lab--*/*.json"))
    assert cli(hub, home, "pair", BAD_FC, TARGET).returncode == 1
    bad = next((home / "dflash-check").glob("models--org--bad-fc-DFlash/*.json"))
    original = bad.read_text()
    forged = json.loads(good.read_text())
    for text in (
        good.read_text(),  # another repo's facts
        json.dumps({**forged, "repo_id": BAD_FC, "commit": bad.stem}),  # other config hash
        original[: len(original) // 2],  # truncated
        json.dumps({**json.loads(original), "weights": {"file": 3}}),  # wrong types
        json.dumps([1, 2]),
    ):
        bad.write_text(text)
        for extra in ((), ("--offline",)):
            proc = cli(hub, home, "pair", BAD_FC, TARGET, "-f", "json", *extra)
            assert proc.returncode in (0, 1, 3), proc.stderr
            if proc.returncode == 1:
                assert "DF005" in verdict(proc)[1]
            elif proc.returncode == 0:
                # offline, the manifest rejected: the config alone, the fc width not checked
                assert extra and verdict(proc)[1] == ["DF010"], proc.stdout
                not_checked = json.loads(proc.stdout)["not_checked"]
                assert [n["rule"] for n in not_checked] == ["DF005"]
            else:  # offline with no usable config: a cache miss, never a verdict
                assert "not in the cache" in error_line(proc)


def test_truncated_cached_config_is_fetched_again(hub: LoopbackHub, home: Path) -> None:
    """A config.json cut short in the HF cache heals online; offline it is named."""
    assert cli(hub, home, "pair", DRAFT, TARGET).returncode == 0
    (blob,) = [
        p
        for p in (home / "hub" / "models--Qwen--Qwen3-4B" / "blobs").iterdir()
        if p.is_file() and b"num_hidden_layers" in p.read_bytes()
    ]
    blob.write_bytes(blob.read_bytes()[:50])
    line = error_line(cli(hub, home, "pair", DRAFT, TARGET, "--offline"))
    assert "config.json: malformed JSON" in line
    assert cli(hub, home, "pair", DRAFT, TARGET).returncode == 0
    assert cli(hub, home, "pair", DRAFT, TARGET, "--offline").returncode == 0


# -- names that become paths or URLs --------------------------------------------------------


def test_sharded_index_cannot_point_at_another_repo(hub: LoopbackHub, home: Path) -> None:
    """A shard name climbing out of the repo is refused on the Hub as it is locally."""
    cfg = seed_draft_config()
    index = {"weight_map": {"fc.weight": "../../Qwen/Qwen3-4B/resolve/main/model.safetensors"}}
    hub.add(
        "org/escaping",
        {
            "config.json": json.dumps(cfg).encode(),
            "model.safetensors.index.json": json.dumps(index).encode(),
        },
    )
    line = error_line(cli(hub, home, "pair", "org/escaping", TARGET))
    assert "shard name" in line and "points outside the model folder" in line
    assert not [r for r in hub.state.log if "Qwen3-4B/resolve/main/model.safetensors" in r.path]


@pytest.mark.parametrize(
    "revision",
    ["../../../../outside/x", "/abs/x", "a/../../b", "..", "x\\y", "v1.lock", "a b", "~x"],
)
def test_revision_never_becomes_a_path_outside_the_cache(
    hub: LoopbackHub, home: Path, tmp_path: Path, revision: str
) -> None:
    """A revision that would climb out of the cache is a usage error (exit 2), before any
    file is written or read, online and offline."""
    before = set(tmp_path.rglob("*"))
    for extra in ((), ("--offline",)):
        proc = cli(hub, home, "pair", DRAFT, TARGET, "--draft-revision", revision, *extra)
        assert proc.returncode == 2, proc.stderr
        assert "revision" in proc.stderr and "Traceback" not in proc.stderr
    assert set(tmp_path.rglob("*")) == before
    assert hub.state.log == []


def test_pr_revisions_are_hub_revisions(hub: LoopbackHub, home: Path) -> None:
    """repo@refs/pr/1 names a Hub PR revision, not a directory."""
    files = read_folder(SEED_DRAFT)
    hub.add(DRAFT, {}, revisions={"main": files, "refs/pr/1": files})
    proc = cli(hub, home, "pair", f"{DRAFT}@refs/pr/1", TARGET, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["draft"]["revision"] == commit_of(files)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("a--b/model", "'--' and '..' are not allowed"),
        ("org/x.git", "'.git'"),
        ("org/" + "n" * 97, "at most 96"),
        ("org/x-", "not starting or ending"),
        ("x" * 5000, "not a local directory nor a Hub repo id"),
    ],
)
def test_invalid_repo_ids_are_usage_errors(home: Path, name: str, needle: str) -> None:
    """Repo ids huggingface_hub would refuse are refused first, naming the rule (exit 2)."""
    proc = invoke_cli("pair", name, str(QWEN3_4B), env={"HF_HOME": str(home)})
    assert proc.returncode == 2, proc.stderr
    assert needle in plain(proc.stderr) and "unexpected" not in proc.stderr


def test_empty_revision_and_odd_timeouts_are_usage_errors(home: Path) -> None:
    """--revision '' and --timeout nan/inf/0 are usage errors (exit 2), not network errors."""
    env = {"HF_HOME": str(home)}
    for args in (
        ("--revision", ""),
        ("--draft-revision", " "),
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "0"),
    ):
        proc = invoke_cli("pair", DRAFT, TARGET, *args, env=env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


# -- no hangs ---------------------------------------------------------------------------------


def timed(fn: object, *args: object, **kwargs: object) -> tuple[float, object]:
    """Return (seconds, result) of a call."""
    start = time.monotonic()
    result = fn(*args, **kwargs)  # type: ignore[operator]
    return time.monotonic() - start, result


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json"])
def test_fifo_is_refused_without_blocking(tmp_path: Path, name: str) -> None:
    """A FIFO in place of a file is refused at once (the file type is checked first)."""
    draft = tmp_path / "draft"
    draft.mkdir()
    for f in SEED_DRAFT.iterdir():
        (draft / f.name).write_bytes(f.read_bytes())
    (draft / name).unlink(missing_ok=True)
    os.mkfifo(draft / name)
    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_bytes((QWEN3_4B / "config.json").read_bytes())
    if name == "tokenizer.json":
        (target / "tokenizer.json").write_text("{}")
    seconds, proc = timed(run_cli, "pair", str(draft), str(target))
    assert seconds < 10
    assert f"{name}: is a FIFO, not a regular file; refused" in error_line(proc)  # type: ignore[arg-type]


def test_fifo_pairs_yaml_is_refused(tmp_path: Path) -> None:
    """registry on a FIFO named pairs.yaml: refused at once."""
    os.mkfifo(tmp_path / "pairs.yaml")
    seconds, proc = timed(run_cli, "registry", str(tmp_path / "pairs.yaml"))
    assert seconds < 10
    assert "is a FIFO, not a regular file" in error_line(proc)  # type: ignore[arg-type]


def test_stalled_config_download_ends_within_the_deadline(hub: LoopbackHub, home: Path) -> None:
    """A Hub that answers the HEAD but never the config GET: given up on within
    --timeout x the deadline factor (198 s before), with one line."""
    hub.add("org/stall", QWEN3_4B, fault="stall", fault_files=frozenset({"config.json"}))
    # A local draft: the deadline under test is the faulty target's alone.
    seconds, proc = timed(cli, hub, home, "pair", str(SEED_DRAFT), "org/stall", "--timeout", "0.5")
    line = error_line(proc)  # type: ignore[arg-type]
    assert "target org/stall" in line and "config.json" in line
    assert seconds < 3 * 0.5 + 6, seconds  # the deadline, plus the CLI's start-up


def test_trickling_hub_is_given_up_on(hub: LoopbackHub, home: Path) -> None:
    """One byte every 0.2 s never trips a per-read timeout; the overall deadline ends it."""
    hub.add("org/trickle", QWEN3_4B, fault="trickle", fault_files=frozenset({"config.json"}))
    # A local draft: the deadline under test is the faulty target's alone.
    seconds, proc = timed(
        cli, hub, home, "pair", str(SEED_DRAFT), "org/trickle", "--timeout", "0.5"
    )
    line = error_line(proc)  # type: ignore[arg-type]
    assert "did not finish sending config.json in time" in line
    assert seconds < 3 * 0.5 + 6, seconds
    assert not list((home / "hub").rglob("*.incomplete"))


# -- bounded memory ---------------------------------------------------------------------------

RSS_PROBE = """
import runpy, sys
sys.argv = ["dflash-check", *sys.argv[1:]]
try:
    runpy.run_module("dflash_check", run_name="__main__")
except SystemExit as exc:
    code = exc.code
# VmHWM, not ru_maxrss: the latter keeps the forking parent's size across exec.
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print("MAXRSS_KB=" + hwm, file=sys.stderr)
sys.exit(code)
"""


def cli_rss(
    hub: LoopbackHub, home: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the CLI and return its process and peak resident memory in MB."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **hub.env(home)}
    proc = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    kb = int(proc.stderr.rsplit("MAXRSS_KB=", 1)[1].split()[0])
    proc.stderr = proc.stderr.rsplit("MAXRSS_KB=", 1)[0]
    return proc, kb // 1024


GIB = 1 << 30


@pytest.mark.parametrize("announce", [True, False], ids=["announced", "unannounced"])
@pytest.mark.parametrize("what", ["config.json", "model info"])
def test_huge_bodies_are_cut_off(hub: LoopbackHub, home: Path, what: str, announce: bool) -> None:
    """A 1 GB config or model-info body is cut off at its limit: one line, little memory,
    nothing oversized left in the HF cache."""
    hub.add("org/huge", QWEN3_4B, huge={what: GIB}, announce_huge=announce)
    proc, rss = cli_rss(hub, home, "pair", DRAFT, "org/huge")
    line = error_line(proc)
    assert "target org/huge" in line and "MB limit" in line and what in line
    assert rss < 100, rss
    assert hub.bytes_sent() < 64 << 20
    for path in home.rglob("*"):
        assert not path.is_file() or path.stat().st_size <= 4 << 20, path


def test_hub_that_ignores_the_range_request(hub: LoopbackHub, home: Path) -> None:
    """A Hub answering the header's ranged GET with the whole (here 128 MB) file: only the
    header is read, the verdict is the same, memory stays small."""
    files = read_folder(SEED_DRAFT)
    padded = files["model.safetensors"] + b"\0" * (128 << 20)
    hub.add(
        "org/no-range",
        {**files, "model.safetensors": padded},
        fault="ignore-range",
        fault_files=frozenset({"model.safetensors"}),
    )
    proc, rss = cli_rss(hub, home, "pair", "org/no-range", TARGET, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert rss < 100, rss
    assert json.loads(proc.stdout)["draft"]["fc_weight_shape"] == [2560, 12800]
    assert json.loads(proc.stdout)["draft"]["fetched_bytes"] < 1 << 20
