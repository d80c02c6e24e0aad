"""What transformers' config classes do to a draft config's keys when an engine loads the
config through them (vLLM and SGLang load a draft's ``config.json`` with the class its
``model_type`` names; the MLX reference reads the JSON as it is).

One fact so far: the Qwen2 / Qwen3 text classes keep a stated ``sliding_window`` only with
``use_sliding_window`` true, and set it to None otherwise, whatever ``layer_types`` says. A
DFlash draft that states sliding layers and a window but not the flag (the z-lab Qwen3.5
drafts: ``"use_sliding_window": null``) reaches the engine's draft model with no window, and
the engine refuses to build its sliding layers (``check/rules/draft.py``, DF050). The oracle
saw it on every release it ran (``conformance/results/oracle``, ``zlab-qwen3.5-35b-a3b``:
vLLM's "DFlash sliding attention requires a window size", SGLang's "DFLASH sliding_attention
layers require config.sliding_window").
"""

from __future__ import annotations

WINDOW_NEEDS_FLAG: frozenset[str] = frozenset({"qwen2", "qwen3", "qwen3_moe"})
"""``model_type`` values whose class drops ``sliding_window`` without ``use_sliding_window``."""

WINDOW_NEEDS_FLAG_SOURCE = (
    "transformers==5.19.0:src/transformers/models/qwen3/configuration_qwen3.py:87 "
    "(`self.sliding_window = self.sliding_window if self.use_sliding_window else None`; "
    "qwen2/configuration_qwen2.py:84, qwen3_moe/configuration_qwen3_moe.py:115; the same lines "
    "in 5.20.2 and 5.22.2, the releases vLLM 0.33.0 and 0.34.0 were read with)"
)


def window_as_loaded(
    model_type: str | None, window: int | None, use_sliding_window: object
) -> int | None:
    """Return the top-level ``sliding_window`` as the config class for ``model_type`` keeps
    it: None for a Qwen2/Qwen3 class without a true ``use_sliding_window``."""
    if model_type in WINDOW_NEEDS_FLAG and use_sliding_window is not True:
        return None
    return window
