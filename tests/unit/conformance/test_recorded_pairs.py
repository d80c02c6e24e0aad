"""Every row a real engine recorded is re-judged by today's tool on the pair it ran (configs and
safetensors header kept in tests/fixtures/conformance by ``conformance/recorded_pairs.py``): the
verdict, the first error's rule and the stage must be what the results file says, so a change
of knowledge that moves a verdict or stage away from what the engine did fails here, not at the
next engine run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.classify import compare_stage, tool_stage, tool_summary
from conformance.report import RESULTS
from dflash_check.render.json import render_json
from dflash_check.views import TensorInfo
from tests.support.helpers import FIXTURES, check_files, files

RECORDED = sorted((FIXTURES / "conformance").glob("*.json"))


def rows(path: Any) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """Return (results row, recorded pair, tool runtime) for each recorded case."""
    pairs = json.loads(path.read_text())["cases"]
    results = json.loads((RESULTS / path.name).read_text())
    runtime = results["tool_runtime"]
    return [(r, pairs[r["case"]], runtime) for r in results["results"] if r["case"] in pairs]


CASES = [(p.stem, *row) for p in RECORDED for row in rows(p)]


def test_every_recorded_row_has_its_pair() -> None:
    """The fixture holds every case the results file records (a rerun refreshes both)."""
    for path in RECORDED:
        results = json.loads((RESULTS / path.name).read_text())["results"]
        assert {r["case"] for r in results} == set(json.loads(path.read_text())["cases"])


@pytest.mark.parametrize(
    ("engine", "row", "pair", "runtime"), CASES, ids=[f"{c[0]}:{c[1]['case']}" for c in CASES]
)
def test_today_s_tool_judges_the_recorded_pair_as_recorded(
    engine: str, row: dict[str, Any], pair: dict[str, Any], runtime: str
) -> None:
    tensors = {
        k: TensorInfo(dtype, tuple(shape)) for k, (dtype, shape) in pair["draft_tensors"].items()
    }
    report = check_files(
        files("draft", pair["draft"], tensors),
        files("target", pair["target"]),
        runtime,
        num_speculative_tokens=pair["num_speculative_tokens"],
    )
    data = json.loads(render_json(report))
    verdict, finding = tool_summary(data, runtime)
    assert verdict == row["tool_verdict"], finding
    recorded = row["tool_finding"]
    assert (finding or "").split(":", 1)[0] == (recorded or "").split(":", 1)[0], finding
    stage = tool_stage(data, runtime)
    assert stage == row["tool_stage"], finding
    assert compare_stage(row["outcome"], verdict, stage) == row["stage_agree"]
