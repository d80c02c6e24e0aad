"""EAGLE-3 heads: SpecForge / EAGLE / NVIDIA configs, and the speculators ``eagle3`` format.

An EAGLE-3 head reads three target hidden states through ``fc`` and owns a small decoder layer,
an LM head over a reduced draft vocabulary (``draft_vocab_size``, mapped back by ``d2t``) and
usually its own embedding. Its layer ids may sit under three keys, each numbered its own way
(``knowledge/runtimes/eagle3.py``); the normaliser records every key it finds, raw, and reads the
one the head was trained with into canonical ids (output of layer t), the numbering every rule
compares in.

Sources: SpecForge ``configs/*-eagle3.json`` (``eagle_config`` nested ids, layer outputs),
``sgl-project/SpecForge@a6b6b023:specforge/algorithms/model_providers.py:188-211``; the
speculators format as vLLM maps it (``vllm-project/vllm@4ba787ec:vllm/transformers_utils/configs/
speculators/algos.py:15-50``: dimensions under ``transformer_layer_config``, top-level
``eagle_aux_hidden_state_layer_ids`` copied raw as aux indices).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dflash_check.check.formats.common import (
    config_architectures,
    file_fields,
    id_sources,
    speculators_layer,
    speculators_verifier,
    stated_type,
)
from dflash_check.fields import FieldReader
from dflash_check.knowledge.runtimes import AUX_READING, IdReading, read_id_keys
from dflash_check.knowledge.runtimes.eagle3 import LEGACY_AUX, NESTED_AUX, TOP_AUX
from dflash_check.views import (
    DraftView,
    IdSource,
    ModelFiles,
    TensorInfo,
    find_tensor,
    rope_facts,
    special_token_ids,
)

SPECULATORS_TYPE = "eagle3"

# Architectures that name an EAGLE-3 head outright (vLLM's registry, SpecForge, SGLang); any
# other name containing "eagle3" is taken as one too (Eagle3* and *Eagle3 spellings vary).
ARCHITECTURES = (
    "LlamaForCausalLMEagle3",
    "Qwen3MoeForCausalLMEagle3",
    "Qwen3MoEForCausalLMEagle3",
    "DeepseekV3ForCausalLMEagle3",
    "Eagle3LlamaForCausalLM",
    "Eagle3Qwen3ForCausalLM",
    "Eagle3DeepseekV3ForCausalLM",
    "Eagle3Speculator",
)
REGISTRY_NAMES = tuple(a for a in ARCHITECTURES if a != "Eagle3Speculator")
"""The names an engine's model registry is asked for (``Eagle3Speculator`` is a speculators
draft's, read by its ``speculators_model_type``): listed per release by ``dflash-check
formats``."""

# How the trainer of each format wrote its ids: the reading that names the tensors the head
# was trained on. SpecForge writes the nested list as layer outputs (SGLang captures id + 1);
# EAGLE and NVIDIA's configs carry vLLM aux indices at the top level; the legacy key is vLLM's.
TRAINED_READINGS: dict[str, tuple[IdReading, ...]] = {
    "eagle3": (
        IdReading(NESTED_AUX),
        IdReading(TOP_AUX, AUX_READING),
        IdReading(LEGACY_AUX, AUX_READING),
    ),
    "speculators-eagle3": (IdReading(TOP_AUX, AUX_READING),),
}


def is_eagle3_architecture(name: str) -> bool:
    """Return whether an ``architectures`` entry names an EAGLE-3 head."""
    return name in ARCHITECTURES or "eagle3" in name.lower()


def _tensor(
    tensors: Mapping[str, TensorInfo] | None, name: str
) -> tuple[str, tuple[int, ...]] | None:
    """Return (dtype, shape) of the tensor ``name`` (or ``*.name``) in a header, if present."""
    found = find_tensor(tensors, name) if tensors is not None else None
    return (found[1].dtype, found[1].shape) if found else None


def trained_ids(
    format_name: str, sources: tuple[IdSource, ...]
) -> tuple[tuple[int, ...] | None, str | None, str | None]:
    """Return (canonical ids, key, conversion text) of the list the head was trained with."""
    by_key = {s.key: s.ids for s in sources}
    for reading in TRAINED_READINGS[format_name]:
        raw = by_key.get(reading.key)
        if raw:
            ids = tuple(k + reading.to_output for k in raw)
            meaning = (
                "layer outputs (SpecForge; SGLang captures id + 1)"
                if reading.to_output == 0
                else "vLLM aux indices (hidden_states[k], the output of layer k-1)"
            )
            fed = ", ".join(str(t + 1) for t in ids)
            return (
                ids,
                reading.key,
                f"{reading.key} {list(raw)} are {meaning}: hidden_states[{fed}]",
            )
    return None, None, None


def _normalise(files: ModelFiles, format_name: str) -> DraftView:
    """Read an EAGLE-3 head: dimensions from ``dims``, ids and vocabulary keys from the top."""
    top = FieldReader(files.who, files.config_location, files.config)
    eagle = top.child("eagle_config")  # not an object: one line naming the field
    dims = top
    if format_name == "speculators-eagle3":
        dims = speculators_layer(top, files, "head")
    hidden = dims.integer("hidden_size", required=True)
    assert hidden is not None  # required=True guarantees it
    # Every key some runtime reads (vLLM's reader also applies the DFlash-style keys to heads).
    sources = id_sources(top, read_id_keys())
    ids, key, conversion = trained_ids(format_name, sources)
    verifier = speculators_verifier(top) if format_name == "speculators-eagle3" else None
    use_aux = eagle.data.get("use_aux_hidden_state", True) if eagle is not None else True
    lm_head = _tensor(files.tensors, "lm_head.weight")
    # Defined when a draft of this method is read: a DFlash pair's start-up never pays for the
    # class (method_facets.py).
    from dflash_check.method_facets import Eagle3Facts

    facts = Eagle3Facts(
        num_aux_hidden_states=top.integer("num_aux_hidden_states"),
        num_aux_layers=top.integer("num_aux_layers"),
        d2t=_tensor(files.tensors, "d2t"),
        t2d=_tensor(files.tensors, "t2d"),
        lm_head_rows=lm_head[1][0] if lm_head and lm_head[1] else None,
        rope=rope_facts(dims),
        layer_model_type=dims.string("model_type") if dims is not top else None,
        use_aux_hidden_state=use_aux is not False,
    )
    common = file_fields(files)
    return DraftView(
        name=files.name,
        method="eagle3",
        architectures=top.strings("architectures") or (),
        num_hidden_layers=dims.integer("num_hidden_layers"),
        hidden_size=hidden,
        vocab_size=dims.integer("vocab_size") or top.integer("vocab_size"),
        target_hidden_size=top.integer("target_hidden_size"),
        target_layer_ids=ids,
        layer_ids_key=key,
        num_target_layers=None,
        max_position_embeddings=dims.integer("max_position_embeddings"),
        format=format_name,
        speculators_model_type=stated_type(top) if format_name == "speculators-eagle3" else None,
        layer_ids_conversion=conversion,
        verifier=verifier,
        verifier_key="speculators_config.verifier.name_or_path" if verifier else None,
        draft_vocab_size=top.integer("draft_vocab_size"),
        token_ids=special_token_ids((dims, top) if dims is not top else (top,)),
        id_sources=sources,
        eagle3=facts,
        **common,
    )


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of an EAGLE-3 head in the SpecForge / EAGLE / NVIDIA layout."""
    return _normalise(files, "eagle3")


def normalise_speculators(files: ModelFiles) -> DraftView:
    """Build the view of a speculators-format EAGLE-3 head."""
    return _normalise(files, "speculators-eagle3")


def matches_speculators(config: Mapping[str, Any]) -> bool:
    """``speculators_model_type: eagle3`` decides (or an Eagle3Speculator without a type)."""
    kind = config.get("speculators_model_type")
    return kind == SPECULATORS_TYPE or (
        kind is None and "Eagle3Speculator" in config_architectures(config)
    )


def matches(config: Mapping[str, Any]) -> bool:
    """An EAGLE-3 architecture, or SpecForge's nested ``eagle_config`` (that keeps aux states)."""
    if config.get("speculators_model_type") is not None:
        return False
    names = config_architectures(config)
    if any(is_eagle3_architecture(a) for a in names):
        return True
    eagle = config.get("eagle_config")
    return (
        isinstance(eagle, dict)
        and eagle.get("use_aux_hidden_state", True) is not False
        and not any("dflash" in a.lower() for a in names)
    )
