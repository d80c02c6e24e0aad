"""The acceptance floor: every collapse and agreement it is derived from is a recorded run."""

from __future__ import annotations

import json

import pytest

from dflash_check.knowledge.acceptance import (
    AGREEMENTS,
    BUNDLED_RESULTS,
    BUNDLED_SHARE,
    COLLAPSES,
    DEFAULT_MIN_ACCEPTANCE,
    RECORDED,
    BundledTau,
    Floor,
    acceptance_floor,
    bundled_floor,
    bundled_share,
    floor_for,
)
from tests.support.helpers import REPO


def test_every_collapse_is_a_recorded_run_below_the_right_layout() -> None:
    """Each collapse's tau is the recorded run's, and below what the right ids gave there."""
    recorded = json.loads((REPO / RECORDED).read_text())["results"]
    tau = {r["case"]: r["tau"] for r in recorded}
    right = tau["ids-in-range"]  # the same tiny pair with the ids it was trained on
    for collapse in COLLAPSES:
        assert tau[collapse.case] == collapse.tau, collapse
        assert collapse.tau < right
        assert acceptance_floor(collapse.block_size).tau > collapse.tau


@pytest.mark.parametrize(
    ("block", "floor"),
    [(4, DEFAULT_MIN_ACCEPTANCE), (7, DEFAULT_MIN_ACCEPTANCE), (8, 2.31), (16, 2.31)],
)
def test_floor_per_block_size(block: int, floor: float) -> None:
    """Below the smallest measured block there is no evidence: 1.5; from it on, just above
    the highest collapse measured at the largest block size not above the draft's."""
    assert acceptance_floor(block).tau == floor


# --- the floor from the bundled runtime's tau of the same pair (--compare-bundled) ----------


def test_every_agreement_is_a_recorded_run_of_both() -> None:
    """Each agreement's taus are the recorded vLLM run's and the bundled runtime's, on the
    same case (same widened pair, prompts, budget and block)."""
    engine = {r["case"]: r["tau"] for r in json.loads((REPO / RECORDED).read_text())["results"]}
    bundled = json.loads((REPO / BUNDLED_RESULTS).read_text())
    assert bundled["settings"]["block_size"] == 8 and bundled["settings"]["temperature"] == 0
    mine = {r["case"]: r for r in bundled["results"]}
    for agreement in AGREEMENTS:
        assert engine[agreement.case] == agreement.engine_tau, agreement
        assert mine[agreement.case]["tau"] == agreement.bundled_tau, agreement
        assert mine[agreement.case]["lossless"] is True


def test_the_share_separates_same_layers_from_ignored_ids() -> None:
    """Every engine run that fed the bundled runtime's layers clears the share; every one that
    fed its own layers instead falls below it."""
    assert 0 < BUNDLED_SHARE < 1
    for agreement in AGREEMENTS:
        assert (agreement.share >= BUNDLED_SHARE) is agreement.same_layers, agreement
    assert BUNDLED_SHARE == bundled_share() == 0.69


def test_bundled_tau_sets_the_floor() -> None:
    """A share of the pair's own bundled tau: the issue's draft (tau 1.83 where the right
    layout gave 6.41 on the same prompts) fails it; vLLM's right layout (6.08) passes."""
    floor = floor_for(8, None, BundledTau(6.41, 4, 8, True))
    assert floor == Floor(4.42, floor.reason, "bundled")
    assert floor.reason == "0.69 of the bundled runtime's tau 6.41 on the same 4 prompts at block 8"
    assert 1.83 < floor.tau <= 6.08  # the collapse fails, the right layout on vLLM passes


def test_a_weak_pair_keeps_the_bundled_runtimes_own_floor() -> None:
    """A share below 1.5 is raised to the bundled runtime's floor: the engine cannot pass what
    the bundled run would fail."""
    floor = floor_for(8, None, BundledTau(1.56, 4, 8, True))
    assert floor.tau == DEFAULT_MIN_ACCEPTANCE and floor.source == "bundled"
    assert floor.reason is not None and "raised to the bundled runtime's floor 1.5" in floor.reason


@pytest.mark.parametrize(
    ("bundled", "why"),
    [
        (BundledTau(None, why_not="the smoke run needs torch"), "the smoke run needs torch"),
        (BundledTau(6.41, 4, 8, False), "the bundled run was not lossless"),
        (BundledTau(6.41, 4, 16, True), "the bundled run drafted block 16, the engine 8"),
        (BundledTau(None), "the bundled runtime did not run"),
    ],
)
def test_no_usable_bundled_tau_falls_back_to_the_block_size_floor(
    bundled: BundledTau, why: str
) -> None:
    """No tau, a lossy bundled run, or another block: the block-size floor, saying why."""
    floor = floor_for(8, None, bundled)
    assert (floor.tau, floor.source) == (2.31, "block size")
    assert floor.reason is not None and f"(no bundled floor: {why}" in floor.reason
    assert isinstance(bundled_floor(8, bundled), str)


def test_min_acceptance_wins_over_every_derived_floor() -> None:
    """--min-acceptance is the floor as given, with no reason to state."""
    for bundled in (None, BundledTau(6.41, 4, 8, True)):
        assert floor_for(8, 1.2, bundled) == Floor(1.2, None, "given")
    assert floor_for(8, None) == acceptance_floor(8)
