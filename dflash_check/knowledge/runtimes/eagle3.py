"""EAGLE-3's rows of the runtime table: which keys each runtime reads, how it numbers them.

An EAGLE-3 head concatenates three (or more) target hidden states and projects them with
``fc``. The runtimes agree on almost nothing about those ids: vLLM reads a top-level
``eagle_aux_hidden_state_layer_ids`` as capture points (``hidden_states[k]``), SGLang and
SpecForge read only ``eagle_config.eagle_aux_hidden_state_layer_ids`` as layer outputs (captured
at ``id + 1``), vLLM's V1 runner reads that nested list raw, and llama.cpp's converter reads
neither. Every profile here states its readings in canonical ids (``t``: output of layer t),
so two runtimes that feed different tensors are found by comparing lists.

The package (``knowledge/runtimes/__init__.py``) looks these rows up with DFlash's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dflash_check.knowledge.engines import (
    LLAMACPP,
    SGLANG,
    SGLANG_0523,
    SPECFORGE,
    TRTLLM,
    VLLM,
    VLLM_033,
    VLLM_V1,
)
from dflash_check.knowledge.runtimes.dflash_cells import VLLM_REVIEWED
from dflash_check.knowledge.runtimes.rows import (
    AUX_READING,
    EAGLE_AUX_IDS,
    NESTED_EAGLE_IDS,
    FamilyCell,
    IdReading,
    RuntimeProfile,
)

TOP_AUX = EAGLE_AUX_IDS
NESTED_AUX = NESTED_EAGLE_IDS
LEGACY_AUX = "eagle_config.layer_ids"
EAGLE3_ID_KEYS = (TOP_AUX, NESTED_AUX, LEGACY_AUX)
"""Every key an EAGLE-3 head may state its ids under (the normaliser records each one)."""

_V = VLLM_033.cite("vllm/")
_SGL = SGLANG_0523.cite("sglang/srt/")
_NO_MASK = "EAGLE-3 has no mask token"


@dataclass(frozen=True)
class Numbering:
    """A family's own rule for how a runtime numbers explicit ids (SGLang's capture hooks)."""

    name: str
    title: str
    to_output: Callable[[int, tuple[int, ...], int], int]
    """(the reading's to_output, raw ids, N) -> to_output for this list."""


NUMBERINGS: dict[str, Numbering] = {
    n.name: n
    for n in (
        # deepseek_v2.py:3458-3473: "+1 only if layer_ids[0] == 1" (SpecForge-style lists).
        Numbering(
            "plus-one-if-first-is-1",
            "+1 only when the first id is 1, else the ids are capture points",
            lambda default, raw, n: default if raw and raw[0] == 1 else -1,
        ),
        # gpt_oss.py:1337-1352: ids that already include the final boundary are kept.
        Numbering(
            "raw-if-max-is-n",
            "the ids are capture points when max(ids) == N, else +1",
            lambda default, raw, n: -1 if raw and max(raw) == n else default,
        ),
    )
}


EAGLE3_PROFILES: tuple[RuntimeProfile, ...] = (
    RuntimeProfile(
        name=VLLM.name,
        title="vLLM, Model Runner V2 (the default runner)",
        index_name="aux layer k = hidden_states[k]",
        shift=1,
        max_id_from_end=1,
        mask_keys=(),
        without_ids="captures its default aux layers (2, N//2, N-3) and logs it at info level",
        out_of_range="an id past the target is never captured: one aux state fewer than fc "
        "expects, a shape error at the first decode",
        citation=_V + "v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:113-150 "
        "(get_eagle3_aux_layers_from_config: never reads eagle_config.eagle_aux_hidden_state_"
        "layer_ids); model_executor/models/interfaces.py:1751-1772 (default)",
        method="eagle3",
        # The same reader as for DFlash: a head that also carries DFlash-style ids is fed them.
        id_readings=(
            IdReading(TOP_AUX, AUX_READING),
            IdReading("dflash_config.target_layer_ids"),
            IdReading("dspark_target_layer_ids"),
            IdReading("target_layer_ids"),
            IdReading("dflash_config.layer_ids", AUX_READING),
            IdReading(LEGACY_AUX, AUX_READING),
        ),
        default_ids="three",
        min_id=-1,
        aux_count="vllm",
        first_present=False,
        runner="V2",
    ),
    RuntimeProfile(
        name=VLLM_V1,
        title="vLLM, Model Runner V1 (VLLM_USE_V2_MODEL_RUNNER=0, P-EAGLE)",
        index_name="aux layer k = hidden_states[k]",
        shift=1,
        max_id_from_end=1,
        mask_keys=(),
        without_ids="captures its default aux layers (2, N//2, N-3)",
        out_of_range="an id past the target is never captured: one aux state fewer than fc "
        "expects, a shape error at the first decode",
        citation=_V + "v1/worker/gpu_model_runner.py:5190-5225 "
        "(_get_eagle3_aux_layers_from_config: the nested list is read raw, unconverted)",
        method="eagle3",
        id_readings=(IdReading(TOP_AUX, AUX_READING), IdReading(NESTED_AUX, AUX_READING)),
        default_ids="three",
        min_id=-1,
        aux_count="vllm",
        first_present=False,
        runner="V1",
        engine=VLLM.name,
        portable=False,
    ),
    RuntimeProfile(
        name=SGLANG.name,
        title="SGLang",
        index_name="capture point c (before layer c) = hidden_states[c]",
        shift=1,
        max_id_from_end=2,
        mask_keys=(),
        without_ids="captures (2, N//2, N-3) as capture points (no +1 for the default)",
        out_of_range="no capture runs after the last layer: fewer aux states than fc expects, "
        "an error at startup or the first decode",
        citation=_SGL + "speculative/spec_aux_hidden_state.py:185-196 (nested key only); "
        "models/llama.py:929-941 (explicit ids +1, default raw)",
        method="eagle3",
        id_readings=(IdReading(NESTED_AUX, 0),),
        default_ids="three",
        min_id=-1,
        aux_count="three",
    ),
    RuntimeProfile(
        name=TRTLLM.name,
        title="TensorRT-LLM (PyTorch backend)",
        index_name="capture after layer t",
        shift=0,
        max_id_from_end=1,
        # The capture ids come from the engine's eagle3_layers_to_capture option; whether it
        # reads a checkpoint key was not verified, so no key is modelled.
        id_readings=(),
        mask_keys=(),
        without_ids="captures (1, N//2-1, N-4) layer outputs; refuses N <= 5: 'Not enough "
        "hidden layers for default EAGLE3 capture'",
        out_of_range="no check: an id that never fires leaves its slot unwritten (garbage "
        "features, silent acceptance loss)",
        citation="NVIDIA/TensorRT-LLM@f933a608:tensorrt_llm/_torch/speculative/eagle3.py "
        "(Eagle3SpecMetadata.__post_init__); reading a checkpoint key not verified",
        method="eagle3",
        default_ids="three-trt",
        aux_count="three",
        reading_unverified=True,
    ),
    RuntimeProfile(
        name=LLAMACPP.name,
        title="llama.cpp (convert_hf_to_gguf.py, then the eagle3 model)",
        index_name="GGUF extract_layers (vLLM's capture points)",
        shift=1,
        max_id_from_end=1,
        # The converter writes extract_layers = [2, N//2, N-3] from the target's config and
        # reads no id key of the head (ggml-org/llama.cpp#27040).
        id_readings=(),
        mask_keys=(),
        without_ids="its converter always writes extract_layers = [2, N//2, N-3] from the "
        "target's config, whatever the head states",
        out_of_range="not reachable: the converter computes the ids",
        citation="ggml-org/llama.cpp@0274f0fc:conversion/llama.py (LlamaModel.__init__, the "
        "EAGLE-3 branch); src/models/eagle3.cpp (load_arch_hparams); the capture numbering "
        "is taken to be vLLM's, whose default the converter copies",
        method="eagle3",
        default_ids="three",
        min_id=-1,
        aux_count="exactly-three",
    ),
    RuntimeProfile(
        name=SPECFORGE.name,
        title="SpecForge (training and offline capture; checked only when named)",
        index_name="layer output t (SGLang captures t + 1)",
        shift=1,
        max_id_from_end=1,
        mask_keys=(),
        without_ids="uses (1, N//2-1, N-4) layer outputs",
        out_of_range="offline capture refuses: 'resolved offline capture layers exceed target "
        "model depth'",
        citation="sgl-project/SpecForge@a6b6b023:specforge/algorithms/model_providers.py:"
        "188-211 (resolve_eagle_capture_layers); specforge/application/composition.py:93-117",
        method="eagle3",
        id_readings=(IdReading(NESTED_AUX, 0),),
        default_ids="three",
        aux_count="exactly-three",
        first_present=False,
        portable=False,
    ),
)

_SGLM = _SGL + "models/"
_DELEGATES = "the class hands capture to an inner model, whose numbering the facts do not show"

# vLLM captures EAGLE-3 aux states with the same interface as DFlash, so its DFlash exceptions
# hold; the DeepSeek family has no aux 0 (residual is None before the first layer).
_VLLM_REVIEWED = (
    FamilyCell(
        VLLM.name,
        ("deepseek_v3", "kimi_k25"),
        _V + "model_executor/models/deepseek_v2.py:1561-1568, :1586-1587 (aux 1..N)",
        min_id=0,
        releases=">=0.32",
        reason="aux 0 is a TypeError in DeepSeek's model (residual is None before the first "
        "layer), which the capture sites alone do not show",
    ),
    *VLLM_REVIEWED,
)

EAGLE3_REVIEWED: tuple[FamilyCell, ...] = (
    *_VLLM_REVIEWED,
    FamilyCell(
        SGLANG.name,
        ("llama4", "qwen3_moe", "qwen3_next", "qwen3_vl", "qwen3_5", "qwen3_5_text"),
        _SGLM + "llama.py:929-941 (mllama4 delegates), qwen3_moe.py:1128-1143, "
        "qwen3_vl.py:1777-1795, qwen3_5_text.py:150-159 (explicit +1, default raw)",
        releases=">=0.5.23",
        reason=_DELEGATES,
    ),
    FamilyCell(
        SGLANG.name,
        ("kimi_k25",),
        _SGLM + "deepseek_v2.py:3458-3473 (+1 only if layer_ids[0] == 1)",
        numbering="plus-one-if-first-is-1",
        releases=">=0.5.23",
        reason=_DELEGATES + " (the DeepSeek language model's hook)",
    ),
    FamilyCell(
        SGLANG.name,
        ("gpt_oss",),
        _SGLM + "gpt_oss.py:1337-1352 (captures after the last layer)",
        max_id_from_end=1,
        releases=">=0.5.23",
        reason="the model also captures after its last layer, outside the hook the facts read",
    ),
)
"""EAGLE-3's reviewed exceptions to the cells the facts give (``cells.py``), each over a range
of releases with its reason; every other vLLM and SGLang cell is derived from the facts."""
