"""A code case whose check runs when the draft is built (``model_outcome``,
``conformance/mined/code_cases.py``): the oracle takes the model stage's error as its outcome,
and only there; the model stage's record stays as data."""

from __future__ import annotations

from conformance.oracle import model_outcome

ERROR = {"type": "KeyError", "message": "'final_logit_softcapping'"}
BUILT = {"id": "x", "outcome": "accepted", "stage": None, "error": None, "model": {"error": ERROR}}


def test_a_build_error_is_the_outcome_of_a_case_that_asks_for_it() -> None:
    got = model_outcome(BUILT, {"id": "x", "model_outcome": True})
    assert (got["outcome"], got["stage"], got["error"]) == ("refused", "model", ERROR)
    assert got["model"] == {"error": ERROR}


def test_elsewhere_a_build_error_stays_data() -> None:
    assert model_outcome(BUILT, {"id": "x"}) == BUILT
    refused = {**BUILT, "outcome": "refused", "stage": "config", "error": {"type": "E"}}
    assert model_outcome(refused, {"id": "x", "model_outcome": True}) == refused
    clean = {**BUILT, "model": {"captured": [1]}}
    assert model_outcome(clean, {"id": "x", "model_outcome": True}) == clean
