"""Registered draft architectures the tool does not check yet, each with its reason.

The engines register DFlash, DFlash 2 and DSpark drafts under many names; every one a release's
model registry holds is read by a format in ``FORMATS`` except those named here, whose
"cannot check yet" message gives the reason (``tests/unit/check/test_formats_registered.py``
holds the rest to a format).
"""

from __future__ import annotations

# DFlash-family draft architectures the engines register that no format reads yet, and why
# (said in the message; tests/unit/check/test_formats_registered.py holds every other registered
# DFlash, DFlash 2 and DSpark architecture to a format).
NOT_CHECKED_YET: dict[str, str] = {
    # vLLM writes this config itself at load, from the mtp block of a Mistral Large 4 target's
    # params.json (vllm==0.34.0:vllm/config/speculative.py:822-830, transformers_utils/configs/
    # mistral.py:477-545): the draft ships inside the target checkpoint, so there is no draft
    # config.json to read, and the written one's mask_token_id is the out-of-vocabulary sentinel
    # vocab_size (replaced by a learned embedding), which the mask rules would refuse.
    "MistralLarge4DSparkModel": "vLLM builds this config at load from a Mistral Large 4 "
    "target's params.json mtp block (vllm==0.34.0:vllm/transformers_utils/configs/"
    "mistral.py:477-545); the draft ships in the target's checkpoint, without a config of its "
    "own to check",
    # vLLM's own spelling of MuseGlimmerAssistantModel for a dflash draft
    # (transformers_utils/configs/eagle.py); a checkpoint states the plain name (Muse format).
    "DFlashMuseGlimmerAssistantModel": "vLLM's renamed spelling of MuseGlimmerAssistantModel; a "
    "checkpoint states MuseGlimmerAssistantModel, which this version reads",
}
