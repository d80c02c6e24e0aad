"""Target families: which engine model file serves a target, from its config.

Runtimes capture hidden states in the model code of the target's family (vLLM's ``llama.py``,
SGLang's ``gpt_oss.py``, …), and that code decides the capture numbering, the range and whether
capture exists at all. A family here is that unit: the architectures one engine model file
registers. ``FAMILIES`` is the one list; ``family_of`` picks a target's family from its
``architectures`` first (what engines dispatch on) and its model types second.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetFamily:
    """One family of target models that the engines serve with the same model code."""

    name: str
    """Short name, as in the engines' model file names (``qwen3_5``, ``gpt_oss``)."""
    title: str
    """Human name with example models."""
    architectures: tuple[str, ...]
    """``architectures`` entries of its configs (what engines dispatch on)."""
    model_types: tuple[str, ...] = ()
    """``model_type`` values (top level or ``text_config``) when the architecture is unknown."""


FAMILIES: tuple[TargetFamily, ...] = (
    TargetFamily("llama", "Llama 3.x", ("LlamaForCausalLM",), ("llama",)),
    TargetFamily("qwen2", "Qwen2 / Qwen2.5", ("Qwen2ForCausalLM",), ("qwen2",)),
    TargetFamily("qwen3", "Qwen3 dense", ("Qwen3ForCausalLM",), ("qwen3",)),
    TargetFamily("qwen3_moe", "Qwen3 MoE", ("Qwen3MoeForCausalLM",), ("qwen3_moe",)),
    TargetFamily("qwen3_next", "Qwen3-Next", ("Qwen3NextForCausalLM",), ("qwen3_next",)),
    TargetFamily(
        "qwen3_5",
        "Qwen3.5 / Qwen3.6 (multimodal wrapper)",
        ("Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"),
        ("qwen3_5", "qwen3_5_moe"),
    ),
    TargetFamily(
        "qwen3_5_text",
        "Qwen3.5 / Qwen3.6 text-only checkpoints",
        ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"),
        ("qwen3_5_text", "qwen3_5_moe_text"),
    ),
    # Dense and MoE Qwen3-VL share a wrapper but not the inner model, and SGLang's capture
    # hook lives in the inner model (qwen3_moe has one, the dense Qwen3LLMModel does not).
    TargetFamily("qwen3_vl", "Qwen3-VL dense", ("Qwen3VLForConditionalGeneration",), ("qwen3_vl",)),
    TargetFamily(
        "qwen3_vl_moe", "Qwen3-VL MoE", ("Qwen3VLMoeForConditionalGeneration",), ("qwen3_vl_moe",)
    ),
    TargetFamily("gpt_oss", "gpt-oss", ("GptOssForCausalLM",), ("gpt_oss",)),
    TargetFamily(
        "gemma3",
        "Gemma 3",
        ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"),
        ("gemma3", "gemma3_text"),
    ),
    TargetFamily(
        "gemma4",
        "Gemma 4",
        ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"),
        ("gemma4", "gemma4_text"),
    ),
    TargetFamily(
        "deepseek_v3",
        "DeepSeek-V2/V3/R1, Kimi K2",
        ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"),
        ("deepseek_v2", "deepseek_v3", "kimi_k2"),
    ),
    TargetFamily(
        "kimi_k25", "Kimi K2.5 / K2.6 (multimodal wrapper)", ("KimiK25ForConditionalGeneration",)
    ),
    TargetFamily("deepseek_v32", "DeepSeek-V3.2", ("DeepseekV32ForCausalLM",), ("deepseek_v32",)),
    TargetFamily("glm_moe_dsa", "GLM-5 / 5.1 / 5.2", ("GlmMoeDsaForCausalLM",), ("glm_moe_dsa",)),
    TargetFamily("glm4_moe", "GLM-4.5 / 4.6", ("Glm4MoeForCausalLM",), ("glm4_moe",)),
    TargetFamily("minimax_m2", "MiniMax-M2.x", ("MiniMaxM2ForCausalLM",), ("minimax_m2",)),
    TargetFamily(
        "mimo_v2",
        "MiMo-V2 / V2.5",
        ("MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM"),
        ("mimo_v2", "mimo_v2_flash"),
    ),
    TargetFamily(
        "nemotron_h", "Nemotron-H / Nemotron 3", ("NemotronHForCausalLM",), ("nemotron_h",)
    ),
    TargetFamily("laguna", "poolside Laguna", ("LagunaForCausalLM",), ("laguna",)),
    # The multimodal wrapper and the text-only class differ in SGLang: only the text class
    # inherits llama.py's DFlash hook (mllama4.py has an EAGLE-3 hook only).
    TargetFamily(
        "llama4", "Llama 4 (multimodal wrapper)", ("Llama4ForConditionalGeneration",), ("llama4",)
    ),
    TargetFamily("llama4_text", "Llama 4 text-only", ("Llama4ForCausalLM",), ("llama4_text",)),
    TargetFamily("mixtral", "Mixtral", ("MixtralForCausalLM",), ("mixtral",)),
    TargetFamily("glm4_moe_lite", "GLM-4 MoE Lite", ("Glm4MoeLiteForCausalLM",)),
    # Step3p7FlashForCausalLM (stepfun-ai/Step-3.7-Flash's config) is in neither engine's
    # registry as read; its model_type step3p7 places it here.
    TargetFamily(
        "step3",
        "StepFun Step-3 / 3.5 / 3.7 / 5",
        (
            "Step3TextForCausalLM",
            "Step3VLForConditionalGeneration",
            "Step3p5ForCausalLM",
            "Step3p7ForConditionalGeneration",
            "Step5ForCausalLM",
        ),
        ("step3p7",),
    ),
    TargetFamily(
        "muse_glimmer",
        "Muse Glimmer",
        ("MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration"),
        ("muse_glimmer",),
    ),
)


def family_of(architectures: tuple[str, ...], model_types: tuple[str, ...]) -> TargetFamily | None:
    """Return the family of a target, or None when no engine family is known for it.

    Architectures decide, because engines dispatch on them: ``Qwen3_5ForCausalLM`` and
    ``Qwen3_5ForConditionalGeneration`` share a text model type but not the capture code.
    ``FAMILIES`` is read at each call (a few dozen rows, no index kept beside it), so that the
    one list is the one place a family is added.
    """
    for name in architectures:
        for fam in FAMILIES:
            if name in fam.architectures:
                return fam
    for model_type in model_types:
        for fam in FAMILIES:
            if model_type in fam.model_types:
                return fam
    return None
