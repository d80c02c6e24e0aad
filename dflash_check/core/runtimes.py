"""What ``target_layer_ids`` mean in each serving runtime, as one data table.

A DFlash id ``t`` means "the output of target decoder layer ``t``" in the reference, but each
runtime captures hidden states at its own index (``t + shift``) and supports its own range of ids.
Everything the tool knows about a runtime lives in ``PROFILES``; rules, reports and
``docs/runtimes.md`` are all derived from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

PORTABLE = "portable"
"""The pseudo-runtime that must satisfy every profile (the default of ``--runtime``)."""


# Keys a runtime may read layer ids from, as dotted paths in the draft's config.json. The
# normalisers record every one a draft has (``DraftView.layer_id_sources``) in DFlash numbering,
# and each profile lists the ones it reads, in its order, so a draft whose copies disagree
# resolves per runtime to the list that runtime really feeds.
EAGLE_AUX_IDS = "eagle_aux_hidden_state_layer_ids"
NESTED_IDS = "dflash_config.target_layer_ids"
TOP_IDS = "target_layer_ids"
NESTED_MASK = "dflash_config.mask_token_id"
TOP_MASK = "mask_token_id"


@dataclass(frozen=True)
class IdReading:
    """One key a runtime reads layer ids from, and how it numbers them."""

    key: str
    """A dotted key this runtime reads."""
    to_output: int
    """Canonical id ``t = raw + to_output``: t is the output of target layer t, the tensor HF
    calls ``hidden_states[t+1]``. 0 for DFlash ids and SGLang's nested EAGLE-3 ids (captured
    at id + 1); -1 for vLLM's raw aux ids (aux k = ``hidden_states[k]`` = output of layer k-1)."""


@dataclass(frozen=True)
class DefaultIds:
    """A rule a runtime applies when it finds no ids: what it computes, in its numbering."""

    name: str
    """Name used by profiles (``RuntimeProfile.default_ids``)."""
    formula: str
    """The formula as the runtime writes it, for reports."""
    raw: Callable[[int], tuple[int, ...]]
    """The runtime's own ids for a target of N layers."""
    to_output: int
    """Canonical id ``t = raw + to_output``, as for ``IdReading``."""


DEFAULT_IDS: dict[str, DefaultIds] = {
    d.name: d
    for d in (
        # vLLM, speculators, SGLang, llama.cpp's converter: capture points k (hidden_states[k]).
        DefaultIds(
            "aux-2-half-3", "(2, N//2, N-3) capture points", lambda n: (2, n // 2, n - 3), -1
        ),
        # SpecForge / TensorRT-LLM: layer outputs t, the same three tensors as above.
        DefaultIds(
            "output-1-half-4", "(1, N//2-1, N-4) layer outputs", lambda n: (1, n // 2 - 1, n - 4), 0
        ),
    )
}


@dataclass(frozen=True)
class RuntimeProfile:
    """One runtime's reading of a DFlash draft config, in general or on one target family.

    ``PROFILES`` holds each runtime's general convention; ``on_family`` applies the family's
    cell of ``FAMILY_CELLS`` to it, so rules and reports see what the runtime does on this
    target.
    """

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
    id_keys: tuple[str, ...]
    """The keys layer ids are read from, first present one wins."""
    mask_keys: tuple[str, ...]
    """The keys ``mask_token_id`` is read from, first present one wins."""
    without_ids: str
    """What the runtime does when it finds no ids under its keys."""
    out_of_range: str
    """What happens when an id is past the valid range: the symptom and when it shows."""
    citation: str
    """Where this behaviour was read (repository@revision:path)."""
    reads_num_target_layers: bool = False
    """Whether loading a draft reads top-level ``num_target_layers`` (and fails without it)."""
    null_ids_fail: bool = False
    """Whether an explicit ``target_layer_ids: null`` is taken as the value (and fails) rather
    than treated as missing."""
    mask_default: str | None = None
    """What the runtime uses when the draft has no mask token (None: it fails to load)."""
    family_independent: bool = False
    """Whether the runtime captures through the model's generic outputs, the same way for every
    target family (the Python references), so no family cell applies."""
    family: str | None = None
    """The target family this profile was resolved on (None: the general convention)."""
    cannot_capture: str | None = None
    """The engine's own failure when this family has no hidden-state capture, else None."""
    cell_citation: str | None = None
    """Where the family cell was read (None: the general convention, unverified for it)."""
    method: str = "dflash"
    """The speculative method whose drafts this profile reads (``METHOD_PROFILES``)."""
    id_readings: tuple[IdReading, ...] = ()
    """The keys ids are read from with their numbering, first present one wins (EAGLE-3)."""
    default_ids: str | None = None
    """The ``DEFAULT_IDS`` rule used when no key it reads is present (None: it has none)."""
    default_min_layers: int | None = None
    """Smallest target on which the default is computed at all (TensorRT-LLM refuses N <= 5)."""
    min_id: int = 0
    """Smallest canonical id it captures (-1: the embeddings, vLLM's aux 0)."""
    aux_count: str | None = None
    """The ``AUX_COUNTS`` rule that sizes the head's fc (EAGLE-3), None for DFlash."""
    numbering: str | None = None
    """A ``NUMBERINGS`` rule that overrides ``to_output`` per id list (SGLang families)."""
    runner: str | None = None
    """The engine's runner this profile describes, when the engine has several (vLLM V1)."""
    training: bool = False
    """A training framework, not a server: named with --runtime only, never by portable."""

    @property
    def reads_top_level_ids(self) -> bool:
        """Whether a top-level ``target_layer_ids`` is read."""
        return TOP_IDS in self.id_keys

    @property
    def reads_top_level_mask(self) -> bool:
        """Whether a top-level ``mask_token_id`` is read."""
        return TOP_MASK in self.mask_keys

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
        # _draft_value = dflash_config.get(name, getattr(config, name)): a null stays a null.
        id_keys=(NESTED_IDS, TOP_IDS),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers (0.1.0; "
        "z-lab/dflash#157 makes the ids required)",
        out_of_range="IndexError in extract_context_feature at the first decode; at t = N-1 it "
        "feeds the post-norm state, unlike every other runtime",
        # build_target_layer_ids(config.num_target_layers, …) runs on every load.
        reads_num_target_layers=True,
        null_ids_fail=True,
        family_independent=True,
        citation="z-lab/dflash@07ebd93d:dflash/model.py:131-132 (_draft_value), :560-570 "
        "(DFlashDraftModel.__init__), :37-43 (extract_context_feature, offset 1)",
    ),
    RuntimeProfile(
        name="vllm",
        title="vLLM (since vllm-project/vllm#40727)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        # Model Runner V2 reads a top-level eagle_aux list first (raw aux indices), then the
        # DFlash keys; both runners fall back to a top-level mask (#46995, #51602).
        id_keys=(EAGLE_AUX_IDS, NESTED_IDS, TOP_IDS),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="captures its default aux layers (2, N//2, N-3) and sizes fc from the "
        "draft's num_hidden_layers",
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' (earlier: 'mat1 and mat2 shapes cannot be multiplied') at engine start "
        "(Model Runner V2) or the first decode (V1)",
        citation="vllm-project/vllm@c2057261:vllm/v1/worker/gpu/spec_decode/eagle/"
        "eagle3_utils.py:41-60 (get_eagle3_aux_layers_from_config); "
        "vllm/v1/spec_decode/utils.py:65 (mask_token_id)",
    ),
    RuntimeProfile(
        name="sglang",
        title="SGLang",
        index_name="capture point (before layer)",
        shift=1,
        max_id_from_end=2,
        # dict.get on dflash_config, then the top level: a null in dflash_config is kept and
        # the ids fall back to the formula (dflash_utils.py:611-613).
        id_keys=(NESTED_IDS, TOP_IDS),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers",
        mask_default="the tokenizer's mask_token (default '<|MASK|>', added when absent)",
        out_of_range="ValueError 'DFLASH target_layer_ids contains an out-of-range layer id' at "
        "startup for t >= N; for t = N-1 no capture runs after the last layer (IndexError at "
        "startup or 'target_hidden feature dim mismatch' at the first decode)",
        citation="sgl-project/sglang@d315eb72:python/sglang/srt/speculative/dflash_utils.py:"
        "611-643; dflash_worker_v2.py:876-937 (mask token)",
    ),
    RuntimeProfile(
        name="trtllm",
        title="TensorRT-LLM (PyTorch backend)",
        index_name="capture after layer",
        shift=0,
        max_id_from_end=1,
        # modeling_dflash.py: dflash_config.get("target_layer_ids", None) only.
        id_keys=(NESTED_IDS,),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="captures no draft-chosen layers (target_layer_ids None)",
        mask_default="vocab_size, one past the embedding",
        out_of_range="no check: an id that never fires leaves its slot of a torch.empty buffer "
        "unwritten, garbage features, silent acceptance loss",
        citation="NVIDIA/TensorRT-LLM@7c7504c0:tensorrt_llm/_torch/models/modeling_dflash.py; "
        "tensorrt_llm/_torch/speculative/dflash.py@00679c66",
    ),
    RuntimeProfile(
        name="llamacpp",
        title="llama.cpp",
        index_name="GGUF target_layers (input of layer)",
        shift=1,
        max_id_from_end=1,
        # The converter reads dflash_config only (upstream review of ggml-org/llama.cpp#25110);
        # t = N-1 reads the post-norm embeddings (llama_get_embeddings_nextn).
        id_keys=(NESTED_IDS,),
        mask_keys=(NESTED_MASK,),
        without_ids="refuses to load: 'DFlash model requires 'target_layers' in GGUF metadata'",
        out_of_range="GGML_ABORT 'DFlash: target layer %d input not extracted' at the first decode",
        citation="ggml-org/llama.cpp@001d906a:common/speculative.cpp (target_layer_ids[k] == "
        "n_layer_tgt); src/models/dflash.cpp@01b78a15 (#22105)",
    ),
    RuntimeProfile(
        name="mlx",
        title="MLX reference (dflash 0.1.0 model_mlx)",
        index_name="layers[t] output",
        shift=0,
        max_id_from_end=1,
        id_keys=(NESTED_IDS,),
        mask_keys=(NESTED_MASK,),
        without_ids="KeyError 'target_layer_ids' when the draft loads",
        out_of_range="IndexError when the layer hooks are installed at the start of generation",
        # load_draft: config["num_target_layers"], dflash_config["target_layer_ids"].
        reads_num_target_layers=True,
        null_ids_fail=True,
        family_independent=True,
        citation="z-lab/dflash@07ebd93d:dflash/model_mlx.py:448-457 (load_draft), _patch_model",
    ),
)


@dataclass(frozen=True)
class FamilyCell:
    """What one runtime does on some target families, where the engine's model code was read.

    A field left None keeps the runtime's general convention; a cell with no overrides records
    that the convention was verified for those families (with its citation).
    """

    runtime: str
    """The profile this cell refines."""
    families: tuple[str, ...]
    """Target family names (``core/families.py``)."""
    citation: str
    """Where it was read: repository@revision:path:line."""
    index_name: str | None = None
    shift: int | None = None
    max_id_from_end: int | None = None
    id_keys: tuple[str, ...] | None = None
    cannot_capture: str | None = None
    """The engine's own failure message when the family has no capture hook."""
    min_id: int | None = None
    numbering: str | None = None


_VLLM = "vllm-project/vllm@c2057261:vllm/model_executor/models/"
_SGL = "sglang==0.5.23 (PyPI, 2026-10-30):sglang/srt/models/"
_VLLM_NO_INTERFACE = (
    "vLLM has no aux-hidden-state interface (SupportsEagle3) for this model class; the engine "
    "fails at load: 'Model does not support EAGLE3 interface but aux_hidden_state_outputs was "
    "requested'"
)
_SGL_NO_HOOK = (
    "SGLang's model class has no DFlash capture hook; the worker fails at startup: 'Model X "
    "implements neither set_dspark_layers_to_capture nor set_dflash_layers_to_capture, one of "
    "which is required for DFLASH/DSPARK.'"
)

FAMILY_CELLS: tuple[FamilyCell, ...] = (
    # vLLM: aux index k = the residual after k layers, captured after each layer (1..N).
    FamilyCell("vllm", ("llama",), _VLLM + "llama.py:420-429"),
    FamilyCell("vllm", ("qwen2", "qwen3"), _VLLM + "qwen2.py:415-420"),
    FamilyCell("vllm", ("qwen3_next", "qwen3_5", "qwen3_5_text"), _VLLM + "qwen3_next.py:632-644"),
    FamilyCell("vllm", ("gpt_oss",), _VLLM + "gpt_oss.py:349-355"),
    FamilyCell("vllm", ("gemma4",), _VLLM + "gemma4.py:1312-1333"),
    FamilyCell("vllm", ("minimax_m2",), _VLLM + "minimax_m2.py:395-400"),
    FamilyCell("vllm", ("nemotron_h",), _VLLM + "nemotron_h.py:618-627"),
    FamilyCell("vllm", ("mimo_v2",), _VLLM + "mimo_v2.py:604-613"),
    FamilyCell("vllm", ("deepseek_v3", "kimi_k25"), _VLLM + "deepseek_v2.py:1515-1541"),
    FamilyCell(
        "vllm",
        ("deepseek_v32", "glm_moe_dsa"),
        _VLLM + "deepseek_v32/nvidia/model.py:277 (capture before each layer, none after the "
        "last); deepseek_v32/__init__.py:19-21 (the CUDA path)",
        index_name="aux layer (captured before the layer)",
        max_id_from_end=2,
    ),
    FamilyCell(
        "vllm",
        ("glm4_moe",),
        _VLLM + "glm4_moe.py (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    FamilyCell(
        "vllm",
        ("gemma3",),
        _VLLM + "gemma3.py (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    # SGLang: capture before layer c = t + 1 < N, so t = N-1 never fires, except in the
    # families that also capture after the last layer.
    FamilyCell("sglang", ("llama", "llama4"), _SGL + "llama.py:943 (set_dflash_layers_to_capture)"),
    FamilyCell("sglang", ("qwen3",), _SGL + "qwen3.py:793-805"),
    FamilyCell("sglang", ("qwen3_5_text",), _SGL + "qwen3_5_text.py:134-148 (+1; rejects N-1)"),
    FamilyCell("sglang", ("qwen3_5",), _SGL + "qwen3_5.py:3021 via qwen3_vl.py:1680-1688"),
    FamilyCell(
        "sglang",
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "kimi_k25"),
        _SGL + "deepseek_v2.py:3475-3485 (GlmMoeDsaForCausalLM inherits: glm4_moe.py:1284)",
    ),
    FamilyCell(
        "sglang",
        ("gpt_oss",),
        _SGL + "gpt_oss.py:726-741 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        "sglang",
        ("gemma4",),
        _SGL + "gemma4_causal.py:1090-1094, :1208-1214 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        "sglang", ("laguna",), _SGL + "laguna.py:632 (also after the last layer)", max_id_from_end=1
    ),
    FamilyCell(
        "sglang",
        ("mimo_v2",),
        _SGL + "mimo_v2.py:1186-1195, :1501-1513 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        "sglang",
        ("nemotron_h",),
        _SGL + "nemotron_h.py:895-898, :1225-1234 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell("sglang", ("qwen2",), _SGL + "qwen2.py:797 (no hook)", cannot_capture=_SGL_NO_HOOK),
    FamilyCell(
        "sglang", ("glm4_moe",), _SGL + "glm4_moe.py:983 (no hook)", cannot_capture=_SGL_NO_HOOK
    ),
    FamilyCell(
        "sglang",
        ("minimax_m2",),
        _SGL + "minimax_m2.py:1249 (EAGLE-3 hook only)",
        cannot_capture=_SGL_NO_HOOK,
    ),
    FamilyCell(
        "sglang",
        ("gemma3",),
        _SGL + "gemma3_causal.py (EAGLE-3 hook only)",
        cannot_capture=_SGL_NO_HOOK,
    ),
)


def cell_for(runtime: str, family: str | None, method: str = "dflash") -> FamilyCell | None:
    """Return the cell of ``runtime`` on ``family`` for ``method``, if the table has one."""
    if family is None:
        return None
    cells = CELLS_BY_METHOD.get(method, FAMILY_CELLS)
    return next((c for c in cells if c.runtime == runtime and family in c.families), None)


def on_family(profile: RuntimeProfile, family: str | None) -> RuntimeProfile:
    """Return ``profile`` as it behaves on a target of ``family`` (None: unknown family)."""
    if profile.family_independent:
        return replace(profile, family=family, cell_citation=profile.citation)
    cell = cell_for(profile.name, family, profile.method)
    if cell is None:
        return replace(profile, family=family)
    overrides = {
        key: value
        for key in (
            "index_name",
            "shift",
            "max_id_from_end",
            "id_keys",
            "cannot_capture",
            "min_id",
            "numbering",
        )
        if (value := getattr(cell, key)) is not None
    }
    return replace(profile, family=family, cell_citation=cell.citation, **overrides)


@dataclass(frozen=True)
class ResolvedIds:
    """The ids one runtime feeds a draft on one target: the key read and both numberings."""

    key: str | None
    """The key read (None: no key it reads was present, so the default was used)."""
    raw: tuple[int, ...]
    """The ids in the runtime's own numbering (as written, or as its default computes them)."""
    ids: tuple[int, ...]
    """Canonical ids t (output of layer t, HF ``hidden_states[t+1]``)."""
    guessed: bool
    """Whether the runtime computed them (its default) instead of reading them."""


def numbering_of(profile: RuntimeProfile, reading: IdReading, raw: tuple[int, ...], n: int) -> int:
    """Return ``to_output`` for ``raw`` read through ``reading``, after a family's rule."""
    if profile.numbering is None:
        return reading.to_output
    return NUMBERINGS[profile.numbering].to_output(reading.to_output, raw, n)


def resolve_ids(
    profile: RuntimeProfile, sources: Mapping[str, tuple[int, ...] | None], num_layers: int
) -> ResolvedIds | None:
    """Return the ids ``profile`` feeds on a target of ``num_layers`` layers, given the id keys
    a draft states (dotted key -> list, None for an explicit null), or None when it reads none
    and has no default (or refuses to compute one on this target)."""
    for reading in profile.id_readings:
        raw = sources.get(reading.key)
        if raw:  # every reader here skips a null or empty list (`if layer_ids:` / `or`)
            shift = numbering_of(profile, reading, raw, num_layers)
            return ResolvedIds(reading.key, raw, tuple(k + shift for k in raw), guessed=False)
    if profile.default_ids is None:
        return None
    if profile.default_min_layers is not None and num_layers < profile.default_min_layers:
        return None
    rule = DEFAULT_IDS[profile.default_ids]
    raw = rule.raw(num_layers)
    return ResolvedIds(None, raw, tuple(k + rule.to_output for k in raw), guessed=True)


from dflash_check.core.runtimes_eagle3 import (  # noqa: E402  (needs the classes above)
    EAGLE3_CELLS,
    EAGLE3_PROFILES,
    NUMBERINGS,
)

METHOD_PROFILES: dict[str, tuple[RuntimeProfile, ...]] = {
    "dflash": PROFILES,
    "dflash2": PROFILES,
    "eagle3": EAGLE3_PROFILES,
}
CELLS_BY_METHOD: dict[str, tuple[FamilyCell, ...]] = {"eagle3": EAGLE3_CELLS}
PROFILES_BY_NAME: dict[str, RuntimeProfile] = {p.name: p for p in PROFILES}
RUNTIME_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys((PORTABLE, *(p.name for ps in METHOD_PROFILES.values() for p in ps)))
)


def select_profiles(runtime: str, method: str = "dflash") -> tuple[RuntimeProfile, ...]:
    """Return the profiles of ``method`` a runtime selection stands for.

    ``portable`` is every serving profile; otherwise a comma-separated list of profile names
    (one from ``--runtime``, several from a ``pairs.yaml`` entry). A training framework
    (``training``) is checked only when named.
    """
    names = runtime.split(",")
    profiles = METHOD_PROFILES.get(method, PROFILES)
    portable = PORTABLE in names
    return tuple(p for p in profiles if p.name in names or (portable and not p.training))


def portable_max_id_from_end() -> int:
    """Return the strictest ``N - k`` bound over all profiles: the portable layer rule."""
    return max(p.max_id_from_end for p in PROFILES)
