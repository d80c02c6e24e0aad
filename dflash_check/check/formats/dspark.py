"""DSpark drafts (DeepSeek's DeepSpec): a DFlash backbone plus a sequential Markov head.

Sources (engine reading notes in ``docs/engine-reading/``, each engine line cited there):

* vLLM ``4ba787ec``: architectures in ``model_executor/models/registry.py:676-697``; layer ids in
  ``v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:125-135`` (``dspark_target_layer_ids`` gets
  the DFlash ``+1``, except for a ``deepseek_v41`` draft, whose list is raw aux indices); mask in
  ``v1/worker/gpu/spec_decode/utils.py:92-114`` (``dspark_noise_token_id`` after the DFlash keys);
  ``num_speculative_tokens`` from ``block_size`` else ``dspark_block_size``
  (``config/speculative.py:1592-1600``).
* SGLang 0.5.23 ``srt/speculative/dspark_components/dspark_config.py:206-322``: the nested keys
  are ``{**dflash_config, **dspark_config}``; ids ``dspark_target_layer_ids``, else the DFlash ids
  (``dflash_config``, then top level); mask ``dspark_noise_token_id``, nested ``mask_token_id``,
  ``text_config``, top level; block ``dspark_block_size`` else ``block_size``; Markov rank
  ``dspark_markov_rank``, nested, ``text_config``, top level.
* SpecForge ``configs/*dspark*.json`` keep ids and mask in ``dflash_config`` and the Markov keys in
  ``dflash_config`` or ``dspark_config``.

The view takes SGLang's order (the prefixed ``dspark_*`` keys first), in DFlash layer-output
numbering; every id list the config states is kept raw in ``id_sources`` for the runtimes that
read another one first.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from dflash_check.check.formats.common import (
    at_path,
    config_architectures,
    dflash_config_facts,
    draft_fields,
    first_null,
    first_value,
    present,
    token_id_facts,
)
from dflash_check.fields import FieldReader
from dflash_check.knowledge.engines import TRTLLM
from dflash_check.knowledge.runtimes.rows import AUX_READING, DSPARK_AUX_MODEL_TYPE, DSPARK_IDS
from dflash_check.views import (
    DFlashFacts,
    DraftMethod,
    DraftView,
    ModelFiles,
    special_token_ids,
)

# The DSpark architectures the tool reads. Which vLLM and SGLang releases load each is read from
# that release's model registry (knowledge/registered_drafts.py; vLLM registry.py, SGLang
# models/dspark.py:995, deepseek_v4_dspark.py:1217, dspark_minimax.py:326, lfm2_dspark.py:16),
# never listed here. vLLM 0.34's MistralLarge4DSparkModel is not read as DSpark: vLLM writes its
# config at load from the target's params.json (NOT_CHECKED_YET in check/formats/unchecked.py
# says why).
ARCHITECTURES: dict[str, DraftMethod] = {
    a: "dspark"
    for a in (
        "Qwen3DSparkModel",
        "DSparkDraftModel",
        "Qwen3OmniDSparkModel",
        "Gemma4DSparkModel",
        "K3DSparkModel",
        "DSparkV41DraftModel",
        "MuseSparkDSparkModel",
        "LingDSparkModel",
        "DSparkMiniMaxDraftModel",
        "Lfm2DSparkDraftModel",
        "DeepseekV4ForCausalLMDSpark",
    )
}
# TensorRT-LLM serves DSpark (tensorrt_llm/_torch/speculative/dspark*.py, a DSparkWorker over
# the DFlash worker); its code is not extracted and the architectures it accepts were not
# enumerated, so this reviewed row holds for every DSpark architecture.
RUNTIMES: tuple[str, ...] = (TRTLLM.name,)
"""The runtimes of engines whose code is not extracted that load DSpark drafts (the format's
reviewed row)."""

ID_COUNT_ARCHITECTURES = frozenset(
    {"K3DSparkModel", "MuseSparkDSparkModel", "MistralLarge4DSparkModel"}
)
"""DSpark drafts whose ``num_target_layers`` counts the target layers they read (fc takes
``target_hidden_size * num_target_layers``), not the target's depth: vLLM's MLA DSpark config
refuses any other value than ``len(target_layer_ids)``
(vllm==0.34.0:vllm/transformers_utils/configs/k3_dspark.py:69-76, the same in 0.32.0 and
0.33.0); its Mistral Large 4 converter writes ``len(target_layers)``
(vllm/transformers_utils/configs/mistral.py:533); Muse Spark's tests state ``len(ids)`` and its
model sizes fc from the ids (vllm/models/muse_spark/common/dspark.py:207). Their target depth,
where stated, is ``target_num_hidden_layers``."""

IDS_KEY = DSPARK_IDS
# vLLM reads a deepseek_v41 draft's dspark_target_layer_ids as raw aux indices k (the residual
# stream after k layers) and every other list with +1 (eagle3_utils.py:125-135), so in DFlash
# layer-output numbering a deepseek_v41 id is t = k - V41_AUX_SHIFT.
V41_MODEL_TYPE = DSPARK_AUX_MODEL_TYPE
V41_AUX_SHIFT = -AUX_READING
# Every key a DSpark mask (noise) token id is read from, in SGLang's order (dspark_config.py
# :277-288: dspark_noise_token_id, {**dflash_config, **dspark_config}, text_config, top level).
MASK_KEYS = (
    "dspark_noise_token_id",
    "dspark_config.mask_token_id",
    "dflash_config.mask_token_id",
    "text_config.mask_token_id",
    "mask_token_id",
)
MARKOV_KEYS = (
    "dspark_markov_rank",
    "dspark_config.markov_rank",
    "dflash_config.markov_rank",
    "text_config.markov_rank",
    "markov_rank",
    # Read by vLLM's MiniMax DSpark alone, from a draft with a text_config
    # (vllm==0.34.0:vllm/config/speculative.py:1234-1250).
    "text_config.dspark_markov_rank",
)


def mask_sources(top: FieldReader) -> tuple[tuple[str, int], ...]:
    """Return every mask token id the config states, with its dotted key (``MASK_KEYS`` order)."""
    out = []
    for path in present(top, MASK_KEYS):
        reader, key = at_path(top, path)
        assert reader is not None  # present() found the key under it
        value = reader.integer(key, minimum=0)
        assert value is not None  # present() skips nulls
        out.append((path, value))
    return tuple(out)


# What vLLM's Qwen3-Omni DSpark contract reads from the draft, and where, in its order
# (vllm==0.34.0:vllm/config/speculative.py:198-206 _get_qwen3_dspark_value: dflash_config,
# eagle_config, top level; the other names are read at the top level only, except the ids
# (:304-309) and the noise token (:398-408), which try the keys in the order listed).
_OMNI_NESTED = ("dflash_config.", "eagle_config.", "")
OMNI_CONTRACT_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("block_size", tuple(f"{s}block_size" for s in _OMNI_NESTED)),
    ("dspark_block_size", tuple(f"{s}dspark_block_size" for s in _OMNI_NESTED)),
    ("use_aux_hidden_state", tuple(f"{s}use_aux_hidden_state" for s in _OMNI_NESTED)),
    (
        "target_layer_ids",
        ("dflash_config.target_layer_ids", "dspark_target_layer_ids", "target_layer_ids"),
    ),
    (
        "mask_token_id",
        (
            "dflash_config.mask_token_id",
            "mask_token_id",
            "dspark_noise_token_id",
            "pard_token",
            "ptd_token_id",
        ),
    ),
    *(
        (name, (name,))
        for name in (
            "hidden_size",
            "target_hidden_size",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "markov_rank",
            "markov_head_type",
            "sample_from_anchor",
            "dspark_bonus_anchor",
            "vocab_size",
            "draft_vocab_size",
            "mrope_section",
            "rope_parameters",
            "rope_scaling",
        )
    ),
)


def omni_contract_values(top: FieldReader) -> tuple[tuple[str, str, str], ...]:
    """Return (name, dotted key, the value as JSON text) for each name of
    ``OMNI_CONTRACT_KEYS`` the draft states, from the first of its keys holding a non-null
    value (as vLLM's getattr chain)."""
    out = []
    for name, keys in OMNI_CONTRACT_KEYS:
        for key in keys:
            reader, last = at_path(top, key)
            if reader is not None and reader.has(last):
                out.append((name, key, json.dumps(reader.data[last])))
                break
    return tuple(out)


MLA_CONTRACT_KEYS = (
    "mla_use_nope",
    "mla_use_output_gate",
    "mla_use_qk_norm",
    "dspark_bonus_anchor",
    "q_lora_rank",
    "vocab_size",
    "draft_vocab_size",
    "target_layer_ids",
    "num_target_layers",
)
"""The top-level keys vLLM's MLA DSpark config checks (vllm==0.32.0:vllm/transformers_utils/
configs/k3_dspark.py:44-77; ``getattr`` on the config, so top level only)."""


def mla_contract_values(top: FieldReader) -> tuple[tuple[str, str], ...]:
    """Return (name, the value as JSON text) for each ``MLA_CONTRACT_KEYS`` the draft states
    (a stated null included: vLLM refuses ``q_lora_rank: null``)."""
    return tuple((k, json.dumps(top.data[k])) for k in MLA_CONTRACT_KEYS if k in top.data)


# Drafts whose whole config both engines read from ``text_config`` when it has one: vLLM swaps
# it in for a DSparkMiniMaxDraftModel draft and sets markov_rank from its dspark_markov_rank
# (vllm==0.34.0:vllm/config/speculative.py:1234-1250); SGLang's configure_minimax_m3_dspark
# does the same for that architecture alone, after copying the top-level ``dspark_*`` keys onto
# it (sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111, called from configs/
# model_config.py:1019-1027 and speculative/dspark_components/dspark_config.py:155-158).
# The other DSpark architectures are read from the top level by both (dspark_config.py reads
# only the mask and Markov keys from a text_config, which MASK_KEYS and MARKOV_KEYS hold).
TEXT_ROOT_ARCHITECTURES = frozenset({"DSparkMiniMaxDraftModel"})
# The keys SGLang copies from the top level onto a MiniMax draft's text_config, the copies
# winning (minimax_vl.py:67-68): vLLM reads them in text_config only.
_COPIED_PREFIXED = ("dspark_noise_token_id", "dspark_block_size", "dspark_markov_rank")


def config_root(top: FieldReader) -> FieldReader:
    """Return the object the engines read a DSpark draft's own keys from: ``text_config`` for
    an architecture of ``TEXT_ROOT_ARCHITECTURES`` that has one, else the top level."""
    if TEXT_ROOT_ARCHITECTURES & set(config_architectures(top.data)):
        text = top.child("text_config")
        if text is not None:
            return text
    return top


def minimax_contract_values(
    top: FieldReader, root: FieldReader
) -> tuple[tuple[str, str, str], ...]:
    """Return (name, dotted key, the value as JSON text) for each value SGLang's translation of
    a MiniMax DSpark draft reads, where it reads it (sglang==0.5.23:sglang/srt/configs/
    minimax_vl.py:64-111); empty for any other draft. It reads the root (text_config, else the
    top level) after copying every top-level ``dspark_*`` key onto it, the copies winning."""
    if not TEXT_ROOT_ARCHITECTURES & set(config_architectures(top.data)):
        return ()

    def attr(key: str) -> tuple[str, object] | None:
        # getattr(text, key) after the copy; a stated null is a value (int(None) fails).
        for reader in (top, root) if key.startswith("dspark_") else (root,):
            if key in reader.data:
                return f"{reader.prefix}{key}", reader.data[key]
        return None

    found: dict[str, tuple[str, object]] = {}
    # dict(dspark_config).get(name, getattr(text, "dspark_" + name)): the section wins.
    spark = attr("dspark_config")
    for name in ("use_dense_ffn", "ffn_hidden_size"):
        if spark is not None and isinstance(spark[1], dict) and name in spark[1]:
            found[name] = (f"{spark[0]}.{name}", spark[1][name])
        elif (flat := attr(f"dspark_{name}")) is not None:
            found[name] = flat
    # text.dflash_config[...]: the root's section only.
    flash = attr("dflash_config")
    for name in ("num_target_layers", "num_hidden_layers", "target_layer_ids"):
        if flash is not None and isinstance(flash[1], dict) and name in flash[1]:
            found[name] = (f"{flash[0]}.{name}", flash[1][name])
    for key in _COPIED_PREFIXED:
        if (value := attr(key)) is not None:
            found[key] = value
    return tuple((name, key, json.dumps(value)) for name, (key, value) in found.items())


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a DSpark draft."""
    top = FieldReader(files.who, files.config_location, files.config)
    # Every key below is read at the root and named with its path (text_config.hidden_size).
    root = config_root(top)
    rooted = root is not top
    dflash = root.child("dflash_config")
    dspark = root.child("dspark_config")
    text = None if rooted else top.child("text_config")
    # SGLang merges {**dflash_config, **dspark_config}: a key in dspark_config wins.
    nested = (dspark, dflash)
    # The prefixed dspark_* keys: SGLang takes a MiniMax draft's top-level ones first.
    prefixed = (top, root) if rooted else (top,)
    model_type = root.string("model_type")

    ids, ids_key, conversion = _layer_ids(top, root, dflash, model_type)

    mask, mask_key = first_value(prefixed, "dspark_noise_token_id")
    if mask is None:
        mask, mask_key = first_value((*nested, text, root), "mask_token_id")
    block, block_key = first_value(prefixed, "dspark_block_size")
    if block is None:
        block, block_key = first_value((dflash, root), "block_size")
    rank, rank_key = first_value(prefixed, "dspark_markov_rank")
    if rank is None:
        rank, rank_key = first_value((*nested, text, root), "markov_rank")
    head_type, head_type_key = first_value((*nested, text, root), "markov_head_type", read="string")
    if ID_COUNT_ARCHITECTURES & set(config_architectures(top.data)):
        ntl, ntl_key = first_value((root,), "target_num_hidden_layers")
    else:
        ntl, ntl_key = first_value((root, dflash), "num_target_layers")
    tokens = special_token_ids((root,))
    fields = _rooted_fields(top, root, draft_fields(files, root, dflash, empty_vocab=True))
    # Defined when a draft of this method is read: a DFlash pair's start-up never pays for the
    # class (method_facets.py).
    from dflash_check.method_facets import DSparkFacts

    return DraftView(
        method="dspark",
        target_layer_ids=ids,
        layer_ids_key=ids_key,
        num_target_layers=ntl,
        format="dspark",
        layer_ids_conversion=conversion,
        layer_ids_null_key=first_null((dflash, root), "target_layer_ids"),
        num_target_layers_key=ntl_key,
        token_ids=token_id_facts(mask_key, mask, tokens),
        model_type=model_type,
        config_root=root.prefix,
        dflash=DFlashFacts(
            block_size=block,
            block_size_key=block_key,
            mask_token_id=mask,
            mask_token_key=mask_key,
            mask_null_key=first_null((*nested, root), "mask_token_id"),
            # vLLM's DSpark speculator extends the DFlash one, which refuses a true
            # dflash_config.sample_from_anchor (DF021); DSpark's own switch is top-level.
            **dflash_config_facts(root, dflash),
        ),
        dspark=DSparkFacts(
            markov_rank=rank,
            markov_rank_key=rank_key,
            markov_head_type=head_type,
            markov_head_type_key=head_type_key,
            markov_rank_keys=_rooted_keys(top, root, MARKOV_KEYS),
            mask_sources=_rooted_mask_sources(top, root),
            omni_contract=omni_contract_values(root),
            mla_contract=mla_contract_values(root),
            minimax_contract=minimax_contract_values(top, root),
        ),
        # vLLM's Qwen3-Omni DSpark contract refuses a vocab_size of 0 with its own message
        # (DF055, from omni_contract); the view reads it as not stated.
        **fields,
    )


def _layer_ids(
    top: FieldReader, root: FieldReader, dflash: FieldReader | None, model_type: str | None
) -> tuple[tuple[int, ...] | None, str | None, str | None]:
    """Return (layer ids, their key, the conversion said in the report or None): the top-level
    dspark_target_layer_ids (a deepseek_v41 draft's are vLLM aux indices, shifted once), else
    dflash_config's list, else, for a draft read at its text_config, the root's own."""
    rooted = root is not top
    raw, raw_key = (None, None) if rooted else first_value((top,), IDS_KEY, read="integers")
    if raw is not None:
        if model_type != V41_MODEL_TYPE:
            return raw, raw_key, None
        ids = tuple(k - V41_AUX_SHIFT for k in raw)
        return (
            ids,
            raw_key,
            f"{IDS_KEY} [{', '.join(map(str, raw))}] of a {V41_MODEL_TYPE} draft are vLLM aux "
            f"indices (t + {V41_AUX_SHIFT}); as DFlash layer ids: [{', '.join(map(str, ids))}]",
        )
    # A MiniMax draft's ids are its dflash_config's in both engines: vLLM reads the nested
    # list first, SGLang overwrites dspark_target_layer_ids with it (minimax_vl.py:92-101).
    ids, ids_key = first_value((dflash, root), "target_layer_ids", read="integers")
    if ids is None and rooted:
        ids, ids_key = first_value((root,), IDS_KEY, read="integers")
    return ids, ids_key, None


def _rooted_fields(top: FieldReader, root: FieldReader, fields: dict[str, Any]) -> dict[str, Any]:
    """Return the common fields read at the root, named from the top for a draft read at its
    text_config: vLLM picks the class by the top-level architectures before it swaps
    (speculative.py:788, :1234), and the paths of every id list name their root."""
    if root is top:
        return fields
    return {
        **fields,
        "architectures": top.strings("architectures") or config_architectures(top.data),
        "id_sources": tuple(replace(s, key=f"{root.prefix}{s.key}") for s in fields["id_sources"]),
    }


def _rooted_keys(top: FieldReader, root: FieldReader, keys: tuple[str, ...]) -> tuple[str, ...]:
    """Return the dotted paths among ``keys`` that the config states, read at the root (named
    from the top), plus the top-level copies SGLang takes for a rooted draft."""
    if root is top:
        return present(top, keys)
    found = [f"{root.prefix}{k}" for k in present(root, keys)]
    copied = [k for k in _COPIED_PREFIXED if k in keys and top.has(k)]
    return tuple(dict.fromkeys((*copied, *found)))


def _rooted_mask_sources(top: FieldReader, root: FieldReader) -> tuple[tuple[str, int], ...]:
    """Return ``mask_sources`` read at the root, its paths named from the top, plus a top-level
    ``dspark_noise_token_id`` SGLang copies onto a rooted draft (it wins there)."""
    if root is top:
        return mask_sources(top)
    found = tuple((f"{root.prefix}{k}", v) for k, v in mask_sources(root))
    copied = top.integer("dspark_noise_token_id", minimum=0)
    return ((("dspark_noise_token_id", copied),) if copied is not None else ()) + found
