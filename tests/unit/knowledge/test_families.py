"""Runtime knowledge per target family: one pair, different verdicts on different families."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from dflash_check.check.report import Verdict
from dflash_check.knowledge.families import FAMILIES, family_of
from dflash_check.knowledge.runtimes import DFLASH_HAND_CELLS, PROFILES_BY_NAME, on_family
from dflash_check.knowledge.runtimes.cells import REVIEWED_CELLS
from dflash_check.views import ModelFiles
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.support.paths import FIXTURES

HUB = FIXTURES / "hub"
TARGETS = FIXTURES / "targets"


def hub_files(role: str, path: str, name: str) -> ModelFiles:
    """Load a shipped Hub fixture config."""
    return ModelFiles(role, name, json.loads((HUB / path).read_text()), path)


def pair(target_patch: dict[str, Any], ids: list[int], runtime: str) -> dict[str, Verdict]:
    """Check the seed draft with ``ids`` against a Qwen3-4B-shaped target patched to a family."""
    draft = copy.deepcopy(draft_config())
    draft["dflash_config"]["target_layer_ids"] = ids
    target = {**copy.deepcopy(qwen3_4b_config()), **target_patch}
    report = check_files(files("draft", draft, fc_tensors(draft)), files("target", target), runtime)
    return report.runtime_verdicts


def test_every_cell_names_known_runtimes_and_families() -> None:
    """A typo in the table would silently never apply."""
    names = {f.name for f in FAMILIES}
    for cell in (*DFLASH_HAND_CELLS, *(c for t in REVIEWED_CELLS.values() for c in t)):
        assert cell.runtime in PROFILES_BY_NAME
        assert set(cell.families) <= names, cell
        assert cell.citation


def test_family_from_architectures_before_model_type() -> None:
    """The text-only Qwen3.5 class is its own family, though it shares the text model type."""
    assert family_of(("Qwen3_5ForCausalLM",), ("qwen3_5_text",)).name == "qwen3_5_text"
    assert family_of(("Qwen3_5ForConditionalGeneration",), ("qwen3_5_text",)).name == "qwen3_5"
    assert family_of(("Unknown",), ("gpt_oss",)).name == "gpt_oss"
    assert family_of(("Unknown",), ("unknown",)) is None


def test_sglang_last_layer_depends_on_family() -> None:
    """t = N-1 (35 on 36 layers): SGLang's gpt-oss code captures after the last layer, its
    Qwen3 code does not."""
    ids = [1, 9, 17, 25, 35]
    assert pair({}, ids, "sglang")["sglang"] is Verdict.INCOMPATIBLE
    gpt_oss = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}
    assert pair(gpt_oss, ids, "sglang")["sglang"] is Verdict.COMPATIBLE


def test_vllm_deepseek_v32_never_captures_after_the_last_layer() -> None:
    """vLLM's DeepSeek-V3.2 CUDA model captures before each layer: N-1 fails there only."""
    ids = [1, 9, 17, 25, 35]
    assert pair({}, ids, "vllm")["vllm"] is Verdict.COMPATIBLE
    v32 = {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32"}
    assert pair(v32, ids, "vllm")["vllm"] is Verdict.INCOMPATIBLE
    assert pair(v32, [1, 9, 17, 25, 34], "vllm")["vllm"] is Verdict.COMPATIBLE


def test_llamacpp_last_layer_by_revision() -> None:
    """llama.cpp 001d906a reads t = N-1 from the post-norm embeddings (common/speculative.cpp);
    0c1e57098 (llama-cpp-python 0.3.36, the newest known) has no input of layer N on Qwen3."""
    ids = [1, 9, 17, 25, 35]
    assert pair({}, ids, "llamacpp==001d906a")["llamacpp"] is Verdict.COMPATIBLE
    assert pair({}, ids, "llamacpp")["llamacpp"] is Verdict.INCOMPATIBLE


@pytest.mark.parametrize(
    ("architecture", "runtime", "quoted"),
    [
        ("Glm4MoeForCausalLM", "vllm", "Model does not support EAGLE3 interface"),
        ("Glm4MoeForCausalLM", "sglang", "implements neither set_dspark_layers_to_capture"),
        ("Qwen2ForCausalLM", "sglang", "implements neither set_dspark_layers_to_capture"),
        ("MiniMaxM2ForCausalLM", "sglang", "implements neither set_dspark_layers_to_capture"),
    ],
)
def test_target_without_capture_fails_with_the_engine_message(
    architecture: str, runtime: str, quoted: str
) -> None:
    """A family the runtime cannot tap is an error for that runtime, quoting the engine."""
    draft = copy.deepcopy(draft_config())
    target = {**copy.deepcopy(qwen3_4b_config()), "architectures": [architecture]}
    report = check_files(files("draft", draft, fc_tensors(draft)), files("target", target))
    hits = [f for f in report.findings if f.rule == "DF017"]
    assert [f.runtime for f in hits if quoted in f.message] == [runtime]
    assert report.runtime_verdicts[runtime] is Verdict.INCOMPATIBLE
    assert report.runtime_verdicts["reference"] is Verdict.COMPATIBLE


def test_vllm_reads_a_top_level_mask() -> None:
    """z-lab Qwen3 drafts keep mask_token_id at the top level: vLLM reads it (#46995, #51602);
    llama.cpp does not."""
    draft = copy.deepcopy(draft_config())
    mask = draft["dflash_config"].pop("mask_token_id")
    draft["mask_token_id"] = mask
    report = check_files(
        files("draft", draft, fc_tensors(draft)), files("target", qwen3_4b_config())
    )
    assert report.runtime_verdicts["vllm"] is Verdict.COMPATIBLE
    assert report.runtime_verdicts["llamacpp"] is Verdict.INCOMPATIBLE
    assert {f.runtime for f in report.findings if f.rule == "DF009"} == {"llamacpp", "mlx"}


def test_trtllm_reads_ids_only_from_dflash_config() -> None:
    """Top-level ids: TensorRT-LLM captures none of the draft's layers. llama.cpp's newest
    release (0c1e57098) takes the top-level list (test_releases.py)."""
    draft = copy.deepcopy(draft_config())
    draft["target_layer_ids"] = draft["dflash_config"].pop("target_layer_ids")
    report = check_files(
        files("draft", draft, fc_tensors(draft)), files("target", qwen3_4b_config())
    )
    flagged = {f.runtime for f in report.findings if f.rule == "DF009"}
    assert {"trtllm", "mlx"} <= flagged
    assert not flagged & {"vllm", "sglang", "llamacpp"}


def test_mimo_draft_uses_the_last_layer_everywhere() -> None:
    """MiMo-V2.5-Pro's published draft ([0, 15, 31, 47, 69] on 70 layers) passes every
    runtime: each captures t = N-1 on MiMo-V2."""
    report = check_files(
        hub_files("draft", "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json", "mimo"),
        hub_files("target", "XiaomiMiMo/MiMo-V2.5-Pro/config.json", "XiaomiMiMo/MiMo-V2.5-Pro"),
    )
    assert report.target.family == "mimo_v2"
    assert set(report.runtime_verdicts.values()) == {Verdict.COMPATIBLE}


def test_unknown_family_keeps_the_general_convention() -> None:
    """An unknown architecture falls back to each runtime's general profile, uncited."""
    p = on_family(PROFILES_BY_NAME["sglang"], None)
    assert p.max_id_from_end == PROFILES_BY_NAME["sglang"].max_id_from_end
    assert p.cell_citation is None and p.cannot_capture is None


@pytest.mark.parametrize(
    ("folder", "family"),
    [
        ("Qwen--Qwen3-VL-4B-Instruct", "qwen3_vl"),
        ("Qwen--Qwen3-VL-30B-A3B-Instruct", "qwen3_vl_moe"),
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "llama4"),
        ("mistralai--Mixtral-8x7B-v0.1", "mixtral"),
        ("stepfun-ai--Step-3.7-Flash", "step3"),
    ],
)
def test_real_configs_land_in_their_family(folder: str, family: str) -> None:
    """The published configs of the families added from the engine notes resolve to them
    (Step-3.7-Flash by its model_type: its architecture is in neither engine's registry)."""
    report = check_files(
        files("draft", draft_config(), fc_tensors(draft_config())),
        ModelFiles(
            "target", folder, json.loads((TARGETS / folder / "config.json").read_text()), ""
        ),
    )
    assert report.target.family == family


def family(architecture: str, model_type: str) -> dict[str, Any]:
    """Return a target patch that puts the Qwen3-4B-shaped target in another family."""
    return {"architectures": [architecture], "model_type": model_type}


LAST = [1, 9, 17, 25, 35]  # t = N-1 on 36 layers


@pytest.mark.parametrize(
    "patch",
    [
        family("MixtralForCausalLM", "mixtral"),
        family("Glm4MoeLiteForCausalLM", "glm4_moe_lite"),
        family("Step3p5ForCausalLM", "step3p5"),
        family("Step3p7FlashForCausalLM", "step3p7"),
    ],
)
def test_vllm_cannot_tap_mixtral_glm4_lite_or_step(patch: dict[str, Any]) -> None:
    """No SupportsEagle3 in these model classes (vLLM 0.33.0): the pair that passes on Qwen3
    MoE fails on them, with the engine's message."""
    ids = [1, 9, 17, 25, 33]
    assert pair(family("Qwen3MoeForCausalLM", "qwen3_moe"), ids, "vllm")["vllm"] is (
        Verdict.COMPATIBLE
    )
    assert pair(patch, ids, "vllm")["vllm"] is Verdict.INCOMPATIBLE


@pytest.mark.parametrize(
    "patch",
    [
        family("Qwen3MoeForCausalLM", "qwen3_moe"),
        family("Qwen3VLForConditionalGeneration", "qwen3_vl"),
        family("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe"),
        family("Llama4ForConditionalGeneration", "llama4"),
        family("Llama4ForCausalLM", "llama4_text"),
        family("LagunaForCausalLM", "laguna"),
        family("MuseGlimmerForCausalLM", "muse_glimmer"),
        family("DeepseekV3ForCausalLM", "deepseek_v3"),
    ],
)
def test_vllm_families_capturing_after_the_last_layer(patch: dict[str, Any]) -> None:
    """These families capture after every layer in vLLM (aux up to N), so t = N-1 passes,
    where DeepSeek-V3.2's CUDA model (before each layer only) fails it."""
    assert pair(patch, LAST, "vllm")["vllm"] is Verdict.COMPATIBLE
    v32 = family("DeepseekV32ForCausalLM", "deepseek_v32")
    assert pair(v32, LAST, "vllm")["vllm"] is Verdict.INCOMPATIBLE


@pytest.mark.parametrize(
    ("fails", "passes", "quoted"),
    [
        (
            family("Qwen3VLForConditionalGeneration", "qwen3_vl"),
            family("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe"),
            "'Qwen3LLMModel' object has no attribute 'set_dflash_layers_to_capture'",
        ),
        (
            family("Llama4ForConditionalGeneration", "llama4"),
            family("Llama4ForCausalLM", "llama4_text"),
            "implements neither set_dspark_layers_to_capture",
        ),
        (
            family("Step3p7ForConditionalGeneration", "step3p7"),
            family("Qwen3ForCausalLM", "qwen3"),
            "implements neither set_dspark_layers_to_capture",
        ),
    ],
)
def test_sglang_wrappers_without_a_dflash_hook(
    fails: dict[str, Any], passes: dict[str, Any], quoted: str
) -> None:
    """SGLang: dense Qwen3-VL's language model, Llama 4's multimodal wrapper and Step-3.x have
    no DFlash hook (read from the code), while their MoE / text-only siblings do."""
    ids = [1, 9, 17, 25, 33]
    assert pair(passes, ids, "sglang")["sglang"] is Verdict.COMPATIBLE
    draft = copy.deepcopy(draft_config())
    target = {**copy.deepcopy(qwen3_4b_config()), **fails}
    report = check_files(
        files("draft", draft, fc_tensors(draft)), files("target", target), "sglang"
    )
    assert report.runtime_verdicts["sglang"] is Verdict.INCOMPATIBLE
    assert any(quoted in f.message for f in report.findings if f.rule == "DF017")
