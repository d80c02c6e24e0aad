"""How each EAGLE-3 runtime sizes a head's ``fc`` (``AUX_COUNTS``, named by
``RuntimeProfile.aux_count``).

Apart from the rows (``eagle3.py``) because only an EAGLE-3 head's check and the listings read
it: a DFlash pair's start-up does not define its class (``benchmarks/bench_pair.py``). The
family numberings (``NUMBERINGS``) stay with the rows: the runtime table looks every SGLang
hook's rule up in them, for a DFlash draft too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines import VLLM_033
from dflash_check.knowledge.runtimes.rows import EAGLE_AUX_IDS as TOP_AUX
from dflash_check.knowledge.runtimes.rows import NESTED_EAGLE_IDS as NESTED_AUX

if TYPE_CHECKING:
    from dflash_check.views import DraftView

_V = VLLM_033.cite("vllm/")


@dataclass(frozen=True)
class AuxCount:
    """How a runtime sizes an EAGLE-3 head's ``fc``: the number of hidden states it expects."""

    name: str
    title: str
    """The rule as the runtime's code states it, for reports and docs."""
    count: Callable[[DraftView], tuple[int, str]]
    """(count, why) for a draft."""
    exact: bool = False
    """Whether the runtime refuses an id list of another length (rather than mis-sizing)."""
    citation: str = ""


# vLLM's Qwen3 EAGLE-3 model reads its own keys first and counts a top-level list too.
_VLLM_QWEN3 = frozenset({"Eagle3Qwen3ForCausalLM", "PeagleQwen3ForCausalLM"})


def _vllm_count(d: DraftView) -> tuple[int, str]:
    """vLLM: num_aux_hidden_states, else len(nested list), else 3 (top-level length ignored),
    except its Qwen3 model: num_aux_layers, num_aux_hidden_states, len(either list), 3."""
    e = d.eagle3
    sources = {s.key: s.ids for s in d.id_sources}
    qwen3 = bool(_VLLM_QWEN3 & set(d.architectures)) or (
        e is not None and e.layer_model_type == "qwen3"
    )
    if qwen3 and e is not None and e.num_aux_layers is not None:
        return e.num_aux_layers, "num_aux_layers"
    if e is not None and e.num_aux_hidden_states is not None:
        return e.num_aux_hidden_states, "num_aux_hidden_states"
    keys = (TOP_AUX, NESTED_AUX) if qwen3 else (NESTED_AUX,)
    for key in keys:
        if sources.get(key):
            return len(sources[key] or ()), f"len({key})"
    ignored = " (the top-level list's length is ignored)" if sources.get(TOP_AUX) else ""
    return 3, f"the default 3{ignored}"


AUX_COUNTS: dict[str, AuxCount] = {
    a.name: a
    for a in (
        AuxCount(
            "vllm",
            "num_aux_hidden_states, else len(eagle_config.eagle_aux_hidden_state_layer_ids), "
            "else 3; the top-level list's length is ignored (Qwen3 heads: num_aux_layers first, "
            "and either list)",
            _vllm_count,
            citation=_V + "model_executor/models/llama_eagle3.py:209-221; "
            "qwen3_eagle3.py:201-213; vllm-project/vllm#54526",
        ),
        AuxCount(
            "three",
            "always 3 x target hidden size",
            lambda d: (3, "fc is built for 3 hidden states"),
            citation="sgl-project/sglang python/sglang/srt/models/llama_eagle3.py "
            "(LlamaModel.__init__: Linear(hidden_size_in * 3, …)); NVIDIA/TensorRT-LLM "
            "tensorrt_llm/_torch/models/modeling_speculative.py (Eagle3DraftModel, the same)",
        ),
        AuxCount(
            "exactly-three",
            "exactly 3 ids, refused otherwise",
            lambda d: (3, "exactly 3 are accepted"),
            exact=True,
            citation="sgl-project/SpecForge@a6b6b023:specforge/algorithms/model_providers.py:"
            "206-210; ggml-org/llama.cpp@0274f0fc:src/models/eagle3.cpp (load_arch_hparams: "
            "'EAGLE3 requires exactly 3 entries in 'extract_layers'')",
        ),
    )
}
