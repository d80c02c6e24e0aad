"""Meta's Muse Glimmer assistant (``MuseGlimmerAssistantModel``): a DFlash draft under its own name.

Its keys sit at the top level (``target_layer_ids``, ``mask_token_id``, ``block_size``), with no
``dflash_config`` and no ``num_target_layers``. The ids are DFlash layer-output ids: vLLM's V2
reader adds 1 to a top-level ``target_layer_ids`` (``vllm-project/vllm@4ba787ec:vllm/v1/worker/
gpu/spec_decode/eagle/eagle3_utils.py:136-140``; the architecture is served by the generic
``DFlashQwen3ForCausalLM``, ``model_executor/models/registry.py:674-675``), and SGLang 0.5.23
adds 1 before a Muse Glimmer target's raw capture hook for this draft only
(``model_runner_components/spec_aux_hidden_state.py:17-29,254-258``), as
its DFlash hooks do on other targets. The keys are read the DFlash way (``dflash_config`` first
when present, then the top level), which is how both engines read them.
"""

from __future__ import annotations

from dflash_check.check.formats.zlab import read_dflash_config_draft
from dflash_check.views import DraftMethod, DraftView, ModelFiles

ARCHITECTURES: dict[str, DraftMethod] = {"MuseGlimmerAssistantModel": "dflash"}


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a Muse Glimmer assistant draft."""
    return read_dflash_config_draft(files, "muse", ARCHITECTURES, read_model_type=True)
