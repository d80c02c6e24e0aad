"""The row types of the runtime table, and the config keys their readings name.

``RuntimeProfile`` (one runtime's reading of a draft config) and ``FamilyCell`` (what it does on
some target families) are shared by every method's rows (``dflash.py``, ``eagle3.py``,
``mtp.py``); the table's lookups live in the package (``__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dflash_check.knowledge.reviewed import in_range

if TYPE_CHECKING:
    from dflash_check.knowledge.engines import Release
    from dflash_check.views import DraftView

# Keys a runtime may read layer ids from, as dotted paths in the draft's config.json. The
# normalisers record every one a draft has (``DraftView.layer_id_sources``) in DFlash numbering,
# and each profile lists the ones it reads, in its order, so a draft whose copies disagree
# resolves per runtime to the list that runtime really feeds.
EAGLE_AUX_IDS = "eagle_aux_hidden_state_layer_ids"
NESTED_IDS = "dflash_config.target_layer_ids"
TOP_IDS = "target_layer_ids"
DSPARK_IDS = "dspark_target_layer_ids"
DSPARK_AUX_MODEL_TYPE = "deepseek_v41"
"""The DSpark draft ``model_type`` whose ``dspark_target_layer_ids`` vLLM reads as raw aux
indices, not DFlash ids (``eagle3_utils.py:125-135``)."""
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
    exclusive: bool = False
    """For the drafts it applies to, the only key the runtime reads: it reads no other key and
    guesses no default without it (SGLang's MiniMax DSpark translation takes
    ``dflash_config.target_layer_ids`` and nothing else). Only a conditional reading may be."""

    def __post_init__(self) -> None:
        # An exclusive reading for every draft would hide the row's other keys altogether.
        if self.exclusive and not self.conditional:
            raise ValueError(f"exclusive id reading {self.key!r} names no drafts")

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
    the tensors SpecForge's and TensorRT-LLM's ``(1, N//2-1, N-4)`` also name. vLLM and SGLang
    compute it for any depth (vLLM 0.32.0 interfaces.py:1712-1733; SGLang's
    set_eagle3_layers_to_capture); on N = 3 the last is aux 0, the embeddings (layer output -1);
    below 3 an aux index is negative, which no capture matches."""
    if n < 3:
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
class Refusal:
    """A draft a runtime refuses at load whatever the target, in the engine's words (DF016).

    Keyed by what the engine's own check reads: the draft's method, and where the engine tells
    drafts of one method apart by their class, the draft's architectures (vLLM runs XPress
    drafts under method ``dflash`` and picks them by architecture)."""

    message: str
    """The engine's error, as it says it."""
    citation: str
    """Where the refusal was read (``engine==version:path:line``)."""
    methods: tuple[str, ...] = ()
    """The draft methods refused (empty: any)."""
    draft_architectures: frozenset[str] = frozenset()
    """Refused only for drafts with one of these architectures (empty: any)."""
    releases: str | None = None
    """The engine releases that refuse it, as ``Reviewed`` ranges write them (``>=0.33``);
    None: every release the row has."""

    def applies(self, draft: DraftView, release: Release | None) -> bool:
        """Whether ``release`` (None: the general row) refuses ``draft`` this way."""
        if self.methods and draft.method not in self.methods:
            return False
        if self.draft_architectures and not self.draft_architectures.intersection(
            draft.architectures
        ):
            return False
        if self.releases is None:
            return True
        # A range names versions, so the release alone orders it (no commit bound).
        return release is not None and in_range(release.version, self.releases, (release,))


@dataclass(frozen=True)
class RuntimeProfile:
    """One runtime's reading of a DFlash draft config, in general or on one target family.

    ``PROFILES`` holds each runtime's general convention; ``on_family`` applies the family's
    cell (``cells.family_cell``) to it, so rules and reports see what the runtime does on this
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
    refuses: tuple[Refusal, ...] = ()
    """Drafts the runtime refuses at load, with the engine's message (``refusal``)."""
    reading_unverified: bool = False
    """Whether which keys it reads was not verified in the engine's code: a difference in what
    it feeds is then a warning, not an error."""
    engine: str | None = None
    """The engine whose model code captures (its family cells); None: ``name``."""
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
    uncaptured_stage: str | None = None
    """When every id out of range names a layer the target has but the engine does not capture
    (``t = N-1`` where ``max_id_from_end`` is 2), the ``Stage`` value at which the engine shows
    it, where that differs from the outcome table's (SGLang: its startup check refuses only
    ``t >= N``); None: the outcome table's stage for the rule."""

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

    def refusal(self, draft: DraftView) -> Refusal | None:
        """Return how this row, at its release, refuses ``draft`` at load (None: it does not)."""
        return next((r for r in self.refuses if r.applies(draft, self.release)), None)

    def capture_index(self, layer_id: int) -> int:
        """Return the runtime's own index for DFlash layer id ``layer_id``."""
        return layer_id + self.shift

    def max_layer_id(self, num_layers: int) -> int:
        """Return the largest id this runtime accepts on a target of ``num_layers`` layers."""
        return num_layers - self.max_id_from_end

    def layers_needed(self, max_id: int) -> int:
        """Return the smallest target layer count on which ``max_id`` is valid."""
        return max_id + self.max_id_from_end


@dataclass(frozen=True)
class FamilyCell:
    """What one runtime does on some target families, where the engine's model code was read.

    A field left None keeps the runtime's general convention; a cell with no overrides records
    that the convention was verified for those families (with its citation). For an engine
    whose releases are extracted (``knowledge/data``) a cell is derived from each release's
    facts (``cells.py``); hand-written cells there are reviewed exceptions over a release range.
    """

    runtime: str
    """The profile this cell refines."""
    families: tuple[str, ...]
    """Target family names (``knowledge/families.py``)."""
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
    releases: str | None = None
    """For a reviewed exception: the releases it holds for (``>=0.5.23``, ``reviewed.py``'s
    ranges); None: a cell derived from one release's facts, or one of an engine whose code is
    not extracted."""
    reason: str | None = None
    """For a reviewed exception: why the facts alone do not say it (what the reviewer read)."""
    verified: bool = True
    """Whether the cell settles the family: False for a capture the facts show but whose range
    and numbering they do not (a hook that delegates), so the general convention is assumed."""
