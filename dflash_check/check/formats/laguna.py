"""poolside's Laguna DFlash drafts (``DFlashLagunaForCausalLM``).

The DFlash keys sit in ``dflash_config`` (ids, mask, block size), the drafter normalises each
captured target state with its own RMSNorm before ``fc`` (``aux_hidden_norms``), and it shares
the target's LM head, so ``draft_vocab_size`` is required and equals the target's vocabulary.
vLLM reads the ids only from ``dflash_config.target_layer_ids`` (``vllm-project/vllm@4ba787ec:
vllm/model_executor/models/laguna_dflash.py:78-83``) and adds 1 (the DFlash path of the V2
reader), so they are DFlash layer-output ids; SGLang serves it with its generic DFlash parser
(``srt/models/dflash.py:1317-1324``), which also falls back to a top-level list. The view reads
the keys that way, and DF028 says where vLLM needs them.

vLLM builds the draft's layers with the target's ``LagunaDecoderLayer``, which makes a layer
MoE by ``mlp_layer_types`` and ``num_experts`` (``vllm==0.34.0:vllm/model_executor/models/
laguna.py:517-519``), so the view keeps the two keys as stated (DF093).
"""

from __future__ import annotations

from dataclasses import replace

from dflash_check.check.formats.zlab import read_dflash_config_draft
from dflash_check.fields import FieldReader
from dflash_check.knowledge.config_classes import MLP_KEYS
from dflash_check.views import DraftMethod, DraftView, ModelFiles, stated

ARCHITECTURES: dict[str, DraftMethod] = {"DFlashLagunaForCausalLM": "dflash"}


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a Laguna DFlash draft."""
    view = read_dflash_config_draft(files, "laguna", ARCHITECTURES, read_model_type=True)
    top = FieldReader(files.who, files.config_location, files.config)
    return replace(view, mlp=stated(top, MLP_KEYS))
