"""Normalised views of a target model and a draft, built from their raw files.

Configs put the same fact in different places: multimodal targets keep their text dimensions
under ``text_config``; older drafts keep ``block_size`` at the top level and newer ones in
``dflash_config``. The views below record each value once, plus the key it came from, so that
rules compare like with like and messages can name the exact field. A draft's view holds what
every method has; each method's own keys sit in a facet of it (``DFlashFacts`` here, the other
methods' in ``method_facets.py``), present only for that method's drafts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dflash_check.fields import MAX_DIMENSION, FieldReader

if TYPE_CHECKING:
    from dflash_check.method_facets import DFlash2Facts, DSparkFacts, Eagle3Facts, NextNFacts

DraftMethod = Literal["dflash", "dflash2", "dspark", "eagle3", "mtp"]
"""``dflash2`` adds DFlash 2's convolutions and selector; ``dspark`` adds DSpark's sequential
(Markov) head over the DFlash backbone (vLLM serves it as its own method, ``--speculative-config
'{"method": "dspark"}'``); ``eagle3`` is an EAGLE-3 head (``formats/eagle3.py``), ``mtp`` a
NextN checkpoint (``formats/nextn.py``)."""

DFLASH_METHODS: tuple[str, ...] = ("dflash", "dflash2", "dspark")
"""The methods whose drafts carry DFlash keys (dflash_config, mask token, block size)."""


@dataclass(frozen=True)
class TensorInfo:
    """What the header says about one tensor."""

    dtype: str
    """Storage dtype, e.g. ``BF16``."""
    shape: tuple[int, ...]
    """Tensor shape, outermost first (``(out_features, in_features)`` for a linear weight)."""


@dataclass(frozen=True)
class IdSource:
    """One layer-id list as the draft's config states it (before any runtime reads it)."""

    key: str
    """Dotted path in config.json, e.g. ``dflash_config.target_layer_ids``."""
    ids: tuple[int, ...] | None
    """The list as written; None when the key is explicitly null."""


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
    """Whether the text dimensions were read from a nested text config (``text_config``, or
    Qwen3-Omni's ``thinker_config.text_config``)."""
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
    token_ids: tuple[tuple[str, int], ...] = ()
    """Special token ids the config names (key, id): real tokens of its tokenizer."""
    family: str | None = None
    """The engine family serving it (``knowledge/families.py``), None when none is known."""
    model_types: tuple[str, ...] = ()
    """Every ``model_type`` the config states (top level, then ``text_config``)."""
    lm_head_quantization: str | None = None
    """How ``quantization_config`` quantises the LM head when it names it (e.g. ``modelopt
    W4A16_NVFP4``); None for a dense head or one the config does not name."""
    remote_code: bool = False
    """Whether the config names its own code (``auto_map``): the engines load it only when
    told to trust it (``--trust-remote-code``)."""
    rope: tuple[tuple[str, str], ...] = ()
    """(key, JSON text) of ``rope_theta`` and ``rope_scaling`` of the text model."""
    attention: tuple[tuple[str, str], ...] = ()
    """(name, the value as JSON text) of ``num_attention_heads``, ``num_key_value_heads`` and
    ``head_dim`` where the text model states them (vLLM's Qwen3-Omni DSpark contract compares
    them with the draft's)."""

    mlp: tuple[tuple[str, str], ...] = ()
    """(key, canonical JSON) of ``mlp_layer_types`` and ``num_experts`` where the text model
    states them, unvalidated: which layers a Laguna target builds as MoE (DF093)."""

    text_prefix: str = ""
    """Dotted path of the text model inside the config (``text_config.``,
    ``thinker_config.text_config.``), empty when it is the top level."""

    def key(self, name: str) -> str:
        """Return the dotted key of a text-model field, e.g. ``text_config.hidden_size``."""
        return f"{self.text_prefix}{name}"


@dataclass(frozen=True)
class DFlashFacts:
    """What a DFlash-family draft (DFlash, DFlash 2, DSpark) states beyond the common facts: its
    block, its mask token and where it keeps them."""

    block_size: int | None = None
    """Tokens drafted per block (bonus token plus mask slots)."""
    block_size_key: str | None = None
    """Where ``block_size`` was found."""
    mask_token_id: int | None = None
    """Token id that fills the block's draft slots, embedded with the target's embedding."""
    mask_token_key: str | None = None
    """Where ``mask_token_id`` was found."""
    mask_null_key: str | None = None
    """The ``mask_token_id`` key a reader that takes the first present key finds explicitly
    null, if any."""
    sample_from_anchor_key: str | None = None
    """The key that sets ``sample_from_anchor`` to a true value, if any (vLLM refuses it)."""
    mask_token: str | None = None
    """The mask token's text (``dflash_config.mask_token``, else top level), if stated; SGLang
    looks it up in the tokenizer (default ``<|MASK|>``)."""
    top_level_keys: tuple[str, ...] = ()
    """Which of the keys some runtime requires at the top level (``RuntimeProfile.
    top_level_only``) the config states there, whatever ``dflash_config`` says."""
    xpress: tuple[tuple[str, str], ...] = ()
    """The top-level keys vLLM's XPress class and speculator read beyond DFlash's
    (``sample_from_anchor``, ``xpress_topc``), as the config states them (key, the value as JSON
    text); DF021 and DF050 judge them for XPress drafts."""
    domino: tuple[tuple[str, str], ...] = ()
    """The keys SGLang's Domino projector check reads, as the config states them (dotted key,
    the value as JSON text: unvalidated, hashable, a null kept): ``projector_type``,
    ``shift_label``, ``pure_draft_prefix_len``, ``gru_hidden_dim``, ``emb_dim`` and
    ``block_size``, in ``dflash_config`` and at the top level (``check/rules/domino.py``
    judges them)."""


FACET_METHODS: dict[str, tuple[str, ...]] = {
    "dflash": DFLASH_METHODS,
    "dflash2": ("dflash2",),
    "dspark": ("dspark",),
    "eagle3": ("eagle3",),
    "nextn": ("mtp",),
}
"""Each facet of ``DraftView`` and the methods whose drafts have it (and no others do)."""


@dataclass(frozen=True)
class DraftView:
    """The draft facts every method has, plus one facet per method family.

    The common part is what every normaliser reads: identity, method and format, dimensions,
    the layer ids as read, the header's fc and vocabulary facts, the evidence of the target it
    was trained for. A method's own keys sit in its facet (``dflash``, ``dflash2``, ``dspark``,
    ``eagle3``, ``nextn``), present exactly for the methods of ``FACET_METHODS``: a rule that
    needs a facet takes it and says nothing when it is absent.
    """

    name: str
    """The draft as the user named it."""
    method: DraftMethod
    """``dflash`` (DFlashDraftModel), ``dflash2`` (DFlash2DraftModel), ``dspark``, ``eagle3``
    or ``mtp``."""
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
    format: str = "z-lab"
    """The draft format whose normaliser built this view (``docs/formats.md``)."""
    speculators_model_type: str | None = None
    """A speculators-format draft's ``speculators_model_type`` as the config states it (None:
    absent, or not a speculators draft): vLLM picks its speculators loader by this alone, and a
    draft without one is refused at load (``speculators/base.py``), whatever ``method`` the
    tool reads it as."""
    layer_ids_conversion: str | None = None
    """How the ids were converted to DFlash numbering, when the format numbers them otherwise."""
    layer_ids_null_key: str | None = None
    """The ids key a reader that takes the first present key finds explicitly null, if any."""
    num_target_layers_key: str | None = None
    """Where ``num_target_layers`` was found."""
    verifier: str | None = None
    """The target the draft names as its verifier (speculators ``verifier.name_or_path``)."""
    verifier_key: str | None = None
    """Where the verifier name was found."""
    draft_vocab_size: int | None = None
    """Rows of a reduced draft vocabulary (``draft_vocab_size``), mapped to target ids by d2t."""
    token_ids: tuple[tuple[str, int], ...] = ()
    """Token ids the draft config names (key, id): mask, bos, eos, pad."""
    vocab_tensor: tuple[str, int] | None = None
    """(name, rows) of an embedding or LM head the draft ships itself, from the header."""
    has_d2t: bool = False
    """Whether the header has a ``d2t`` draft-to-target id map."""
    unverified_reason: str | None = None
    """Why the safetensors header is unavailable, when the source knows (e.g. offline cache)."""
    id_sources: tuple[IdSource, ...] = ()
    """Every layer-id list the config has, raw: each runtime reads its own keys among them
    (``runtimes.resolve_ids``)."""
    layer_types: tuple[str, ...] | None = None
    """The draft's own ``layer_types`` (``full_attention`` / ``sliding_attention``), if stated."""
    sliding_window: int | None = None
    """Its window: top-level ``sliding_window``, else ``dflash_config.swa_window_size``."""
    loaded_window: int | None = None
    """The top-level ``sliding_window`` as an engine that loads the config through
    transformers' class for its ``model_type`` sees it (``knowledge/config_classes.py``: the
    Qwen2/Qwen3 classes drop it without ``use_sliding_window: true``)."""
    swa_window_size: int | None = None
    """``dflash_config.swa_window_size``, which vLLM reads before the loaded window."""
    dflash2_tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """(name, shape) of every convolution and candidate-selector tensor in the header (a
    header fact, read for every draft; DFlash 2's rules judge them)."""
    domino_tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """(name, shape) of every Domino projector tensor in the header (``prefix_gru.*``,
    ``embed_proj.*``, after an optional leading ``model.``: a header fact, read for every
    draft; SGLang's Domino contract, DF056, judges them)."""
    model_type: str | None = None
    """The draft config's top-level ``model_type``, read by the DSpark, Muse and Laguna
    normalisers (vLLM picks DSpark numbering and classes by it: ``deepseek_v41`` ids are raw aux
    indices, ``qwen3`` routes DSparkDraftModel to Qwen3)."""
    mlp: tuple[tuple[str, str], ...] = ()
    """(key, canonical JSON) of ``mlp_layer_types`` and ``num_experts`` where the config states
    them, unvalidated, read by the Laguna normaliser (what ``LagunaConfig`` fills in without
    them is ``knowledge/config_classes.py``'s; DF093 judges them); empty for other formats."""
    has_lm_head: bool = False
    """Whether the header has an ``lm_head`` weight of the draft's own."""
    dflash: DFlashFacts | None = None
    """The DFlash-family facts (block, mask token), for a DFlash, DFlash 2 or DSpark draft."""
    dflash2: DFlash2Facts | None = None
    """The DFlash 2 facts, for a DFlash 2 draft."""
    dspark: DSparkFacts | None = None
    """The DSpark facts, for a DSpark draft."""
    eagle3: Eagle3Facts | None = None
    """The EAGLE-3 facts, for an EAGLE-3 head."""
    nextn: NextNFacts | None = None
    """The NextN facts, for a NextN (MTP) checkpoint."""
    config_root: str = ""
    """Dotted path of the object the engines read the draft's own keys from (``text_config.``
    for a MiniMax DSpark draft that has one), empty when it is the top level: every ``*_key``
    and ``id_sources`` key is a path from the top of config.json, the root included."""

    def __post_init__(self) -> None:
        # A facet present for another method would be read by that method's rules: a
        # normaliser that builds one must match the method it names.
        for facet, methods in FACET_METHODS.items():
            if (getattr(self, facet) is not None) != (self.method in methods):
                raise ValueError(
                    f"DraftView of a {self.method} draft: facet {facet} must be "
                    + ("present" if self.method in methods else "absent")
                )

    def key(self, name: str) -> str:
        """Return the dotted key of a field the engines read at the draft's root, e.g.
        ``text_config.hidden_size``."""
        return f"{self.config_root}{name}"

    def rootless(self, key: str | None) -> str | None:
        """Return ``key`` as the engines name it once they have read the root as the top
        level (``text_config.mask_token_id`` -> ``mask_token_id``)."""
        return key.removeprefix(self.config_root) if key and self.config_root else key

    def fc_unverified(self, no_header: str) -> str:
        """Return why fc.weight's shape is unknown: no such tensor in the header, else why
        there is no header (``no_header`` when the source did not say)."""
        if self.has_safetensors:
            return "no fc.weight tensor in the safetensors header"
        return self.unverified_reason or no_header


def _names_lm_head(name: object) -> bool:
    """Return whether a module name or pattern in a quantisation config is the LM head."""
    return isinstance(name, str) and (name == "lm_head" or name.endswith(".lm_head"))


def lm_head_quantization(readers: tuple[FieldReader, ...]) -> str | None:
    """Return how ``quantization_config`` quantises the LM head, when it names the head.

    Only an explicit entry counts: ModelOpt's ``quantized_layers["lm_head"]`` or a
    ``config_groups`` group whose ``targets`` list ``lm_head``. A head left to a class-wide
    target (``Linear``) or to a method's defaults is not judged: configs do not say whether
    the head was exempted. Ill-typed values are ignored (no rule depends on them otherwise).
    """
    for reader in readers:
        q = reader.data.get("quantization_config")
        if not isinstance(q, dict):
            continue
        method = q.get("quant_method") if isinstance(q.get("quant_method"), str) else "quantized"
        layers = q.get("quantized_layers")
        if isinstance(layers, dict):
            for name, spec in layers.items():
                if _names_lm_head(name):
                    algo = spec.get("quant_algo") if isinstance(spec, dict) else None
                    return f"{method} {algo}" if isinstance(algo, str) else str(method)
        groups = q.get("config_groups")
        if isinstance(groups, dict):
            for group in groups.values():
                targets = group.get("targets") if isinstance(group, dict) else None
                if isinstance(targets, list) and any(_names_lm_head(t) for t in targets):
                    weights = group.get("weights")
                    bits = weights.get("num_bits") if isinstance(weights, dict) else None
                    kind = weights.get("type") if isinstance(weights, dict) else None
                    detail = f" {bits}-bit {kind} weights" if bits and isinstance(kind, str) else ""
                    return f"{method}{detail}"
    return None


ROPE_KEYS = ("rope_theta", "rope_scaling")
"""The keys that shape rotary embeddings; a head that reuses the target's positions must agree."""


def rope_facts(reader: FieldReader) -> tuple[tuple[str, str], ...]:
    """Return (key, canonical JSON) for each rope key a config states, for comparison."""
    return stated(reader, ROPE_KEYS)


ATTENTION_KEYS = ("num_attention_heads", "num_key_value_heads", "head_dim")
"""The attention shape of a decoder: heads, key/value heads, width per head."""


def stated(reader: FieldReader, keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Return (key, canonical JSON) for each of ``keys`` the object states with a non-null
    value, unvalidated: a contract that checks the types itself needs them as written."""
    return tuple(
        (key, json.dumps(reader.data[key], sort_keys=True)) for key in keys if reader.has(key)
    )


def special_token_ids(readers: tuple[FieldReader | None, ...]) -> tuple[tuple[str, int], ...]:
    """Return the (key, id) pairs of the special tokens a config names (bos, eos, pad).

    They are facts about the tokenizer the model was built with: a token id the config names
    is a real token, so the real vocabulary is at least that id + 1. Ill-typed values are
    ignored here (they are not what a check depends on).
    """
    out: list[tuple[str, int]] = []
    for reader in readers:
        if reader is None:
            continue
        for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
            value = reader.data.get(key)
            values = value if isinstance(value, list) else [value]
            for i, v in enumerate(values):
                if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_DIMENSION:
                    suffix = f"[{i}]" if isinstance(value, list) else ""
                    out.append((f"{reader.prefix}{key}{suffix}", v))
    return tuple(out)


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


def find_tensor(tensors: Mapping[str, TensorInfo], name: str) -> tuple[str, TensorInfo] | None:
    """Return the header entry ``name``, else the first (sorted) one under a module prefix
    (``model.name``), if any."""
    if name in tensors:
        return name, tensors[name]
    for key in sorted(tensors):
        if key.endswith("." + name):
            return key, tensors[key]
    return None


def find_fc_weight(tensors: Mapping[str, TensorInfo]) -> tuple[str, TensorInfo] | None:
    """Return the draft's ``fc.weight`` entry (possibly under a module prefix), if any."""
    return find_tensor(tensors, "fc.weight")
