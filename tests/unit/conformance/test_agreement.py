"""The tool against the engines' own start-up code, as recorded by the oracle
(``conformance/oracle.py``, ``conformance/results/oracle/*.json``): no engine is imported.

Every recorded case must agree (``conformance/agreement.py`` says what agreement is, stage
included), be a difference the engine explains (``conformance/oracle-explained.json``, cited),
or be a known disagreement whose knowledge fix is pending (``KNOWN``: strict xfails, which fail
once the fix lands so that the entry is removed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.agreement import RESULTS, Row, explained, judge, rows, tool_report, tool_view

ROWS = list(rows())
KNOWN: dict[str, str] = {}
"""Disagreements whose knowledge fix is pending, by row id -> "issue N: what the engine does
(cited)". Empty: the Qwen3-Omni thinker_config and DSpark contract cases and the legacy
layer_ids cases, strict xfails here, flipped when issue 29's knowledge fix reached main."""


def test_results_are_recorded() -> None:
    assert ROWS, "no oracle results under conformance/results/oracle"
    for path in RESULTS.glob("*.json"):
        text = path.read_text()
        assert not re.search(r"/(tmp|home|root|work)/", text), f"{path.name}: a machine path"


@pytest.mark.parametrize("row", [r for r in ROWS if r.mined], ids=lambda r: r.id)
def test_the_oracle_reproduces_the_engine_test(row: Row) -> None:
    """The release's code did what its own test asserts (else the case is mis-transcribed)."""
    assert row.mined is not None
    assert row.case["outcome"] == row.mined["expect"], row.case["engine_error"]
    if row.mined.get("expect_match"):
        assert re.search(row.mined["expect_match"], row.case["engine_error"])
    if row.mined.get("expect_aux_layers") is not None:
        assert row.case["aux_layers"] == row.mined["expect_aux_layers"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_tool_agrees_with_the_engine(
    row: Row, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if row.id in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[row.id]))
    verdict, stages = tool_view(tool_report(row, tmp_path), row.engine)
    got = judge(row, verdict, stages)
    note = explained().get(row.id)
    if note is not None:
        assert got == "disagree", f"explained difference no longer differs: remove {row.id}"
        assert re.search(r"==[\w.]+:\S+:\d+", note["cite"]), "an explanation cites the engine"
        return
    assert got in ("agree", "beyond"), (
        f"{row.id}: engine {row.case['outcome']} ({row.case['stage']}: "
        f"{row.case['engine_error']}); tool {verdict}, error stages {sorted(stages)}"
    )


def test_the_judge_can_fail() -> None:
    """A refusal the tool calls compatible, or places after start-up, disagrees."""
    refused = Row("vllm", "0", {"case": "x", "outcome": "refused", "kind": "corpus"}, None)
    assert judge(refused, "compatible", set()) == "disagree"
    assert judge(refused, "incompatible", {"first-decode"}) == "disagree"
    assert judge(refused, "incompatible", {"load"}) == "agree"
    accepted = Row("vllm", "0", {"case": "x", "outcome": "accepted", "kind": "mined"}, {})
    assert judge(accepted, "incompatible", {"load"}) == "disagree"
    assert judge(accepted, "unknown", set()) == "disagree"


def test_every_mined_case_was_run() -> None:
    for path in RESULTS.glob("*.json"):
        data = json.loads(path.read_text())
        mined = RESULTS.parents[1] / "mined" / f"{data['engine']}-{data['release']}.json"
        wanted = {c["id"] for c in json.loads(mined.read_text())["cases"]}
        assert wanted <= {r["case"] for r in data["results"]}, path.name


def test_the_mined_tests_pass_against_the_installed_release() -> None:
    """Each mined case's own test passed against the release's wheel where they were run
    (``python -m conformance.oracle ENGINE RELEASE --engine-tests SRC``)."""
    for path in RESULTS.glob("*.json"):
        data = json.loads(path.read_text())
        if "engine_tests" not in data:
            continue
        outcome: dict[str, set[str]] = {}
        for record in data["engine_tests"]["records"]:
            outcome.setdefault(record["test"].split("[")[0], set()).add(record["outcome"])
        mined = RESULTS.parents[1] / "mined" / f"{data['engine']}-{data['release']}.json"
        for case in json.loads(mined.read_text())["cases"]:
            assert outcome.get(case["test"].split("[")[0]) == {"passed"}, case["test"]
