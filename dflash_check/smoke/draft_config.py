"""A DFlash or DFlash2 draft's config.json as the bundled smoke model reads it: each field the
computation uses, where it is read from, and what it does (``DraftConfig``). Plain Python, so a
config is judged before torch is imported; the model itself is in ``draft_model.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

DFLASH2_ARCHITECTURE = "DFlash2DraftModel"

# RoPE types whose tables depend only on the config (no re-scaling with the sequence length).
STATIC_ROPE_TYPES = ("default", "linear", "yarn", "llama3")


class DraftConfigError(ValueError):
    """A draft config the bundled model cannot be built from (the message says why)."""


@dataclass(frozen=True)
class DraftConfig:
    """The fields of a draft's config.json that the model uses, and what each one does.

    DFlash keys are read from ``dflash_config`` first, then from the top level, as the
    reference's ``_draft_value`` does.
    """

    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    rms_norm_eps: float
    vocab_size: int
    target_layer_ids: tuple[int, ...]
    """Target layers whose outputs (``hidden_states[t + 1]``) are the context features."""
    block_size: int
    mask_token_id: int
    """Token id of the block's undrafted slots."""
    layer_types: tuple[str, ...]
    sliding_window: int | None
    is_causal: bool | None
    """None: causal only in sliding layers (the reference's default)."""
    attention_bias: bool = False
    hidden_act: str = "silu"
    input_embedding_scale: float = 1.0
    """The block is embedded as ``raw target embedding × input_embedding_scale`` (never the
    target's own scaled embedding, e.g. Gemma's × √hidden)."""
    output_multiplier: float = 1.0
    """Draft logits are ``target LM head(hidden) × output_multiplier``…"""
    final_logit_softcapping: float | None = None
    """…then ``tanh(logits / c) × c`` when set and positive."""
    dflash2: bool = False
    conv_kernel_size: int = 0
    conv_group_size: int = 0
    selector_rank: int = 0
    selector_top_k: int = 0
    rope: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The raw config, for transformers' RoPE table functions."""

    @property
    def architecture(self) -> str:
        """Return the draft's architecture name, as its config.json spells it."""
        return DFLASH2_ARCHITECTURE if self.dflash2 else "DFlashDraftModel"

    @classmethod
    def from_dict(cls, cfg: dict[str, Any]) -> DraftConfig:
        """Read a DFlash or DFlash2 config; raise ``DraftConfigError`` naming the field."""
        dfc = cfg.get("dflash_config") or {}

        def value(key: str, default: Any = None) -> Any:
            return dfc.get(key, cfg.get(key, default))

        def number(key: str, kind: Callable[[Any], Any], default: Any = None) -> Any:
            raw = value(key, default)
            if raw is None or isinstance(raw, bool):
                raise DraftConfigError(f"field '{key}' is missing or not a number")
            try:
                return kind(raw)
            except (TypeError, ValueError):
                raise DraftConfigError(f"field '{key}' is not a number ({raw!r})") from None

        heads = number("num_attention_heads", int)
        hidden = number("hidden_size", int)
        layers = number("num_hidden_layers", int)
        ids = value("target_layer_ids")
        if not isinstance(ids, list) or not ids:
            raise DraftConfigError("field 'target_layer_ids' is missing or empty")
        dflash2 = DFLASH2_ARCHITECTURE in (cfg.get("architectures") or [])
        softcap = value("final_logit_softcapping")
        config = cls(
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=number("num_key_value_heads", int, heads),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            intermediate_size=number("intermediate_size", int),
            rms_norm_eps=number("rms_norm_eps", float, 1e-6),
            vocab_size=number("vocab_size", int),
            target_layer_ids=tuple(int(t) for t in ids),
            block_size=number("block_size", int, 16),
            mask_token_id=number("mask_token_id", int),
            layer_types=tuple(cfg.get("layer_types") or ["full_attention"] * layers),
            sliding_window=cfg.get("sliding_window"),
            is_causal=cfg.get("is_causal"),
            attention_bias=bool(cfg.get("attention_bias", False)),
            hidden_act=str(cfg.get("hidden_act") or "silu"),
            input_embedding_scale=number("input_embedding_scale", float, 1.0),
            output_multiplier=number("output_multiplier", float, 1.0),
            final_logit_softcapping=None if softcap is None else float(softcap),
            dflash2=dflash2,
            conv_kernel_size=number("conv_kernel_size", int) if dflash2 else 0,
            conv_group_size=number("conv_group_size", int) if dflash2 else 0,
            selector_rank=number("selector_rank", int) if dflash2 else 0,
            selector_top_k=number("selector_top_k", int) if dflash2 else 0,
            rope=cfg,
        )
        if dflash2 and (config.conv_group_size <= 0 or hidden % config.conv_group_size):
            raise DraftConfigError(
                f"conv_group_size {config.conv_group_size} does not divide hidden_size {hidden}"
            )
        return config
