"""What ``target_layer_ids`` mean in each serving runtime, as one data table.

A DFlash id ``t`` means "the output of target decoder layer ``t``" in the reference, but each
runtime captures hidden states at its own index (``t + shift``) and supports its own range of ids.
Everything the tool knows about a runtime lives in ``PROFILES``; rules, reports and
``docs/runtimes.md`` are all derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass

PORTABLE = "portable"
"""The pseudo-runtime that must satisfy every profile (the default of ``--runtime``)."""


@dataclass(frozen=True)
class RuntimeProfile:
    """One runtime's reading of a DFlash draft config."""

    name: str
    """Short name used on the command line (``--runtime NAME``) and in reports."""
    title: str
    """Human name of the runtime and the code that was read."""
    index_name: str
    """What the runtime calls the tensor it captures for an id (``aux layer``, …)."""
    shift: int
    """Capture index = ``t + shift`` in the runtime's own numbering."""
    max_id_from_end: int
    """Largest valid id is ``N - max_id_from_end`` for a target of ``N`` layers."""
    reads_top_level_ids: bool
    """Whether a top-level ``target_layer_ids`` is read when ``dflash_config`` lacks it."""
    reads_top_level_mask: bool
    """Whether a top-level ``mask_token_id`` is read when ``dflash_config`` lacks it."""
    out_of_range: str
    """What happens when an id is past the valid range: the symptom and when it shows."""
    citation: str
    """Where this behaviour was read (repository@revision:path)."""
    reads_num_target_layers: bool = False
    """Whether loading a draft reads top-level ``num_target_layers`` (and fails without it)."""
    null_ids_fail: bool = False
    """Whether an explicit ``target_layer_ids: null`` is taken as the value (and fails) rather
    than treated as missing."""

    def capture_index(self, layer_id: int) -> int:
        """Return the runtime's own index for DFlash layer id ``layer_id``."""
        return layer_id + self.shift

    def max_layer_id(self, num_layers: int) -> int:
        """Return the largest id this runtime accepts on a target of ``num_layers`` layers."""
        return num_layers - self.max_id_from_end

    def layers_needed(self, max_id: int) -> int:
        """Return the smallest target layer count on which ``max_id`` is valid."""
        return max_id + self.max_id_from_end


PROFILES: tuple[RuntimeProfile, ...] = (
    RuntimeProfile(
        name="reference",
        title="z-lab dflash 0.1.0 (transformers reference)",
        index_name="hidden_states",
        shift=1,
        max_id_from_end=1,
        reads_top_level_ids=True,
        reads_top_level_mask=True,
        out_of_range="IndexError in extract_context_feature at the first decode; at t = N-1 it "
        "feeds the post-norm state, unlike every other runtime",
        # model.py: build_target_layer_ids(config.num_target_layers, …) on every load, and
        # _draft_value = dflash_config.get(name, getattr(config, name)) keeps a null.
        reads_num_target_layers=True,
        null_ids_fail=True,
        citation="z-lab/dflash@07ebd93d:dflash/model.py (extract_context_feature, offset = 1)",
    ),
    RuntimeProfile(
        name="vllm",
        title="vLLM (since vllm-project/vllm#40727)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        reads_top_level_ids=True,
        reads_top_level_mask=False,
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' (earlier: 'mat1 and mat2 shapes cannot be multiplied') at engine start "
        "(Model Runner V2) or the first decode (V1)",
        citation="vllm-project/vllm@1ad84fea:vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py "
        "(get_eagle3_aux_layers_from_config); vllm/model_executor/models/llama.py",
    ),
    RuntimeProfile(
        name="sglang",
        title="SGLang",
        index_name="capture point (before layer)",
        shift=1,
        max_id_from_end=2,
        reads_top_level_ids=True,
        reads_top_level_mask=True,
        out_of_range="ValueError 'DFLASH target_layer_ids contains an out-of-range layer id' at "
        "startup for t >= N; for t = N-1 no capture runs after the last layer (IndexError at "
        "startup or 'target_hidden feature dim mismatch' at the first decode)",
        citation="sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py@00731f0b; "
        "models/qwen3.py@01b5f572",
    ),
    RuntimeProfile(
        name="trtllm",
        title="TensorRT-LLM (PyTorch backend)",
        index_name="capture after layer",
        shift=0,
        max_id_from_end=1,
        reads_top_level_ids=True,
        reads_top_level_mask=True,
        out_of_range="no check: an id that never fires leaves its slot of a torch.empty buffer "
        "unwritten, garbage features, silent acceptance loss",
        citation="NVIDIA/TensorRT-LLM tensorrt_llm/_torch/speculative/dflash.py@2fc4bbbc (#12794)",
    ),
    RuntimeProfile(
        name="llamacpp",
        title="llama.cpp",
        index_name="GGUF target_layers (input of layer)",
        shift=1,
        max_id_from_end=2,
        reads_top_level_ids=True,
        reads_top_level_mask=True,
        out_of_range="GGML_ABORT 'DFlash: target layer %d input not extracted' at the first decode",
        citation="ggml-org/llama.cpp src/models/dflash.cpp@01b78a15 (#22105)",
    ),
    RuntimeProfile(
        name="mlx",
        title="MLX reference (dflash 0.1.0 model_mlx)",
        index_name="layers[t] output",
        shift=0,
        max_id_from_end=1,
        reads_top_level_ids=False,
        reads_top_level_mask=False,
        out_of_range="IndexError when the layer hooks are installed at the start of generation",
        # model_mlx.py load_draft: config["num_target_layers"], dflash_config["target_layer_ids"].
        reads_num_target_layers=True,
        null_ids_fail=True,
        citation="z-lab/dflash@07ebd93d:dflash/model_mlx.py (_patch_model, load_draft)",
    ),
)

PROFILES_BY_NAME: dict[str, RuntimeProfile] = {p.name: p for p in PROFILES}
RUNTIME_NAMES: tuple[str, ...] = (PORTABLE, *PROFILES_BY_NAME)


def select_profiles(runtime: str) -> tuple[RuntimeProfile, ...]:
    """Return the profiles a runtime selection stands for.

    ``portable`` is every profile; otherwise a comma-separated list of profile names (one
    from ``--runtime``, several from a ``pairs.yaml`` entry).
    """
    names = runtime.split(",")
    if PORTABLE in names:
        return PROFILES
    return tuple(p for p in PROFILES if p.name in names)


def portable_max_id_from_end() -> int:
    """Return the strictest ``N - k`` bound over all profiles: the portable layer rule."""
    return max(p.max_id_from_end for p in PROFILES)
