"""A minimal DFlash draft model in plain torch, with the reference's semantics.

The draft never sees tokens of its own: it reads the *target's* hidden states. For every
committed position, the outputs of the target layers named by ``target_layer_ids`` are
concatenated, projected by ``fc`` and normalised by ``hidden_norm``: these are the context
features. To draft a block, the last committed token followed by ``block_size - 1``
``mask_token_id`` slots is embedded with the target's embedding; each draft layer lets the
block's queries attend over the context keys/values followed by the block's own, with no causal
mask inside the block (full-attention layers), and the target's LM head turns the last
``block_size - 1`` hidden states into draft logits.

Parameter names match the reference checkpoints (``fc``, ``hidden_norm``, ``layers.N.*``,
``norm``), so a z-lab safetensors file loads as is. Semantics follow z-lab/dflash 0.1.0
``dflash/model.py``; the code is this project's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class DraftConfig:
    """The fields of a draft's config.json that the model uses."""

    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    rms_norm_eps: float
    rope_theta: float
    target_layer_ids: tuple[int, ...]
    block_size: int
    mask_token_id: int
    layer_types: tuple[str, ...]
    sliding_window: int | None
    is_causal: bool | None

    @classmethod
    def from_dict(cls, cfg: dict[str, Any]) -> DraftConfig:
        """Read a DFlash config (``dflash_config`` first, then the top level, as the reference)."""
        dfc = cfg.get("dflash_config") or {}

        def value(key: str, default: Any = None) -> Any:
            return dfc.get(key, cfg.get(key, default))

        heads = int(cfg["num_attention_heads"])
        hidden = int(cfg["hidden_size"])
        rope = cfg.get("rope_parameters") or {}
        theta = cfg.get("rope_theta", rope.get("rope_theta", 10000.0))
        layers = int(cfg["num_hidden_layers"])
        return cls(
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=int(cfg.get("num_key_value_heads", heads)),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            intermediate_size=int(cfg["intermediate_size"]),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=float(theta),
            target_layer_ids=tuple(int(t) for t in value("target_layer_ids")),
            block_size=int(value("block_size", 16)),
            mask_token_id=int(value("mask_token_id")),
            layer_types=tuple(cfg.get("layer_types") or ["full_attention"] * layers),
            sliding_window=cfg.get("sliding_window"),
            is_causal=cfg.get("is_causal"),
        )


class RMSNorm(nn.Module):
    """Root-mean-square norm with a learned scale (Qwen3's, computed in float32)."""

    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Swap and negate the two halves of the last dimension (the RoPE convention of Qwen3)."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class Rotary(nn.Module):
    """Rotary position embeddings: cos/sin tables for given absolute positions."""

    def __init__(self, head_dim: int, theta: float) -> None:
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        inv_freq: torch.Tensor = self.inv_freq  # type: ignore[assignment]
        freqs = positions.float()[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)


class DraftCache:
    """Per-layer keys/values of the context positions committed so far.

    Block keys/values are appended during a draft step and cropped away afterwards: only
    context (committed) positions are kept, so a key's index is its absolute position.
    """

    def __init__(self, num_layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * num_layers
        self.values: list[torch.Tensor | None] = [None] * num_layers

    def length(self) -> int:
        """Return the number of cached positions."""
        k = self.keys[0]
        return 0 if k is None else int(k.shape[-2])

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Append this step's keys/values for ``layer`` and return everything cached."""
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is not None and old_v is not None:
            k, v = torch.cat([old_k, k], dim=-2), torch.cat([old_v, v], dim=-2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def crop(self, length: int) -> None:
        """Keep the first ``length`` positions."""
        for i, (k, v) in enumerate(zip(self.keys, self.values, strict=True)):
            if k is not None and v is not None:
                self.keys[i], self.values[i] = k[..., :length, :], v[..., :length, :]


class Attention(nn.Module):
    """Block queries over [context; block] keys and values."""

    def __init__(self, cfg: DraftConfig, layer: int) -> None:
        super().__init__()
        h, d = cfg.hidden_size, cfg.head_dim
        self.layer, self.head_dim = layer, d
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.q_proj = nn.Linear(h, self.heads * d, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)
        self.q_norm = RMSNorm(d, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(d, cfg.rms_norm_eps)
        kind = cfg.layer_types[layer] if layer < len(cfg.layer_types) else "full_attention"
        sliding = kind == "sliding_attention"
        # The reference is causal only in sliding layers unless the config says otherwise.
        self.is_causal = sliding if cfg.is_causal is None else bool(cfg.is_causal)
        self.window = cfg.sliding_window if sliding else None

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        cache: DraftCache | None,
    ) -> torch.Tensor:
        b, q_len, _ = x.shape
        kv_in = torch.cat([context, x], dim=1)
        q = self.q_norm(self.q_proj(x).view(b, q_len, self.heads, self.head_dim)).transpose(1, 2)
        k = self.k_proj(kv_in).view(b, kv_in.shape[1], self.kv_heads, self.head_dim)
        k = self.k_norm(k).transpose(1, 2)
        v = self.v_proj(kv_in).view(b, kv_in.shape[1], self.kv_heads, self.head_dim)
        v = v.transpose(1, 2)
        cos, sin = rope  # positions of [context; block]; queries take the last q_len rows
        q = q * cos[-q_len:] + rotate_half(q) * sin[-q_len:]
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            k, v = cache.update(self.layer, k, v)
        mask = self._mask(q_len, k.shape[-2], x.device)
        if self.kv_heads != self.heads:
            repeat = self.heads // self.kv_heads
            k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, scale=1.0 / math.sqrt(self.head_dim)
        )
        return self.o_proj(out.transpose(1, 2).reshape(b, q_len, -1))

    def _mask(self, q_len: int, k_len: int, device: torch.device) -> torch.Tensor | None:
        """Return the visibility mask of sliding or causal layers (None: see everything)."""
        if not self.is_causal and self.window is None:
            return None
        q_pos = (k_len - q_len + torch.arange(q_len, device=device))[:, None]
        k_pos = torch.arange(k_len, device=device)[None, :]
        visible = torch.ones(q_len, k_len, dtype=torch.bool, device=device)
        if self.is_causal:
            visible &= k_pos <= q_pos
        if self.window is not None:
            visible &= (q_pos - k_pos) < self.window
            if not self.is_causal:
                visible &= (k_pos - q_pos) < self.window
        return visible


class MLP(nn.Module):
    """SwiGLU feed-forward."""

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DraftLayer(nn.Module):
    """Pre-norm attention and MLP; the context enters attention unnormalised by this layer."""

    def __init__(self, cfg: DraftConfig, layer: int) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(
        self,
        h: torch.Tensor,
        context: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        cache: DraftCache | None,
    ) -> torch.Tensor:
        h = h + self.self_attn(self.input_layernorm(h), context, rope, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class DFlashDraft(nn.Module):
    """The draft model: context features + an embedded block in, block hidden states out."""

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        self.cfg = cfg
        width = len(cfg.target_layer_ids) * cfg.hidden_size
        self.fc = nn.Linear(width, cfg.hidden_size, bias=False)
        self.hidden_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.layers = nn.ModuleList(DraftLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_theta)

    def forward(
        self,
        target_features: torch.Tensor,
        block_embeddings: torch.Tensor,
        first_position: int,
        cache: DraftCache | None = None,
    ) -> torch.Tensor:
        """Return the block's hidden states.

        ``target_features`` are the concatenated target layer outputs of the context positions
        not yet in ``cache`` (starting at absolute position ``first_position``);
        ``block_embeddings`` the embedded block that follows them.
        """
        context = self.hidden_norm(self.fc(target_features))
        length = context.shape[1] + block_embeddings.shape[1]
        positions = torch.arange(
            first_position, first_position + length, device=block_embeddings.device
        )
        rope = self.rotary(positions, block_embeddings.dtype)
        h = block_embeddings
        for layer in self.layers:
            h = layer(h, context, rope, cache)
        return self.norm(h)


def context_features(
    hidden_states: tuple[torch.Tensor, ...], layer_ids: tuple[int, ...]
) -> torch.Tensor:
    """Concatenate the outputs of target layers ``t`` (``hidden_states[t + 1]``)."""
    return torch.cat([hidden_states[t + 1] for t in layer_ids], dim=-1)
