"""poolside's Laguna DFlash drafts (``DFlashLagunaForCausalLM``).

The DFlash keys sit in ``dflash_config`` (ids, mask, block size), the drafter normalises each
captured target state with its own RMSNorm before ``fc`` (``aux_hidden_norms``), and it shares
the target's LM head, so ``draft_vocab_size`` is required and equals the target's vocabulary.
vLLM reads the ids only from ``dflash_config.target_layer_ids`` (``vllm-project/vllm@4ba787ec:
vllm/model_executor/models/laguna_dflash.py:78-83``) and adds 1 (the DFlash path of the V2
reader), so they are DFlash layer-output ids; SGLang serves it with its generic DFlash parser
(``srt/models/dflash.py:1317-1324``), which also falls back to a top-level list. The view reads
the keys that way, and DF028 says where vLLM needs them.
"""

from __future__ import annotations

from dflash_check.check.formats.zlab import read_dflash_config_draft
from dflash_check.views import DraftMethod, DraftView, ModelFiles

ARCHITECTURES: dict[str, DraftMethod] = {"DFlashLagunaForCausalLM": "dflash"}


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a Laguna DFlash draft."""
    return read_dflash_config_draft(files, "laguna", ARCHITECTURES, read_model_type=True)
