"""The conformance suite's offline part: classification, comparison and the generated page.

The engines themselves run only through ``conformance/run ENGINE`` (multi-GB installs, never in
the default tests); here the classification and comparison code runs on driver records shaped
as the real drivers write them, and the recorded results must match docs/conformance.md.
"""

from __future__ import annotations

import json

import pytest

from conformance.cases import CASES, CASES_BY_ID
from conformance.classify import (
    COLLAPSED_TAU,
    classify,
    compare,
    compare_stage,
    engine_stage,
    tool_stage,
    tool_summary,
)
from conformance.eagle3 import AUX_IDS, DRAFT_VOCAB, HIDDEN, head_config, head_shapes
from conformance.engines import ENGINES
from conformance.report import NOTES, PAGE, RESULTS, load_results, render_page
from conformance.runner import edit_for

# vLLM 0.32.0 (CPU, V1) records as vllm_driver.py writes them, shortened.
DONE = {
    "stage": "done",
    "error": None,
    "outputs": [[9, 10, 11]],
    "counters": {"drafts": 25, "draft_tokens": 175, "accepted": 127},
}
COLLAPSED = {**DONE, "counters": {"drafts": 100, "draft_tokens": 700, "accepted": 38}}
AT_DECODE = {
    "stage": "first decode",
    "error": {
        "type": "ValueError",
        "message": "DFlash drafter expects 192 concatenated aux hidden features\nmore",
    },
}
AT_LOAD = {"stage": "load", "error": {"type": "ValueError", "message": "mask_token_id is required"}}


def test_classify_each_outcome() -> None:
    """Counters give tau; a low tau collapses only a case that keeps the trained layers."""
    got = classify(DONE, trained=True)
    assert got.outcome == "generates" and got.tau == round((25 + 127) / 25, 2)
    assert classify(COLLAPSED, trained=True).outcome == "collapsed"
    assert classify(COLLAPSED, trained=False).outcome == "generates"  # an untrained draft
    decode = classify(AT_DECODE, trained=False)
    assert decode.outcome == "first-decode" and decode.tau is None
    assert decode.error == "ValueError: DFlash drafter expects 192 concatenated aux hidden features"
    assert classify(AT_LOAD, trained=True).outcome == "refused"
    refused = {"type": "ValidationError", "message": "1 validation error for VllmConfig\n\n"
               "  Value error, Model Runner V1 does not support: DFlash candidate-head drafts\n"
               "    For further information visit https://errors.pydantic.dev"}  # fmt: skip
    got = classify({"stage": "config", "error": refused}, trained=False)
    assert got.error == (
        "ValidationError: 1 validation error for VllmConfig / Value error, Model Runner V1 "
        "does not support: DFlash candidate-head drafts"
    )
    assert classify({**AT_LOAD, "stage": "config"}, trained=True).outcome == "refused"
    # Decoded without one verify step: the draft never ran.
    assert classify({**DONE, "counters": {}}, trained=True).outcome == "collapsed"
    with pytest.raises(ValueError, match="unknown stage"):
        classify({"stage": "later"}, trained=True)
    assert (COLLAPSED["counters"]["drafts"] + 38) / 100 < COLLAPSED_TAU


@pytest.mark.parametrize(
    ("outcome", "verdict", "agree"),
    [
        ("generates", "compatible", True),
        ("generates", "incompatible", False),
        ("collapsed", "compatible", False),
        ("collapsed", "incompatible", True),
        ("refused", "incompatible", True),
        ("first-decode", "compatible", False),
        ("refused", "unknown", None),
    ],
)
def test_compare(outcome: str, verdict: str, agree: bool | None) -> None:
    """Compatible agrees exactly with a pair that generates."""
    assert compare(outcome, verdict) is agree


def test_tool_summary_reads_the_runtime_verdict() -> None:
    """The verdict of the runtime asked for, and its first error finding."""
    report = {
        "verdict": "incompatible",
        "runtimes": {"vllm-v1": "incompatible"},
        "findings": [
            {"rule": "DF010", "severity": "warning", "runtime": "vllm-v1", "message": "w"},
            {"rule": "DF004", "severity": "error", "runtime": "vllm-v1", "message": "taps [6]"},
        ],
    }
    assert tool_summary(report, "vllm-v1") == ("incompatible", "DF004: taps [6]")
    assert tool_summary({"verdict": "compatible", "findings": []}, "x") == ("compatible", None)


@pytest.mark.parametrize(
    ("outcome", "verdict", "tool", "seen", "agree"),
    [
        ("refused", "incompatible", "load", "load", True),
        ("refused", "incompatible", "first-decode", "load", False),
        ("first-decode", "incompatible", "first-decode", "first-decode", True),
        ("first-decode", "incompatible", "silent", "first-decode", False),
        ("collapsed", "incompatible", "silent", "silent", True),
        # Decoded although the tool calls it incompatible: the engine said nothing.
        ("generates", "incompatible", "load", "silent", None),
        ("generates", "compatible", None, None, None),
        # The verdicts disagree: no stage to compare.
        ("collapsed", "compatible", None, "silent", None),
    ],
)
def test_compare_stage(
    outcome: str, verdict: str, tool: str | None, seen: str | None, agree: bool | None
) -> None:
    """The engine's stage comes from its outcome; a stage is compared only where the verdicts
    agree and one side has a stage."""
    assert engine_stage(outcome, verdict) == seen
    assert compare_stage(outcome, verdict, tool) is agree


def test_tool_stage_is_the_earliest_error_stage_of_the_runtime() -> None:
    """What the user meets first: the earliest stage among the runtime's errors (per-runtime
    ``stages`` over the finding's own ``stage``), warnings and other runtimes ignored."""
    report = {
        "findings": [
            {"severity": "warning", "runtimes": ["vllm-v1"], "stage": "load"},
            {"severity": "error", "runtimes": ["vllm"], "stage": "load"},
            {"severity": "error", "runtimes": ["vllm-v1"], "stage": "silent"},
            {
                "severity": "error",
                "runtimes": ["vllm-v1", "vllm"],
                "stage": "load",
                "stages": {"vllm-v1": "first-decode", "vllm": "load"},
            },
        ]
    }
    assert tool_stage(report, "vllm-v1==0.32.0") == "first-decode"
    assert tool_stage(report, "vllm") == "load"
    assert tool_stage({"findings": []}, "vllm-v1") is None


def test_cases_are_unique_and_runnable() -> None:
    """Case ids are unique, each names engines the suite knows, and every edit applies to the
    base draft config."""
    assert len(CASES_BY_ID) == len(CASES)
    base = json.loads((RESULTS.parent.parent / "tests/fixtures/tiny/draft/config.json").read_text())
    unchanged = ("ids-in-range", "draft-tokens-over-block", "eagle3-in-range")
    for case in CASES:
        assert set(case.engines) <= set(ENGINES), case.id
        assert case.method in ("dflash", "eagle3"), case.id
        if case.method == "eagle3":
            # The EAGLE-3 head's config (its weights are trained at run time); a case that
            # leaves the config alone varies a tensor instead.
            start = head_config()
            config = json.loads(json.dumps(start))
            case.edit(config)
            assert config != start or case.weights is not None or case.id in unchanged
            continue
        for name in case.engines:
            engine = ENGINES[name]
            # What the engine needs of every draft (dflash-mlx: a top-level block_size).
            start = json.loads(json.dumps(base))
            if engine.draft_edit is not None:
                engine.draft_edit(start)
            config = json.loads(json.dumps(start))
            edit_for(engine, case)(config)
            assert (config != start) or case.id in unchanged


def test_tensor_edits_give_the_shapes_the_cases_name() -> None:
    """The DFlash cases that vary a tensor or the target change exactly what they say: fc for
    three ids, fc from the draft's own hidden size, an 8-layer target whose new layers are
    copies (so V1's default aux layers (2, N//2, N-3) are three distinct layers)."""
    torch = pytest.importorskip("torch")
    fc = {"fc.weight": torch.zeros(64, 128)}
    CASES_BY_ID["ids-missing-fc-three"].weights(fc)  # type: ignore[misc]
    assert tuple(fc["fc.weight"].shape) == (64, 192)
    wide = {"fc.weight": torch.zeros(128, 128)}
    CASES_BY_ID["hidden-size-own-fc"].weights(wide)  # type: ignore[misc]
    assert tuple(wide["fc.weight"].shape) == (128, 256)
    state = {f"model.layers.{i}.mlp.w": torch.full((2,), float(i)) for i in range(6)}
    config = {"num_hidden_layers": 6, "layer_types": ["full_attention"] * 6}
    target = CASES_BY_ID["ids-top-level-8-layers"].target
    assert target is CASES_BY_ID["ids-missing-8-layers"].target is not None
    target(state, config)
    assert config["num_hidden_layers"] == len(config["layer_types"]) == 8
    assert [float(state[f"model.layers.{i}.mlp.w"][0]) for i in (6, 7)] == [4.0, 5.0]


def test_eagle3_head_is_laid_out_as_published() -> None:
    """The head is an EAGLE-3 head in NVIDIA's layout: top-level vLLM aux ids, a reduced draft
    vocabulary with its maps, fc for as many states as ids; the SpecForge case states the same
    states as nested layer outputs (one less)."""
    config = head_config()
    assert config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert config["eagle_aux_hidden_state_layer_ids"] == list(AUX_IDS)
    shapes = head_shapes(config)
    assert shapes["fc.weight"] == (HIDDEN, len(AUX_IDS) * config["target_hidden_size"])
    assert shapes["lm_head.weight"][0] == config["draft_vocab_size"] == len(DRAFT_VOCAB)
    assert config["draft_vocab_size"] < config["vocab_size"]
    nested = json.loads(json.dumps(config))
    CASES_BY_ID["eagle3-nested-ids"].edit(nested)
    assert "eagle_aux_hidden_state_layer_ids" not in nested
    assert nested["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [k - 1 for k in AUX_IDS]


def test_results_agree_with_their_classification() -> None:
    """Every recorded row's agree flag follows from its outcome and verdict, for the release
    the engine table pins, and every disagreement is explained on the page."""
    results = load_results()
    assert results, "no recorded conformance results"
    for data in results:
        engine = ENGINES[data["engine"]]
        assert data["release"] == engine.release
        # Runs recorded before the tool knew releases name the runtime alone (vllm-v1); the
        # suite now pins the release it ran (vllm-v1==0.32.0).
        assert data["tool_runtime"] in (engine.tool_runtime, engine.tool_runtime.split("==")[0])
        for row in data["results"]:
            assert row["case"] in CASES_BY_ID
            assert row["agree"] == compare(row["outcome"], row["tool_verdict"]), row["case"]
            if row["agree"] is False:
                assert (data["engine"], row["case"]) in NOTES, f"unexplained: {row['case']}"
            if "stage_agree" in row:  # recorded since the stage is compared (2026-12-04)
                got = compare_stage(row["outcome"], row["tool_verdict"], row["tool_stage"])
                assert row["stage_agree"] == got, row["case"]
                if got is False:
                    assert (data["engine"], row["case"]) in NOTES, f"stage: {row['case']}"


def test_page_is_generated_from_the_results() -> None:
    """docs/conformance.md is what conformance/report.py renders from the recorded results."""
    assert PAGE.read_text() == render_page(load_results(), NOTES)
