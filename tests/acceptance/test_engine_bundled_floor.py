"""``--compare-bundled``: the engine smoke run's floor from the bundled tau of the same pair.

Fake engines on loopback (``tests/support/engineserver.py``) serve the tiny pair; the bundled
runtime decodes it in this process first (torch: marked ``smoke``), so the floor is a share
of a real tau. The fallbacks that need no decode run without torch.
"""

from __future__ import annotations

import json

import pytest

from dflash_check.knowledge.acceptance import BUNDLED_SHARE
from dflash_check.smoke.report import SmokeReport
from tests.acceptance.test_engine import (  # in_process: the bundled run of the tiny pair
    DRAFT,
    TARGET,
    engine_cli,
    fake,
    in_process,  # noqa: F401
    real_decoder,
)
from tests.support.engineserver import scripted_decoder, serve
from tests.support.helpers import invoke_cli
from tests.support.no_torch import BLOCK_TORCH


@pytest.mark.smoke
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_collapse_above_the_block_size_floor_fails_the_bundled_floor(engine: str) -> None:
    """tau 3 at block 8 clears the block-size floor (2.31), but not 0.69 of what the bundled
    runtime reaches on the same pair and prompts; the report gives both taus and the source."""
    with serve(fake(engine, decoder=scripted_decoder(8, (3,)))) as server:
        plain = engine_cli(server.url, engine, "-f", "json")
        proc = engine_cli(server.url, engine, "--compare-bundled", "-f", "json")
        text = engine_cli(server.url, engine, "--compare-bundled")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["smoke"]["bundled"] is None
    assert proc.returncode == 1, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    bundled = smoke["bundled"]
    assert (bundled["prompts"], bundled["block_size"], bundled["lossless"]) == (3, 8, True)
    assert smoke["min_acceptance_source"] == "bundled"
    assert smoke["min_acceptance"] == round(BUNDLED_SHARE * bundled["tau"], 2)
    assert smoke["mean_acceptance_length"] < smoke["min_acceptance"]
    assert (
        f"of the bundled runtime's tau {bundled['tau']:.2f} on the same 3 prompts"
        in (smoke["min_acceptance_reason"])
    )
    shown = " ".join(text.stdout.split())
    assert f"Bundled runtime: tau = {bundled['tau']:.2f} on the same 3 prompts at block 8" in shown
    assert "smoke run FAILED" in shown
    with serve(fake(engine, decoder=scripted_decoder(8, (3,)))) as server:
        ci = engine_cli(server.url, engine, "--compare-bundled", "-f", "junit")
    assert ci.returncode == 1 and "DF092" in ci.stdout
    assert (
        f"({BUNDLED_SHARE:g} of the bundled runtime's tau {bundled['tau']:.2f} on the same 3"
        in ci.stdout
    )


@pytest.mark.smoke
def test_the_engine_decoding_as_the_bundled_runtime_passes(in_process: SmokeReport) -> None:  # noqa: F811
    """A fake engine answering with the bundled runtime's own decodes: the same tau, above
    the share, exit 0."""
    with serve(fake("vllm", decoder=real_decoder(in_process))) as server:
        proc = engine_cli(server.url, "vllm", "--compare-bundled", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["bundled"]["tau"] == round(in_process.mean_acceptance_length, 2)
    assert smoke["mean_acceptance_length"] == round(in_process.mean_acceptance_length, 4)
    assert smoke["min_acceptance_source"] == "bundled"


@pytest.mark.smoke
def test_another_block_on_the_engine_falls_back_to_the_block_size_floor() -> None:
    """The engine drafts block 4 while the bundled run drafted 8: the taus do not compare,
    so the block-size floor applies, and the report says why."""
    state = fake("vllm", decoder=scripted_decoder(4, (3,)), num_spec_tokens=3)
    with serve(state) as server:
        proc = engine_cli(server.url, "vllm", "--compare-bundled", "-f", "json")
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["block_size"] == 4 and smoke["bundled"]["block_size"] == 8
    assert smoke["min_acceptance_source"] == "block size"
    assert (
        "(no bundled floor: the bundled run drafted block 8, the engine 4)"
        in (smoke["min_acceptance_reason"])
    )


def test_sampling_falls_back_without_loading_anything() -> None:
    """Sampled taus do not compare: no bundled run, the block-size floor, and why."""
    with serve(fake("vllm", decoder=scripted_decoder(8, (3,)))) as server:
        proc = engine_cli(
            server.url, "vllm", "--compare-bundled", "--temperature", "0.7", "-f", "json"
        )
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["bundled"]["tau"] is None and "--temperature" in smoke["bundled"]["why_not"]
    assert (smoke["min_acceptance"], smoke["min_acceptance_source"]) == (2.31, "block size")
    assert "no bundled floor: --temperature is above 0" in smoke["min_acceptance_reason"]


def test_min_acceptance_wins_over_the_bundled_floor() -> None:
    """--min-acceptance is the floor, its source ``given``."""
    with serve(fake("vllm", decoder=scripted_decoder(8, (3,)))) as server:
        proc = engine_cli(
            server.url, "vllm", "--compare-bundled", "--temperature", "0.7",
            "--min-acceptance", "3.5", "-f", "json",
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert (smoke["min_acceptance"], smoke["min_acceptance_source"]) == (3.5, "given")


def test_compare_bundled_needs_an_engine() -> None:
    """The bundled runtime's own run has nothing to compare with: a usage error."""
    proc = invoke_cli("pair", str(DRAFT), str(TARGET), "--smoke-run", "--compare-bundled")
    assert proc.returncode == 2
    assert "--compare-bundled needs --engine vllm|sglang" in proc.stderr


def test_without_the_smoke_extra_the_engine_run_goes_on() -> None:
    """No torch on the client: the engine run still decodes; the floor is the block-size one,
    and the report quotes the install line (a subprocess that cannot import torch)."""
    import subprocess
    import sys

    with serve(fake("vllm", decoder=scripted_decoder(8, (3,)))) as server:
        proc = subprocess.run(
            [
                sys.executable, "-c", BLOCK_TORCH, "pair", str(DRAFT), str(TARGET),
                "--smoke-run", "--engine", "vllm", "--endpoint", server.url, "--prompt", "1 2 3",
                "--max-new-tokens", "40", "--compare-bundled", "-f", "json",
            ],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    why = smoke["bundled"]["why_not"]
    assert "needs torch and transformers" in why and "pip install" in why and "[smoke]" in why
    assert (smoke["min_acceptance"], smoke["min_acceptance_source"]) == (2.31, "block size")
    assert f"(no bundled floor: {why})" in smoke["min_acceptance_reason"]
