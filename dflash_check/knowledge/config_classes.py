"""What transformers' config classes do to a draft config's keys when an engine loads the
config through them (vLLM and SGLang load a draft's ``config.json`` with the class its
``model_type`` names; the MLX reference reads the JSON as it is).

Two facts so far. The Qwen2 / Qwen3 text classes keep a stated ``sliding_window`` only with
``use_sliding_window`` true, and set it to None otherwise, whatever ``layer_types`` says. A
DFlash draft that states sliding layers and a window but not the flag (the z-lab Qwen3.5
drafts: ``"use_sliding_window": null``) reaches the engine's draft model with no window, and
the engine refuses to build its sliding layers (``check/rules/draft.py``, DF050). The oracle
saw it on every release it ran (``conformance/results/oracle``, ``zlab-qwen3.5-35b-a3b``:
vLLM's "DFlash sliding attention requires a window size", SGLang's "DFLASH sliding_attention
layers require config.sliding_window").

And ``LagunaConfig`` fills an unstated ``mlp_layer_types`` (first layer dense, the rest sparse)
and ``num_experts`` (256): a Laguna DFlash draft that states neither reaches vLLM's model with
MoE layers (SGLang's Laguna DFlash class builds every layer dense), named like the target's
(``check/rules/formats.py``, DF093; the oracle's ``laguna-dflash`` case: "Duplicate layer
name").
"""

from __future__ import annotations

import json

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


# -- transformers' LagunaConfig: the MoE layout a Laguna config reaches vLLM's model with -------

LAGUNA_MODEL_TYPE = "laguna"
"""The ``model_type`` transformers loads with ``LagunaConfig`` (a Laguna target, and a Laguna
DFlash draft, which states the same ``model_type``)."""

LAGUNA_DEFAULT_EXPERTS = 256
"""``LagunaConfig.num_experts`` when the config states none."""

LAGUNA_DEFAULTS_SOURCE = (
    "transformers==5.19.0:src/transformers/models/laguna/configuration_laguna.py:110, :124, "
    ":132-133 (num_experts 256; mlp_layer_types None, filled as ['dense'] + ['sparse'] * "
    "(num_hidden_layers - 1); the same lines in 5.20.2 and 5.22.2, the releases vLLM 0.33.0 "
    "and 0.34.0 were read with)"
)

MLP_KEYS = ("mlp_layer_types", "num_experts")
"""The keys that say which of a Laguna model's layers are MoE (``views.stated`` reads them)."""


def laguna_mlp_as_loaded(
    model_type: str | None, num_hidden_layers: int | None, mlp: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, ...], int] | None:
    """Return (``mlp_layer_types``, ``num_experts``) as ``LagunaConfig`` hands them to the
    engine's model, from what the config states (``mlp``: (key, JSON text) of ``MLP_KEYS``);
    None where the config is not loaded with ``LagunaConfig`` or states them in a shape the
    class would not take (another check's concern, not this reading's). A stated null reads as
    unstated: the class fills a null ``mlp_layer_types`` the same way."""
    if model_type != LAGUNA_MODEL_TYPE or num_hidden_layers is None:
        return None
    stated = {key: json.loads(text) for key, text in mlp}
    types = stated.get("mlp_layer_types")
    if types is None:
        types = ["dense"] + ["sparse"] * (num_hidden_layers - 1)
    experts = stated.get("num_experts", LAGUNA_DEFAULT_EXPERTS)
    if (
        not isinstance(types, list)
        or not all(isinstance(t, str) for t in types)
        or isinstance(experts, bool)
        or not isinstance(experts, int)
    ):
        return None
    return tuple(types), experts
