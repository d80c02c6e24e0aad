"""The draft formats engines serve beyond DFlash: DSpark, the Muse Glimmer assistant, Laguna.

Each gets a verdict (not "not a DFlash draft") against a plausible target: compatible when the
config is what the engines load, incompatible with the right rule when it is not. Fixtures are
modelled on published configs (sources in tests/fixtures/drafts/README.md); headers are written
per test, header-only, with the tensor names the engines load.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.formats import format_named, normalise_draft
from dflash_check.check.report import CheckReport, Severity
from dflash_check.check.target import normalise_target
from dflash_check.errors import ConfigError
from dflash_check.knowledge.engines import VLLM
from dflash_check.knowledge.registered_drafts import DraftNames
from dflash_check.render.table import render_text
from dflash_check.views import IdSource, TensorInfo
from tests.support.helpers import FIXTURES, check_files, fc_tensors, files, invoke_cli, write_model

DRAFTS = FIXTURES / "drafts"
TARGETS = FIXTURES / "targets"
DSPARK_TRAINING = DRAFTS / "sgl-project--SpecForge-qwen3-8b-dspark"
DSPARK_EXPORT = DRAFTS / "sgl-project--SpecForge-qwen3.6-27b-dspark-export"
MUSE = DRAFTS / "meta-models--Muse-Glimmer-30B-assistant"
LAGUNA = DRAFTS / "poolside--Laguna-S-2.1-DFlash"
QWEN3_8B = TARGETS / "Qwen--Qwen3-8B"
QWEN36_27B = TARGETS / "Qwen--Qwen3.6-27B"
MUSE_TARGET = TARGETS / "meta-models--Muse-Glimmer-30B"
LAGUNA_TARGET = TARGETS / "poolside--Laguna-S-2.1"


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json (a fresh copy)."""
    return copy.deepcopy(json.loads((folder / "config.json").read_text()))


def header(cfg: dict[str, Any], target_hidden: int, **extra: TensorInfo) -> dict[str, TensorInfo]:
    """Return header tensors for a draft config: fc sized from its own ids, plus ``extra``."""
    return {**fc_tensors(cfg, target_hidden=target_hidden), **extra}


def check(
    draft: dict[str, Any] | Path,
    target: dict[str, Any] | Path,
    runtime: str = "portable",
    tensors: dict[str, TensorInfo] | None = None,
) -> CheckReport:
    """Check a pair of configs (or fixture folders) in process."""
    d = config(draft) if isinstance(draft, Path) else draft
    t = config(target) if isinstance(target, Path) else target
    return check_files(files("draft", d, tensors), files("target", t), runtime)


def hits(report: CheckReport, rule: str) -> dict[str | None, Severity]:
    """Return {runtime: severity} of a rule's findings."""
    return {f.runtime: f.severity for f in report.findings if f.rule == rule}


def errors(report: CheckReport) -> set[str]:
    """Return the rules with error findings."""
    return {f.rule for f in report.findings if f.severity is Severity.ERROR}


def verdicts(report: CheckReport) -> dict[str, str]:
    """Return each runtime's verdict."""
    return {name: v.value for name, v in report.runtime_verdicts.items()}


# -- DSpark -----------------------------------------------------------------------------------


def test_dspark_training_layout_is_read_from_dflash_config() -> None:
    """SpecForge's layout: ids, mask and the Markov head in dflash_config, block at the top."""
    view = normalise_draft(files("draft", config(DSPARK_TRAINING)))
    assert (view.format, view.method) == ("dspark", "dspark")
    assert view.target_layer_ids == (1, 9, 17, 25, 33)
    assert view.layer_ids_key == "dflash_config.target_layer_ids"
    assert (view.dflash.mask_token_id, view.dflash.mask_token_key) == (
        151669,
        "dflash_config.mask_token_id",
    )
    assert (view.dflash.block_size, view.dflash.block_size_key) == (16, "block_size")
    assert (view.dspark.markov_rank, view.dspark.markov_rank_key) == (
        256,
        "dflash_config.markov_rank",
    )
    assert view.dspark.markov_head_type == "vanilla"
    assert view.id_sources == (IdSource("dflash_config.target_layer_ids", (1, 9, 17, 25, 33)),)


def test_dspark_export_is_compatible_with_its_target(tmp_path: Path) -> None:
    """The exported layout (Markov keys at the top level) with the 64-layer Qwen3.6-27B: every
    runtime that loads DSpark accepts it, and the fc width matches."""
    cfg = config(DSPARK_EXPORT)
    report = check(cfg, QWEN36_27B, tensors=header(cfg, 5120))
    assert [p.name for p in report.profiles] == ["vllm", "sglang", "trtllm"]
    assert report.verdict.value == "compatible", report.findings
    assert report.findings == ()
    # The same through the CLI, with a header-only model.safetensors.
    draft = write_model(tmp_path / "draft", cfg, header(cfg, 5120))
    result = invoke_cli("pair", str(draft), str(QWEN36_27B))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("compatible")


def test_dspark_training_layout_fails_vllm_only() -> None:
    """vLLM's Qwen3 DSpark reads a top-level markov_rank; SGLang also reads the nested one."""
    report = check(DSPARK_TRAINING, QWEN3_8B)
    assert verdicts(report) == {
        "vllm": "incompatible",
        "sglang": "compatible",
        "trtllm": "compatible",
    }
    (finding,) = [f for f in report.findings if f.rule == "DF025"]
    assert finding.runtime == "vllm"
    assert "reads top-level markov_rank" in finding.message
    assert "only in dflash_config.markov_rank" in finding.message


def test_dspark_cli_names_the_rule_for_the_training_layout() -> None:
    """End to end: exit 1, DF025 and the runtime in the report."""
    result = invoke_cli("pair", str(DSPARK_TRAINING), str(QWEN3_8B), "-r", "vllm,sglang")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error[DF025]" in result.stdout
    assert "not a DFlash draft" not in result.stdout + result.stderr


def test_dspark_prefixed_keys_come_first_and_every_id_list_is_kept() -> None:
    """dspark_* keys win as SGLang reads them; id_sources keeps both lists raw."""
    cfg = config(DSPARK_EXPORT)
    cfg |= {
        "dspark_target_layer_ids": [3, 18, 33, 48, 62],
        "dspark_noise_token_id": 248070,
        "dspark_block_size": 7,
        "dspark_markov_rank": 128,
    }
    view = normalise_draft(files("draft", cfg))
    assert (view.target_layer_ids, view.layer_ids_key) == (
        (3, 18, 33, 48, 62),
        "dspark_target_layer_ids",
    )
    assert view.layer_ids_conversion is None  # +1 in vLLM, like DFlash ids
    assert view.dflash.mask_token_key == "dspark_noise_token_id"
    assert (view.dflash.block_size, view.dflash.block_size_key) == (7, "dspark_block_size")
    assert (view.dspark.markov_rank, view.dspark.markov_rank_key) == (128, "dspark_markov_rank")
    assert view.id_sources == (
        IdSource("dflash_config.target_layer_ids", (2, 17, 32, 47, 62)),
        IdSource("dspark_target_layer_ids", (3, 18, 33, 48, 62)),
    )


def test_dspark_config_wins_over_dflash_config() -> None:
    """SGLang merges {**dflash_config, **dspark_config}: the dspark_config value is read."""
    cfg = config(DSPARK_TRAINING)
    cfg["dspark_config"] = {"markov_rank": 64, "markov_head_type": "gated"}
    view = normalise_draft(files("draft", cfg))
    assert (view.dspark.markov_rank, view.dspark.markov_rank_key) == (
        64,
        "dspark_config.markov_rank",
    )
    assert (view.dspark.markov_head_type, view.dspark.markov_head_type_key) == (
        "gated",
        "dspark_config.markov_head_type",
    )


def v41_draft() -> dict[str, Any]:
    """Return a DeepSeek-V4.1 DSpark draft config whose ids are vLLM aux indices."""
    cfg = config(DSPARK_EXPORT)
    del cfg["dflash_config"]["target_layer_ids"]
    return cfg | {
        "architectures": ["DSparkV41DraftModel"],
        "model_type": "deepseek_v41",
        "dspark_target_layer_ids": [61, 62, 63],
        "dspark_markov_rank": 256,
    }


def test_deepseek_v41_ids_are_converted_once_and_shown() -> None:
    """A deepseek_v41 draft's dspark_target_layer_ids are raw vLLM aux indices: t = k - 1."""
    cfg = v41_draft()
    view = normalise_draft(files("draft", cfg))
    assert view.target_layer_ids == (60, 61, 62)
    assert view.id_sources == (IdSource("dspark_target_layer_ids", (61, 62, 63)),)
    assert view.layer_ids_conversion is not None
    assert "[61, 62, 63] of a deepseek_v41 draft are vLLM aux indices" in view.layer_ids_conversion
    report = check(cfg, QWEN36_27B, runtime="vllm")
    text = " ".join(render_text(report, width=400).split())
    assert "as DFlash layer ids: [60, 61, 62]" in text


def test_deepseek_v41_draft_resolves_to_the_same_layers_for_vllm() -> None:
    """vLLM feeds a deepseek_v41 draft the layers its converted ids name: no DF009."""
    report = check(v41_draft(), QWEN36_27B, runtime="vllm")
    assert report.verdict.value == "compatible", report.findings


def test_dspark_architectures_decide_the_runtimes() -> None:
    """LingDSparkModel is SGLang's (not in vLLM's registry): the portable check skips vLLM and
    naming vLLM fails DF016 with the runtimes that do load it."""
    cfg = config(DSPARK_EXPORT) | {"architectures": ["LingDSparkModel"]}
    report = check(cfg, QWEN36_27B)
    assert [p.name for p in report.profiles] == ["sglang", "trtllm"]
    assert report.verdict.value == "compatible", report.findings
    named = check(cfg, QWEN36_27B, runtime="vllm")
    (finding,) = [f for f in named.findings if f.rule == "DF016"]
    assert f"which {VLLM.newest.spec} does not load" in finding.message
    assert "loaded by: sglang==0.5.23, trtllm" in finding.message
    assert format_named("dspark").loaded_by(DraftNames("dspark", ("LingDSparkModel",))) == (
        "sglang==0.5.23",
        "trtllm",
    )


@pytest.mark.parametrize(
    ("changes", "runtime", "needle"),
    [
        ({"markov_rank": 0}, "sglang", "DSpark draft requires markov_rank > 0"),
        ({"markov_head_type": "lstm"}, "sglang", "builds only vanilla, gated, rnn heads"),
        ({"markov_head_type": None}, "sglang", "DSpark requires markov_head_type"),
        ({"markov_rank": None}, "vllm", "states a Markov rank nowhere"),
    ],
)
def test_dspark_markov_head_per_engine(changes: dict[str, Any], runtime: str, needle: str) -> None:
    """DF025 names the engine that refuses each defect, with its message."""
    cfg = config(DSPARK_EXPORT)
    for key, value in changes.items():
        if value is None:
            cfg.pop(key)
        else:
            cfg[key] = value
    report = check(cfg, QWEN36_27B)
    found = [f for f in report.findings if f.rule == "DF025" and f.runtime == runtime]
    assert found and needle in found[0].message, report.findings
    assert report.runtime_verdicts[runtime].value == "incompatible"


def test_dspark_head_type_is_optional_with_prefixed_keys() -> None:
    """SGLang asks for markov_head_type only when the draft uses no dspark_* keys."""
    cfg = config(DSPARK_EXPORT)
    del cfg["markov_head_type"]
    cfg["dspark_noise_token_id"] = 248070
    assert "sglang" not in hits(check(cfg, QWEN36_27B), "DF025")


def test_dspark_mask_keys_that_disagree_are_flagged_per_engine() -> None:
    """vLLM takes dflash_config.mask_token_id first, SGLang dspark_noise_token_id: DF026 names
    what each engine feeds; the same id under both keys is fine."""
    cfg = config(DSPARK_EXPORT) | {"dspark_noise_token_id": 248070}
    assert hits(check(cfg, QWEN36_27B), "DF026") == {}
    cfg["dspark_noise_token_id"] = 248071
    report = check(cfg, QWEN36_27B)
    assert hits(report, "DF026") == {"vllm": Severity.WARNING, "sglang": Severity.WARNING}
    message = next(f.message for f in report.findings if f.rule == "DF026")
    assert "vllm feeds dflash_config.mask_token_id = 248070" in message
    assert "sglang feeds dspark_noise_token_id = 248071" in message
    # Checking vLLM alone still says so: the other key is what SGLang would have fed.
    assert hits(check(cfg, QWEN36_27B, runtime="vllm"), "DF026") == {"vllm": Severity.WARNING}


def test_dspark_without_a_mask_is_df008() -> None:
    """A DSpark draft needs its mask (SGLang has no tokenizer fallback): DF008, every runtime."""
    cfg = config(DSPARK_EXPORT)
    del cfg["dflash_config"]["mask_token_id"]
    assert "DF008" in errors(check(cfg, QWEN36_27B))


def test_dspark_reduced_vocabulary_needs_its_own_lm_head() -> None:
    """vLLM's Qwen3 DSpark cannot share the target head with a reduced vocabulary (DF027); the
    draft that ships lm_head and d2t passes both DF027 and DF007."""
    cfg = config(DSPARK_EXPORT) | {"draft_vocab_size": 32000}
    shipped = header(
        cfg,
        5120,
        **{"lm_head.weight": TensorInfo("BF16", (32000, 5120)), "d2t": TensorInfo("I64", (32000,))},
    )
    report = check(cfg, QWEN36_27B, tensors=shipped)
    assert {"DF027", "DF007"} & errors(report) == set(), report.findings
    bare = check(cfg, QWEN36_27B, tensors=header(cfg, 5120, d2t=TensorInfo("I64", (32000,))))
    assert hits(bare, "DF027") == {"vllm": Severity.ERROR}
    assert verdicts(bare)["sglang"] == "compatible"


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"dspark_config": "vanilla"}, "field 'dspark_config' must be an object"),
        ({"markov_head_type": 3}, "field 'markov_head_type' must be a string"),
        ({"dspark_target_layer_ids": "1,2"}, "field 'dspark_target_layer_ids' must be a list"),
        ({"dspark_noise_token_id": -1}, "field 'dspark_noise_token_id' must be >= 0"),
    ],
)
def test_malformed_dspark_keys_are_one_line(
    tmp_path: Path, changes: dict[str, Any], needle: str
) -> None:
    """Ill-typed DSpark keys are malformed input: exit 3, one line naming the field."""
    draft = write_model(tmp_path / "draft", config(DSPARK_EXPORT) | changes)
    result = invoke_cli("pair", str(draft), str(QWEN36_27B))
    assert result.returncode == 3, result.stdout + result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_dspark_anchor_in_dflash_config_fails_vllm() -> None:
    """DSpark's anchor switch is top-level; copied into dflash_config, vLLM V2's DFlash parent
    refuses it (DF021), while SGLang loads the draft."""
    cfg = config(DSPARK_EXPORT) | {"sample_from_anchor": True}
    assert hits(check(cfg, QWEN36_27B), "DF021") == {}
    cfg["dflash_config"]["sample_from_anchor"] = True
    report = check(cfg, QWEN36_27B)
    assert hits(report, "DF021") == {"vllm": Severity.ERROR}
    assert verdicts(report)["sglang"] == "compatible"


def test_dspark_on_vllm_v1_is_refused_with_the_engine_message() -> None:
    """vLLM's Model Runner V1 (opt-in profile) refuses DSpark at load: DF016 quotes it."""
    report = check(DSPARK_EXPORT, QWEN36_27B, runtime="vllm-v1")
    (finding,) = [f for f in report.findings if f.rule == "DF016"]
    assert "Model Runner V1 does not support: dspark speculative decoding" in finding.message


def test_a_dspark_draft_given_as_target_is_named() -> None:
    """Drafts of the new formats are recognised on the target side too."""
    with pytest.raises(ConfigError, match="DSpark"):
        normalise_target(files("target", config(DSPARK_EXPORT)))


# -- Muse Glimmer assistant ---------------------------------------------------------------


def test_muse_assistant_is_read_from_the_top_level() -> None:
    """Top-level ids, mask and block; no dflash_config, no num_target_layers."""
    view = normalise_draft(files("draft", config(MUSE)))
    assert (view.format, view.method) == ("muse", "dflash")
    assert (view.target_layer_ids, view.layer_ids_key) == ((1, 13, 25, 37, 49), "target_layer_ids")
    assert (view.dflash.mask_token_id, view.dflash.mask_token_key) == (201818, "mask_token_id")
    assert (view.dflash.block_size, view.num_target_layers) == (16, None)
    assert view.id_sources == (IdSource("target_layer_ids", (1, 13, 25, 37, 49)),)


def test_muse_assistant_compatible_with_muse_glimmer(tmp_path: Path) -> None:
    """End to end with its 52-layer target: compatible on vLLM and SGLang, the JSON report
    carrying the format and the raw id sources."""
    cfg = config(MUSE)
    tensors = header(cfg, 6656)
    tensors["encoder.fc.weight"] = tensors.pop("fc.weight")  # the assistant's name for fc
    draft = write_model(tmp_path / "draft", cfg, tensors)
    result = invoke_cli("pair", str(draft), str(MUSE_TARGET), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "compatible"
    assert set(data["runtimes"]) == {"vllm", "sglang"}
    assert data["draft"]["format"] == "muse"
    assert data["draft"]["id_sources"] == [{"key": "target_layer_ids", "ids": [1, 13, 25, 37, 49]}]
    assert not [f for f in data["findings"] if f["rule"] == "DF005"]


def test_muse_assistant_on_a_shallower_target_fails_sglang() -> None:
    """On a 50-layer target id 49 is N-1: vLLM captures after the last layer, SGLang (+1 before
    a raw capture-before hook) does not."""
    target = config(MUSE_TARGET) | {"num_hidden_layers": 50}
    report = check(MUSE, target)
    assert verdicts(report) == {"vllm": "compatible", "sglang": "incompatible"}
    assert hits(report, "DF004") == {"sglang": Severity.ERROR}


def test_muse_assistant_is_not_loaded_by_trtllm() -> None:
    """Naming a runtime that does not register the architecture fails DF016."""
    report = check(MUSE, MUSE_TARGET, runtime="trtllm")
    assert hits(report, "DF016") == {"trtllm": Severity.ERROR}


# -- Laguna DFlash ------------------------------------------------------------------------


DENSE_LAYOUT = {"mlp_layer_types": ["dense"] * 6, "num_experts": 0}
"""The Laguna draft's MLP layout stated as SGLang builds it (every layer dense), which vLLM's
LagunaConfig would otherwise fill in with MoE layers (DF093)."""


def test_laguna_compatible_with_its_target(tmp_path: Path) -> None:
    """End to end: the 6-tap drafter, its dense layout stated, on the 48-layer Laguna-S-2.1
    (id 47 = N-1, captured after the last layer by both engines on Laguna)."""
    cfg = config(LAGUNA) | DENSE_LAYOUT
    tensors = header(cfg, 3072)
    tensors |= {f"aux_hidden_norms.{i}.weight": TensorInfo("BF16", (3072,)) for i in range(6)}
    draft = write_model(tmp_path / "draft", cfg, tensors)
    result = invoke_cli("pair", str(draft), str(LAGUNA_TARGET))
    assert result.returncode == 0, result.stdout + result.stderr
    view = normalise_draft(files("draft", cfg))
    assert (view.format, view.layer_ids_key) == ("laguna", "dflash_config.target_layer_ids")
    assert view.target_layer_ids == (1, 10, 19, 29, 38, 47)


@pytest.mark.parametrize(
    ("change", "failing", "needle"),
    [
        (lambda c: c.pop("draft_vocab_size"), {"vllm"}, "has no draft_vocab_size"),
        (lambda c: c.update(draft_vocab_size=100000), {"vllm"}, "draft_vocab_size 100000 !="),
        (lambda c: c.pop("layer_types"), {"vllm"}, "has no layer_types"),
        (
            lambda c: c.update(layer_types=["sliding_attention"] * 5),
            {"vllm", "sglang"},
            "layer_types has 5 entries for num_hidden_layers 6",
        ),
        (
            lambda c: c.update(layer_types=["full_attention"] + ["sliding_attention"] * 5),
            {"vllm"},
            "layer_types mixes full_attention, sliding_attention",
        ),
        (
            lambda c: c.update(target_layer_ids=c["dflash_config"].pop("target_layer_ids")),
            {"vllm"},
            "reads ids only from dflash_config.target_layer_ids",
        ),
    ],
)
def test_laguna_loader_requirements(change: Any, failing: set[str], needle: str) -> None:
    """DF028 per engine: what vLLM's Laguna drafter and SGLang's DFlash loader refuse."""
    cfg = config(LAGUNA)
    change(cfg)
    report = check(cfg, LAGUNA_TARGET)
    found = [f for f in report.findings if f.rule == "DF028"]
    assert {f.runtime for f in found} == failing, report.findings
    assert all(needle in f.message for f in found)
    assert {n for n, v in verdicts(report).items() if v == "incompatible"} == failing


def test_laguna_published_layout_is_refused_by_vllm_alone() -> None:
    """The published draft states no MLP layout: vLLM's LagunaConfig makes its layers 1-5 MoE,
    named as the target's (the oracle's "Duplicate layer name: model.layers.1.mlp.experts" on
    0.32.0 to 0.34.0); SGLang builds every Laguna draft layer dense."""
    for runtime in ("vllm==0.32.0", "vllm-v1==0.33.0", "vllm==0.34.0", "sglang"):
        report = check(LAGUNA, LAGUNA_TARGET, runtime)
        refused = "sglang" not in runtime
        assert ("DF093" in errors(report)) is refused, (runtime, report.findings)
        assert set(verdicts(report).values()) == {"incompatible" if refused else "compatible"}
    (found,) = [f for f in check(LAGUNA, LAGUNA_TARGET).findings if f.rule == "DF093"]
    assert (found.runtime, found.field) == ("vllm", "mlp_layer_types")
    assert "layers 1-5 as MoE" in found.message
    assert "'Duplicate layer name: model.layers.1.mlp.experts'" in found.message


@pytest.mark.parametrize(
    ("draft", "target", "moe"),
    [
        # Stated all dense, as trained: nothing is MoE.
        ({"mlp_layer_types": ["dense"] * 6}, {}, None),
        # No experts: LagunaDecoderLayer builds no MoE whatever mlp_layer_types says.
        ({"num_experts": 0}, {}, None),
        ({}, {"num_experts": 0}, None),
        # One sparse draft layer, sparse in the target too.
        ({"mlp_layer_types": ["dense"] * 3 + ["sparse"] + ["dense"] * 2}, {}, "layer 3 as"),
        # A target dense up to layer 3: only the draft's layers 4-5 collide.
        ({}, {"mlp_layer_types": ["dense"] * 4 + ["sparse"] * 44}, "layers 4-5 as"),
        # A target whose sparse layers the draft's do not reach.
        ({}, {"mlp_layer_types": ["dense"] * 6 + ["sparse"] * 42}, None),
        # The experts' count alone does not matter, only that it is above 0.
        ({"num_experts": 8}, {"num_experts": 64}, "layers 1-5 as"),
    ],
)
def test_laguna_moe_layers_collide_with_the_target(
    draft: dict[str, Any], target: dict[str, Any], moe: str | None
) -> None:
    """DF093: a draft layer vLLM builds as MoE (mlp_layer_types sparse, else LagunaConfig's
    default; num_experts > 0, else 256) where the target's same layer is MoE too."""
    report = check(config(LAGUNA) | draft, config(LAGUNA_TARGET) | target)
    found = [f for f in report.findings if f.rule == "DF093"]
    if moe is None:
        assert found == [], found
        assert verdicts(report)["vllm"] == "compatible", report.findings
        return
    assert [f.runtime for f in found] == ["vllm"]
    assert moe in found[0].message
    assert verdicts(report) == {"vllm": "incompatible", "sglang": "compatible"}


def test_laguna_moe_layout_of_another_target_family_is_not_read() -> None:
    """The reading is LagunaConfig's: a target of another model type gets no DF093 (what its
    own class registers is not modelled)."""
    report = check(LAGUNA, config(LAGUNA_TARGET) | {"model_type": "qwen3"})
    assert hits(report, "DF093") == {}


def test_laguna_with_another_family_is_incompatible() -> None:
    """The Laguna drafter on Qwen3-8B: hidden size and vocabulary differ."""
    report = check(LAGUNA, QWEN3_8B)
    assert {"DF006", "DF007", "DF028"} <= errors(report)


def test_dspark_block_size_counts_draft_tokens() -> None:
    """A DSpark block of 1 is one draft token (SGLang drafts gamma + 1 positions): valid, while
    a DFlash block of 1 leaves no draft slot (DF012)."""
    cfg = config(DSPARK_EXPORT)
    for key in ("block_size", "dspark_block_size"):
        cfg.pop(key, None)
        (cfg.get("dflash_config") or {}).pop(key, None)
    cfg["dspark_block_size"] = 1
    assert hits(check(cfg, QWEN36_27B), "DF012") == {}
    cfg["dspark_block_size"] = 0
    assert hits(check(cfg, QWEN36_27B), "DF012") == {None: Severity.ERROR}


# -- which release loads which DSpark architecture (its model registry facts) ----------------


@pytest.mark.parametrize(
    ("arch", "runtime", "loads"),
    [
        ("MuseSparkDSparkModel", "vllm==0.32.0", False),
        ("MuseSparkDSparkModel", "vllm==0.33.0", True),
        ("DSparkMiniMaxDraftModel", "vllm==0.33.0", False),
        ("DSparkMiniMaxDraftModel", "vllm==0.34.0", True),
    ],
)
def test_a_pinned_vllm_release_loads_the_dspark_architectures_it_registers(
    arch: str, runtime: str, loads: bool
) -> None:
    """A release refuses at load (DF016) a DSpark architecture its model registry lacks,
    naming the release and citing its facts; a release that registers it is not refused."""
    from dflash_check.knowledge import facts
    from dflash_check.knowledge.engines import VLLM
    from dflash_check.knowledge.engines.interface import Stage

    cfg = config(DSPARK_EXPORT) | {"architectures": [arch], "markov_rank": 4}
    report = check(cfg, QWEN36_27B, runtime=runtime)
    refused = [f for f in report.findings if f.rule == "DF016"]
    assert [p.label for p in report.profiles] == [runtime]
    if loads:
        assert refused == [], refused
        return
    (finding,) = refused
    release = VLLM.release(runtime.split("==")[1])
    cite_as = facts.for_release(release).cite_as
    assert finding.stage is Stage.LOAD and report.verdict.value == "incompatible"
    assert f"which {runtime} does not load: its model registry holds no {arch}" in finding.message
    assert f"{cite_as}:vllm/model_executor/models/registry.py:" in finding.message
    assert "not supported for now" in finding.message  # vLLM's own refusal, quoted
    later = [r.spec for r in VLLM.releases if arch in facts.for_release(r).drafts]
    assert f"loaded by: {', '.join(later)}" in finding.message
