"""Normalised views of a target model and a DFlash draft, built from their raw files.

Configs put the same fact in different places: multimodal targets keep their text dimensions
under ``text_config``; older drafts keep ``block_size`` at the top level and newer ones in
``dflash_config``. The views below record each value once, plus the key it came from, so that
rules compare like with like and messages can name the exact field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dflash_check.core.fields import FieldReader
from dflash_check.core.safetensors_header import TensorInfo, find_fc_weight
from dflash_check.errors import ConfigError, NotADraftError

DraftMethod = Literal["dflash", "dflash2"]

# Draft architectures, by the name the reference loader dispatches on.
DRAFT_ARCHITECTURES: dict[str, DraftMethod] = {
    "DFlashDraftModel": "dflash",
    "DFlash2DraftModel": "dflash2",
}


@dataclass(frozen=True)
class ModelFiles:
    """What a source fetched for one model: the raw inputs of normalisation."""

    role: Literal["draft", "target"]
    """Which side of the pair this model is."""
    name: str
    """Repo id or directory as the user gave it (with ``@revision`` if any)."""
    config: Mapping[str, Any]
    """The parsed ``config.json``."""
    config_location: str
    """Where ``config.json`` was read (a path, or ``repo@rev:config.json``), for messages."""
    tensors: Mapping[str, TensorInfo] | None = None
    """Tensor shapes from the safetensors header(s); None when no safetensors file exists."""
    tensors_location: str | None = None
    """The file the header came from."""
    revision: str | None = None
    """The resolved commit for Hub models, None for local directories."""
    fetched_bytes: int = 0
    """Bytes transferred from the network for this model (0 for local or cached files)."""
    extras: Mapping[str, Any] = field(default_factory=dict)
    """Optional side data a source found (e.g. the model card's ``base_model``)."""

    @property
    def who(self) -> str:
        """Return ``draft NAME`` / ``target NAME`` for messages."""
        return f"{self.role} {self.name}"


@dataclass(frozen=True)
class TargetView:
    """The target facts a draft depends on."""

    name: str
    """The target as the user named it."""
    architectures: tuple[str, ...]
    """``architectures`` of the top-level config."""
    model_type: str | None
    """``model_type`` of the text model (``text_config.model_type`` when nested)."""
    nested: bool
    """Whether the text dimensions were read from ``text_config``."""
    num_hidden_layers: int
    """N: decoder layers of the text model, the range every layer id is checked against."""
    layers_key: str
    """Where N came from, e.g. ``text_config.num_hidden_layers``."""
    hidden_size: int
    """Width of the residual stream; the draft's features and embeddings have this width."""
    vocab_size: int
    """Rows of the embedding / LM head the draft borrows."""
    max_position_embeddings: int | None
    """Longest context the target supports, if stated."""


@dataclass(frozen=True)
class DraftView:
    """The DFlash draft facts the rules check."""

    name: str
    """The draft as the user named it."""
    method: DraftMethod
    """``dflash`` (DFlashDraftModel) or ``dflash2`` (DFlash2DraftModel)."""
    architectures: tuple[str, ...]
    """``architectures`` of the config."""
    num_hidden_layers: int | None
    """Draft decoder layers (may differ from the number of ids)."""
    hidden_size: int
    """Draft width; must equal the target's, because the draft uses the target's embedding."""
    vocab_size: int | None
    """Draft vocabulary; must equal the target's, since it emits target token ids."""
    target_hidden_size: int | None
    """Explicit ``target_hidden_size``, if the config has one."""
    target_layer_ids: tuple[int, ...] | None
    """The target layers whose outputs the draft reads (DFlash numbering: output of layer t)."""
    layer_ids_key: str | None
    """Where the ids were found: ``dflash_config.target_layer_ids`` or ``target_layer_ids``."""
    block_size: int | None
    """Tokens drafted per block (bonus token plus mask slots)."""
    block_size_key: str | None
    """Where ``block_size`` was found."""
    mask_token_id: int | None
    """Token id that fills the block's draft slots, embedded with the target's embedding."""
    mask_token_key: str | None
    """Where ``mask_token_id`` was found."""
    num_target_layers: int | None
    """Layer count of the target the draft was trained against."""
    max_position_embeddings: int | None
    """Longest context the draft's RoPE tables cover."""
    fc_weight_name: str | None
    """Name of the ``fc`` weight in the safetensors header, if found."""
    fc_weight_shape: tuple[int, ...] | None
    """Shape of ``fc.weight``: ``(draft hidden, len(ids) x target hidden)``."""
    has_safetensors: bool
    """Whether any safetensors header was available."""
    base_model: tuple[str, ...] = ()
    """``base_model`` from the model card metadata, if any."""


def _text_reader(files: ModelFiles) -> tuple[FieldReader, FieldReader, bool]:
    """Return (top-level reader, text-model reader, nested?) for a config."""
    top = FieldReader(files.who, files.config_location, files.config)
    text = top.child("text_config")
    # A wrapper keeps its language model under text_config; only trust it when it has the
    # dimensions, since some text-only configs carry a vestigial empty text_config.
    if text is not None and (text.has("num_hidden_layers") or text.has("hidden_size")):
        return top, text, True
    return top, top, False


def _target_layers(files: ModelFiles, text: FieldReader) -> tuple[int, str]:
    """Return the target's layer count and the key it came from."""
    n = text.integer("num_hidden_layers")
    if n is not None:
        return n, f"{text.prefix}num_hidden_layers"
    # Nemotron-H Ultra configs have no num_hidden_layers: one entry per layer instead.
    for key in ("layers_block_type", "hybrid_override_pattern"):
        value = text.data.get(key)
        if isinstance(value, (list, str)) and len(value) > 0:
            return len(value), f"len({text.prefix}{key})"
    raise ConfigError(
        f"{files.who}: {files.config_location}: no layer count "
        f"(field '{text.prefix}num_hidden_layers' is missing)",
        hint="the target must state num_hidden_layers (or text_config.num_hidden_layers)",
    )


def normalise_target(files: ModelFiles) -> TargetView:
    """Build the target view, reading text dimensions from ``text_config`` when nested."""
    top, text, nested = _text_reader(files)
    architectures = top.strings("architectures") or ()
    if any(a in DRAFT_ARCHITECTURES for a in architectures):
        raise ConfigError(
            f"{files.who}: {files.config_location}: this is a DFlash draft "
            f"({', '.join(architectures)}), not a target model",
            hint="the arguments are DRAFT then TARGET: did you swap them?",
        )
    n, layers_key = _target_layers(files, text)
    hidden = text.integer("hidden_size", required=True)
    vocab = text.integer("vocab_size", required=True)
    assert hidden is not None and vocab is not None  # required=True guarantees it
    return TargetView(
        name=files.name,
        architectures=architectures,
        model_type=text.string("model_type") or top.string("model_type"),
        nested=nested,
        num_hidden_layers=n,
        layers_key=layers_key,
        hidden_size=hidden,
        vocab_size=vocab,
        max_position_embeddings=text.integer("max_position_embeddings")
        or (top.integer("max_position_embeddings") if nested else None),
    )


def _first(
    readers: tuple[FieldReader | None, ...], key: str, read: str = "integer"
) -> tuple[Any, str | None]:
    """Return the first non-null ``key`` among ``readers`` (dflash_config first) and its path."""
    for reader in readers:
        if reader is not None and reader.has(key):
            value = reader.integers(key) if read == "integers" else reader.integer(key, minimum=0)
            return value, f"{reader.prefix}{key}"
    return None, None


def normalise_draft(files: ModelFiles) -> DraftView:
    """Build the draft view, or raise ``NotADraftError`` for a config that is not DFlash."""
    top = FieldReader(files.who, files.config_location, files.config)
    architectures = top.strings("architectures") or ()
    methods = [DRAFT_ARCHITECTURES[a] for a in architectures if a in DRAFT_ARCHITECTURES]
    if not methods:
        shown = ", ".join(architectures) if architectures else "none"
        raise NotADraftError(
            f"{files.who}: {files.config_location}: not a DFlash draft "
            f"(field 'architectures' is {shown}; expected DFlashDraftModel or DFlash2DraftModel)",
            hint="the arguments are DRAFT then TARGET: did you swap them?"
            if top.has("num_hidden_layers") and not top.has("dflash_config")
            else None,
        )
    dflash = top.child("dflash_config")
    # Every reader looks in dflash_config first and falls back to the top level; which key
    # was used matters to runtimes that read only one of them (see the runtime profiles).
    sources = (dflash, top)
    ids, ids_key = _first(sources, "target_layer_ids", read="integers")
    block, block_key = _first(sources, "block_size")
    mask, mask_key = _first(sources, "mask_token_id")
    fc = find_fc_weight(files.tensors) if files.tensors is not None else None
    hidden = top.integer("hidden_size", required=True)
    assert hidden is not None  # required=True guarantees it
    base = files.extras.get("base_model", ())
    return DraftView(
        name=files.name,
        method=methods[0],
        architectures=architectures,
        num_hidden_layers=top.integer("num_hidden_layers"),
        hidden_size=hidden,
        vocab_size=top.integer("vocab_size"),
        target_hidden_size=top.integer("target_hidden_size"),
        target_layer_ids=ids,
        layer_ids_key=ids_key,
        block_size=block,
        block_size_key=block_key,
        mask_token_id=mask,
        mask_token_key=mask_key,
        num_target_layers=_first(sources, "num_target_layers")[0],
        max_position_embeddings=top.integer("max_position_embeddings"),
        fc_weight_name=fc[0] if fc else None,
        fc_weight_shape=fc[1].shape if fc else None,
        has_safetensors=files.tensors is not None,
        base_model=tuple(base),
    )


def build_target_layer_ids(num_target_layers: int, num_draft_layers: int) -> tuple[int, ...]:
    """Return the ids the z-lab reference guesses when a draft omits them.

    ``z-lab/dflash@07ebd93d:dflash/model.py``: one id at ``N // 2`` for a one-layer draft,
    otherwise ``L`` ids spread from layer 1 to layer ``N - 3`` with Python's ``round``.
    """
    if num_draft_layers == 1:
        return (num_target_layers // 2,)
    start, end = 1, num_target_layers - 3
    span = end - start
    return tuple(round(start + i * span / (num_draft_layers - 1)) for i in range(num_draft_layers))
