"""What transformers' config classes hand an engine: LagunaConfig's MLP layout."""

from __future__ import annotations

import json

import pytest

from dflash_check.knowledge.config_classes import laguna_mlp_as_loaded


def stated(**kv: object) -> tuple[tuple[str, str], ...]:
    """(key, JSON text) as ``views.stated`` reads them."""
    return tuple((k, json.dumps(v)) for k, v in kv.items())


@pytest.mark.parametrize(
    ("model_type", "mlp", "loaded"),
    [
        # Neither key: LagunaConfig's defaults (configuration_laguna.py:110, :132-133).
        ("laguna", stated(), (("dense", "sparse", "sparse"), 256)),
        ("laguna", stated(num_experts=0), (("dense", "sparse", "sparse"), 0)),
        ("laguna", stated(mlp_layer_types=["dense"] * 3), (("dense",) * 3, 256)),
        # Another class fills in nothing this reading knows of.
        ("qwen3", stated(), None),
        (None, stated(mlp_layer_types=["dense"] * 3), None),
        # Shapes the class would not take: not read here.
        ("laguna", stated(mlp_layer_types="dense"), None),
        ("laguna", stated(num_experts="256"), None),
        ("laguna", stated(num_experts=True), None),
    ],
)
def test_laguna_mlp_as_loaded(
    model_type: str | None,
    mlp: tuple[tuple[str, str], ...],
    loaded: tuple[tuple[str, ...], int] | None,
) -> None:
    assert laguna_mlp_as_loaded(model_type, 3, mlp) == loaded
