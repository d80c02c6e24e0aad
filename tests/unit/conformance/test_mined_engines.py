"""The mined cases of the engines whose tests are read outside a source archive
(``tools/mine/``): each case is well formed and cites the version read, and each coverage page
lists every case's test. What the engines' own code does with the cases is the oracle's
(``test_agreement.py``); this file holds the data to its schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

MINED = Path(__file__).resolve().parents[3] / "conformance" / "mined"
FILES = sorted(p for p in MINED.glob("*.json") if not p.name.startswith("vllm-"))
CASE_KEYS = {
    "id", "test", "source", "method", "num_speculative_tokens", "target", "draft", "expect",
    "expect_stage", "expect_match",
}  # fmt: skip
"""The keys the oracle and the agreement read (``conformance/oracle.py``, ``agreement.py``)."""
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{7,40}:\S+:\d+$|^[\w.-]+==[\w.]+:\S+:\d+$")
"""``owner/repo@commit:path:line`` (a version read from the index) or ``engine==release:path:
line`` (the release's own archive)."""


def problems(data: dict, page: str) -> list[str]:
    """What is wrong with one engine's cases file and coverage page."""
    found = []
    ids = [c.get("id") for c in data["cases"]]
    if len(set(ids)) != len(ids):
        found.append("duplicate case ids")
    for case in data["cases"]:
        where = case.get("id")
        if missing := CASE_KEYS - case.keys():
            found.append(f"{where}: missing {sorted(missing)}")
            continue
        if not SOURCE.match(case["source"]):
            found.append(f"{where}: source {case['source']!r} cites no file:line")
        if case["expect"] not in ("accepted", "refused"):
            found.append(f"{where}: expect {case['expect']!r}")
        if (case["expect"] == "refused") != (case["expect_stage"] is not None):
            found.append(f"{where}: a refusal has a stage, an acceptance none")
        if f"`{case['id']}`" not in page:
            found.append(f"{where}: not on the coverage page")
        if (part := case.get("part")) is not None:
            found += [f"{where}: {p}" for p in part_problems(part, case["source"])]
        text = json.dumps(case)
        if re.search(r"/(tmp|home|root|work)/", text):
            found.append(f"{where}: a machine path")
    return found


def part_problems(part: dict, source: str) -> list[str]:
    """What is wrong with a case's ``part`` (the case takes one assertion of its test, at the
    line its ``source`` cites; ``why`` the rest is not taken; ``release_fails``, the pattern of
    the failure the test's run on the release records, ``test_agreement.py``)."""
    found = []
    if not isinstance(part.get("assertion"), int) or part["assertion"] < 1:
        found.append(f"part: assertion {part.get('assertion')!r} is no number from 1")
    if not source.endswith(f":{part.get('line')}"):
        found.append(f"part: line {part.get('line')!r} is not the line its source cites")
    if not part.get("why"):
        found.append("part: no why")
    try:
        re.compile(part.get("release_fails") or "")
    except re.error:
        found.append("part: release_fails is no pattern")
    if not part.get("release_fails"):
        found.append("part: no release_fails")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_mined_cases_are_well_formed(path: Path) -> None:
    data = json.loads(path.read_text())
    assert path.stem == f"{data['engine']}-{data['release']}"
    page = path.with_suffix(".md").read_text()
    assert problems(data, page) == []
    assert "not reviewed." in page  # the page's figures line, generated


def test_the_check_can_fail() -> None:
    case = {
        "id": "x", "test": "t::x", "source": "o/r@abc1234:t.py:3", "method": "dflash",
        "num_speculative_tokens": 15, "target": {}, "draft": {"p": "/tmp/x"},
        "expect": "refused", "expect_stage": None, "expect_match": None,
    }  # fmt: skip
    found = problems({"cases": [case, case]}, "no ids here")
    assert "duplicate case ids" in found
    assert "x: a refusal has a stage, an acceptance none" in found
    assert "x: not on the coverage page" in found
    assert "x: a machine path" in found
    assert problems({"cases": [{**case, "source": "somewhere"}]}, "")[0].startswith("x: source")
    part = {"assertion": 0, "line": 4, "why": "", "release_fails": "("}
    assert {
        "x: part: assertion 0 is no number from 1",
        "x: part: line 4 is not the line its source cites",
        "x: part: no why",
        "x: part: release_fails is no pattern",
    } <= set(problems({"cases": [{**case, "part": part}]}, "`x`"))


def test_there_are_mined_engines_besides_vllm() -> None:
    assert any(p.stem.startswith("sglang-") for p in FILES)
