"""conformance/served.py's offline part: the server's tau, what a step's report shows, and
the results file's paths named by role. The servers themselves run only through
``python -m conformance.served`` (a real vLLM install)."""

from __future__ import annotations

import json

from conformance.served import scrubbed, summary, tau_between


def test_tau_is_taken_over_the_counters_deltas() -> None:
    """(steps + accepted) / steps between two reads of /metrics; no step, no tau."""
    before = {"num_drafts": 10.0, "num_accepted_tokens": 40.0}
    after = {"num_drafts": 30.0, "num_accepted_tokens": 140.0}
    assert tau_between(before, after) == round((20 + 100) / 20, 2)
    assert tau_between(after, after) is None


def test_summary_reads_the_judged_runner_and_the_smoke_run() -> None:
    """A JSON report gives the runtime, each release's runner and the smoke outcome; a step
    without a report (exit 3) keeps its last stderr lines."""
    report = {
        "runtime": "vllm-v1==0.32.0",
        "verdict": "compatible",
        "runtime_releases": {"vllm-v1": {"release": "vllm==0.32.0", "runner": "V1"}},
        "smoke": {
            "passed": True,
            "mean_acceptance_length": 6.1,
            "lossless": True,
            "engine": {"draft_model": "/m/draft", "draft_evidence": "server"},
        },
    }
    got = summary(0, json.dumps(report), "dflash-check: note\nother")
    assert got["runners"] == {"vllm-v1": ("vllm==0.32.0", "V1")}
    assert (got["smoke_passed"], got["tau"], got["lossless"]) == (True, 6.1, True)
    assert got["draft_evidence"] == "server" and got["stderr"] == ["dflash-check: note"]
    failed = summary(3, "", "a\nb\nError: vllm server drafts with X, not the draft Y\n")
    assert failed == {"exit": 3, "stderr": ["a", "b", "Error: vllm server drafts with X, not "
                                            "the draft Y"]}  # fmt: skip


def test_paths_are_named_by_role_longest_first() -> None:
    """A model path inside the work folder is named by its role, not as WORK/…."""
    names = {"/w": "WORK", "/w/base/draft": "draft"}
    assert scrubbed({"a": ["/w/base/draft/x", "/w/y"]}, names) == {"a": ["draft/x", "WORK/y"]}
