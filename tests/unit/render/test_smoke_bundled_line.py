"""The text report's ``--compare-bundled`` line: both taus side by side, or why not compared."""

from __future__ import annotations

from dflash_check.knowledge.acceptance import BundledTau
from dflash_check.render.smoke_text import bundled_line
from dflash_check.smoke.report import SmokeReport, SpecCounts


def engine_report(bundled: BundledTau) -> SmokeReport:
    """An engine run of tau 3.0 (20 steps, 40 accepted) with ``bundled`` beside it."""
    return SmokeReport(
        device="vllm",
        dtype="as served",
        block_size=8,
        temperature=0.0,
        min_acceptance=4.42,
        cases=(),
        counts=SpecCounts(steps=20, drafted_tokens=140, accepted_tokens=40),
        bundled=bundled,
    )


def test_both_taus_are_shown() -> None:
    line = bundled_line(engine_report(BundledTau(6.41, 3, 8, True)))
    assert line == "Bundled runtime: tau = 6.41 on the same 3 prompts at block 8; vllm: 3.00."


def test_why_not_compared_is_shown() -> None:
    line = bundled_line(engine_report(BundledTau(None, why_not="no torch")))
    assert line == "Bundled runtime: not compared (no torch)."
