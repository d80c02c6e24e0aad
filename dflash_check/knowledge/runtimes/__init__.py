"""What ``target_layer_ids`` mean in each serving runtime, as one data table.

A DFlash id ``t`` means "the output of target decoder layer ``t``" in the reference, but each
runtime captures hidden states at its own index (``t + shift``) and supports its own range of ids.
Everything the tool knows about a runtime lives in ``PROFILES``; rules, reports and
``docs/runtimes.md`` are all derived from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines import (
    DFLASH_MLX,
    DFLASH_MLX_018,
    ENGINES_BY_NAME,
    INSTALLED,
    LLAMACPP,
    MLX,
    REFERENCE,
    SGLANG,
    SGLANG_0523,
    TRTLLM,
    VLLM,
    VLLM_033,
    Release,
)
from dflash_check.knowledge.families import FAMILIES

if TYPE_CHECKING:
    from dflash_check.views import DraftView

PORTABLE = "portable"
"""The pseudo-runtime that must satisfy every profile (the default of ``--runtime``)."""


# Keys a runtime may read layer ids from, as dotted paths in the draft's config.json. The
# normalisers record every one a draft has (``DraftView.layer_id_sources``) in DFlash numbering,
# and each profile lists the ones it reads, in its order, so a draft whose copies disagree
# resolves per runtime to the list that runtime really feeds.
EAGLE_AUX_IDS = "eagle_aux_hidden_state_layer_ids"
NESTED_IDS = "dflash_config.target_layer_ids"
TOP_IDS = "target_layer_ids"
DSPARK_IDS = "dspark_target_layer_ids"
SPECULATORS_AUX_IDS = "aux_hidden_state_layer_ids"
NESTED_EAGLE_IDS = "eagle_config.eagle_aux_hidden_state_layer_ids"
NESTED_MASK = "dflash_config.mask_token_id"
TOP_MASK = "mask_token_id"
SGLANG_DEFAULT_MASK_TOKEN = "<|MASK|>"
"""The mask token's text SGLang looks up in the tokenizer when the draft names none
(sglang 0.5.23 speculative/dflash_utils.py:26, DEFAULT_DFLASH_MASK_TOKEN)."""


@dataclass(frozen=True)
class IdReading:
    """One key a runtime reads layer ids from, and how it numbers them.

    Every id is compared in one numbering, the DFlash layer-output id ``t`` (the output of target
    layer ``t``, the tensor transformers calls ``hidden_states[t + 1]``). A runtime that takes a
    list as capture points ("the residual after ``k`` layers", vLLM's aux index) reads the tensor
    of ``t = k - 1``, so its reading has ``to_output = -1``.
    """

    key: str
    """Dotted path in the draft's config.json."""
    to_output: int = 0
    """``t = raw id + to_output``."""
    draft_model_type: str | None = None
    """Read this way only for drafts of this ``model_type`` (None: any)."""
    draft_architectures: tuple[str, ...] = ()
    """Read this way only for drafts with one of these architectures (empty: any)."""
    draft_methods: tuple[str, ...] = ()
    """Read at all only for drafts of these methods (empty: any), e.g. a DSpark-only key."""

    @property
    def conditional(self) -> bool:
        """Whether the reading is specific to some drafts (it then wins over the general one)."""
        return self.draft_model_type is not None or bool(self.draft_architectures)

    def applies(self, draft: DraftView) -> bool:
        """Whether this reading applies to ``draft``."""
        return (
            (self.draft_model_type is None or self.draft_model_type == draft.model_type)
            and (
                not self.draft_architectures
                or any(a in self.draft_architectures for a in draft.architectures)
            )
            and (not self.draft_methods or draft.method in self.draft_methods)
        )


AUX_READING = -1
"""``to_output`` of a list read as capture points (vLLM aux indices, ``hidden_states[k]``)."""


def _zlab(n: int, draft: DraftView) -> tuple[int, ...] | None:
    """The z-lab formula for ``n`` target layers and the draft's layer count."""
    from dflash_check.views import build_target_layer_ids

    layers = draft.num_hidden_layers
    if not layers or layers > 4096 or n < 4:
        return None
    return build_target_layer_ids(n, layers)


def _zlab_default(n: int, draft: DraftView) -> tuple[int, ...] | None:
    """The reference's guess: the z-lab formula over the draft's ``num_target_layers``."""
    return _zlab(draft.num_target_layers or n, draft)


def _zlab_on_target(n: int, draft: DraftView) -> tuple[int, ...] | None:
    """SGLang's guess: the z-lab formula over the served target's layer count
    (spec_aux_hidden_state.py:236-245 selects 'based on the runtime target model')."""
    return _zlab(n, draft)


def _three_default(n: int, draft: DraftView) -> tuple[int, ...] | None:
    """vLLM's and SGLang's aux layers ``(2, N//2, N-3)`` as layer outputs ``(1, N//2-1, N-4)``:
    the tensors SpecForge's and TensorRT-LLM's ``(1, N//2-1, N-4)`` also name."""
    if n < 5:
        return None
    return (1, n // 2 - 1, n - 4)


def _three_refusing_small(n: int, draft: DraftView) -> tuple[int, ...] | None:
    """TensorRT-LLM's ``(1, N//2-1, N-4)``, which it refuses to compute for ``N <= 5``:
    'Not enough hidden layers for default EAGLE3 capture'."""
    return None if n <= 5 else _three_default(n, draft)


# What a runtime captures when it finds no ids under its keys, keyed by the name profiles use.
DEFAULT_IDS: Mapping[str, Callable[[int, DraftView], tuple[int, ...] | None]] = {
    "zlab": _zlab_default,
    "zlab-target": _zlab_on_target,
    "three": _three_default,
    "three-trt": _three_refusing_small,
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
    id_readings: tuple[IdReading, ...]
    """The keys layer ids are read from, in order: the first present non-null one wins."""
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
    mask_default_is_real: bool = False
    """Whether that default is a real token of the target's tokenizer (SGLang's mask_token),
    so a draft without a mask id still works (DSpark drafts excepted: dspark_config.py:119-122)."""
    family_independent: bool = False
    """Whether the runtime captures through the model's generic outputs, the same way for every
    target family (the Python references), so no family cell applies."""
    family: str | None = None
    """The target family this profile was resolved on (None: the general convention)."""
    cannot_capture: str | None = None
    """The engine's own failure when this family has no hidden-state capture, else None."""
    cell_citation: str | None = None
    """Where the family cell was read (None: the general convention, unverified for it)."""
    first_present: bool = True
    """Whether the first key *present* decides, an explicit null included (``dict.get``
    readers: the references, SGLang), rather than the first non-empty list (vLLM)."""
    default_ids: str | None = None
    """The ``DEFAULT_IDS`` rule the runtime applies when it finds no ids (None: no guess)."""
    method: str = "dflash"
    """The drafting method these rows describe (``dflash`` covers DFlash, DFlash 2, DSpark)."""
    runner: str | None = None
    """The engine's runner when it has several (vLLM Model Runner V1 / V2)."""
    portable: bool = True
    """Whether ``portable`` checks it (a runner that serves only when forced is opt-in)."""
    refuses: Mapping[str, str] | None = None
    """Draft methods the runtime refuses at load, with the engine's message."""
    reading_unverified: bool = False
    """Whether which keys it reads was not verified in the engine's code: a difference in what
    it feeds is then a warning, not an error."""
    engine: str | None = None
    """The engine whose model code captures (its ``FAMILY_CELLS`` rows); None: ``name``."""
    min_id: int = 0
    """Smallest layer-output id it captures (-1: the embeddings, vLLM's aux 0; EAGLE-3)."""
    aux_count: str | None = None
    """The ``AUX_COUNTS`` rule by which it sizes an EAGLE-3 head's fc (None: DFlash rows)."""
    numbering: str | None = None
    """A ``NUMBERINGS`` rule that overrides ``to_output`` per list (SGLang's EAGLE-3 hooks on
    some families), None: the readings' own numbering."""
    release: Release | None = None
    """The engine release this row describes (``at_release``); None: the general row."""
    top_level_only: tuple[str, ...] = ()
    """Keys the draft loader requires at the top level of config.json, ignoring a copy in
    ``dflash_config`` (dflash-mlx's ``block_size``): without them the draft fails to load."""
    missing_layer_stage: str | None = None
    """When an id names a layer the target does not have (``t >= N``), the ``Stage`` value at
    which the engine shows it, where that differs from the rest of the range's (llama.cpp
    0c1e57098 refuses it when it turns the capture on, at load, and fails on ``t = N-1`` only
    at the first decode); None: the outcome table's stage for the rule."""

    @property
    def engine_name(self) -> str:
        """The engine the family cells of this profile are keyed by."""
        return self.engine or self.name

    @property
    def label(self) -> str:
        """The row as reports name it: ``vllm==0.34.0`` (the name alone before ``at_release``)."""
        return f"{self.name}=={self.release.version}" if self.release else self.name

    @property
    def id_keys(self) -> tuple[str, ...]:
        """The keys it reads ids from, in order."""
        return tuple(r.key for r in self.id_readings)

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


# Both vLLM runners resolve the parallel-drafting token the same way (V2 spec_decode/utils.py
# :92-114, V1 llm_base_proposer.py:358-379).
_VLLM_MASK_KEYS = (NESTED_MASK, TOP_MASK, "dspark_noise_token_id", "pard_token", "ptd_token_id")

PROFILES: tuple[RuntimeProfile, ...] = (
    RuntimeProfile(
        name=REFERENCE.name,
        title="z-lab dflash 0.1.0 (transformers reference)",
        index_name="hidden_states",
        shift=1,
        max_id_from_end=1,
        # _draft_value = dflash_config.get(name, getattr(config, name)): a null stays a null.
        id_readings=(IdReading(NESTED_IDS), IdReading(TOP_IDS)),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers (0.1.0; "
        "z-lab/dflash#157 makes the ids required)",
        default_ids="zlab",
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
        name=VLLM.name,
        title="vLLM Model Runner V2 (the default runner since 0.33)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        # get_eagle3_aux_layers_from_config: the first non-empty list wins. A top-level eagle
        # list is taken raw as aux indices; the speculators loader copies its
        # aux_hidden_state_layer_ids there (speculators/algos.py:90-126).
        id_readings=(
            IdReading(SPECULATORS_AUX_IDS, AUX_READING),
            IdReading(EAGLE_AUX_IDS, AUX_READING),
            IdReading(NESTED_IDS),
            # DeepSeek-V4.1 DSpark drafts state aux indices (eagle3_utils.py:125-135).
            IdReading(DSPARK_IDS, AUX_READING, draft_model_type="deepseek_v41"),
            IdReading(DSPARK_IDS),
            IdReading(TOP_IDS),
            IdReading("dflash_config.layer_ids", AUX_READING),
            IdReading("eagle_config.layer_ids", AUX_READING),
        ),
        first_present=False,
        mask_keys=_VLLM_MASK_KEYS,
        without_ids="captures its default aux layers (2, N//2, N-3) and sizes fc from the "
        "draft's num_hidden_layers",
        default_ids="three",
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' (earlier: 'mat1 and mat2 shapes cannot be multiplied') at engine start "
        "(Model Runner V2) or the first decode (V1)",
        runner="V2",
        citation=VLLM_033.cite("vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py")
        + ":113-150 (get_eagle3_aux_layers_from_config), :34-39 (default); "
        "vllm/v1/worker/gpu/spec_decode/utils.py:92-114 (mask token); "
        "vllm/config/vllm.py:730-766 (V2 unless VLLM_USE_V2_MODEL_RUNNER=0 or an unsupported "
        "feature)",
    ),
    RuntimeProfile(
        name="vllm-v1",
        title="vLLM Model Runner V1 (VLLM_USE_V2_MODEL_RUNNER=0, or a feature V2 lacks)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        # _get_eagle3_aux_layers_from_config: the top-level eagle list raw, then
        # dflash_config.target_layer_ids (+1), which a non-empty eagle_config's nested list
        # overrides raw. No top-level target_layer_ids, no dspark ids. fc is still sized from
        # the V2 reader's list (qwen3_dflash.py:84-93), so a list V1 does not read leaves fc
        # expecting other features than V1 captures.
        id_readings=(
            IdReading(SPECULATORS_AUX_IDS, AUX_READING),
            IdReading(EAGLE_AUX_IDS, AUX_READING),
            IdReading(NESTED_EAGLE_IDS, AUX_READING),
            IdReading(NESTED_IDS),
        ),
        first_present=False,
        mask_keys=_VLLM_MASK_KEYS,
        without_ids="captures its default aux layers (2, N//2, N-3) while fc is sized from "
        "the draft's own list: 'DFlash drafter expects … concatenated aux hidden features' at "
        "the first decode, or silently the wrong layers when the draft has 3 ids",
        default_ids="three",
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' at the first decode",
        runner="V1",
        engine=VLLM.name,
        portable=False,
        refuses={
            "dflash2": "Model Runner V1 does not support: DFlash candidate-head drafts",
            "dspark": "Model Runner V1 does not support: dspark speculative decoding",
        },
        citation=VLLM_033.cite("vllm/v1/worker/gpu_model_runner.py", "5190-5225")
        + " (_get_eagle3_aux_layers_from_config); vllm/config/vllm.py:768-782, :3089-3151 "
        "(V1-unsupported features); vllm/model_executor/models/qwen3_dflash.py:84-93 (fc)",
    ),
    RuntimeProfile(
        name=SGLANG.name,
        title="SGLang",
        index_name="capture point (before layer)",
        shift=1,
        max_id_from_end=2,
        # dict.get on dflash_config, then the top level: a null in dflash_config is kept and
        # the ids fall back to the formula (dflash_utils.py:611-613).
        # Only SGLang's DSpark parser reads dspark_target_layer_ids (dspark_config.py:299-309).
        id_readings=(
            IdReading(DSPARK_IDS, draft_methods=("dspark",)),
            IdReading(NESTED_IDS),
            IdReading(TOP_IDS),
        ),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers",
        default_ids="zlab-target",
        mask_default_is_real=True,
        mask_default="the tokenizer's mask_token (default '<|MASK|>', added when absent)",
        out_of_range="ValueError 'DFLASH target_layer_ids contains an out-of-range layer id' at "
        "startup for t >= N; for t = N-1 no capture runs after the last layer (IndexError at "
        "startup or 'target_hidden feature dim mismatch' at the first decode)",
        citation="sgl-project/sglang@d315eb72:python/sglang/srt/speculative/dflash_utils.py:"
        "611-643; dflash_worker_v2.py:876-937 (mask token)",
    ),
    RuntimeProfile(
        name=TRTLLM.name,
        title="TensorRT-LLM (PyTorch backend)",
        index_name="capture after layer",
        shift=0,
        max_id_from_end=1,
        # modeling_dflash.py: dflash_config.get("target_layer_ids", None) only.
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="captures no draft-chosen layers (target_layer_ids None)",
        mask_default="vocab_size, one past the embedding",
        out_of_range="no check: an id that never fires leaves its slot of a torch.empty buffer "
        "unwritten, garbage features, silent acceptance loss",
        citation="NVIDIA/TensorRT-LLM@7c7504c0:tensorrt_llm/_torch/models/modeling_dflash.py; "
        "tensorrt_llm/_torch/speculative/dflash.py@00679c66",
    ),
    RuntimeProfile(
        name=LLAMACPP.name,
        title="llama.cpp",
        index_name="GGUF target_layers (input of layer)",
        shift=1,
        max_id_from_end=1,
        # The converter reads dflash_config only (upstream review of ggml-org/llama.cpp#25110);
        # t = N-1 reads the post-norm embeddings (llama_get_embeddings_nextn).
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK,),
        without_ids="refuses to load: 'DFlash model requires 'target_layers' in GGUF metadata'",
        out_of_range="GGML_ABORT 'DFlash: target layer %d input not extracted' at the first decode",
        citation="ggml-org/llama.cpp@001d906a:common/speculative.cpp (target_layer_ids[k] == "
        "n_layer_tgt); src/models/dflash.cpp@01b78a15 (#22105)",
    ),
    RuntimeProfile(
        name=MLX.name,
        title="MLX reference (dflash 0.1.0 model_mlx)",
        index_name="layers[t] output",
        shift=0,
        max_id_from_end=1,
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK,),
        without_ids="fails when the draft loads: KeyError 'target_layer_ids'",
        out_of_range="IndexError when the layer hooks are installed at the start of generation",
        # load_draft: config["num_target_layers"], dflash_config["target_layer_ids"].
        reads_num_target_layers=True,
        null_ids_fail=True,
        family_independent=True,
        citation="z-lab/dflash@07ebd93d:dflash/model_mlx.py:448-457 (load_draft), _patch_model",
    ),
    RuntimeProfile(
        name=DFLASH_MLX.name,
        title="dflash-mlx (bstnxbt's MLX runtime for Apple Silicon)",
        index_name="capture key (after layer t)",
        # Captures key t + 1 = the output of layer t, key 0 the embeddings
        # (target_qwen_gdn.py:853-880), so ids 0..N-1 exist.
        shift=1,
        max_id_from_end=1,
        # DFlashDraftModel.__init__: dflash_config.get("target_layer_ids") or the formula; a
        # top-level list is dropped by from_dict (it is no field of the arguments).
        id_readings=(IdReading(NESTED_IDS),),
        first_present=False,
        mask_keys=(NESTED_MASK,),
        mask_default="token id 0 (int(dflash_config.get('mask_token_id', 0) or 0))",
        without_ids="guesses ids with the z-lab formula from num_target_layers "
        "(build_target_layer_ids: 1 to N-3 over the draft's layers)",
        default_ids="zlab",
        out_of_range="KeyError in extract_context_feature at the first decode: a key past N "
        "is never captured; -1 reads key 0, the embeddings, silently",
        # num_target_layers and block_size are fields without defaults of
        # DFlashDraftModelArgs, filled from the top level only.
        reads_num_target_layers=True,
        top_level_only=("block_size",),
        # Opt-in: it serves Qwen-family and Gemma 4 targets only, and refuses every draft that
        # states block_size only in dflash_config (z-lab's Qwen3.5 drafts among them).
        portable=False,
        citation=DFLASH_MLX_018.cite("dflash_mlx/model.py", "222-268")
        + " (DFlashDraftModelArgs, from_dict keeps top-level fields only), :687-696 (ids, "
        "block_size, mask token), :14-23 (build_target_layer_ids); "
        "dflash_mlx/engine/spec_epoch.py:615-618 (capture t + 1); "
        "dflash_mlx/engine/target_qwen_gdn.py:835 (extract_context_feature), :853-880 (capture)",
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
    id_readings: tuple[IdReading, ...] | None = None
    cannot_capture: str | None = None
    """The engine's own failure message when the family has no capture hook."""
    min_id: int | None = None
    numbering: str | None = None


_VLLM = VLLM.at("c2057261") + ":vllm/model_executor/models/"
# vLLM 0.33.0's wheel (commit 4ba787ec, 2026-11): the cells read after the first pass.
_VLLM_033 = VLLM_033.cite("vllm/model_executor/models/")
_SGL = SGLANG_0523.cite("sglang/srt/models/")
# Cells taken from reading the model code only: the failure was not reproduced on a server.
_NOT_RUN = "; read from the code, not run"
# The engine's own message follows, per release and runner (``Release.no_capture``).
_VLLM_NO_INTERFACE = (
    "vLLM has no aux-hidden-state interface (SupportsEagle3) for this model class; the engine "
    "fails at load"
)
_SGL_NO_HOOK = (
    "SGLang's model class has no DFlash capture hook; the worker fails at startup: 'Model X "
    "implements neither set_dspark_layers_to_capture nor set_dflash_layers_to_capture, one of "
    "which is required for DFLASH/DSPARK.'"
)

# The draft architectures SGLang gives +1 on a Muse Glimmer target (the others go in raw).
MUSE_REMAPPED = ("MuseGlimmerAssistantModel", "DFlash2DraftModel")

# The families whose model_type contains "qwen": dflash-mlx's qwen_gdn backend takes them.
_DFLASH_MLX_QWEN = tuple(
    f.name for f in FAMILIES if any("qwen" in m for m in (f.name, *f.model_types))
)

FAMILY_CELLS: tuple[FamilyCell, ...] = (
    # vLLM: aux index k = the residual after k layers, captured after each layer (1..N).
    FamilyCell(VLLM.name, ("llama",), _VLLM + "llama.py:420-429"),
    FamilyCell(VLLM.name, ("qwen2", "qwen3"), _VLLM + "qwen2.py:415-420"),
    FamilyCell(
        VLLM.name, ("qwen3_next", "qwen3_5", "qwen3_5_text"), _VLLM + "qwen3_next.py:632-644"
    ),
    FamilyCell(VLLM.name, ("gpt_oss",), _VLLM + "gpt_oss.py:349-355"),
    FamilyCell(VLLM.name, ("gemma4",), _VLLM + "gemma4.py:1312-1333"),
    FamilyCell(VLLM.name, ("minimax_m2",), _VLLM + "minimax_m2.py:395-400"),
    FamilyCell(VLLM.name, ("nemotron_h",), _VLLM + "nemotron_h.py:618-627"),
    FamilyCell(VLLM.name, ("mimo_v2",), _VLLM + "mimo_v2.py:604-613"),
    FamilyCell(VLLM.name, ("qwen3_moe",), _VLLM_033 + "qwen3_moe.py:435, :505-515"),
    FamilyCell(
        VLLM.name,
        ("qwen3_vl", "qwen3_vl_moe"),
        _VLLM_033 + "qwen3_vl.py:1846, :1869-1888 (Qwen3LLMModel); qwen3_vl_moe.py:230",
    ),
    FamilyCell(
        VLLM.name,
        ("llama4", "llama4_text"),
        _VLLM_033 + "llama4.py:384 (Llama4Model(LlamaModel): llama.py:428-441); "
        "mllama4.py:803-813 (delegates)",
    ),
    FamilyCell(VLLM.name, ("laguna",), _VLLM_033 + "laguna.py:656-666"),
    FamilyCell(
        VLLM.name, ("muse_glimmer",), _VLLM_033 + "muse_glimmer.py:1066 (after-loop capture)"
    ),
    # DeepSeek's generic model captures before layer k and after the last layer: aux 1..N,
    # i.e. DFlash ids 0..N-1 (aux 0, t = -1, is a TypeError: residual is None at layer 0).
    FamilyCell(
        VLLM.name,
        ("deepseek_v3", "kimi_k25"),
        _VLLM + "deepseek_v2.py:1515-1541; " + _VLLM_033 + "deepseek_v2.py:1561-1568, :1586-1587 "
        "(aux 1..N); kimi_k25.py:376-380, :470-474",
    ),
    FamilyCell(
        VLLM.name,
        ("deepseek_v32", "glm_moe_dsa"),
        _VLLM + "deepseek_v32/nvidia/model.py:277 (capture before each layer, none after the "
        "last); deepseek_v32/__init__.py:19-21 (the CUDA path)",
        index_name="aux layer (captured before the layer)",
        max_id_from_end=2,
    ),
    FamilyCell(
        VLLM.name,
        ("glm4_moe",),
        _VLLM + "glm4_moe.py (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    FamilyCell(
        VLLM.name,
        ("gemma3",),
        _VLLM + "gemma3.py (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    FamilyCell(
        VLLM.name,
        ("mixtral",),
        _VLLM_033 + "mixtral.py:375 (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    FamilyCell(
        VLLM.name,
        ("glm4_moe_lite",),
        _VLLM_033 + "registry.py:125 -> glm4_moe.py (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    FamilyCell(
        VLLM.name,
        ("step3",),
        _VLLM_033 + "step3_text.py, step3_vl.py, step3p5.py, step3p7.py:21 (no SupportsEagle3)",
        cannot_capture=_VLLM_NO_INTERFACE,
    ),
    # SGLang: capture before layer c = t + 1 < N, so t = N-1 never fires, except in the
    # families that also capture after the last layer.
    FamilyCell(
        SGLANG.name, ("llama", "llama4_text"), _SGL + "llama.py:943-953; llama4.py:546 (inherits)"
    ),
    FamilyCell(SGLANG.name, ("qwen3",), _SGL + "qwen3.py:793-805"),
    FamilyCell(
        SGLANG.name,
        ("qwen3_moe", "qwen3_next"),
        _SGL + "qwen3_moe.py:1145-1155 (Model :987-990), qwen3_next.py:1303-1313 (Model "
        ":959-962): +1, capture before the layer; N-1 is an IndexError at setup",
    ),
    FamilyCell(
        SGLANG.name,
        ("glm4_moe_lite",),
        _SGL + "glm4_moe_lite.py:822-832 (+1), :648-658 (capture before layer i, none after "
        "the last)",
    ),
    FamilyCell(SGLANG.name, ("qwen3_5_text",), _SGL + "qwen3_5_text.py:134-148 (+1; rejects N-1)"),
    FamilyCell(SGLANG.name, ("qwen3_5",), _SGL + "qwen3_5.py:3021 via qwen3_vl.py:1680-1688"),
    FamilyCell(
        SGLANG.name,
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "kimi_k25"),
        _SGL + "deepseek_v2.py:3475-3485 (GlmMoeDsaForCausalLM inherits: glm4_moe.py:1284)",
    ),
    FamilyCell(
        SGLANG.name,
        ("gpt_oss",),
        _SGL + "gpt_oss.py:726-741 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        SGLANG.name,
        ("gemma4",),
        _SGL + "gemma4_causal.py:1090-1094, :1208-1214 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        SGLANG.name,
        ("laguna",),
        _SGL + "laguna.py:632 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        SGLANG.name,
        ("mimo_v2",),
        _SGL + "mimo_v2.py:1186-1195, :1501-1513 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        SGLANG.name,
        ("nemotron_h",),
        _SGL + "nemotron_h.py:895-898, :1225-1234 (also after the last layer)",
        max_id_from_end=1,
    ),
    FamilyCell(
        SGLANG.name, ("qwen2",), _SGL + "qwen2.py:797 (no hook)", cannot_capture=_SGL_NO_HOOK
    ),
    FamilyCell(
        SGLANG.name, ("glm4_moe",), _SGL + "glm4_moe.py:983 (no hook)", cannot_capture=_SGL_NO_HOOK
    ),
    FamilyCell(
        SGLANG.name,
        ("minimax_m2",),
        _SGL + "minimax_m2.py:1249 (EAGLE-3 hook only)",
        cannot_capture=_SGL_NO_HOOK,
    ),
    FamilyCell(
        SGLANG.name,
        ("gemma3",),
        _SGL + "gemma3_causal.py (EAGLE-3 hook only)",
        cannot_capture=_SGL_NO_HOOK,
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_vl_moe",),
        _SGL + "qwen3_vl.py:1680-1688 -> qwen3_vl_moe.py:197 (Qwen3MoeModel, qwen3_moe.py:987-990)",
    ),
    FamilyCell(
        SGLANG.name,
        ("qwen3_vl",),
        _SGL + "qwen3_vl.py:1680-1688 delegates to Qwen3LLMModel (:1169, :1320), which has no "
        "hook" + _NOT_RUN,
        cannot_capture="SGLang's Qwen3VLForConditionalGeneration hands DFlash capture to its "
        "dense language model, which has no hook; startup fails with AttributeError "
        "\"'Qwen3LLMModel' object has no attribute 'set_dflash_layers_to_capture'\"",
    ),
    FamilyCell(
        SGLANG.name,
        ("llama4",),
        _SGL + "mllama4.py:443, :971 (EAGLE-3 hook only)" + _NOT_RUN,
        cannot_capture=_SGL_NO_HOOK,
    ),
    FamilyCell(
        SGLANG.name,
        ("step3",),
        _SGL + "step3_vl.py:1034, step3p5.py:952, step3p7.py:199 (no hook)" + _NOT_RUN,
        cannot_capture=_SGL_NO_HOOK,
    ),
    FamilyCell(
        SGLANG.name,
        ("mixtral",),
        _SGL + "mixtral.py (no set_dflash_layers_to_capture; not among the 0.5.23 files with a "
        "DFlash hook, docs/engine-reading/sglang.md Q1)" + _NOT_RUN,
        cannot_capture=_SGL_NO_HOOK,
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
    ),
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


def cell_for(runtime: str, family: str | None, method: str = "dflash") -> FamilyCell | None:
    """Return the cell of engine ``runtime`` on ``family`` for ``method``, if there is one
    (each method has its own table: SGLang's EAGLE-3 hooks are not its DFlash hooks)."""
    if family is None:
        return None
    cells = CELLS_BY_METHOD.get(method, FAMILY_CELLS)
    return next((c for c in cells if c.runtime == runtime and family in c.families), None)


def on_family(profile: RuntimeProfile, family: str | None) -> RuntimeProfile:
    """Return ``profile`` as it behaves on a target of ``family`` (None: unknown family)."""
    if profile.family_independent:
        return replace(profile, family=family, cell_citation=profile.citation)
    cell = cell_for(profile.engine_name, family, profile.method)
    release = profile.release or ENGINES_BY_NAME[profile.engine_name].newest
    if cell is None:
        # A release may still differ on this family (llama.cpp 0c1e57098's layer-N input).
        return replace(
            profile, family=family, **release.family_overrides.get(f"{profile.method}/{family}", {})
        )
    keys = ("index_name", "shift", "max_id_from_end", "id_readings", "cannot_capture")
    overrides = {
        key: value
        for key in (*keys, "min_id", "numbering")
        if (value := getattr(cell, key)) is not None
    }
    said = release.no_capture_text(profile.runner)
    if cell.cannot_capture is not None and said is not None:
        # The engine's words differ by release and runner (vLLM V1 vs V2).
        overrides["cannot_capture"] = f"{cell.cannot_capture}: {said} in {release.spec}"
    overrides.update(release.family_overrides.get(f"{profile.method}/{family}", {}))
    return replace(profile, family=family, cell_citation=cell.citation, **overrides)


# EAGLE-3's rows and cells live in their own module, which needs the classes above.
from dflash_check.knowledge.runtimes.eagle3 import (  # noqa: E402
    EAGLE3_CELLS,
    EAGLE3_PROFILES,
    NUMBERINGS,
)
from dflash_check.knowledge.runtimes.mtp import MTP_PROFILES  # noqa: E402

METHOD_PROFILES: dict[str, tuple[RuntimeProfile, ...]] = {
    "dflash": PROFILES,
    "eagle3": EAGLE3_PROFILES,
    "mtp": MTP_PROFILES,
}
"""Each drafting method's rows of the runtime table (DFlash's rows cover DFlash 2 and DSpark):
the one table every selection, name list and check reads at call time, so that a runtime is
added by its row alone."""
CELLS_BY_METHOD: dict[str, tuple[FamilyCell, ...]] = {"eagle3": EAGLE3_CELLS}
"""Each method's family cells, where they differ from DFlash's ``FAMILY_CELLS``."""
PROFILES_BY_NAME: dict[str, RuntimeProfile] = {p.name: p for p in PROFILES}


def runtime_names() -> tuple[str, ...]:
    """Return every name a runtime selection accepts: ``portable``, then each row's name."""
    return (
        PORTABLE,
        *dict.fromkeys(p.name for rows in METHOD_PROFILES.values() for p in rows),
    )


@cache
def read_id_keys() -> tuple[str, ...]:
    """Return every key some runtime reads layer ids from: what a normaliser records (the
    tables are constant, so it is computed once per process)."""
    cells = (*FAMILY_CELLS, *(c for table in CELLS_BY_METHOD.values() for c in table))
    readings = [r for rows in METHOD_PROFILES.values() for p in rows for r in p.id_readings]
    readings += [r for c in cells for r in c.id_readings or ()]
    return tuple(dict.fromkeys(r.key for r in readings))


def top_level_only_keys() -> tuple[str, ...]:
    """Return every key some runtime requires at the top level of a draft's config.json."""
    return tuple(
        dict.fromkeys(
            k for rows in METHOD_PROFILES.values() for p in rows for k in p.top_level_only
        )
    )


def method_rows(method: str) -> tuple[RuntimeProfile, ...]:
    """Return the runtime rows of a draft method (DFlash 2 and DSpark use DFlash's rows)."""
    return METHOD_PROFILES.get(method, METHOD_PROFILES["dflash"])


RELEASE_SEP = "=="
"""Between a runtime and its release in a selection: ``vllm==0.34.0`` (pip's spelling)."""


class RunnerRemoved(ValueError):
    """A runner the named release no longer has (``vllm-v1==0.34.0``)."""


def split_spec(part: str) -> tuple[str, str | None]:
    """Return ``(runtime, release or None)`` of one selection part (``vllm==0.34.0``)."""
    name, _, version = part.strip().partition(RELEASE_SEP)
    return name.strip().lower(), version.strip() or None


def release_for(profile: RuntimeProfile, version: str | None) -> Release:
    """Return the release of ``profile``'s engine that ``version`` names: None is the newest
    release that has the profile's runner (``vllm-v1`` alone is the last release with V1).

    Raise ``UnknownRelease`` (the message lists the known ones) or ``RunnerRemoved``.
    """
    eng = ENGINES_BY_NAME[profile.engine_name]
    if version is None:
        having = [r for r in eng.releases if r.has_runner(profile.runner)]
        return having[-1] if having else eng.newest
    rel = eng.release(version)
    if not rel.has_runner(profile.runner):
        removed = rel.removed_runners.get(profile.runner or "", "it has no such runner")
        with_runner = [r.spec for r in eng.releases if r.has_runner(profile.runner)]
        raise RunnerRemoved(
            f"{profile.name} (Model Runner {profile.runner}) does not exist in {rel.spec}: "
            f"{removed}; it exists in {', '.join(with_runner)}"
        )
    return rel


def at_release(profile: RuntimeProfile, version: str | None = None) -> RuntimeProfile:
    """Return ``profile`` as the named release of its engine behaves (None: the newest release
    that has its runner): the release's own differences applied, the release recorded."""
    rel = release_for(profile, version)
    fields = dict(rel.overrides.get(f"{profile.method}/{profile.name}", {}))
    if "id_keys" in fields:  # engines.py names plain keys (it cannot build IdReadings)
        fields["id_readings"] = tuple(IdReading(k) for k in fields.pop("id_keys"))
    return replace(profile, release=rel, **fields)


def select_profiles(runtime: str, method: str = "dflash") -> tuple[RuntimeProfile, ...]:
    """Return the profiles a runtime selection stands for, each at its release.

    ``portable`` is every profile a default install serves with (not opt-in runners such as
    ``vllm-v1``), each at its newest release; otherwise a comma-separated list of profile names,
    each optionally pinned to a release (``vllm==0.33.0,sglang``), from ``--runtime`` or a
    ``pairs.yaml`` entry.
    """
    rows = method_rows(method)
    wanted = dict(split_spec(part) for part in runtime.split(","))
    if PORTABLE in wanted:
        chosen = tuple(p for p in rows if p.portable or p.name in wanted)
    else:
        chosen = tuple(p for p in rows if p.name in wanted)
    return tuple(at_release(p, wanted.get(p.name)) for p in chosen)


class SelectionError(ValueError):
    """A runtime selection that names no known runtime, release or runner (a usage error)."""


def parse_part(part: str) -> tuple[str, str | None]:
    """Return ``(runtime, release version or None)`` of one selection part, validated.

    ``vllm`` (the newest release known), ``vllm==0.34.0`` (pip's spelling; a commit prefix for
    engines read at commits), ``vllm=installed`` (the version installed here, read from package
    metadata). Raise ``SelectionError`` naming what is known instead.
    """
    import difflib

    from dflash_check.knowledge.engines import UnknownRelease

    text = part.strip()
    if "=" in text and RELEASE_SEP not in text:
        name, _, asked = text.partition("=")
        name = name.strip().lower()
        if asked.strip().lower() != INSTALLED:
            raise SelectionError(
                f"{text!r}: name a release as {name}{RELEASE_SEP}VERSION or {name}={INSTALLED}"
            )
        version: str | None = INSTALLED
    else:
        name, version = split_spec(text)
    names = runtime_names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        suggestion = f" (did you mean {close[0]!r}?)" if close else ""
        raise SelectionError(
            f"unknown runtime {text!r}{suggestion}; choose from {', '.join(names)}"
        )
    if name == PORTABLE:
        if version is not None:
            raise SelectionError(
                "portable checks each runtime at its newest release; name a runtime to pin a "
                f"release (vllm{RELEASE_SEP}0.33.0)"
            )
        return name, None
    row = next(p for rows in METHOD_PROFILES.values() for p in rows if p.name == name)
    try:
        if version == INSTALLED:
            # importlib.metadata is imported only when asked: most runs never need it.
            from dflash_check.knowledge.installed import installed_version

            version = installed_version(row.engine_name)
        return name, None if version is None else release_for(row, version).version
    except (UnknownRelease, RunnerRemoved, ValueError) as err:
        raise SelectionError(str(err)) from None


def join_selection(chosen: Mapping[str, str | None]) -> str:
    """Return the core's selection string of parsed parts (``portable``, ``vllm==0.34.0,sglang``).

    ``portable`` stands for every default runtime at its newest release; an opt-in runner
    (``vllm-v1``) or a pinned release stays named. Rows of every method count (``specforge``
    exists for EAGLE-3 only).
    """

    def spec(name: str) -> str:
        version = chosen[name]
        return name if version is None else f"{name}{RELEASE_SEP}{version}"

    if PORTABLE in chosen:
        portable = {p.name for rows in METHOD_PROFILES.values() for p in rows if p.portable}
        kept = (n for n in chosen if n != PORTABLE and (n not in portable or chosen[n]))
        return ",".join([PORTABLE, *(spec(n) for n in kept)])
    return ",".join(spec(n) for n in chosen)


def selection_names(runtime: str) -> tuple[str, ...]:
    """Return the runtime names of a selection, without their releases."""
    return tuple(split_spec(part)[0] for part in runtime.split(","))


def portable_max_id_from_end() -> int:
    """Return the strictest ``N - k`` bound over the portable profiles: the portable rule."""
    return max(p.max_id_from_end for p in METHOD_PROFILES["dflash"] if p.portable)


@dataclass(frozen=True)
class ResolvedIds:
    """The ids one runtime feeds the draft, read the way that runtime reads them."""

    key: str | None
    """The key it read them from (None: it guessed, see ``guessed``)."""
    raw: tuple[int, ...]
    """The list as written under ``key`` (the guess, for a guess)."""
    ids: tuple[int, ...]
    """The same in layer-output numbering (``t``: the output of target layer t)."""
    guessed: bool = False
    """Whether the runtime found no ids and used its default."""


def resolve_ids(profile: RuntimeProfile, draft: DraftView, num_layers: int) -> ResolvedIds | None:
    """Return the ids ``profile`` reads from ``draft`` on a target of ``num_layers`` layers.

    None when the runtime ends up with no usable list: it fails without ids (the rules say
    how), or the list it reads is empty or negative (DF002 reports those).
    """
    sources = {s.key: s.ids for s in draft.id_sources}
    # A key read one way for some drafts (vLLM: DeepSeek-V4.1 DSpark ids are aux indices;
    # SGLang: +1 on a Muse target for the drafts it remaps) is read that way instead of the
    # general way.
    specific = {r.key for r in profile.id_readings if r.conditional and r.applies(draft)}
    for reading in profile.id_readings:
        if reading.key not in sources or not reading.applies(draft):
            continue
        if not reading.conditional and reading.key in specific:
            continue
        raw = sources[reading.key]
        if raw is None or not raw:
            if profile.first_present:
                # dict.get readers take a null (or an empty list) as the value: the
                # references fail on it, SGLang falls back to its formula.
                if profile.null_ids_fail or raw is not None:
                    return None
                break
            continue  # vLLM: the first non-empty list wins
        if any(t < 0 for t in raw):
            return None
        shift = reading.to_output
        if profile.numbering is not None:
            shift = NUMBERINGS[profile.numbering].to_output(shift, raw, num_layers)
        return ResolvedIds(reading.key, raw, tuple(t + shift for t in raw))
    guess = DEFAULT_IDS[profile.default_ids](num_layers, draft) if profile.default_ids else None
    if guess is None:
        return None
    return ResolvedIds(None, guess, guess, guessed=True)
