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

from conformance.agreement import (
    RESULTS,
    Row,
    agreement,
    explained,
    judge,
    judge_mtp,
    pair_args,
    rows,
)

ROWS = list(rows())
KNOWN: dict[str, str] = {}
"""Disagreements whose knowledge fix is pending, by row id -> "issue N: what the engine does
(cited)": strict xfails, which fail once the fix lands so that the entry is removed. (The
Qwen3-Omni thinker_config and DSpark contract cases, the legacy layer_ids cases, SGLang's
Domino refusals (also those under DP attention or one draft token: the server settings,
``--engine-arg``), vLLM 0.32/0.33 refusing repeated ids, the DeepSeek-V3 config stating no
MTP count (its config class's default, ``knowledge/mtp_layers.py``) and Nemotron Parse's
one-step draft keyed on its architecture (``KEYED_MTP`` there) and Kimi K2 asked for MTP
(vLLM 0.32/0.33 refuse the method, 0.34 keeps the target's own class: ``vllm_mtp.py``) and the
Laguna DFlash draft whose unstated MLP layout vLLM builds as MoE under the target's layer names
(DF093) were here until issue 29's knowledge fixes reached main; the two Muse Glimmer mapping
cases are explained instead.)"""
NOT_REPRODUCED = {k for k, v in explained().items() if v.get("not_reproduced")}
"""Mined cases the engine refuses for a reason its explanation names (the case's configs, not
the test's assertion): their own test must pass on the release's wheel instead."""


def test_results_are_recorded() -> None:
    assert ROWS, "no oracle results under conformance/results/oracle"
    for path in RESULTS.glob("*.json"):
        text = path.read_text()
        assert not re.search(r"/(tmp|home|root|work)/", text), f"{path.name}: a machine path"


@pytest.mark.parametrize("row", [r for r in ROWS if r.mined], ids=lambda r: r.id)
def test_the_oracle_reproduces_the_engine_test(row: Row) -> None:
    """The release's code did what its own test asserts (else the case is mis-transcribed)."""
    assert row.mined is not None
    if row.id in NOT_REPRODUCED:
        ran = _engine_tests(row)
        assert ran.get(_base(row.mined["test"])) == "passed", f"{row.id}: its test on the wheel"
        assert row.case["stage"] == "config", "refused before the check the test covers"
        return
    assert row.case["outcome"] == row.mined["expect"], row.case["engine_error"]
    if row.mined.get("expect_match"):
        assert re.search(row.mined["expect_match"], row.case["engine_error"])
    for key in ("expect_aux_layers", "expect_target_layer_ids"):  # vLLM's / SGLang's name
        if row.mined.get(key) is not None:
            assert row.case["aux_layers"] == row.mined[key]
    expect_mtp = row.mined.get("expect_mtp")  # an MTP case: the draft config vLLM derived
    if expect_mtp is not None:
        derived = row.case["mtp"]
        assert derived["architectures"] == expect_mtp["architectures"]
        if expect_mtp["n_predict"] is not None:
            assert derived["n_predict"] == expect_mtp["n_predict"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_tool_agrees_with_the_engine(
    row: Row, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if row.id in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[row.id]))
    got, verdict, stages = agreement(row, tmp_path)
    note = explained().get(row.id)
    if note is not None:
        assert got == "disagree", f"explained difference no longer differs: remove {row.id}"
        assert re.search(r"==[\w.]+:\S+:\d+", note["cite"]), "an explanation cites the engine"
        return
    assert got in ("agree", "beyond"), (
        f"{row.id}: engine {row.case['outcome']} ({row.case['stage']}: "
        f"{row.case['engine_error']}); tool {verdict}, error stages {sorted(stages)}"
    )


@pytest.mark.parametrize(("engine", "length"), [("vllm", True), ("sglang", False)])
def test_a_corpus_pair_gets_the_settings_its_oracle_started(
    engine: str, length: bool, tmp_path: Path
) -> None:
    """SGLang's oracle starts a corpus pair with the method alone (SGLang picks the draft
    length): handed vLLM's 15, the tool judged a ``--speculative-num-draft-tokens 16`` server
    and its refusal hid as ``beyond``."""
    row = Row(engine, "0", {"case": "specforge-qwen3-8b-dspark", "kind": "corpus"}, None)
    args = pair_args(row, tmp_path)
    assert ("--num-speculative-tokens" in args) is length
    assert args[args.index("--speculative-method") + 1] == "dspark"


def test_the_judge_can_fail() -> None:
    """A refusal the tool calls compatible, or places after start-up, disagrees."""
    refused = Row("vllm", "0", {"case": "x", "outcome": "refused", "kind": "corpus"}, None)
    assert judge(refused, "compatible", set()) == "disagree"
    assert judge(refused, "incompatible", {"first-decode"}) == "disagree"
    assert judge(refused, "incompatible", {"load"}) == "agree"
    accepted = Row("vllm", "0", {"case": "x", "outcome": "accepted", "kind": "mined"}, {})
    assert judge(accepted, "incompatible", {"load"}) == "disagree"
    assert judge(accepted, "unknown", set()) == "disagree"


def test_the_mtp_judge_can_fail() -> None:
    """An MTP case agrees only on the architecture the engine built and its n_predict."""
    derived = {"architectures": ["Step5MTP"], "n_predict": 3}
    accepted = Row(
        "vllm", "0", {"case": "x", "outcome": "accepted", "mtp": derived}, {"draft": None}
    )
    vllm = {"engine": "vllm", "draft": "Step5MTP (k from num_nextn_predict_layers)"}
    report = {"verdict": "compatible", "engines": [vllm], "mtp": {"layers": 3}, "findings": []}
    assert judge_mtp(accepted, report)[0] == "agree"
    assert judge_mtp(accepted, {**report, "mtp": {"layers": 1}})[0] == "disagree"
    other = {**vllm, "draft": "none: vLLM 0.33.0 maps no MTP draft for this architecture"}
    assert judge_mtp(accepted, {**report, "engines": [other]})[0] == "disagree"
    assert judge_mtp(accepted, {**report, "verdict": "incompatible"})[0] == "disagree"
    refused = Row("vllm", "0", {"case": "x", "outcome": "refused"}, {"draft": None})
    error = {"rule": "DF044", "severity": "error", "runtime": "vllm", "stage": "load"}
    assert judge_mtp(refused, {**report, "verdict": "incompatible", "findings": [error]})[0] == (
        "agree"
    )
    assert judge_mtp(refused, report)[0] == "disagree"
    # The engine refusing the method itself (DF063, vLLM 0.33.0 on kimi_k2) is a load refusal.
    method = {**error, "rule": "DF063"}
    assert judge_mtp(refused, {**report, "verdict": "incompatible", "findings": [method]})[0] == (
        "agree"
    )
    # A refusal at start-up: an error the tool places later (or nowhere) disagrees.
    later = {**error, "stage": "first-decode"}
    assert judge_mtp(refused, {**report, "verdict": "incompatible", "findings": [later]})[0] == (
        "disagree"
    )
    other_engine = {**error, "runtime": "sglang"}
    assert (
        judge_mtp(refused, {**report, "verdict": "incompatible", "findings": [other_engine]})[0]
        == "disagree"
    )


def test_the_mtp_judge_reads_a_target_class_kept_as_the_draft() -> None:
    """An engine that keeps the target's own config as the draft's (vLLM 0.34.0 on kimi_k2)
    agrees only where the tool's row names that class."""
    derived = {"architectures": ["DeepseekV3ForCausalLM"], "n_predict": None}
    accepted = Row(
        "vllm", "0", {"case": "x", "outcome": "accepted", "mtp": derived}, {"draft": None}
    )
    own = {"engine": "vllm", "draft": "DeepseekV3ForCausalLM, the target's own class"}
    report = {"verdict": "compatible", "engines": [own], "mtp": {"layers": 1}, "findings": []}
    assert judge_mtp(accepted, report)[0] == "agree"
    none = {**own, "draft": "none: vLLM 0.34.0 maps no MTP draft for this architecture"}
    assert judge_mtp(accepted, {**report, "engines": [none]})[0] == "disagree"


def _corpus_row(fc_matches_capture: bool) -> Row:
    """A corpus pair the config stages accepted, with the model stage's fc judgement."""
    model = {"captured": [2, 18], "fc_in_features": 12288, "target_hidden": 4096}
    model["fc_matches_capture"] = fc_matches_capture
    return Row(
        "vllm", "0", {"case": "x", "outcome": "accepted", "kind": "corpus", "model": model}, None
    )


def test_an_fc_wider_than_the_capture_is_a_refusal() -> None:
    """The model stage built both models and the fc does not take the captured layers: the
    drafter's first forward fails (at start-up or at the first decode, the runner's choice)."""
    wider = _corpus_row(fc_matches_capture=False)
    assert judge(wider, "compatible", set()) == "disagree"
    assert judge(wider, "incompatible", {"load"}) == "agree"
    assert judge(wider, "incompatible", {"first-decode"}) == "agree"
    assert judge(wider, "incompatible", {"silent"}) == "disagree"
    assert judge(_corpus_row(fc_matches_capture=True), "compatible", set()) == "agree"


def test_every_mined_case_was_run() -> None:
    for path in RESULTS.glob("*.json"):
        data = json.loads(path.read_text())
        mined = RESULTS.parents[1] / "mined" / f"{data['engine']}-{data['release']}.json"
        wanted = {c["id"] for c in json.loads(mined.read_text())["cases"]}
        assert wanted <= {r["case"] for r in data["results"]}, path.name


def test_the_mined_tests_pass_against_the_installed_release() -> None:
    """Each mined case's own test passed against the release's wheel where they were run
    (``python -m conformance.oracle ENGINE RELEASE --engine-tests SRC``). A file that does not
    import against the wheel (SGLang's stored versions are not the tag's: the Domino tests
    import ``is_dflash_domino_projector``, which 0.5.23 lacks) runs none of its tests; its
    cases stand on the oracle's run of the release's code alone, and must be reproduced there
    (``test_the_oracle_reproduces_the_engine_test``).

    A case made from part of its test (``part``: the assertion it takes) has a test that cannot
    pass on the release; it must fail there for the reason the case records (``part_failure``),
    so that a changed reason (or a test that now passes) is reviewed."""
    for path in RESULTS.glob("*.json"):
        data = json.loads(path.read_text())
        if "engine_tests" not in data:
            continue
        outcome: dict[str, set[str]] = {}
        uncollected = set()
        for record in data["engine_tests"]["records"]:
            outcome.setdefault(record["test"].split("[")[0], set()).add(record["outcome"])
            if "::" not in record["test"] and record["outcome"] == "error":
                uncollected.add(record["test"])
        mined = RESULTS.parents[1] / "mined" / f"{data['engine']}-{data['release']}.json"
        for case in json.loads(mined.read_text())["cases"]:
            if case.get("part") is not None:
                assert part_failure(case, data["engine_tests"]["records"]) is None, case["id"]
                continue
            if case["test"].split("::")[0] in uncollected:
                continue
            if case["test"].startswith(f"{data['engine']}=="):  # from the release's code
                continue
            assert outcome.get(case["test"].split("[")[0]) == {"passed"}, case["test"]


def part_failure(case: dict, records: list[dict]) -> str | None:
    """What is wrong with how a case made from part of its test (``part``) saw that test run
    on the release (``records``, ``--engine-tests``): its test, or the file when the file did
    not import, must be recorded as failed for the reason ``part["release_fails"]`` matches;
    None when it was."""
    test = case["test"].split("[")[0]
    ran = [r for r in records if r["test"].split("[")[0] == test]
    ran = ran or [r for r in records if r["test"] == test.split("::")[0]]
    if not ran:
        return f"{test}: not run on the release (--engine-tests)"
    for record in ran:
        if record["outcome"] not in ("failed", "error"):
            return f"{record['test']}: {record['outcome']} on the release; the case takes part"
        if not re.search(case["part"]["release_fails"], record.get("message") or ""):
            return f"{record['test']}: fails for another reason: {record.get('message')}"
    return None


def test_a_case_from_part_of_its_test_expects_its_recorded_failure() -> None:
    """``part_failure`` holds a partial case to the reason its test fails on the release."""
    case = {"test": "t.py::T::test_x", "part": {"release_fails": "^TypeError: input_vocab"}}
    failed = {"test": "t.py::T::test_x", "outcome": "failed", "message": "TypeError: input_vocab"}
    assert part_failure(case, [failed]) is None
    assert part_failure(case, [{"test": "t.py", "outcome": "error", "message": "TypeError: "
                                "input_vocab_size"}]) is None  # fmt: skip
    assert "passed" in (part_failure(case, [{**failed, "outcome": "passed"}]) or "")
    assert "another reason" in (part_failure(case, [{**failed, "message": "ImportError"}]) or "")
    assert "not run" in (part_failure(case, [{**failed, "test": "u.py::test_y"}]) or "")


def _base(test: str) -> tuple[str, str]:
    """(test id without its parameters, the parameter row's index) of an engine test id or a
    mined case's ``test`` (``name[2]`` and pytest's ``name[...-expected2]`` alike)."""
    name, _, params = test.partition("[")
    digits = re.search(r"(\d+)\]$", f"[{params}") if params else None
    return name, digits.group(1) if digits else ""


def _engine_tests(row: Row) -> dict[tuple[str, str], str]:
    """What each of the release's own tests did on its wheel (``--engine-tests``), by
    ``_base``."""
    data = json.loads((RESULTS / f"{row.engine}-{row.release}.json").read_text())
    records = (data.get("engine_tests") or {}).get("records") or []
    return {_base(r["test"]): r["outcome"] for r in records}
