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
from dflash_check.knowledge.engines import VLLM
from dflash_check.knowledge.mtp_layers import CLASS_DEFAULTS, MTP_KEYS, class_default
from dflash_check.render.target_alone import mtp_dict, render_mtp_text, summary_line
from tests.support.helpers import files

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
    assert stated.default is not None and stated.default.config_class == "DeepseekV3Config"
    assert "configuration_deepseek_v3.py" in stated.default.citation


def test_the_report_says_the_count_is_a_class_default() -> None:
    report = check_target_mtp(files("target", NO_KEY), None, "not read")
    assert report.verdict is Verdict.COMPATIBLE and report.findings == ()
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert "DeepSeekMTPModel" in vllm.draft
    assert "DeepseekV3Config's default num_nextn_predict_layers, not stated" in (
        summary_line(report)
    )
    mtp = mtp_dict(report)["mtp"]
    assert (mtp["layers"], mtp["key"], mtp["stated"]) == (1, None, {})
    assert mtp["class_default"]["class"] == "DeepseekV3Config"
    assert "defaults it to 1" in render_mtp_text(report, width=200)


def test_a_stated_count_wins_over_the_class_default() -> None:
    report = check_target_mtp(files("target", NO_KEY | {"num_nextn_predict_layers": 0}), None, "")
    assert (report.stated.layers, report.stated.default) == (0, None)
    assert [f.rule for f in report.findings] == ["DF041"]
    assert mtp_dict(report)["mtp"]["class_default"] is None


@pytest.mark.parametrize("value", [0, 3])
def test_the_alias_the_class_reads_is_read(value: int) -> None:
    """DeepseekV3Config stores num_mtp_layers as num_nextn_predict_layers (attribute_map)."""
    stated = read_mtp_layers(files("target", NO_KEY | {"num_mtp_layers": value}))
    assert (stated.layers, stated.key) == (value, "num_mtp_layers")


def test_the_alias_is_read_only_where_the_class_has_it() -> None:
    """Inkling's num_mtp_layers is a field of its own, not a count vLLM sizes the draft by."""
    config = NO_KEY | {"model_type": "inkling_model", "num_mtp_layers": 2}
    stated = read_mtp_layers(files("target", config))
    assert (stated.layers, stated.key, stated.default) == (0, None, None)


def test_a_model_type_without_a_class_default_has_no_count() -> None:
    """DeepSeek-V3.2's config class (vLLM's for its type) is not in the table: nothing assumed."""
    stated = read_mtp_layers(files("target", NO_KEY | {"model_type": "deepseek_v32"}))
    assert (stated.layers, stated.default) == (0, None)


def test_the_text_config_model_type_has_no_class_default() -> None:
    """The engines' MTP branches read the top-level config: a wrapper's text model type does
    not lend it its class default."""
    wrapper = {"architectures": ["Wrapper"], "model_type": "wrapper", "text_config": NO_KEY}
    assert read_mtp_layers(files("target", wrapper)).layers == 0


def test_each_class_default_names_a_key_and_its_transformers_release() -> None:
    assert CLASS_DEFAULTS
    for row in CLASS_DEFAULTS:
        assert row.key in MTP_KEYS and row.default > 0
        assert row.citation.startswith("transformers==") and ".py:" in row.citation
        assert not set(row.aliases) & set(MTP_KEYS), "an alias is not a key read everywhere"
        for model_type in row.model_types:
            assert class_default(model_type) is row
    types = [t for row in CLASS_DEFAULTS for t in row.model_types]
    assert len(types) == len(set(types)), json.dumps(types)


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
    """vLLM 0.32.0's model registry has no ParseAuxMTPModel: no draft, cited there."""
    report = check_target_mtp(files("target", PARSE), None, "", releases={"vllm": version})
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert vllm.draft.startswith(f"none: vLLM {version} registers no ParseAuxMTPModel")
    assert f"=={version}:vllm/model_executor/models/registry.py:" in vllm.citation
    assert "DF043" in [f.rule for f in report.findings]


@pytest.mark.parametrize("version", _releases(registers=True))
def test_a_release_that_registers_the_parse_draft_builds_it(version: str) -> None:
    report = check_target_mtp(files("target", PARSE), None, "", releases={"vllm": version})
    vllm = next(r for r in report.engines if r.engine == "vllm")
    assert vllm.draft.startswith("ParseAuxMTPModel") and report.findings == ()
