"""The facts extracted from each engine release (dflash_check/knowledge/data) and their use:
complete coverage of the target architectures a release registers, and the corrections the
extracted code showed (issue 19)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import SGLANG, VLLM, Release
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import EAGLE3_PROFILES, on_family, resolve_ids
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.unit.check.test_eagle3 import head_view
from tools.extract_engine_facts import dump

RELEASES = [
    tuple(p.name[: -len(".json")].split("-", 1)) for p in sorted(facts.DATA_DIR.glob("*.json"))
]


def check(target_patch: dict[str, Any], runtime: str) -> CheckReport:
    """The seed DFlash draft against a Qwen3-4B-shaped target patched to another class."""
    draft = copy.deepcopy(draft_config())
    target = {**copy.deepcopy(qwen3_4b_config()), **target_patch}
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", target), runtime)


def rule_ids(report: CheckReport, runtime: str) -> set[str]:
    return {f.rule for f in report.findings if f.runtime == runtime}


# -- the data itself ------------------------------------------------------------------------


@pytest.mark.parametrize(("engine", "release"), RELEASES)
def test_each_data_file_is_in_the_extractors_canonical_form(engine: str, release: str) -> None:
    """Byte for byte what the extractor writes for the same facts (sorted, compact), so a
    hand edit or a stale writer shows up as a diff."""
    path = facts.DATA_DIR / f"{engine}-{release}.json"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert dump(data) == text
    assert (data["engine"], data["release"]) == (engine, release)


def test_releases_are_listed_oldest_first_from_the_file_names() -> None:
    assert facts.known_releases("vllm") == VLLM.versions
    assert facts.known_releases("trtllm") == ()


def test_a_release_gets_its_own_facts_or_none() -> None:
    """Each release reads its own file; one without data is an error, never another's data."""
    for release in VLLM.releases:
        assert facts.for_release(release).release == release.version
    unread = replace(VLLM.newest, version="99.0.0")
    with pytest.raises(facts.MissingFacts, match=r"vllm==99\.0\.0 has no extracted facts"):
        facts.for_release(unread)


def test_vllm_capture_facts_read_from_the_code() -> None:
    """Spot checks against vLLM 0.34.0's code: capture before each DeepSeek layer and after
    the last; none in DeepSeek-V3.2's CUDA model after the last; no interface for GLM-4 MoE
    Lite, Mixtral or the text-only Qwen4Exp."""
    v34 = facts.load("vllm", "0.34.0")
    assert v34 is not None
    ds = v34.targets["DeepseekV3ForCausalLM"]
    assert ds.interface is True
    assert {s.rsplit(":", 1)[1] for s in ds.sites} == {"before-layer", "after-loop"}
    dsa = v34.targets["DeepseekV32ForCausalLM"]
    assert [s.rsplit(":", 1)[1] for s in dsa.sites] == ["before-layer"]
    for arch in ("Glm4MoeLiteForCausalLM", "MixtralForCausalLM", "Qwen4ExpForCausalLM"):
        assert v34.targets[arch].interface is False, arch
    assert v34.message("no_capture_v1") is None  # the V1 runner is gone
    v33 = facts.load("vllm", "0.33.0")
    assert v33 is not None and "aux_hidden_state_outputs" in (v33.message("no_capture_v1") or "")


def test_speculators_loaders_per_release() -> None:
    """vLLM's speculators loaders (algos.py @register_speculator): dflash2 and dspark joined."""
    v34 = facts.load("vllm", "0.34.0")
    assert v34 is not None
    assert {"dflash", "dflash2", "dspark", "eagle3"} <= set(v34.speculators)


def test_sglang_hooks_and_their_numbering() -> None:
    s = facts.load("sglang", "0.5.23")
    assert s is not None
    lite = s.targets["Glm4MoeLiteForCausalLM"]
    assert lite.hooks["eagle3"].rule == "plus-one-if-first-is-1"
    assert lite.hooks["dflash"].rule == "plus-one"
    v3 = s.targets["DeepseekV3ForCausalLM"].hooks["dflash"]
    assert v3.inherited_from == "DeepseekV2ForCausalLM"
    assert "dflash" not in s.targets["Qwen2ForCausalLM"].hooks


# -- complete coverage (DF052, DF053) -------------------------------------------------------


def test_an_architecture_no_release_registers_is_a_finding_per_engine() -> None:
    """SGLang falls back to TransformersForCausalLM, which has no capture hook: an error.
    vLLM's Transformers backend captures, but only serves what the installed transformers
    implements: a warning naming the fallback."""
    report = check({"architectures": ["NoSuchModelForCausalLM"]}, "vllm,sglang")
    found = {f.runtime: f for f in report.findings if f.rule == "DF052"}
    assert found["sglang"].severity is Severity.ERROR
    no_class = "has no model class for NoSuchModelForCausalLM"
    assert f"{SGLANG.newest.spec} {no_class}" in found["sglang"].message
    assert "sglang refuses the pair at load" in found["sglang"].message
    assert found["vllm"].severity is Severity.WARNING
    assert f"{VLLM.newest.spec} {no_class}" in found["vllm"].message
    assert "Transformers backend" in found["vllm"].message
    assert report.runtime_verdicts["sglang"] is Verdict.INCOMPATIBLE


def test_qwen4exp_cannot_capture_in_vllm_034_or_sglang_0523() -> None:
    """vLLM 0.34: the interface is inherited but the Qwen4Exp language model has no
    EagleModelMixin; SGLang 0.5.23: the inherited hook collects nothing (sglang#38589)."""
    report = check(
        {"architectures": ["Qwen4ExpForConditionalGeneration"], "model_type": "qwen4_exp"},
        "vllm,sglang",
    )
    for runtime in ("vllm", "sglang"):
        assert "DF053" in rule_ids(report, runtime), runtime
        assert report.runtime_verdicts[runtime] is Verdict.INCOMPATIBLE
    msg = next(f.message for f in report.findings if f.rule == "DF053" and f.runtime == "vllm")
    assert "must inherit from EagleModelMixin" in msg and "refuses the pair at load" in msg
    # SGLang raises nothing on that path (the hook succeeds): no load-time refusal is claimed.
    sgl = next(f for f in report.findings if f.rule == "DF053" and f.runtime == "sglang")
    assert "raises nothing at load" in sgl.message and "refuses" not in sgl.message
    assert sgl.stage is Stage.FIRST_DECODE
    vllm = next(f for f in report.findings if f.rule == "DF053" and f.runtime == "vllm")
    assert vllm.stage is Stage.LOAD


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.version)
def test_cohere_compass_cannot_capture_in_vllm(release: Release) -> None:
    """CohereCompass declares the interface, but its language model's inner model is a plain
    nn.Module: the interface's assertion refuses the pair at load, on every release read (the
    extractor reviews it as having no capture site, tools/extract_engine_facts.py)."""
    report = check(
        {"architectures": ["CohereCompassForConditionalGeneration"], "model_type": "cohere2"},
        release.spec,
    )
    assert "DF053" in rule_ids(report, "vllm")
    assert report.runtime_verdicts["vllm"] is Verdict.INCOMPATIBLE
    msg = next(f.message for f in report.findings if f.rule == "DF053")
    assert "must inherit from EagleModelMixin" in msg and f"({release.source}:" in msg


def test_a_class_without_the_interface_is_an_error_not_a_note() -> None:
    """vLLM 0.34's Qwen4ExpForCausalLM has no SupportsEagle3: the engine's V2 message."""
    report = check({"architectures": ["Qwen4ExpForCausalLM"]}, "vllm==0.34.0")
    msg = next(f.message for f in report.findings if f.rule == "DF053")
    assert "Model does not support EAGLE3 interface" in msg
    assert "vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:19" in msg


def test_a_family_the_cells_refuse_is_reported_once() -> None:
    """Mixtral: DF017 from the reviewed cell, not DF053 again."""
    report = check({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral"}, "vllm")
    ids = rule_ids(report, "vllm")
    assert "DF017" in ids and "DF053" not in ids


def test_a_served_capturing_target_has_no_coverage_finding() -> None:
    report = check({}, "vllm,sglang")
    assert not {"DF052", "DF053"} & {f.rule for f in report.findings}


def test_data_is_loaded_only_for_the_selected_engines() -> None:
    facts.load.cache_clear()
    check({}, "trtllm")
    assert facts.load.cache_info().currsize == 0
    check({}, "sglang")
    assert facts.load.cache_info().currsize == 1


# -- corrections ----------------------------------------------------------------------------


def test_sglang_glm4_moe_lite_eagle3_adds_one_only_to_lists_starting_at_1() -> None:
    """sglang==0.5.23:sglang/srt/models/glm4_moe_lite.py:805-820: a list not starting at 1 is
    taken raw as capture points (the tool added one to every list before)."""
    sglang = on_family(next(p for p in EAGLE3_PROFILES if p.name == "sglang"), "glm4_moe_lite")
    raw = resolve_ids(sglang, head_view([2, 24, 44]), 47)
    shifted = resolve_ids(sglang, head_view([1, 23, 43]), 47)
    assert raw is not None and shifted is not None
    assert tuple(t + 1 for t in raw.ids) == (2, 24, 44)
    assert tuple(t + 1 for t in shifted.ids) == (2, 24, 44)


@pytest.mark.parametrize("kind", ["dflash2", "dspark"])
def test_speculators_dflash2_and_dspark_are_loaded_by_vllm(kind: str) -> None:
    """vLLM's speculators loaders include dflash2 and dspark in every release with data
    (algos.py): the tool read them as refused ('only dflash and eagle3 are supported')."""
    from dflash_check.check.formats import normalise_draft
    from tests.unit.check.test_formats import QWEN36_NVFP4, SPECULATORS, check, config

    cfg = {**config(SPECULATORS), "speculators_model_type": kind}
    view = normalise_draft(files("draft", cfg))
    assert (view.format, view.method) == ("speculators", kind)
    for release in facts.known_releases("vllm"):
        loaded = facts.load("vllm", release)
        assert loaded is not None and kind in loaded.speculators
    report = check(cfg, QWEN36_NVFP4, runtime="vllm")
    assert "DF016" not in {f.rule for f in report.findings}, report.findings


@pytest.mark.parametrize(
    ("arch", "loaded_by"),
    [
        ("LiLiCorrDraftModel", "sglang==0.5.23, vllm==0.32.0, vllm==0.33.0, vllm==0.34.0"),
        ("MistralLarge4DSparkModel", "vllm==0.34.0"),
        ("DominoDraftModel", "SpecForge's Domino draft"),
    ],
)
def test_registered_draft_architectures_are_refused_by_name(arch: str, loaded_by: str) -> None:
    """Drafts the engines register but the tool cannot check yet: named, with the releases
    that load them (from the extracted registries), instead of 'not a DFlash draft'."""
    from dflash_check.check.formats import normalise_draft
    from dflash_check.errors import NotADraftError

    cfg = {**draft_config(), "architectures": [arch]}
    with pytest.raises(NotADraftError) as info:
        normalise_draft(files("draft", cfg))
    assert f"draft architecture {arch}" in str(info.value)
    assert loaded_by in str(info.value)
    assert "not a DFlash draft" not in str(info.value)


def test_dspark_draft_vocabulary_larger_than_the_target_is_an_error_for_sglang_only() -> None:
    """vLLM maps a draft vocabulary >= the target's identically (no d2t needed,
    vllm==0.34.0:vllm/model_executor/models/qwen3_dspark.py:267); SGLang asserts on the device
    (sgl-project/sglang#37472). The tool made it an error for every engine."""
    from tests.unit.check.test_formats_beyond_dflash import (
        DSPARK_EXPORT,
        QWEN36_27B,
        check,
        config,
        header,
    )

    target_vocab = json.loads((QWEN36_27B / "config.json").read_text())
    vocab = target_vocab.get("text_config", target_vocab)["vocab_size"]
    cfg = config(DSPARK_EXPORT) | {"draft_vocab_size": vocab + 256}
    report = check(cfg, QWEN36_27B, tensors=header(cfg, 5120), runtime="vllm,sglang")
    larger = {f.runtime for f in report.findings if f.rule == "DF007" and "> target" in f.message}
    assert larger == {"sglang"}, report.findings


def test_the_not_read_note_is_left_to_engines_whose_code_is_not_read() -> None:
    """Cohere2 MoE is in no reviewed family: vLLM 0.34's code captures after each layer (its
    general convention), SGLang 0.5.23's class has no hook (DF053); only TensorRT-LLM, whose
    code is not read as data, keeps DF051."""
    report = check(
        {"architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe"},
        "vllm,sglang,trtllm",
    )
    (note,) = [f for f in report.findings if f.rule == "DF051"]
    assert "trtllm is checked with the general convention" in note.message
    assert "DF053" in rule_ids(report, "sglang")
    assert not {"DF052", "DF053"} & rule_ids(report, "vllm")


def test_a_release_s_tables_are_the_tables_its_facts_file_holds() -> None:
    """``ReleaseFacts.tables`` names the tables read from the release's code, not the keys that
    say where the code came from; SGLang's facts hold no speculators table (its loader reads
    none), vLLM's do."""
    vllm = facts.load("vllm", VLLM.newest.version)
    assert vllm is not None and {"drafts", "speculators", "targets"} <= vllm.tables
    assert not {"archive", "cite_as", "sha256", "engine", "release"} & vllm.tables
    sglang = facts.load("sglang", SGLANG.newest.version)
    assert sglang is not None and "speculators" not in sglang.tables
