"""How a target asked about alone gets its MTP count: stated keys, the aliases and defaults of
its config class (``knowledge/mtp_layers.py``, ``CLASS_DEFAULTS``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dflash_check.check.report import Verdict
from dflash_check.check.target_alone import check_target_mtp, read_mtp_layers
from dflash_check.errors import ConfigError
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES_BY_NAME, SGLANG, VLLM, Release
from dflash_check.knowledge.mtp_layers import CLASS_DEFAULTS, MTP_KEYS, class_defaults, mtp_engines
from dflash_check.knowledge.reviewed import in_range
from dflash_check.render.target_alone import mtp_dict, render_mtp_text, summary_line
from tests.support.helpers import files
from tests.support.releases import CITED_RELEASE

# A DeepSeek-V3 config as vLLM's test_none_overrides_fall_back_to_arch_mapping builds it: no
# MTP key at all (conformance/mined/mtp_cases.py, case mtp-deepseek-v3-no-key).
NO_KEY: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 129280,
}


def test_a_deepseek_v3_config_stating_no_key_gets_its_class_default() -> None:
    stated = read_mtp_layers(files("target", NO_KEY))
    assert (stated.layers, stated.key, stated.all_keys) == (1, None, ())
    assert [(d.engine, d.config_class) for d in stated.defaults] == [
        ("vllm", "DeepseekV3Config"),
        ("sglang", "DeepseekV3Config"),
    ]
    assert all("configuration_deepseek_v3.py" in d.citation for d in stated.defaults)


def test_the_report_says_the_count_is_a_class_default() -> None:
    report = check_target_mtp(files("target", NO_KEY), None, "not read")
    assert report.verdict is Verdict.COMPATIBLE and report.findings == ()
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert "DeepSeekMTPModel" in vllm.draft
    assert "DeepseekV3Config's default num_nextn_predict_layers, not stated" in (
        summary_line(report)
    )
    data = mtp_dict(report)
    mtp = data["mtp"]
    assert (mtp["layers"], mtp["key"], mtp["stated"]) == (1, None, {})
    assert [d["engine"] for d in mtp["class_defaults"]] == ["vllm", "sglang"]
    rows = {e["engine"]: e for e in data["engines"]}
    assert (rows["vllm"]["layers"], rows["vllm"]["class_default"]["class"]) == (
        1,
        "DeepseekV3Config",
    )
    # TensorRT-LLM's config loading was not read: no count is claimed for it
    assert (rows["trtllm"]["layers"], rows["trtllm"]["class_default"]) == (None, None)
    text = render_mtp_text(report, width=300)
    default = "layers    1: DeepseekV3Config's default ("
    (line,) = [s for s in text.splitlines() if default in s and "vllm==" in s]
    assert _vllm_cited_as(VLLM.newest, line) and not _vllm_cited_elsewhere(VLLM.newest, line)
    assert "layers    not read: its config class for this model type was not read" in text


def test_a_stated_count_wins_over_the_class_default() -> None:
    report = check_target_mtp(files("target", NO_KEY | {"num_nextn_predict_layers": 0}), None, "")
    assert (report.stated.layers, report.stated.defaults) == (0, ())
    assert [f.rule for f in report.findings] == ["DF041"]
    assert mtp_dict(report)["mtp"]["class_defaults"] == []


@pytest.mark.parametrize("value", [0, 3])
def test_the_alias_the_class_reads_is_read(value: int) -> None:
    """DeepseekV3Config stores num_mtp_layers as num_nextn_predict_layers (attribute_map)."""
    stated = read_mtp_layers(files("target", NO_KEY | {"num_mtp_layers": value}))
    assert (stated.layers, stated.key) == (value, "num_mtp_layers")


def test_the_alias_is_read_only_where_the_class_has_it() -> None:
    """Inkling's num_mtp_layers is a field of its own, not a count vLLM sizes the draft by."""
    config = NO_KEY | {"model_type": "inkling_model", "num_mtp_layers": 2}
    stated = read_mtp_layers(files("target", config))
    assert (stated.layers, stated.key, stated.defaults) == (0, None, ())


def test_a_model_type_without_a_class_default_has_no_count() -> None:
    """DeepSeek-V4's class differs by vLLM release (0.32.0's has no count): nothing assumed."""
    stated = read_mtp_layers(files("target", NO_KEY | {"model_type": "deepseek_v4"}))
    assert (stated.layers, stated.defaults) == (0, ())


@pytest.mark.parametrize("model_type", ["deepseek_v32", "kimi_k2"])
@pytest.mark.parametrize("vllm", [r.version for r in VLLM.releases])
def test_each_engine_loads_deepseek_v3s_class_for_its_aliases(model_type: str, vllm: str) -> None:
    """vLLM maps deepseek_v32 and kimi_k2 to transformers' DeepseekV3Config
    (transformers_utils/config.py) and SGLang subclasses it for them: each defaults k to 1,
    cited at the release selected (or read at the release read)."""
    config = NO_KEY | {"model_type": model_type}
    every = {e.name: None for e in mtp_engines()}  # the selection names every engine
    stated = read_mtp_layers(files("target", config), every | {"vllm": vllm})
    assert stated.layers == 1
    by_engine = {d.engine: d for d in stated.defaults}
    citation = by_engine["vllm"].citation
    assert citation.startswith((f"vllm=={vllm}:", "read at vllm==")), citation
    assert _vllm_cited_elsewhere(VLLM.release(vllm), citation) == [], citation
    assert by_engine["sglang"].citation.startswith(f"sglang=={SGLANG.newest.version}:")
    assert stated.layers_of("vllm") == stated.layers_of("sglang") == 1
    assert stated.layers_of("trtllm") is None  # its config loading was not read


def test_the_v32_target_stating_no_count_gets_each_engines_draft() -> None:
    report = check_target_mtp(
        files("target", NO_KEY | {"model_type": "deepseek_v32"}), None, "not read"
    )
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert "DeepseekV32MTPModel" in vllm.draft and report.findings == ()
    assert "DeepseekV3Config's default num_nextn_predict_layers" in summary_line(report)


def test_the_text_config_model_type_has_no_class_default() -> None:
    """The engines' MTP branches read the top-level config: a wrapper's text model type does
    not lend it its class default."""
    wrapper = {"architectures": ["Wrapper"], "model_type": "wrapper", "text_config": NO_KEY}
    assert read_mtp_layers(files("target", wrapper)).layers == 0


def test_each_class_default_names_a_key_its_engine_release_and_transformers() -> None:
    assert CLASS_DEFAULTS
    for row in CLASS_DEFAULTS:
        engine = ENGINES_BY_NAME[row.engine]
        assert row.key in MTP_KEYS and row.default > 0
        assert "transformers==" in row.citation and ".py:" in row.citation
        assert not set(row.aliases) & set(MTP_KEYS), "an alias is not a key read everywhere"
        # The range names releases the engine knows, and an engine file is cited at one of
        # them (transformers' own class alone is cited where the engine loads it unchanged).
        inside = [
            r.version for r in engine.releases if in_range(r.version, row.releases, engine.releases)
        ]
        assert inside, row
        if not row.citation.startswith("transformers=="):
            assert row.citation.split(":", 1)[0] in {f"{row.engine}=={v}" for v in inside}
    # One row per (engine, release, model type): class_defaults takes the first.
    seen = [
        (row.engine, r.version, t)
        for row in CLASS_DEFAULTS
        for r in ENGINES_BY_NAME[row.engine].releases
        if in_range(r.version, row.releases, ENGINES_BY_NAME[row.engine].releases)
        for t in row.model_types
    ]
    assert len(seen) == len(set(seen)), json.dumps(seen)


def _vllm_cited_as(release: Release, text: str) -> bool:
    """Whether ``text`` cites vLLM's code as ``release``'s own or as read at another one."""
    return f"({release.spec}:" in text or "(read at vllm==" in text


def _vllm_cited_elsewhere(release: Release, text: str) -> list[str]:
    """The vLLM citations in ``text`` that are neither ``release``'s nor said ``read at``."""
    return [
        m[1]
        for m in CITED_RELEASE.finditer(text)
        if m[1].startswith("vllm")
        and m[1] not in (release.spec, release.source)
        and not text[: m.start()].endswith("read at ")
    ]


def test_every_vllm_release_has_its_class_defaults_by_range() -> None:
    """Each release gets the class defaults of the reviewed range holding it (no row per
    release to add by hand), cited in its own code or ``read at`` the release read."""
    for release in VLLM.releases:
        for model_type in ("glm4_moe", "deepseek_v3"):
            got = class_defaults(model_type, {"vllm": release.version})
            (vllm,) = [d for d in got if d.engine == "vllm"]
            assert VLLM.in_range(release.version, vllm.releases)
            assert _vllm_cited_elsewhere(release, vllm.citation) == [], vllm.citation


# Nemotron Parse 3.5 as vLLM's test_parse_mtp_config_routes_only_causal_prefix_architecture
# builds it: no model_type, no MTP count, no layer count (case mtp-nemotron-parse).
PARSE: dict[str, Any] = {
    "architectures": ["RadioMBartPrefixForCausalLM"],
    "decoder": {"causal_vision_prefix": True, "vocab_size": 8, "d_model": 4},
}


def test_a_keyed_draft_has_the_engines_fixed_steps() -> None:
    report = check_target_mtp(files("target", PARSE), None, "not read")
    assert (report.stated.layers, report.stated.key) == (1, None)
    assert report.stated.keyed is not None
    assert (report.target.hidden_size, report.target.vocab_size) == (4, 8)
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert "ParseAuxMTPModel" in vllm.draft and report.verdict is Verdict.COMPATIBLE
    assert "decoder.causal_vision_prefix" in summary_line(report)
    data = mtp_dict(report)
    assert data["target"]["num_hidden_layers"] is None and data["mtp"]["layers"] == 1
    assert "N = not stated" in render_mtp_text(report, width=200)


def test_a_keyed_draft_reads_a_stated_layer_count() -> None:
    config = {**PARSE, "decoder": {**PARSE["decoder"], "decoder_layers": 10}}
    report = check_target_mtp(files("target", config), None, "not read")
    assert (report.target.num_hidden_layers, report.target.layers_key) == (
        10,
        "decoder.decoder_layers",
    )


def test_without_the_flag_the_architecture_is_not_keyed() -> None:
    """vLLM rewrites only a causal-prefix decoder: the same architecture without the flag is
    read as any target (and states no layer count here, so it cannot be read)."""
    config = {**PARSE, "decoder": {**PARSE["decoder"], "causal_vision_prefix": False}}
    with pytest.raises(ConfigError, match="no layer count"):
        check_target_mtp(files("target", config), None, "not read")


def _releases(registers: bool) -> list[str]:
    """The vLLM releases whose model registry (their facts) has ParseAuxMTPModel, or not."""
    return [
        r.version
        for r in VLLM.releases
        if ("ParseAuxMTPModel" in facts.for_release(r).drafts) is registers
    ]


@pytest.mark.parametrize("version", _releases(registers=False))
def test_a_release_that_registers_no_parse_draft_builds_none(version: str) -> None:
    """vLLM 0.32.0's model registry has no ParseAuxMTPModel, nor its hf_config_override a
    branch for Parse: no draft, cited there."""
    report = check_target_mtp(files("target", PARSE), None, "", releases={"vllm": version})
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert vllm.draft.startswith(f"none: vLLM {version} maps no MTP draft")
    assert f"=={version}:vllm/config/speculative.py:" in vllm.citation
    assert "DF043" in [f.rule for f in report.findings]


@pytest.mark.parametrize("version", _releases(registers=True))
def test_a_release_that_registers_the_parse_draft_builds_it(version: str) -> None:
    report = check_target_mtp(files("target", PARSE), None, "", releases={"vllm": version})
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert vllm.draft.startswith("ParseAuxMTPModel") and report.findings == ()


@pytest.mark.parametrize("version", _releases(registers=True))
def test_more_draft_tokens_than_the_parse_step_are_refused_at_its_releases_lines(
    version: str,
) -> None:
    """vLLM refuses a second draft token for Parse 3.5 while it resolves the speculative
    config (DF059): in config/speculative.py at 0.33.0, in the MTP speculator config at
    0.34.0; each release cites its own lines, a later one not read says ``read at``."""
    report = check_target_mtp(
        files("target", PARSE), None, "", num_speculative_tokens=2, releases={"vllm": version}
    )
    (found,) = [f for f in report.findings if f.rule == "DF059"]
    assert (found.severity.value, found.runtime) == ("error", "vllm")
    assert "'Parse 3.5 has only one trained MTP step'" in found.message
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert vllm.step_limit is not None and vllm.step_limit.citation in found.message
    read = dict(vllm.step_limit.read)
    assert read[version].startswith(f"vllm=={version}:") or read[version].startswith("read at ")
    assert report.verdict is Verdict.INCOMPATIBLE
    assert "error[DF059] (vLLM)" in render_mtp_text(report, width=300)


def test_the_parse_step_limit_cites_each_read_release() -> None:
    vllm = next(r for r in VLLM.mtp if r.step_limit is not None)
    assert vllm.step_limit is not None
    for version, where in vllm.step_limit.read:
        assert where.startswith(f"vllm=={version}:")
    assert vllm.step_limit.at("0.34.0").citation.endswith("spec_decode/mtp/config.py:101-106")
    assert vllm.step_limit.at("9.9.9").citation.startswith("read at vllm==")


def test_a_release_without_the_parse_draft_states_no_step_limit() -> None:
    """vLLM 0.32.0 builds no Parse draft: DF043 says so, DF059 has nothing to refuse."""
    for version in _releases(registers=False):
        report = check_target_mtp(
            files("target", PARSE), None, "", num_speculative_tokens=2, releases={"vllm": version}
        )
        assert "DF059" not in [f.rule for f in report.findings]
