"""Cases from engine tests that build their configs procedurally, written by hand, and the
reviewed tests that are not applicable (with the reason).

Each case is written as the test builds its config, onto a real draft of the same family from
the corpus (``tests/fixtures``) where the test builds only the keys it asserts on, and paired
with a target that has the layers the ids name. The line of each test is read from the release
(``test_line``), so a case always cites the test at that release.
"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CAUSALITY = "tests/v1/spec_decode/test_dflash_causality.py"
QWEN3_8B = "tests/fixtures/targets/Qwen--Qwen3-8B"
"""36 layers, hidden 4096: every id the causality tests name (up to 32) is in range."""
ZLAB_DRAFT = "tests/fixtures/hub/z-lab/Qwen3-8B-DFlash-b16"


def test_line(src: Path, path: str, name: str) -> int | None:
    """The line of test ``name`` in ``path`` at the release (None: not in this release)."""
    file = src / path
    if not file.exists():
        return None
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node.lineno
    return None


def _zlab(edit: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
    config = json.loads((REPO / ZLAB_DRAFT / "config.json").read_text())
    dflash = config["dflash_config"]
    for key in drop:
        dflash.pop(key, None)
    for key, value in edit.items():
        if key in ("dflash_config", "eagle_config"):
            config.setdefault(key, {}).update(copy.deepcopy(value))
        else:
            config[key] = value
    return config


def _causality_cases(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    rows = [
        (
            "dflash_fc_uses_aux_layer_count",
            "dflash-top-level-target-layer-ids",
            # top-level target_layer_ids (no dflash_config ids): fc takes 3 x hidden
            _zlab({"target_layer_ids": [1, 17, 32]}, drop=("target_layer_ids",)),
            [2, 18, 33],
        ),
        (
            "dflash_target_layers_map_to_post_layer_boundaries",
            "dflash-ids-post-layer-boundaries",
            _zlab({"dflash_config": {"target_layer_ids": [0, 16, 31]}}),
            [1, 17, 32],
        ),
        (
            "eagle_aux_layers_preserves_legacy_layer_ids",
            "dflash-legacy-layer-ids-dflash_config",
            _zlab({"dflash_config": {"layer_ids": [1, 17, 32]}}, drop=("target_layer_ids",)),
            [1, 17, 32],
        ),
        (
            "eagle_aux_layers_preserves_legacy_layer_ids",
            "dflash-legacy-layer-ids-eagle_config",
            _zlab(
                {"dflash_config": {}, "eagle_config": {"layer_ids": [1, 17, 32]}},
                drop=("target_layer_ids",),
            ),
            [1, 17, 32],
        ),
    ]
    cases = []
    for name, case_id, draft, aux in rows:
        line = test_line(src, CAUSALITY, f"test_{name}")
        if line is None:
            continue
        param = {
            "dflash-legacy-layer-ids-dflash_config": "[dflash_config]",
            "dflash-legacy-layer-ids-eagle_config": "[eagle_config]",
        }.get(case_id, "")
        cases.append(
            {
                "id": case_id,
                "test": f"{CAUSALITY}::test_{name}{param}",
                "source": f"{engine}=={release}:{CAUSALITY}:{line}",
                "method": "dflash",
                "num_speculative_tokens": 15,
                "target": QWEN3_8B,
                "draft": draft,
                "expect": "accepted",
                "expect_stage": None,
                "expect_match": None,
                "expect_aux_layers": aux,
            }
        )
    return cases


def cases_for(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The hand-written cases of one release."""
    from conformance.mined import code_cases, dspark_cases, mtp_cases

    if engine != "vllm":
        return []
    return (
        _causality_cases(engine, release, src)
        + dspark_cases.cases_for(engine, release, src)
        + mtp_cases.cases_for(engine, release, src)
        + code_cases.cases_for(engine, release, src)
    )


_NOT_A_PAIR = "the draft's attention causality per layer, not a draft/target pairing"
REVIEWED: dict[str, str] = {
    f"{CAUSALITY}::test_dflash_has_any_non_causal": _NOT_A_PAIR,
    f"{CAUSALITY}::test_dflash_layer_causal_is_per_layer": _NOT_A_PAIR,
    f"{CAUSALITY}::test_dflash_layer_causal_honors_top_level_override": _NOT_A_PAIR,
}
"""Relevant tests read and found not to assert anything a pair check can be held to."""


def reviewed_for(engine: str, release: str) -> dict[str, str]:
    """The not-applicable tests of one release (by test id, without parameters)."""
    from conformance.mined import dspark_cases, mtp_cases, vllm_review

    if engine != "vllm":
        return {}
    return {
        **REVIEWED,
        **vllm_review.REVIEWED,
        **dspark_cases.REVIEWED,
        **mtp_cases.reviewed_for(release),
    }


def pending_for(engine: str, release: str) -> dict[str, str]:
    """The reviewed tests of one release that call for a case not written yet (what it is)."""
    from conformance.mined import vllm_review

    return dict(vllm_review.PENDING) if engine == "vllm" else {}
