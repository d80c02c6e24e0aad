"""Reading helpers shared by the draft-format normalisers: lookups in order, nulls, header facts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dflash_check.errors import ConfigError
from dflash_check.fields import FieldReader
from dflash_check.knowledge.config_classes import window_as_loaded
from dflash_check.views import IdSource, ModelFiles, TensorInfo, find_fc_weight

Readers = tuple[FieldReader | None, ...]


IMPLIED_ARCHITECTURES: Mapping[str, str] = {
    # vLLM's MuseSparkDSparkConfig sets it whatever the file says
    # (vllm==0.34.0:vllm/transformers_utils/configs/muse_spark.py:287; 0.33.0 the same), and
    # vLLM's own tests write Muse Spark DSpark drafts without one
    # (tests/transformers_utils/test_muse_spark_config.py, _dspark_config).
    "muse_spark_dspark": "MuseSparkDSparkModel",
}
"""Draft ``model_type`` -> the architecture an engine's config class gives a draft whose file
states none."""


def config_architectures(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the string entries of ``architectures`` (ill-typed values count as none); where
    the key is absent, the one the draft's ``model_type`` implies (``IMPLIED_ARCHITECTURES``)."""
    value = config.get("architectures")
    if value is None and config.get("model_type") in IMPLIED_ARCHITECTURES:
        return (IMPLIED_ARCHITECTURES[config["model_type"]],)
    if not isinstance(value, list):
        return ()
    return tuple(a for a in value if isinstance(a, str))


def first_value(readers: Readers, key: str, read: str = "integer") -> tuple[Any, str | None]:
    """Return the first non-null ``key`` among ``readers`` and its dotted path.

    This is how vLLM and the engines that skip empty sources read a key; a reader that takes
    the first *present* key instead is modelled by ``first_null``.
    """
    for reader in readers:
        if reader is not None and reader.has(key):
            if read == "integers":
                value: Any = reader.integers(key)
            elif read == "string":
                value = reader.string(key)
            else:
                value = reader.integer(key, minimum=0)
            return value, f"{reader.prefix}{key}"
    return None, None


def first_null(readers: Readers, key: str) -> str | None:
    """Return the path of ``key`` when the first reader that has it at all has it as null.

    The reference reads ``dflash_config.get(key, getattr(config, key))``: a key that is present
    with null is taken as the value, so it never falls back to the top level or a default.
    """
    for reader in readers:
        if reader is not None and key in reader.data:
            return f"{reader.prefix}{key}" if reader.is_null(key) else None
    return None


@dataclass(frozen=True)
class HeaderFacts:
    """What the safetensors header says about fc and the vocabulary tensors."""

    fc_name: str | None = None
    fc_shape: tuple[int, ...] | None = None
    vocab_tensor: tuple[str, int] | None = None
    has_d2t: bool = False
    dflash2_tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()
    has_lm_head: bool = False
    domino_tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()


# Module names of DFlash 2's convolutions and candidate selector (the reference's parameter
# names, as dflash_check/smoke/draft_model.py loads them): every tensor under one of them.
DFLASH2_MODULES = ("attention_conv.", "mlp_conv.", "candidate_selector.")
# Module names of a Domino projector as SGLang loads them, after a leading "model."
# (sglang==0.5.23:sglang/srt/models/dflash.py:921-929).
DOMINO_MODULES = ("prefix_gru.", "embed_proj.")


# Tensors that would make a draft own a vocabulary-sized table instead of borrowing the
# target's embedding and LM head (the DFlash design).
_VOCAB_TENSOR_SUFFIXES = ("embed_tokens.weight", "lm_head.weight")


def speculators_layer(top: FieldReader, files: ModelFiles, kind: str) -> FieldReader:
    """Return a speculators-format config's ``transformer_layer_config``, where it keeps its
    dimensions; without it the ``kind`` (draft, head) cannot be read: one ConfigError."""
    layer = top.child("transformer_layer_config")
    if layer is None:
        raise ConfigError(
            f"{files.who}: {files.config_location}: field 'transformer_layer_config' is "
            f"missing (a speculators-format {kind} keeps its dimensions there)"
        )
    return layer


def speculators_verifier(top: FieldReader) -> str | None:
    """Return the target a speculators-format config was trained for
    (``speculators_config.verifier.name_or_path``), if stated."""
    spec = top.child("speculators_config")
    verifier = spec.child("verifier") if spec is not None else None
    return verifier.string("name_or_path") if verifier is not None else None


def stated_type(top: FieldReader) -> str | None:
    """Return the ``speculators_model_type`` a config states (None: absent or not a string).

    vLLM picks a speculators draft's loader by this key alone: a config without it still goes
    to ``SpeculatorsConfig`` (it has ``speculators_config``), which refuses it at load."""
    kind = top.data.get("speculators_model_type")
    return kind if isinstance(kind, str) else None


def header_facts(tensors: Mapping[str, TensorInfo] | None) -> HeaderFacts:
    """Return fc, vocabulary-tensor and d2t facts of a header (all empty without one)."""
    if tensors is None:
        return HeaderFacts()
    fc = find_fc_weight(tensors)
    vocab = None
    for name in sorted(tensors):
        if name.endswith(_VOCAB_TENSOR_SUFFIXES) and tensors[name].shape:
            vocab = (name, tensors[name].shape[0])
            break
    d2t = any(name == "d2t" or name.endswith(".d2t") for name in tensors)
    dflash2 = tuple(
        (name, tensors[name].shape)
        for name in sorted(tensors)
        if any(name.startswith(m) or f".{m}" in name for m in DFLASH2_MODULES)
    )
    return HeaderFacts(
        fc_name=fc[0] if fc else None,
        fc_shape=fc[1].shape if fc else None,
        vocab_tensor=vocab,
        has_d2t=d2t,
        dflash2_tensors=dflash2,
        has_lm_head=any(name.endswith("lm_head.weight") for name in tensors),
        domino_tensors=tuple(
            (name, tensors[name].shape)
            for name in sorted(tensors)
            if name.removeprefix("model.").startswith(DOMINO_MODULES)
        ),
    )


def file_fields(files: ModelFiles) -> dict[str, Any]:
    """Return the ``DraftView`` fields every format reads from the files, not the config:
    the header's fc and vocabulary facts, and what the source recorded (base_model, why the
    header is unavailable)."""
    header = header_facts(files.tensors)
    return {
        "fc_weight_name": header.fc_name,
        "fc_weight_shape": header.fc_shape,
        "vocab_tensor": header.vocab_tensor,
        "has_d2t": header.has_d2t,
        "dflash2_tensors": header.dflash2_tensors,
        "has_lm_head": header.has_lm_head,
        "domino_tensors": header.domino_tensors,
        "has_safetensors": files.tensors is not None,
        "base_model": tuple(files.extras.get("base_model", ())),
        "unverified_reason": files.extras.get("tensors_unavailable"),
    }


def token_id_facts(
    mask_key: str | None, mask: int | None, tokens: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, int], ...]:
    """Return the token ids the configs name, the mask token first when there is one."""
    return ((mask_key, mask), *tokens) if mask is not None and mask_key else tokens


def at_path(top: FieldReader, path: str) -> tuple[FieldReader | None, str]:
    """Return the reader of a dotted path's parent object (None when absent) and its last key."""
    parent, _, key = path.rpartition(".")
    return (top.child(parent) if parent else top), key


def present(top: FieldReader, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Return the dotted paths among ``paths`` that hold a non-null value."""
    out = []
    for path in paths:
        reader, key = at_path(top, path)
        if reader is not None and reader.has(key):
            out.append(path)
    return tuple(out)


def id_sources(top: FieldReader, keys: tuple[str, ...]) -> tuple[IdSource, ...]:
    """Return every layer-id list the config has under ``keys`` (dotted paths), raw.

    Runtimes disagree on which key they read and how they number it, so the view keeps all of
    them and each runtime profile picks its own (``runtimes.resolve_ids``). A malformed list is
    a ``ConfigError`` naming its key, whichever runtime would read it.
    """
    out: list[IdSource] = []
    for key in keys:
        parent, _, name = key.rpartition(".")
        reader = top.child(parent) if parent else top
        if reader is None or name not in reader.data:
            continue
        out.append(IdSource(key, None if reader.is_null(name) else reader.integers(name)))
    return tuple(out)


def stated_mask_token(config: Mapping[str, Any]) -> str | None:
    """Return the mask token's text a draft config states (``dflash_config.mask_token``, else
    top level, as SGLang reads it), or None; an ill-typed or empty value counts as none."""
    nested = config.get("dflash_config")
    for source in (nested if isinstance(nested, dict) else {}, config):
        value = source.get("mask_token")
        if isinstance(value, str) and value:
            return value
    return None


def dflash_config_facts(top: FieldReader, dflash: FieldReader | None) -> dict[str, Any]:
    """Return the ``DFlashFacts`` fields that every ``dflash_config``-style format (z-lab,
    SpecForge, DSpark, Muse, Laguna) reads the same way: vLLM's anchor switch, and which keys
    some runtime reads only at the top level the config states there."""
    from dflash_check.knowledge.runtimes import top_level_only_keys

    # vLLM reads sample_from_anchor from dflash_config only and refuses any truthy value
    # (``dflash_config.get("sample_from_anchor", False)``; Release.dflash_anchor cites each
    # release's lines), so 1 or "yes" is refused as true is.
    anchor = dflash.data.get("sample_from_anchor") if dflash is not None else None
    return {
        "sample_from_anchor_key": "dflash_config.sample_from_anchor" if anchor else None,
        "top_level_keys": tuple(k for k in top_level_only_keys() if top.data.get(k) is not None),
        "domino": domino_keys(top, dflash),
    }


DOMINO_KEYS = (
    "projector_type",
    "shift_label",
    "pure_draft_prefix_len",
    "gru_hidden_dim",
    "emb_dim",
    "block_size",
)
"""The keys SGLang reads for a Domino projector (sglang==0.5.23:sglang/srt/speculative/
dflash_utils.py:609-617, :727-791): each from ``dflash_config``, else the top level."""


def domino_keys(top: FieldReader, dflash: FieldReader | None) -> tuple[tuple[str, str], ...]:
    """Return (dotted key, the value as JSON text) for each of ``DOMINO_KEYS`` the config
    states in ``dflash_config`` or at the top level, a null included: SGLang's
    ``dict.get(key, fallback)`` takes a present null as the value."""
    out = []
    for prefix, reader in (("dflash_config.", dflash), ("", top)):
        if reader is None:
            continue
        out.extend(
            (f"{prefix}{key}", json.dumps(reader.data[key]))
            for key in DOMINO_KEYS
            if key in reader.data
        )
    return tuple(out)


def draft_fields(
    files: ModelFiles, top: FieldReader, dflash: FieldReader | None, *, empty_vocab: bool = False
) -> dict[str, Any]:
    """Return the ``DraftView`` fields that every ``dflash_config``-style format (z-lab,
    SpecForge, DSpark, Muse, Laguna) reads the same way: its own dimensions at the top level,
    every id list, its layer kinds and window, and the file facts. With ``empty_vocab`` a
    ``vocab_size`` of 0 reads as not stated instead of failing the read (a rule judges it)."""
    from dflash_check.knowledge.runtimes import read_id_keys

    hidden = top.integer("hidden_size", required=True)
    return {
        "name": files.name,
        "architectures": top.strings("architectures") or config_architectures(top.data),
        "num_hidden_layers": top.integer("num_hidden_layers"),
        "hidden_size": hidden,
        "vocab_size": top.integer("vocab_size", minimum=0 if empty_vocab else 1) or None,
        "target_hidden_size": top.integer("target_hidden_size"),
        "max_position_embeddings": top.integer("max_position_embeddings"),
        "draft_vocab_size": top.integer("draft_vocab_size"),
        "id_sources": id_sources(top, read_id_keys()),
        "layer_types": top.strings("layer_types"),
        "sliding_window": first_value((top, dflash), "sliding_window")[0]
        or first_value((dflash,), "swa_window_size")[0],
        "loaded_window": window_as_loaded(
            top.string("model_type"),
            top.integer("sliding_window", minimum=0),
            top.data.get("use_sliding_window"),
        ),
        "swa_window_size": first_value((dflash,), "swa_window_size")[0],
        **file_fields(files),
    }
