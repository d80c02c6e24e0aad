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
# config at load from the target's params.json (formats.NOT_CHECKED_YET says why).
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


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a DSpark draft."""
    top = FieldReader(files.who, files.config_location, files.config)
    dflash = top.child("dflash_config")
    dspark = top.child("dspark_config")
    text = top.child("text_config")
    # SGLang merges {**dflash_config, **dspark_config}: a key in dspark_config wins.
    nested = (dspark, dflash)
    model_type = top.string("model_type")

    raw = top.integers(IDS_KEY)
    conversion = None
    if raw is not None:
        ids_key: str | None = IDS_KEY
        ids: tuple[int, ...] | None = raw
        if model_type == V41_MODEL_TYPE:
            ids = tuple(k - V41_AUX_SHIFT for k in raw)
            conversion = (
                f"{IDS_KEY} [{', '.join(map(str, raw))}] of a {V41_MODEL_TYPE} draft are vLLM aux "
                f"indices (t + {V41_AUX_SHIFT}); as DFlash layer ids: [{', '.join(map(str, ids))}]"
            )
    else:
        ids, ids_key = first_value((dflash, top), "target_layer_ids", read="integers")

    mask, mask_key = first_value((top,), "dspark_noise_token_id")
    if mask is None:
        mask, mask_key = first_value((*nested, text, top), "mask_token_id")
    block, block_key = first_value((top,), "dspark_block_size")
    if block is None:
        block, block_key = first_value((dflash, top), "block_size")
    rank, rank_key = first_value((top,), "dspark_markov_rank")
    if rank is None:
        rank, rank_key = first_value((*nested, text, top), "markov_rank")
    head_type, head_type_key = first_value((*nested, text, top), "markov_head_type", read="string")
    if ID_COUNT_ARCHITECTURES & set(config_architectures(top.data)):
        ntl, ntl_key = first_value((top,), "target_num_hidden_layers")
    else:
        ntl, ntl_key = first_value((top, dflash), "num_target_layers")
    tokens = special_token_ids((top,))
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
        layer_ids_null_key=first_null((dflash, top), "target_layer_ids"),
        num_target_layers_key=ntl_key,
        token_ids=token_id_facts(mask_key, mask, tokens),
        model_type=model_type,
        dflash=DFlashFacts(
            block_size=block,
            block_size_key=block_key,
            mask_token_id=mask,
            mask_token_key=mask_key,
            mask_null_key=first_null((*nested, top), "mask_token_id"),
            # vLLM's DSpark speculator extends the DFlash one, which refuses a true
            # dflash_config.sample_from_anchor (DF021); DSpark's own switch is top-level.
            **dflash_config_facts(top, dflash),
        ),
        dspark=DSparkFacts(
            markov_rank=rank,
            markov_rank_key=rank_key,
            markov_head_type=head_type,
            markov_head_type_key=head_type_key,
            markov_rank_keys=present(top, MARKOV_KEYS),
            mask_sources=mask_sources(top),
            omni_contract=omni_contract_values(top),
            mla_contract=mla_contract_values(top),
            has_text_config=text is not None,
        ),
        # vLLM's Qwen3-Omni DSpark contract refuses a vocab_size of 0 with its own message
        # (DF055, from omni_contract); the view reads it as not stated.
        **draft_fields(files, top, dflash, empty_vocab=True),
    )
