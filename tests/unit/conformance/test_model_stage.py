"""Every stop of the oracle's model stage is named (``conformance/model_stage.py``)."""

from __future__ import annotations

import json

import pytest

from conformance.agreement import RESULTS
from conformance.model_stage import STOPS, stop_for

ERRORS = sorted(
    {
        (path.name, row["case"], row["model"]["error"])
        for path in RESULTS.glob("*.json")
        for row in json.loads(path.read_text())["results"]
        if (row.get("model") or {}).get("error")
    }
)


@pytest.mark.parametrize(("results", "case", "error"), ERRORS, ids=lambda v: str(v)[:60])
def test_every_model_stage_error_is_named(results: str, case: str, error: str) -> None:
    assert stop_for(error) is not None, f"{results} {case}: name this stop: {error}"


def test_an_unnamed_error_is_not_matched() -> None:
    assert stop_for("RuntimeError: something new") is None
    assert {s.kind for s in STOPS} <= {"cpu", "case", "engine"}
