"""The acceptance floor: every collapse it is derived from is a recorded real-engine run."""

from __future__ import annotations

import json

import pytest

from dflash_check.knowledge.acceptance import (
    COLLAPSES,
    DEFAULT_MIN_ACCEPTANCE,
    RECORDED,
    acceptance_floor,
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
