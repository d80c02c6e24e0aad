"""The tool against the engines' own tests where no oracle run is recorded yet: each mined case
of ``conformance/mined/`` (``tools/mine/``) is checked with the release's runtime and judged
against what the engine's test asserts (``conformance/agreement.py``'s ``judge``: verdict and
stage). A case with an oracle result is judged there (``test_agreement.py``) instead.

A difference is a strict xfail in ``KNOWN``, citing what the engine does, until the tool's
knowledge covers it (the xfail then fails, and the entry goes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.agreement import MINED, RESULTS, Row, judge, tool_report, tool_view


def _recorded() -> set[str]:
    """The engine-release stems that have oracle results."""
    return {
        f"{d['engine']}-{d['release']}"
        for d in (json.loads(p.read_text()) for p in RESULTS.glob("*.json"))
    }


def _rows() -> list[Row]:
    recorded = _recorded()
    rows = []
    for path in sorted(MINED.glob("*.json")):
        data = json.loads(path.read_text())
        if path.stem in recorded:
            continue
        for case in data["cases"]:
            outcome = {"case": case["id"], "outcome": case["expect"], "kind": "mined"}
            rows.append(Row(data["engine"], data["release"], outcome, case))
    return rows


ROWS = _rows()
_DOMINO = (
    "the tool has no Domino checks (dflash_config.projector_type 'domino'); sglang 0.5.23 "
    "refuses this draft when it builds it (parse_dflash_draft_config, "
    "sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:{lines})"
)
KNOWN: dict[str, str] = {
    "sglang-0.5.23:dflash-domino-missing-gru-hidden-dim": _DOMINO.format(lines="784-785"),
    "sglang-0.5.23:dflash-domino-missing-emb-dim": _DOMINO.format(lines="786-787"),
    "sglang-0.5.23:dflash-domino-pure-draft-prefix-len-2": _DOMINO.format(lines="779-783"),
    "sglang-0.5.23:dflash-domino-shift-label-not-bool": _DOMINO.format(lines="774-778"),
}
"""Differences whose knowledge fix is pending, by row id -> what the engine does (cited)."""


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_tool_agrees_with_the_engine_test(
    row: Row, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if row.id in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[row.id]))
    verdict, stages = tool_view(tool_report(row, tmp_path), row.engine)
    assert judge(row, verdict, stages) in ("agree", "beyond"), (
        f"{row.id}: the engine's test says {row.case['outcome']} "
        f"({row.mined and row.mined['expect_stage']}); tool {verdict}, "
        f"error stages {sorted(stages)}"
    )


def test_every_known_difference_is_a_mined_case() -> None:
    assert set(KNOWN) <= {r.id for r in ROWS}
