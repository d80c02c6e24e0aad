"""z-lab DFlash / DFlash 2 drafts: ``dflash_config`` first, then the top level.

Source: ``z-lab/dflash@07ebd93d:dflash/model.py`` (``_draft_value``: ``dflash_config`` then the
config attribute). Ids are DFlash layer-output ids (the reference reads ``hidden_states[t+1]``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dflash_check.check.formats.common import (
    dflash_config_facts,
    draft_fields,
    first_null,
    first_value,
    stated_mask_token,
    token_id_facts,
)
from dflash_check.fields import FieldReader
from dflash_check.knowledge.engines.vllm import XPRESS_ARCHITECTURES
from dflash_check.views import (
    DFlashFacts,
    DraftMethod,
    DraftView,
    ModelFiles,
    special_token_ids,
)

# DFlash 2's convolution and candidate-selector keys (z-lab/dflash@07ebd93d:dflash/model.py:518,
# :641; every engine reads them from dflash_config).
DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")

# What vLLM's DFlash 2 classes read besides DFlash 2's keys: its own Beam class, when it is built
# (vllm==0.34.0:vllm/models/beam/nvidia/dflash2.py:79-80, :564-567): the logit soft cap from
# dflash_config only, is_causal, and (for layer_types a config leaves out) what transformers'
# Qwen3Config derives them from. (parent key or "", key).
BEAM_KEYS = (
    ("dflash_config", "final_logit_softcapping"),
    ("", "is_causal"),
    ("", "model_type"),
    ("", "use_sliding_window"),
    ("", "max_window_layers"),
    # vLLM 0.34 renames a DFlash2DraftModel that states it to its Ricursive class
    # (vllm==0.34.0:vllm/config/speculative.py:796-801).
    ("", "no_rope_layers"),
)

# What vLLM's XPress speculator reads at the top level besides DFlash's keys, kept as stated
# (the engine tests them with getattr and compares them as they are): sample_from_anchor
# (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/xpress/speculator.py:29-34) and xpress_topc
# (xpress/config.py:21-28). (parent key or "", key).
XPRESS_KEYS = (("", "sample_from_anchor"), ("", "xpress_topc"))

BEAM_ARCHITECTURE = "DFlash2BeamDraftModel"
"""The DFlash 2 Beam draft's architecture (vLLM's own class has a contract of its own: DF018)."""

ARCHITECTURES: dict[str, DraftMethod] = {
    "DFlashDraftModel": "dflash",
    "DFlash2DraftModel": "dflash2",
    # DFlash 2 drafts under other names, read from the same keys (each release's model registry
    # says which load them: knowledge/registered_drafts.py):
    # - Beam: SGLang's class is an alias of DFlash2DraftModel (sglang==0.5.23:sglang/srt/models/
    #   dflash.py:1313); vLLM's own class reads dflash_config.target_layer_ids (+1 in
    #   eagle3_utils.py:114, as every dflash_config list) and the four DFlash 2 keys from
    #   dflash_config only, fc = hidden_size x len(ids) (vllm==0.34.0:vllm/models/beam/nvidia/
    #   dflash2.py:199-206, :331-378, the same in 0.33.0). It also needs
    #   dflash_config.final_logit_softcapping (:564-567), sliding layer_types and is_causal
    #   false (:79-80): DF018 reads them (Release.beam_dflash2_contract).
    BEAM_ARCHITECTURE: "dflash2",
    # - Ricursive Ripple: vLLM's class is DFlash2Qwen3ForCausalLM with NoPE layers
    #   (vllm==0.34.0:vllm/model_executor/models/ricursive_dflash2.py:31-53); vLLM also renames a
    #   DFlash2DraftModel that states no_rope_layers to it (config/speculative.py:796-801).
    "DFlash2RicursiveDraftModel": "dflash2",
    # - MiniMax: SGLang's alias of DFlash2DraftModel (sglang==0.5.23:sglang/srt/models/
    #   dflash.py:1305); no vLLM release registers it.
    "MiniMaxDFlash2DraftModel": "dflash2",
    # DFlash drafts with vLLM's XPress refiner head (0.33.0, 0.34.0; both names map to
    # Qwen3XPressForCausalLM, and config/speculative.py routes them to the XPress speculator
    # under method dflash). The class subclasses DFlashQwen3ForCausalLM, so ids, widths and the
    # mask token are read as DFlash's (vllm==0.34.0:vllm/model_executor/models/
    # qwen3_xpress.py:255-306); its refiner adds xpress_* keys with defaults (:270-279) and
    # refuses a vocabulary other than the target's (:317-322; DF007 reads it,
    # Release.xpress).
    **dict.fromkeys(sorted(XPRESS_ARCHITECTURES), "dflash"),
}

IDENTIFIED_BY = (
    f"architectures DFlashDraftModel or DFlash2DraftModel (DFlash 2 also as {BEAM_ARCHITECTURE}, "
    "DFlash2RicursiveDraftModel, MiniMaxDFlash2DraftModel; DFlash with vLLM's XPress refiner as "
    f"{', '.join(sorted(XPRESS_ARCHITECTURES))})"
)
"""What names the format in config.json (``FORMATS``' row, docs and messages)."""


def read_dflash_config_draft(
    files: ModelFiles,
    format_name: str,
    methods: dict[str, DraftMethod],
    read_model_type: bool = False,
) -> DraftView:
    """Read a draft that keeps its DFlash keys in ``dflash_config`` (or at the top level);
    ``read_model_type``: keep its top-level ``model_type`` (vLLM routes Muse and Laguna
    drafts by it)."""
    top = FieldReader(files.who, files.config_location, files.config)
    architectures = top.strings("architectures") or ()
    method = next((methods[a] for a in architectures if a in methods), "dflash")
    dflash = top.child("dflash_config")
    # Every key is looked up in dflash_config first and then at the top level; which key was
    # used matters to runtimes that read only one of them (see the runtime profiles).
    sources = (dflash, top)
    ids, ids_key = first_value(sources, "target_layer_ids", read="integers")
    block, block_key = first_value(sources, "block_size")
    mask, mask_key = first_value(sources, "mask_token_id")
    # The reference and MLX read num_target_layers at the top level only.
    ntl, ntl_key = first_value((top, dflash), "num_target_layers")
    tokens = special_token_ids((top,))
    facts = DFlashFacts(
        block_size=block,
        block_size_key=block_key,
        mask_token_id=mask,
        mask_token_key=mask_key,
        mask_null_key=first_null(sources, "mask_token_id"),
        mask_token=stated_mask_token(files.config),
        xpress=_stated(files.config, XPRESS_KEYS),
        **dflash_config_facts(top, dflash),
    )
    dflash2 = None
    if method == "dflash2":
        # Defined only when a DFlash 2 draft is read: a DFlash pair's start-up never pays for
        # the class (method_facets.py).
        from dflash_check.method_facets import DFlash2Facts

        dflash2 = DFlash2Facts(
            tuple((name, *first_value(sources, name)) for name in DFLASH2_KEYS),
            _stated(files.config, BEAM_KEYS),
        )
    return DraftView(
        method=method,
        target_layer_ids=ids,
        layer_ids_key=ids_key,
        num_target_layers=ntl,
        format=format_name,
        layer_ids_null_key=first_null(sources, "target_layer_ids"),
        num_target_layers_key=ntl_key,
        token_ids=token_id_facts(mask_key, mask, tokens),
        dflash=facts,
        dflash2=dflash2,
        model_type=top.string("model_type") if read_model_type else None,
        **draft_fields(files, top, dflash),
    )


def _stated(
    config: Mapping[str, Any], keys: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """Return (dotted key, value as JSON) for each (parent, key) the config states; kept as
    JSON so that a rule tells a null or a string from a number as the engine's code would."""
    out = []
    for parent, key in keys:
        where = config.get(parent) if parent else config
        if isinstance(where, Mapping) and key in where:
            out.append((f"{parent}.{key}" if parent else key, json.dumps(where[key])))
    return tuple(out)


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a z-lab DFlash or DFlash 2 draft."""
    return read_dflash_config_draft(files, "z-lab", ARCHITECTURES)
