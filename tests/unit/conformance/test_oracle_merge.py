"""``python -m conformance.oracle vllm REL --case PREFIX``: the rows of the cases run replace
those of the last full run, the others stay as they were."""

from __future__ import annotations

from conformance.oracle import merged


def test_a_partial_run_replaces_its_rows_in_place_and_appends_new_ones() -> None:
    old = [{"case": "a", "outcome": "accepted"}, {"case": "b", "outcome": "accepted"}]
    new = [{"case": "b", "outcome": "refused"}, {"case": "c", "outcome": "accepted"}]
    assert merged(old, new) == [
        {"case": "a", "outcome": "accepted"},
        {"case": "b", "outcome": "refused"},
        {"case": "c", "outcome": "accepted"},
    ]
