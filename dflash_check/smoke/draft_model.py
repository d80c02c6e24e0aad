"""DFlash and DFlash2 draft models in plain torch, with the reference's semantics.

The draft never sees tokens of its own: it reads the *target's* hidden states. For every
committed position, the outputs of the target layers named by ``target_layer_ids`` are
concatenated, projected by ``fc`` and normalised by ``hidden_norm``: these are the context
features. To draft a block, the last committed token followed by ``block_size - 1``
``mask_token_id`` slots is embedded with the target's embedding; each draft layer lets the
block's queries attend over the context keys/values followed by the block's own, with no causal
mask inside the block (full-attention layers), and the target's LM head turns the last
``block_size - 1`` hidden states into draft logits.

DFlash2 adds, in every layer, a grouped dynamic causal convolution over the block around the
attention and around the MLP, and replaces the per-position argmax by a candidate selector: the
top ``selector_top_k`` tokens of each position are rescored with a low-rank bilinear term
between the previous choice and the candidate, and the path is chosen left to right.

Parameter names match the reference checkpoints (``fc``, ``hidden_norm``, ``layers.N.*``,
``norm``, ``candidate_selector.*``), so a z-lab safetensors file loads as is. Semantics follow
z-lab/dflash 0.1.0 ``dflash/model.py``; the code is this project's own.

How a draft config's fields map to the computation is written once, in ``DraftConfig``
(``draft_config.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from dflash_check.smoke.draft_config import (
    DFLASH2_ARCHITECTURE,
    STATIC_ROPE_TYPES,
    DraftConfig,
    DraftConfigError,
)

# The config's names stay importable from here, beside the model they build.
__all__ = [
    "DFLASH2_ARCHITECTURE",
    "DFlashDraft",
    "DraftCache",
    "DraftConfig",
    "DraftConfigError",
    "checkpoint_key",
    "context_features",
]


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


def rope_tables(cfg: DraftConfig) -> tuple[torch.Tensor, float]:
    """Return (inverse frequencies, attention scaling) of the draft's RoPE.

    The default type is computed here; scaled types (YaRN, linear, llama3) come from
    transformers' own table functions, applied to the draft config as the reference does.
    """
    raw = cfg.rope
    params = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    kind = params.get("rope_type") or params.get("type") or "default"
    if kind not in STATIC_ROPE_TYPES:
        raise DraftConfigError(f"RoPE type {kind!r} is not supported by the smoke run")
    if kind == "default":
        theta = float(raw.get("rope_theta", params.get("rope_theta", 10000.0)))
        steps = torch.arange(0, cfg.head_dim, 2, dtype=torch.float32) / cfg.head_dim
        return 1.0 / (theta**steps), 1.0
    from transformers import Qwen3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = Qwen3Config(**{k: v for k, v in raw.items() if k != "dflash_config"})
    inv_freq, scaling = ROPE_INIT_FUNCTIONS[kind](config, None)
    return inv_freq.float(), float(scaling)


class Rotary(nn.Module):
    """Rotary position embeddings: cos/sin tables for given absolute positions."""

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        inv_freq, self.scaling = rope_tables(cfg)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        inv_freq: torch.Tensor = self.inv_freq  # type: ignore[assignment]
        freqs = positions.float()[:, None] * inv_freq[None, :].float()
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * self.scaling).to(dtype), (emb.sin() * self.scaling).to(dtype)


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
        h, d, bias = cfg.hidden_size, cfg.head_dim, cfg.attention_bias
        self.layer, self.head_dim = layer, d
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.q_proj = nn.Linear(h, self.heads * d, bias=bias)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.o_proj = nn.Linear(self.heads * d, h, bias=bias)
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
    """Gated feed-forward (SwiGLU with the default ``hidden_act``)."""

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        from transformers.activations import ACT2FN

        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.act = ACT2FN[cfg.hidden_act]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


def grouped_causal_convolve(
    hidden: torch.Tensor, dynamic: torch.Tensor, base: torch.Tensor, group_size: int
) -> torch.Tensor:
    """Convolve the block causally, per channel group, with a static plus a dynamic kernel.

    ``hidden`` is (batch, length, hidden); ``base`` (kernel, hidden) is shared by all
    positions; ``dynamic`` (batch, length, kernel, groups) is one scalar per position, tap and
    group. Tap ``o`` reads the position ``o`` steps back (zeros before the block).
    """
    batch, length, size = hidden.shape
    groups = size // group_size
    blocks = hidden.view(batch, length, groups, group_size)
    dynamic = dynamic.reshape(batch, length, base.shape[0], groups, 1)
    out = torch.zeros_like(blocks)
    for tap in range(base.shape[0]):
        shifted = blocks if tap == 0 else F.pad(blocks[:, :-tap], (0, 0, 0, 0, tap, 0))
        kernel = base[tap].view(1, 1, groups, group_size).to(hidden.dtype)
        out = out + kernel * shifted
        out = torch.addcmul(out, dynamic[:, :, tap], shifted)
    return out.view_as(hidden)


class GroupedDynamicCausalConv(nn.Module):
    """DFlash2's convolution pair around a sub-layer: one before it, one after it.

    Both kernels' dynamic parts are projected from the sub-layer's input.
    """

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        self.kernel_size, self.group_size = cfg.conv_kernel_size, cfg.conv_group_size
        groups = cfg.hidden_size // cfg.conv_group_size
        self.base_kernel = nn.Parameter(torch.zeros(2, cfg.conv_kernel_size, cfg.hidden_size))
        self.kernel_projection = nn.Linear(
            cfg.hidden_size, 2 * cfg.conv_kernel_size * groups, bias=False
        )

    def around(self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], torch.Tensor]) -> Any:
        """Return ``after(sublayer(before(x)))``."""
        groups = x.shape[-1] // self.group_size
        dynamic = self.kernel_projection(x).view(*x.shape[:-1], 2, self.kernel_size, groups)
        before = grouped_causal_convolve(
            x, dynamic[..., 0, :, :], self.base_kernel[0], self.group_size
        )
        return grouped_causal_convolve(
            sublayer(before), dynamic[..., 1, :, :], self.base_kernel[1], self.group_size
        )


class DraftLayer(nn.Module):
    """Pre-norm attention and MLP; the context enters attention unnormalised by this layer."""

    def __init__(self, cfg: DraftConfig, layer: int) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)
        self.attention_conv = GroupedDynamicCausalConv(cfg) if cfg.dflash2 else None
        self.mlp_conv = GroupedDynamicCausalConv(cfg) if cfg.dflash2 else None

    def forward(
        self,
        h: torch.Tensor,
        context: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        cache: DraftCache | None,
    ) -> torch.Tensor:
        def attend(x: torch.Tensor) -> torch.Tensor:
            return self.self_attn(x, context, rope, cache)

        x = self.input_layernorm(h)
        h = h + (self.attention_conv.around(x, attend) if self.attention_conv else attend(x))
        x = self.post_attention_layernorm(h)
        return h + (self.mlp_conv.around(x, self.mlp) if self.mlp_conv else self.mlp(x))


class CandidateSelector(nn.Module):
    """DFlash2's path choice over each position's top-k candidates.

    score(candidate c at position p | previous token a) = logit(c) +
    <predecessor(a) ⊙ projection(hidden_p), successor(c)>.
    """

    def __init__(self, cfg: DraftConfig) -> None:
        super().__init__()
        self.top_k = cfg.selector_top_k
        self.predecessor_codebook = nn.Embedding(cfg.vocab_size, cfg.selector_rank)
        self.successor_codebook = nn.Embedding(cfg.vocab_size, cfg.selector_rank)
        self.hidden_projection = nn.Linear(cfg.hidden_size, cfg.selector_rank, bias=False)

    def select(
        self,
        hidden: torch.Tensor,
        logits: torch.Tensor,
        anchor: torch.Tensor,
        temperature: float,
        generator: torch.Generator | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Return (tokens, candidates, proposal probabilities over the candidates or None)."""
        unary, candidates = torch.topk(logits, min(self.top_k, logits.shape[-1]), dim=-1)
        projected = self.hidden_projection(hidden)
        previous = anchor
        path, rows = [], []
        for p in range(projected.shape[1]):
            left = self.predecessor_codebook(previous) * projected[:, p]
            right = self.successor_codebook(candidates[:, p])
            scores = unary[:, p] + torch.einsum("br,bkr->bk", left, right)
            if temperature > 0:
                q = torch.softmax(scores.float() / temperature, dim=-1)
                index = torch.multinomial(q, 1, generator=generator)[:, 0]
                rows.append(q)
            else:
                index = scores.argmax(-1)
            previous = candidates[:, p].gather(-1, index[:, None])[:, 0]
            path.append(previous)
        probs = torch.stack(rows, dim=1) if rows else None
        return torch.stack(path, dim=1), candidates, probs


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
        self.rotary = Rotary(cfg)
        self.candidate_selector = CandidateSelector(cfg) if cfg.dflash2 else None

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

    def logits(self, hidden: torch.Tensor, head: nn.Module) -> torch.Tensor:
        """Draft logits from block hidden states through the target's LM head."""
        logits = head(hidden).float() * self.cfg.output_multiplier
        cap = self.cfg.final_logit_softcapping
        if cap is not None and cap > 0:
            logits = torch.tanh(logits / cap) * cap
        return logits


def checkpoint_key(name: str) -> str:
    """Map a reference checkpoint tensor name to this model's parameter name.

    DFlash2 checkpoints store the selector's codebooks as bare tensors (the reference maps
    them onto ``nn.Embedding`` weights when it loads).
    """
    if name in ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"):
        return name + ".weight"
    return name


def context_features(
    hidden_states: tuple[torch.Tensor, ...], layer_ids: tuple[int, ...]
) -> torch.Tensor:
    """Concatenate the outputs of target layers ``t`` (``hidden_states[t + 1]``)."""
    return torch.cat([hidden_states[t + 1] for t in layer_ids], dim=-1)
