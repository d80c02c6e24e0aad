"""Why the oracle's model stage (``conformance/drivers/vllm_config_driver.py``,
``sglang_config_driver.py``) stopped where it did, per error: a limit of this CPU, of the case
as its test builds it, or the release's own refusal when it builds the model. Every error
recorded under ``model`` in ``conformance/results/oracle/*.json`` must match one row
(``tests/unit/conformance/test_model_stage.py``), so a new stop is named before it is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Stop:
    """One kind of model-stage error and what it means for the pair."""

    pattern: str
    """A regular expression over the recorded ``"Type: message"``."""
    kind: str
    """``cpu`` (not reachable on a CPU), ``case`` (the case's config cannot build that model),
    or ``engine`` (the release's own refusal when it builds the model)."""
    why: str


STOPS: tuple[Stop, ...] = (
    Stop(
        r"No MXFP4 MoE backend supports",
        "cpu",
        "not reachable on a CPU: an MXFP4 MoE (gpt-oss) has only GPU backends in the release's "
        "own candidate list (the message names them)",
    ),
    Stop(
        r"Marlin FP4 not available",
        "cpu",
        "not reachable on a CPU: the NVFP4 linear kernel the checkpoint forces (Marlin FP4) is "
        "GPU-only",
    ),
    Stop(
        r"Qwen3OmniMoeVisionEncoderConfig' object has no attribute",
        "case",
        "the Qwen3-Omni cases' target is the test's config (thinker_config.text_config only, "
        "vllm==0.34.0:tests/test_config.py:4059-4107): the thinker's vision encoder cannot be "
        "built from it; the capture and fc are not reached",
    ),
    Stop(
        r"Duplicate layer name: model\.layers\.\d+\.mlp\.experts",
        "engine",
        "the release's own error: the Laguna DFlash draft names its MoE layers after its own "
        "layer index (vllm==0.34.0:vllm/model_executor/models/laguna_dflash.py:110-121), the "
        "target registered the same names, and a second registration is refused "
        "(vllm==0.34.0:vllm/model_executor/layers/fused_moe/runner/moe_runner.py:70-72). The "
        "runner's load_dflash_model builds the draft in a replace() of the target's config "
        "(v1/worker/gpu/spec_decode/dflash/utils.py:26-47), which keeps the same compilation "
        "config and so the same registry (config/utils.py:122-130, fields by reference): read, "
        "not run on a GPU",
    ),
    Stop(
        r"DFlash sliding attention requires a window size",
        "engine",
        "the release's own refusal when it builds the draft: sliding-attention draft layers "
        "with no dflash_config.swa_window_size or top-level sliding_window",
    ),
    Stop(
        r"DFLASH sliding_attention layers require config\.sliding_window",
        "engine",
        "SGLang's own refusal when it builds the DFlash draft (sglang==0.5.23:sglang/srt/"
        "speculative/dflash_utils.py:400-414): the draft's layer_types name sliding_attention "
        "and its config, as transformers loads it, has no sliding_window (Qwen3Config keeps "
        "the config's sliding_window only with use_sliding_window true); the z-lab "
        "Qwen3.5-35B-A3B draft states sliding_window 4096 without use_sliding_window. Whether "
        "the published config loads the same way is for a real SGLang run to show; the tool "
        "says nothing of it yet",
    ),
    Stop(
        r"'Qwen3Config' object has no attribute 'markov_rank'",
        "engine",
        "the release builds the DSpark draft class from a plain Qwen3 config with no "
        "markov_rank (the SpecForge export) and fails reading it",
    ),
    Stop(
        r"^NotImplementedError: XPress currently requires a full-vocab draft",
        "engine",
        "the release's own refusal when it builds an XPress draft whose vocabulary is not the "
        "target's (vllm==0.34.0:vllm/model_executor/models/qwen3_xpress.py:317-322, "
        "Qwen3XPressForCausalLM.__init__; 0.33.0: :299-304)",
    ),
    Stop(
        r"^KeyError: 'final_logit_softcapping'",
        "engine",
        "the release's own Beam DFlash 2 class reads dflash_config['final_logit_softcapping'] "
        "when it is built (vllm==0.34.0:vllm/models/beam/nvidia/dflash2.py:564-567; 0.33.0: "
        ":563-566)",
    ),
    Stop(
        r"^AssertionError: $",
        "engine",
        "a bare assertion of the release's model code: where a code case expects it "
        "(conformance/mined/code_cases.py, Beam DFlash 2's 'assert not config.is_causal' and "
        "sliding layer types, vllm==0.34.0:vllm/models/beam/nvidia/dflash2.py:79-80), the "
        "case's expect_match names it",
    ),
    Stop(
        r"failed to be inspected",
        "cpu",
        "a model class that does not import under the CPU stubs (before the driver imported "
        "the Triton kernel helper ahead of the flag: jit_warmup_triton_helper.py:501-503)",
    ),
)


def stop_for(error: str) -> Stop | None:
    """The row naming a recorded model-stage error, or None."""
    for stop in STOPS:
        if re.search(stop.pattern, error):
            return stop
    return None
