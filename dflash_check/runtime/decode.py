"""Speculative decoding with a DFlash draft, and the plain target-only decode it must equal.

One verify step: the draft proposes ``block_size - 1`` tokens after the last committed token;
the target scores the whole block in one forward; the longest prefix on which the draft agrees
with the target is accepted, and the target's own next token (the bonus) is appended. So every
step commits ``accepted + 1`` tokens, and with greedy verification the output is exactly the
target's greedy output. With a temperature, tokens are accepted by the standard rejection rule
(accept x with probability min(1, p(x)/q(x)), else resample from max(0, p - q)), which keeps
the target's sampling distribution.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from dflash_check.runtime.draft_model import DFlashDraft, DraftCache, context_features


@dataclass
class DecodeResult:
    """What one decode produced."""

    output_ids: list[int]
    """Generated token ids (the prompt excluded)."""
    seconds: float
    """Wall time of the decode, prefill included."""
    acceptance_lengths: list[int] = field(default_factory=list)
    """Tokens committed per target verify step (accepted draft tokens + the bonus token)."""
    drafted: list[int] = field(default_factory=list)
    """Draft tokens proposed per verify step (block size - 1, or fewer at the end)."""


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work so that wall times are honest."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _pick(
    logits: torch.Tensor, temperature: float, generator: torch.Generator | None
) -> torch.Tensor:
    """Choose tokens from logits: argmax, or a sample at ``temperature``."""
    if temperature <= 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    flat = torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1, generator=generator)
    return flat.view(probs.shape[:-1])


def _new_cache(target: Any) -> Any:
    """Return an empty KV cache for the target."""
    from transformers import DynamicCache

    return DynamicCache(config=target.config)


def _crop(cache: Any, length: int) -> None:
    """Keep the first ``length`` positions of a transformers cache.

    A negative argument means "remove that many" in every transformers version we support,
    while a positive one changed meaning (and was refused) across versions.
    """
    remove = cache.get_seq_length() - length
    if remove > 0:
        cache.crop(-remove)


def _cache_kwarg(target: Any) -> str:
    """Return the name of the forward argument that takes the KV cache.

    transformers 5.x renames ``past_key_values`` to ``cache`` (with a deprecation period).
    """
    import inspect

    params = inspect.signature(target.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _stopped_at(tokens: list[int], stop_ids: set[int]) -> int | None:
    """Return the index of the first stop token in ``tokens``, if any."""
    for i, t in enumerate(tokens):
        if t in stop_ids:
            return i
    return None


@torch.inference_mode()
def plain_decode(
    target: Any,
    prompt_ids: list[int],
    max_new_tokens: int,
    stop_ids: set[int],
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> DecodeResult:
    """Decode with the target alone, one token per forward (the baseline)."""
    device = target.device
    _sync(device)
    start = time.perf_counter()
    cache = _new_cache(target)
    kv = _cache_kwarg(target)
    ids = torch.tensor([prompt_ids], device=device)
    positions = torch.arange(len(prompt_ids), device=device)[None]
    out: list[int] = []
    while len(out) < max_new_tokens:
        logits = target(
            input_ids=ids, position_ids=positions, use_cache=True, logits_to_keep=1, **{kv: cache}
        ).logits
        nxt = int(_pick(logits[:, -1], temperature, generator)[0])
        out.append(nxt)
        if nxt in stop_ids:
            break
        position = len(prompt_ids) + len(out) - 1
        ids = torch.tensor([[nxt]], device=device)
        positions = torch.tensor([[position]], device=device)
    _sync(device)
    return DecodeResult(out, time.perf_counter() - start)


def _accept_sampled(
    draft_tokens: torch.Tensor,
    draft_probs: torch.Tensor,
    target_probs: torch.Tensor,
    generator: torch.Generator | None,
) -> tuple[int, int]:
    """Apply the rejection rule; return (accepted count, next token from the target)."""
    n = draft_tokens.shape[0]
    for i in range(n):
        x = int(draft_tokens[i])
        p, q = float(target_probs[i, x]), float(draft_probs[i, x])
        u = float(torch.rand((), generator=generator, device=target_probs.device))
        if q > 0 and u * q < p:
            continue
        residual = (target_probs[i] - draft_probs[i]).clamp_min(0)
        total = residual.sum()
        dist = residual / total if total > 0 else target_probs[i]
        token = int(torch.multinomial(dist, 1, generator=generator))
        return i, token
    return n, int(torch.multinomial(target_probs[n], 1, generator=generator))


@torch.inference_mode()
def speculative_decode(
    target: Any,
    draft: DFlashDraft,
    prompt_ids: list[int],
    max_new_tokens: int,
    stop_ids: set[int],
    block_size: int,
    mask_token_id: int,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> DecodeResult:
    """Decode with DFlash drafting and target verification."""
    device = target.device
    layer_ids = draft.cfg.target_layer_ids
    embed = target.get_input_embeddings()
    head = target.get_output_embeddings()
    _sync(device)
    t0 = time.perf_counter()
    n_prompt = len(prompt_ids)
    max_length = n_prompt + max_new_tokens
    target_cache = _new_cache(target)
    kv = _cache_kwarg(target)
    draft_cache = DraftCache(draft.cfg.num_hidden_layers)

    # Prefill: the target reads the prompt; its layer outputs become the first context.
    prompt = torch.tensor([prompt_ids], device=device)
    out = target(
        input_ids=prompt,
        position_ids=torch.arange(n_prompt, device=device)[None],
        use_cache=True,
        output_hidden_states=True,
        **{kv: target_cache},
    )
    tokens = [*prompt_ids, int(_pick(out.logits[:, -1], temperature, generator)[0])]
    features = context_features(out.hidden_states, layer_ids)
    result = DecodeResult([], 0.0)
    start = n_prompt  # position of the last committed token, not yet seen by the target
    stopped = tokens[start] in stop_ids
    while start + 1 < max_length and not stopped:
        size = min(block_size, max_length - start)
        block = torch.full((1, size), mask_token_id, device=device, dtype=torch.long)
        block[0, 0] = tokens[start]
        draft_probs = None
        if size > 1:
            hidden = draft(
                features, embed(block), first_position=start - features.shape[1], cache=draft_cache
            )
            draft_cache.crop(start)  # keep context keys only; the block is re-drafted
            logits = head(hidden[:, 1:]).float()
            if temperature > 0:
                draft_probs = torch.softmax(logits / temperature, dim=-1)[0]
                block[0, 1:] = torch.multinomial(draft_probs, 1, generator=generator)[:, 0]
            else:
                block[0, 1:] = logits.argmax(-1)[0]
        out = target(
            input_ids=block,
            position_ids=torch.arange(start, start + size, device=device)[None],
            use_cache=True,
            output_hidden_states=True,
            **{kv: target_cache},
        )
        proposed = block[0, 1:]
        if temperature > 0:
            target_probs = torch.softmax(out.logits[0].float() / temperature, dim=-1)
            if draft_probs is not None:
                accepted, bonus = _accept_sampled(proposed, draft_probs, target_probs, generator)
            else:
                accepted = 0
                bonus = int(torch.multinomial(target_probs[0], 1, generator=generator))
        else:
            posterior = out.logits[0].argmax(-1)
            agree = (proposed == posterior[:-1]).int().cumprod(0)
            accepted = int(agree.sum())
            bonus = int(posterior[accepted])
        new = [int(t) for t in proposed[:accepted]] + [bonus]
        new = new[: max_length - start - 1]  # tokens[start] is already committed
        stop = _stopped_at(new, stop_ids)
        if stop is not None:
            new, stopped = new[: stop + 1], True
        tokens += new
        produced = len(new)
        result.acceptance_lengths.append(produced)
        result.drafted.append(size - 1)
        # The target's cache keeps only committed positions; their layer outputs become the
        # context of the next block.
        _crop(target_cache, start + produced)
        features = context_features(out.hidden_states, layer_ids)[:, :produced]
        start += produced
    _sync(device)
    result.seconds = time.perf_counter() - t0
    result.output_ids = tokens[n_prompt:max_length]
    return result
