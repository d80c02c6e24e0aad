"""The tool against the engines' own tests where no oracle run is recorded yet: each mined case
of ``conformance/mined/`` (``tools/mine/``) is checked with the release's runtime and judged
against what the engine's test asserts (``conformance/agreement.py``'s ``judge``: verdict and
stage). A case with an oracle result is judged there (``test_agreement.py``) instead.

A difference is a strict xfail in ``KNOWN``, citing what the engine does, until the tool's
knowledge covers it (the xfail then fails, and the entry goes).

A converter's cases (speculators: stage ``convert``) have no runtime of their own: the tool must
read the converter's output as the converter wrote it (its ids, as DFlash layer ids ``k - 1``),
and call the source pair of a refused conversion incompatible for the runtime that serves
converted drafts (vLLM's newest release)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.agreement import MINED, RESULTS, Row, agreement, tool_report
from conformance.oracle import config_folder
from dflash_check.knowledge.engines import VLLM
from tests.support.helpers import invoke_cli


def _recorded() -> set[tuple[str, str]]:
    """(engine-release stem, case id) of every case that has an oracle result."""
    return {
        (f"{d['engine']}-{d['release']}", row["case"])
        for d in (json.loads(p.read_text()) for p in RESULTS.glob("*.json"))
        for row in d["results"]
    }


def _rows() -> list[Row]:
    recorded = _recorded()
    rows = []
    for path in sorted(MINED.glob("*.json")):
        data = json.loads(path.read_text())
        for case in data["cases"]:
            if (path.stem, case["id"]) in recorded:
                continue  # judged against the oracle's run in test_agreement.py
            outcome = {"case": case["id"], "outcome": case["expect"], "kind": "mined"}
            rows.append(Row(data["engine"], data["release"], outcome, case))
    return rows


def _converted(row: Row) -> bool:
    return row.mined is not None and "expect_converted" in row.mined


ALL_ROWS = _rows()
ROWS = [r for r in ALL_ROWS if not _converted(r)]
CONVERSIONS = [r for r in ALL_ROWS if _converted(r)]
# SGLang 0.5.23's Domino refusals were known differences here until its oracle run was recorded
# (conformance/results/oracle/sglang-0.5.23.json) and DF056 modelled its Domino contract.
# z-lab dflash 0.1.0 loading a draft without ids on its guess was a known difference here
# until the reference's DF001 stage followed its fc (silent when the checkpoint's fc fits).
KNOWN: dict[str, str] = {}
"""Differences whose knowledge fix is pending, by row id -> what the engine does (cited)."""


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_tool_agrees_with_the_engine_test(
    row: Row, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if row.id in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[row.id]))
    got, verdict, stages = agreement(row, tmp_path)
    assert got in ("agree", "beyond"), (
        f"{row.id}: the engine's test says {row.case['outcome']} "
        f"({row.mined and row.mined['expect_stage']}); tool {verdict}, "
        f"error stages {sorted(stages)}"
    )


IDS = {"expect_target_layer_ids": "layer_ids", "expect_aux_layers": "hidden_states"}
"""A case's expected ids -> the field of the tool's layer table (``layer_resolution``) that
says the same: the draft's ids as the runtime resolves them, and the hidden-state indices it
captures (vLLM's aux-layer numbering)."""


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.mined and IDS.keys() & r.mined.keys()], ids=lambda r: r.id
)
def test_the_tool_resolves_the_ids_the_engine_does(row: Row, tmp_path: Path) -> None:
    assert row.mined is not None
    table = tool_report(row, tmp_path)["layer_resolution"][row.engine]
    for key, field in IDS.items():
        if key in row.mined:
            assert table[field] == row.mined[key], f"{row.id}: {key}"


def _tool_json(draft: dict, target: dict, method: str, k: int, work: Path) -> dict:
    args = [
        "pair", str(config_folder(draft, work / "draft")),
        str(config_folder(target, work / "target")), "-r", VLLM.newest.spec,
        "--speculative-method", method, "--num-speculative-tokens", str(k), "--format", "json",
    ]  # fmt: skip
    result = invoke_cli(*args)
    return json.loads(result.stdout[: result.stdout.rindex("}") + 1])


def _written_ids(converted: dict) -> list[int] | None:
    """The ids a converted speculators config names (vLLM aux indices k)."""
    for key in ("aux_hidden_state_layer_ids", "eagle_aux_hidden_state_layer_ids"):
        if key in converted:
            return converted[key]
    raise AssertionError("a converted config without its aux ids key")


@pytest.mark.parametrize("row", CONVERSIONS, ids=lambda r: r.id)
def test_the_tool_reads_the_converter_output(row: Row, tmp_path: Path) -> None:
    case = row.mined
    assert case is not None
    k = case["num_speculative_tokens"]
    if case["expect"] == "refused":
        report = _tool_json(case["draft"], case["target"], case["method"], k, tmp_path)
        assert report["verdict"] == "incompatible", f"{row.id}: the converter refuses this pair"
        return
    report = _tool_json(case["expect_converted"], case["target"], case["method"], k, tmp_path)
    written = _written_ids(case["expect_converted"])
    want = None if written is None else [i - 1 for i in written]
    assert report["draft"]["target_layer_ids"] == want, row.id


def test_every_known_difference_is_a_mined_case() -> None:
    # A release whose oracle results are recorded is judged in test_agreement.py: move its
    # entries to that file's KNOWN.
    assert set(KNOWN) <= {r.id for r in ROWS}
