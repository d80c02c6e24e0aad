"""SGLang's MTP rows (``Engine.mtp`` of ``sglang.py``): what SGLang builds from a target's own
MTP layers, per architecture, read in 0.5.23. A module of its own, imported when the rows are
asked for (a target asked about alone, the listings), never by a pair check.
"""

from __future__ import annotations

from dataclasses import replace

from dflash_check.knowledge.engines.mtp_reading import EngineMtp, MtpSteps

# What SGLang builds from a target's own MTP layers (``Engine.mtp``), read in 0.5.23.
_SGLANG_SRC = "sglang@0.5.23:sglang/srt"
# With the topk: SGLang fails on --speculative-num-steps without it (DF060, STEP_FLAGS).
_SGL_ASK = (
    "--speculative-algorithm NEXTN (an alias of EAGLE) --speculative-num-steps {k} "
    "--speculative-eagle-topk 1"
)
_SGL_ASK_PATH = _SGL_ASK + " --speculative-draft-model-path <the target>"
_SGL_ONE_LAYER = (
    "builds one MTP layer (num_nextn_predict_layers set to 1) and reruns it per step, "
    f"{_SGLANG_SRC}/configs/model_config.py"
)


_HOOK = "sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py"
# NEXTN runs as EAGLE (speculative_hook.py:100-115), whose flags _handle_eagle_family resolves:
# steps alone leave topk None, which `speculative_eagle_topk > 1` then compares (TypeError);
# topk or draft tokens without steps fail its assert; at topk 1 it sets the draft tokens.
# Neither it nor the EAGLE workers (speculative/eagle_worker_v2.py,
# multi_layer_eagle_worker_v2.py) compare the steps with the target's MTP layer count.
STEP_FLAGS = MtpSteps(
    None,
    f"{_HOOK}:1273-1276 (TypeError: '>' between None and int)",
    f"{_HOOK}:1159-1163 (AssertionError)",
    f"{_HOOK}:1255-1266",
)
"""How SGLang's EAGLE family resolves its step flags at start-up: the target's own MTP layers
(NEXTN), and a separate EAGLE-3 head or NextN checkpoint alike (DF060 of a pair,
``check/mtp_steps.eagle_step_refusal``)."""
_RERUN_ONE = replace(
    STEP_FLAGS,
    # The EAGLE draft worker runs its one draft model once per step.
    reruns_one="sglang==0.5.23:sglang/srt/speculative/eagle_worker_v2.py:808-848",
)


MTP = (
    # SGLang 0.5.23 swaps the target's architecture for its NextN/MTP class when the draft is
    # the target (ModelConfig, is_draft_model), and fills the draft path in itself only for
    # the DeepSeek family (speculative_hook.py:1120-1147).
    EngineMtp(
        "sglang",
        ("DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"),
        "DeepseekV3ForCausalLMNextN (weights from model.layers.{N})",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer rerun per step (not verified for k > 1)",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1032-1036; "
        f"{_SGLANG_SRC}/models/deepseek_nextn.py:123; "
        f"{_SGLANG_SRC}/arg_groups/speculative_hook.py:109-115,1120-1147",
        steps=_RERUN_ONE,
    ),
    EngineMtp(
        "sglang",
        ("GlmMoeDsaForCausalLM",),
        "GlmMoeDsaForCausalLMNextN",
        _SGL_ASK + " (the draft path defaults to the target)",
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1038-1039; "
        f"{_SGLANG_SRC}/arg_groups/speculative_hook.py:1120-1147",
        steps=STEP_FLAGS,
    ),
    EngineMtp(
        "sglang",
        ("DeepseekV4ForCausalLM",),
        "DeepseekV4ForCausalLMNextN (one layer), or its DSpark head when the checkpoint has one",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer (num_nextn_predict_layers set to 1)",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1041-1060",
        steps=_RERUN_ONE,
    ),
    EngineMtp(
        "sglang",
        ("MiMoForCausalLM",),
        "MiMoMTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1093",
        steps=STEP_FLAGS,
    ),
    EngineMtp(
        "sglang",
        ("Qwen3NextForCausalLM",),
        "Qwen3NextForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1134-1136",
        steps=_RERUN_ONE,
    ),
    EngineMtp(
        "sglang",
        (
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "Qwen3_5ForCausalLM",
            "Qwen3_5MoeForCausalLM",
        ),
        "Qwen3_5ForCausalLMMTP (weights from mtp.*)",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1159-1181; {_SGLANG_SRC}/models/qwen3_5_mtp.py:365",
        steps=_RERUN_ONE,
    ),
    EngineMtp(
        "sglang",
        ("NemotronHForCausalLM",),
        "NemotronHForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1198-1203",
        steps=_RERUN_ONE,
    ),
    EngineMtp(
        "sglang",
        ("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"),
        "Step3p5MTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1096-1097,1115-1120",
        # Multi-layer EAGLE (arg_groups/overrides.py:346-350): one draft runner per step, the
        # i-th loading MTP layer i (managers/tp_worker.py:502-521, model_loader/loader.py
        # :740-757), so no layer is rerun; what a step past k loads was not read. Its worker
        # asserts draft tokens == steps + 1, which the hook sets only at topk 1.
        steps=replace(
            STEP_FLAGS,
            multi_layer="sglang==0.5.23:sglang/srt/speculative/multi_layer_eagle_worker_v2.py"
            ":150-153 (AssertionError; enabled for EAGLE by arg_groups/overrides.py:346-350)",
        ),
    ),
    EngineMtp(
        "sglang",
        (),
        "none found: SGLang 0.5.23 swaps in no NextN/MTP class for this architecture",
        "not available",
        "-",
        "-",
        f"{_SGLANG_SRC}/configs/model_config.py:1032-1210 (no branch for it)",
    ),
)
"""SGLang's MTP rows, first match wins (``Engine.mtp``)."""
