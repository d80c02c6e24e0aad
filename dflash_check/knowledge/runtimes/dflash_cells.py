"""DFlash's family cells (they cover DFlash 2 and DSpark): for the engines whose releases are
extracted, the reviewed exceptions to the cells their facts give (``DFLASH_REVIEWED``, applied
in ``cells.py``); for the others, their cells as read by hand (``DFLASH_HAND_CELLS``). Each
runtime's general convention is its row in ``dflash.py``.
"""

from __future__ import annotations

from dflash_check.knowledge.engines import (
    DFLASH_MLX,
    DFLASH_MLX_018,
    SGLANG,
    SGLANG_0523,
    VLLM,
    VLLM_033,
)
from dflash_check.knowledge.families import FAMILIES
from dflash_check.knowledge.runtimes.rows import (
    AUX_READING,
    NESTED_IDS,
    TOP_IDS,
    FamilyCell,
    IdReading,
)

_VLLM = VLLM.at("c2057261") + ":vllm/model_executor/models/"
# vLLM 0.33.0's wheel (commit 4ba787ec, 2026-11): the cells read after the first pass.
_VLLM_033 = VLLM_033.cite("vllm/model_executor/models/")
_SGL = SGLANG_0523.cite("sglang/srt/models/")
# Read from the model code only: the failure was not reproduced on a server.
_NOT_RUN = "; read from the code, not run"

# The draft architectures SGLang gives +1 on a Muse Glimmer target (the others go in raw).
MUSE_REMAPPED = ("MuseGlimmerAssistantModel", "DFlash2DraftModel")

# The families whose model_type contains "qwen": dflash-mlx's qwen_gdn backend takes them.
_DFLASH_MLX_QWEN = tuple(
    f.name for f in FAMILIES if any("qwen" in m for m in (f.name, *f.model_types))
)

# Why a delegating hook or wrapper is an exception at all: the facts show that the class
# captures (its interface or hook) but not where, which the reviewer read in the inner model.
_DELEGATES = "the class hands capture to an inner model, whose range the facts do not show"

VLLM_REVIEWED: tuple[FamilyCell, ...] = (
    # DeepSeek's generic model captures before layer k and after the last layer: aux 1..N.
    FamilyCell(
        VLLM.name,
        ("kimi_k25",),
        _VLLM_033
        + "kimi_k25.py:376-380, :470-474 (the DeepSeek language model); "
        + _VLLM
        + "deepseek_v2.py:1515-1541",
        releases=">=0.32",
        reason=_DELEGATES + " (KimiK25 builds a DeepSeek-V3 model: aux 1..N)",
    ),
    # The registry names a class the extractor finds in no file of the archive (a package
    # path), so the facts do not judge it; read by hand at a commit before 0.32.
    FamilyCell(
        VLLM.name,
        ("glm_moe_dsa",),
        _VLLM + "deepseek_v32/nvidia/model.py:277 (capture before each layer, none after the "
        "last); deepseek_v32/__init__.py:19-21 (the CUDA path)",
        index_name="aux layer (captured before the layer)",
        max_id_from_end=2,
        releases=">=0.32",
        reason="the registry entry vllm.models.deepseek_v32:GlmMoeDsaForCausalLM resolves to "
        "no class the extractor reads",
    ),
)
"""vLLM's reviewed exceptions to the cells its facts give (``cells.py``)."""

# SGLang: capture before layer c = t + 1 < N, so t = N-1 never fires, except in the
# families that also capture after the last layer (which the hook's rule does not show).
_AFTER_LAST = "the model also captures after its last layer, outside the hook the facts read"
SGLANG_REVIEWED: tuple[FamilyCell, ...] = (
    FamilyCell(
        SGLANG.name,
        ("qwen3_moe", "qwen3_next"),
        _SGL + "qwen3_moe.py:1145-1155 (Model :987-990), qwen3_next.py:1303-1313 (Model "
        ":959-962): +1, capture before the layer; N-1 is an IndexError at setup",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_5_text",),
        _SGL + "qwen3_5_text.py:134-148 (+1; rejects N-1)",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_5",),
        _SGL + "qwen3_5.py:3021 via qwen3_vl.py:1680-1688",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("kimi_k25",),
        _SGL + "deepseek_v2.py:3475-3485 (the DeepSeek language model's hook)",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_vl_moe",),
        _SGL + "qwen3_vl.py:1680-1688 -> qwen3_vl_moe.py:197 (Qwen3MoeModel, qwen3_moe.py:987-990)",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_vl",),
        _SGL + "qwen3_vl.py:1680-1688 delegates to Qwen3LLMModel (:1169, :1320), which has no "
        "hook" + _NOT_RUN,
        cannot_capture="SGLang's Qwen3VLForConditionalGeneration hands DFlash capture to its "
        "dense language model, which has no hook; startup fails with AttributeError "
        "\"'Qwen3LLMModel' object has no attribute 'set_dflash_layers_to_capture'\"",
        releases=">=0.5.23",
        reason="the facts show the wrapper's delegating hook, not that its dense inner model "
        "has none",
    ),
    FamilyCell(
        SGLANG.name,
        ("gpt_oss",),
        _SGL + "gpt_oss.py:726-741 (also after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason=_AFTER_LAST,
    ),
    FamilyCell(
        SGLANG.name,
        ("gemma4",),
        _SGL + "gemma4_causal.py:1090-1094, :1208-1214 (also after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason=_AFTER_LAST,
    ),
    FamilyCell(
        SGLANG.name,
        ("laguna",),
        _SGL + "laguna.py:632 (also after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason=_AFTER_LAST,
    ),
    FamilyCell(
        SGLANG.name,
        ("mimo_v2",),
        _SGL + "mimo_v2.py:1186-1195, :1501-1513 (also after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason=_AFTER_LAST,
    ),
    FamilyCell(
        SGLANG.name,
        ("nemotron_h",),
        _SGL + "nemotron_h.py:895-898, :1225-1234 (also after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason=_AFTER_LAST,
    ),
    # Muse Glimmer's hook captures raw ids before layer i (muse_glimmer.py:866-879); SGLang adds
    # one first only for the drafts it remaps (spec_aux_hidden_state.py:17-29, :254-258), so a
    # plain DFlash draft is fed every feature one layer early.
    FamilyCell(
        SGLANG.name,
        ("muse_glimmer",),
        _SGL + "muse_glimmer.py:866-879 (capture before layer i, raw); "
        "speculative/spec_aux_hidden_state.py:17-29, :254-258 (+1 for MuseGlimmerAssistantModel "
        "and DFlash2DraftModel drafts only)",
        index_name="capture point (before layer; +1 only for Muse-remapped drafts)",
        max_id_from_end=2,
        id_readings=(
            IdReading(NESTED_IDS, draft_architectures=MUSE_REMAPPED),
            IdReading(TOP_IDS, draft_architectures=MUSE_REMAPPED),
            IdReading(NESTED_IDS, AUX_READING),
            IdReading(TOP_IDS, AUX_READING),
        ),
        releases=">=0.5.23",
        reason="the hook's rule is raw, but which drafts SGLang remaps first is decided "
        "outside the hook",
    ),
)
"""SGLang's reviewed exceptions to the cells its facts give (``cells.py``)."""

DFLASH_REVIEWED: tuple[FamilyCell, ...] = (*VLLM_REVIEWED, *SGLANG_REVIEWED)
"""The reviewed exceptions of DFlash's rows: each over a release range, with its reason."""

DFLASH_HAND_CELLS: tuple[FamilyCell, ...] = (
    # Only engines whose code is not extracted: an extracted engine's cells follow its facts.
    # dflash-mlx: one target backend per family; a model_type containing "qwen" (with a text
    # model that has layers and embed_tokens) or gemma4. Both capture after layer t at key t + 1.
    FamilyCell(
        DFLASH_MLX.name,
        _DFLASH_MLX_QWEN,
        DFLASH_MLX_018.cite("dflash_mlx/engine/target_qwen_gdn.py", "745-756")
        + " (supports_model), :853-880 (capture)",
    ),
    FamilyCell(
        DFLASH_MLX.name,
        ("gemma4",),
        DFLASH_MLX_018.cite("dflash_mlx/engine/target_gemma4.py", "274-286")
        + " (supports_model), :441-445 (capture)",
    ),
    FamilyCell(
        DFLASH_MLX.name,
        tuple(f.name for f in FAMILIES if f.name not in (*_DFLASH_MLX_QWEN, "gemma4")),
        DFLASH_MLX_018.cite("dflash_mlx/engine/target_ops.py", "116-145")
        + " (TARGET_BACKENDS: qwen_gdn, gemma4)",
        cannot_capture="dflash-mlx has no target backend for this family; loading the target "
        "raises NotImplementedError 'Unsupported target architecture for DFlash target ops: "
        "model_type=…, supported target backends: qwen_gdn, gemma4' ("
        + DFLASH_MLX_018.cite("dflash_mlx/engine/target_ops.py", "129-145")
        + ")",
    ),
)
