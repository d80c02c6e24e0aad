"""The MTP (NextN) tables: which config keys count a target's MTP layers, where each family's
checkpoints keep the MTP weights, and what each engine builds from them, each row with the
engine source it was read from. The reader and the checks that use them are
``check/target_alone.py``; MTP's row of the runtime table (SGLang's NextN draft checkpoint)
is ``runtimes/mtp.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dflash_check.knowledge.engines import LLAMACPP, SGLANG, TRTLLM, VLLM, VLLM_033

MTP_KEYS: tuple[str, ...] = ("mtp_num_hidden_layers", "num_mtp_modules", "num_nextn_predict_layers")
"""The keys that count a target's MTP layers, in the order they are taken as k when a config
states several: Qwen3.5/3.6 use ``mtp_num_hidden_layers`` (under ``text_config`` for the
multimodal wrappers); MiniMax ``num_mtp_modules`` (MiniMax-M3 also states
``num_nextn_predict_layers: 1``, but vLLM sizes its MTP draft by ``num_mtp_modules``,
``vllm/config/speculative.py:1131``); DeepSeek, GLM-5, MiMo, Nemotron 3, Step and Kimi
``num_nextn_predict_layers`` (Kimi states 0: none). Each key is read at the top level, then
under ``text_config``, then under ``MTP_SECTION``."""

MTP_SECTION = "mtp_config"
"""A section some configs keep their MTP count in: Inkling states its depths only as
``mtp_config.num_nextn_predict_layers``, which vLLM reads
(``vllm==0.33.0:vllm/config/speculative.py:1087-1103``)."""

# Where each engine's MTP rows were read (TensorRT-LLM at the revision its MTP code was read).
_VLLM_SRC = VLLM_033.source
_SGLANG_SRC = "sglang@0.5.23:sglang/srt"
_TRTLLM_SRC = "NVIDIA/TensorRT-LLM@fcd3f316"

Placement = Literal["after", "mtp_layers", "mtp"]
"""Where a checkpoint keeps its MTP weights: ``after`` the decoder (``model.layers.{N}`` …
``model.layers.{N+k-1}``, DeepSeek), ``mtp_layers`` (``model.mtp_layers.{i}``, MiMo), or under
an ``mtp.`` prefix whose inner numbering is not one layer per MTP step (Qwen3.5, Qwen3-Next,
Nemotron-H: only the prefix is looked for)."""


@dataclass(frozen=True)
class MtpFamily:
    """How one family of targets lays out its MTP weights, matched on ``model_type``."""

    name: str
    """The family, for reports."""
    model_types: tuple[str, ...]
    """``model_type`` values (top level or ``text_config``) of the family."""
    placement: Placement
    """Where its checkpoints keep the MTP weights."""
    citation: str
    """The engine loader the placement was read from."""


FAMILIES: tuple[MtpFamily, ...] = (
    MtpFamily(
        "DeepSeek-V3/R1/V3.2, GLM-5",
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "kimi_k2"),
        "after",
        f"{_VLLM_SRC}:vllm/model_executor/models/deepseek_mtp.py:151-163,541-575",
    ),
    MtpFamily(
        "MiMo",
        ("mimo",),
        "mtp_layers",
        f"{_VLLM_SRC}:vllm/model_executor/models/mimo_mtp.py:96-115,183",
    ),
    MtpFamily(
        "Nemotron-H (Nemotron 3)",
        ("nemotron_h",),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/nemotron_h_mtp.py:424,462",
    ),
    MtpFamily(
        "Qwen3-Next",
        ("qwen3_next",),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/qwen3_next_mtp.py:231-241",
    ),
    MtpFamily(
        "Qwen3.5/3.6",
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/qwen3_5_mtp.py:302-318",
    ),
)
"""Families whose MTP weight names were read; for any other the weights are not looked for."""


@dataclass(frozen=True)
class EngineMtp:
    """What one engine builds from a target's MTP layers (one row of ``MTP_ENGINE_ROWS``)."""

    engine: str
    """``vllm``, ``sglang``, ``trtllm`` or ``llamacpp``."""
    match: tuple[str, ...]
    """Target ``architectures[0]`` or ``model_type`` values this row covers (empty: any)."""
    draft: str
    """The engine's MTP model class built from the target, or what is known of it."""
    request: str
    """How to ask for it ({k} is the MTP layer count)."""
    tokens: str
    """How many draft tokens per step it accepts against k."""
    on_missing: str
    """What it does when the checkpoint lacks the MTP weights."""
    citation: str
    """repo@commit:path:line the row was read from."""
    verified: bool = True
    """False when the row records what could not be read (its text says what)."""


_VLLM_ASK = '--speculative-config \'{"method": "mtp", "num_speculative_tokens": {k}}\''
_VLLM_TOKENS = (
    "default k; above k only multiples of k (the layers are rerun), "
    f"{_VLLM_SRC}:vllm/config/speculative.py:1600-1612"
)
_VLLM_MISSING = (
    "refuses to load: 'MTP speculative decoding layer {N} weights missing from checkpoint' "
    f"({_VLLM_SRC}:vllm/model_executor/models/deepseek_mtp.py:529-538)"
)
_VLLM_METHOD = (
    "the per-family method names (deepseek_mtp, qwen3_5_mtp, …) are deprecated aliases of mtp, "
    f"{_VLLM_SRC}:vllm/config/speculative.py:1246-1250"
)
_SGL_ASK = "--speculative-algorithm NEXTN (an alias of EAGLE) --speculative-num-steps {k}"
_SGL_ASK_PATH = _SGL_ASK + " --speculative-draft-model-path <the target>"
_SGL_ONE_LAYER = (
    "builds one MTP layer (num_nextn_predict_layers set to 1) and reruns it per step, "
    f"{_SGLANG_SRC}/configs/model_config.py"
)


_VLLM_UNCHECKED = "no completeness check found in its loader (behaviour not verified)"


def _vllm(
    match: tuple[str, ...], draft: str, line: str, on_missing: str = _VLLM_UNCHECKED
) -> EngineMtp:
    """One branch of vLLM's ``hf_config_override``: how it asks and what it builds."""
    return EngineMtp(
        VLLM.name,
        match,
        draft,
        _VLLM_ASK,
        _VLLM_TOKENS,
        on_missing,
        f"{_VLLM_SRC}:vllm/config/speculative.py:{line}; {_VLLM_METHOD}",
    )


MTP_ENGINE_ROWS: tuple[EngineMtp, ...] = (
    # vLLM 0.33.0 rewrites the target's config into its MTP draft in
    # SpeculativeConfig.hf_config_override; each row is one branch of it.
    # DeepSeek-V3.2 and GLM-5 (DSA attention) get the V3.2 class, DeepSeek-V3 the other; the
    # branch reads model_type alone: an architecture naming V3.2 beside model_type deepseek_v3
    # gets DeepSeekMTPModel (vLLM 0.34.0's test_dsa_models_select_matching_mtp).
    _vllm(
        ("deepseek_v32", "glm_moe_dsa"),
        "DeepseekV32MTPModel (layers model.layers.{N}…)",
        "733,749-764",
        _VLLM_MISSING,
    ),
    _vllm(
        ("deepseek_v3",),
        "DeepSeekMTPModel (layers model.layers.{N}…)",
        "749-764",
        _VLLM_MISSING,
    ),
    _vllm(("deepseek_v4",), "DeepSeekV4MTPModel", "765-776", "not verified"),
    _vllm(("MiMoForCausalLM",), "MiMoMTPModel", "795-806"),
    _vllm(("Glm4MoeForCausalLM",), "Glm4MoeMTPModel", "848-857"),
    _vllm(("nemotron_h",), "NemotronHMTPModel (when num_nextn_predict_layers > 0)", "895-906"),
    _vllm(("qwen3_next",), "Qwen3NextMTP", "908-914"),
    _vllm(
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "Qwen3_5MTP / Qwen3_5MoeMTP (k from mtp_num_hidden_layers, top level or text_config)",
        "987-1006",
    ),
    _vllm(("step3p5", "step3p7"), "Step3p5MTP", "1039-1053"),
    # Read at 0.33.0 beside the rows above, and pinned by vLLM 0.34.0's own tests
    # (conformance/mined/mtp_cases.py): Step 5 from 0.33.0 on (0.32.0 has no branch for it).
    _vllm(
        ("step5", "step5_vl"),
        "Step5MTP (k from num_nextn_predict_layers, text_config's for step5_vl)",
        "1055-1068",
    ),
    _vllm(("bailing_hybrid", "BailingMoeV2_5ForCausalLM"), "BailingMoeV25MTPModel", "951-965"),
    _vllm(
        ("qwen4_exp", "qwen4_exp_text"),
        "Qwen4ExpMTP (k from text_config.mtp_num_hidden_layers)",
        "915-935",
    ),
    _vllm(
        ("inkling_mm_model", "inkling_model"),
        "InklingMTPModel (k from mtp_config.num_nextn_predict_layers; none: refused)",
        "1087-1103",
    ),
    _vllm(
        ("glm5_next",),
        "Glm5NextMTPModel (k from text_config.num_nextn_predict_layers)",
        "1146-1158",
    ),
    _vllm(
        ("minimax_m3_vl", "MiniMaxM3SparseForConditionalGeneration"),
        "MiniMaxM3MTP (k from text_config.num_mtp_modules)",
        "1118-1134",
    ),
    EngineMtp(
        VLLM.name,
        (),
        "none: vLLM 0.33.0 maps no MTP draft for this architecture",
        "not available",
        "-",
        "-",
        f"{_VLLM_SRC}:vllm/config/speculative.py:710-1165 "
        "(hf_config_override has no branch for it)",
    ),
    # SGLang 0.5.23 swaps the target's architecture for its NextN/MTP class when the draft is
    # the target (ModelConfig, is_draft_model), and fills the draft path in itself only for
    # the DeepSeek family (speculative_hook.py:1120-1147).
    EngineMtp(
        SGLANG.name,
        ("DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"),
        "DeepseekV3ForCausalLMNextN (weights from model.layers.{N})",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer rerun per step (not verified for k > 1)",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1032-1036; "
        f"{_SGLANG_SRC}/models/deepseek_nextn.py:123; "
        f"{_SGLANG_SRC}/arg_groups/speculative_hook.py:109-115,1120-1147",
    ),
    EngineMtp(
        SGLANG.name,
        ("GlmMoeDsaForCausalLM",),
        "GlmMoeDsaForCausalLMNextN",
        _SGL_ASK + " (the draft path defaults to the target)",
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1038-1039; "
        f"{_SGLANG_SRC}/arg_groups/speculative_hook.py:1120-1147",
    ),
    EngineMtp(
        SGLANG.name,
        ("DeepseekV4ForCausalLM",),
        "DeepseekV4ForCausalLMNextN (one layer), or its DSpark head when the checkpoint has one",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer (num_nextn_predict_layers set to 1)",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1041-1060",
    ),
    EngineMtp(
        SGLANG.name,
        ("MiMoForCausalLM",),
        "MiMoMTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1093",
    ),
    EngineMtp(
        SGLANG.name,
        ("Qwen3NextForCausalLM",),
        "Qwen3NextForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1134-1136",
    ),
    EngineMtp(
        SGLANG.name,
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
    ),
    EngineMtp(
        SGLANG.name,
        ("NemotronHForCausalLM",),
        "NemotronHForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1198-1203",
    ),
    EngineMtp(
        SGLANG.name,
        ("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"),
        "Step3p5MTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{_SGLANG_SRC}/configs/model_config.py:1096-1097,1115-1120",
    ),
    EngineMtp(
        SGLANG.name,
        (),
        "none found: SGLang 0.5.23 swaps in no NextN/MTP class for this architecture",
        "not available",
        "-",
        "-",
        f"{_SGLANG_SRC}/configs/model_config.py:1032-1210 (no branch for it)",
    ),
    # TensorRT-LLM: its stored source (no line numbers could be read) gives the config class;
    # which architectures its PyTorch backend builds MTP for was not read.
    EngineMtp(
        TRTLLM.name,
        (),
        "MTP in the PyTorch backend (one-model MTP-EAGLE when k is 1); "
        "architectures served not verified",
        "speculative_config=MTPDecodingConfig(num_nextn_predict_layers={k})",
        "max_draft_len = num_nextn_predict_layers",
        "not verified",
        f"{_TRTLLM_SRC}:tensorrt_llm/llmapi/llm_args.py "
        "(MTPDecodingConfig.set_max_total_draft_tokens, "
        "spec_dec_mode)",
        verified=False,
    ),
    EngineMtp(
        LLAMACPP.name,
        (),
        "not verified: whether llama.cpp drafts from a GGUF's NextN layers was not read",
        "not verified",
        "not verified",
        "not verified",
        "ggml-org/llama.cpp (not read)",
        verified=False,
    ),
)
"""Per engine, the first row whose ``match`` names the target's architecture or one of its
model types wins; the engine's last row (empty ``match``) answers for every other target."""

ENGINES: tuple[str, ...] = (VLLM.name, SGLANG.name, TRTLLM.name, LLAMACPP.name)


def engine_rows(architectures: tuple[str, ...], model_type: str | None) -> tuple[EngineMtp, ...]:
    """Return, per engine, the row that applies to a target.

    The engines branch on ``architectures[0]`` and the top-level ``model_type`` (not
    ``text_config``'s: Kimi-K2.5's text model is a ``deepseek_v3``, its wrapper is not).
    """
    names = set(architectures[:1]) | ({model_type} if model_type else set())
    rows = []
    for engine in ENGINES:
        candidates = [r for r in MTP_ENGINE_ROWS if r.engine == engine]
        rows.append(next(r for r in candidates if not r.match or names & set(r.match)))
    return tuple(rows)


def family(model_types: tuple[str, ...]) -> MtpFamily | None:
    """Return the MTP family of a target, if known."""
    return next((f for f in FAMILIES if set(f.model_types) & set(model_types)), None)
