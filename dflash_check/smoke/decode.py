"""Speculative decoding with a block drafter, and the plain target-only decode it must equal.

One verify step: the drafter proposes ``block_size - 1`` tokens after the last committed token;
the target scores the whole block in one forward; the longest prefix on which the draft agrees
with the target is accepted, and the target's own next token (the bonus) is appended. So every
step commits ``accepted + 1`` tokens, and with greedy verification the output is exactly the
target's greedy output. With a temperature, tokens are accepted by the standard rejection rule
(accept x with probability min(1, p(x)/q(x)), else resample from max(0, p - q)), which keeps
the target's sampling distribution.

The decoder does not know what drafts: a ``Drafter`` proposes a block from the committed tokens
and the target's hidden states (``DFlashDrafter`` is the DFlash/DFlash2 one). The target's cache
is rolled back exactly after every step, per layer type (``target_cache``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from torch.nn import functional as F

from dflash_check.smoke.cache import Rollback, TargetCache
from dflash_check.smoke.draft_model import DFlashDraft, DraftCache, context_features


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
    rollbacks: dict[str, Rollback] = field(default_factory=dict)
    """The rollback each layer kind of the target got."""
    replays: int = 0
    """Extra target forwards that rebuilt recurrent states after partly accepted blocks."""
    replayed_tokens: int = 0


@dataclass(frozen=True)
class Proposal:
    """A drafted block: tokens, and the proposal distribution when sampling."""

    tokens: torch.Tensor
    """(size - 1,) token ids after the block's first (committed) token."""
    probs: torch.Tensor | None = None
    """(size - 1, vocab) proposal probabilities, when sampling."""


class Drafter(Protocol):
    """What the decoder needs of a draft model."""

    def begin(self, prompt_ids: list[int], hidden_states: tuple[torch.Tensor, ...]) -> None:
        """Take the prefill's hidden states (the context of the first block)."""

    def propose(
        self, block: torch.Tensor, start: int, temperature: float, generator: Any
    ) -> Proposal:
        """Draft ``block[0, 1:]`` given ``block[0, 0]``, the token at position ``start``."""

    def commit(self, hidden_states: tuple[torch.Tensor, ...], produced: int) -> None:
        """Take the verify forward's hidden states of the ``produced`` committed positions."""


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


def _forward(target: Any, kv: str, cache: Any, ids: torch.Tensor, first: int, **kwargs: Any) -> Any:
    """Run the target on ``ids`` at absolute positions ``first``…, through ``cache``."""
    positions = torch.arange(first, first + ids.shape[1], device=ids.device)[None]
    return target(input_ids=ids, position_ids=positions, use_cache=True, **{kv: cache}, **kwargs)


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
    from transformers import DynamicCache

    device = target.device
    _sync(device)
    start = time.perf_counter()
    cache = DynamicCache(config=target.config)
    kv = _cache_kwarg(target)
    ids = torch.tensor([prompt_ids], device=device)
    first = 0
    out: list[int] = []
    while len(out) < max_new_tokens:
        logits = _forward(target, kv, cache, ids, first, logits_to_keep=1).logits
        nxt = int(_pick(logits[:, -1], temperature, generator)[0])
        out.append(nxt)
        if nxt in stop_ids:
            break
        first += ids.shape[1]
        ids = torch.tensor([[nxt]], device=device)
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


class DFlashDrafter:
    """A DFlash or DFlash2 draft reading the target's hidden states, on its own cache."""

    def __init__(self, draft: DFlashDraft, target: Any) -> None:
        self.draft = draft
        self.layer_ids = draft.cfg.target_layer_ids
        # The reference embeds with the raw table (not a target's scaled embedding module) and
        # uses the target's LM head module.
        self.table = target.get_input_embeddings().weight
        head = getattr(target, "lm_head", None)
        self.head = head if head is not None else target.get_output_embeddings()
        self.cache = DraftCache(draft.cfg.num_hidden_layers)
        self.features = torch.empty(0)

    def begin(self, prompt_ids: list[int], hidden_states: tuple[torch.Tensor, ...]) -> None:
        self.cache = DraftCache(self.draft.cfg.num_hidden_layers)
        self.features = context_features(hidden_states, self.layer_ids)

    def draft_logits(self, block: torch.Tensor, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the hidden states and logits of the block's drafted slots."""
        cfg = self.draft.cfg
        embedded = F.embedding(block, self.table) * cfg.input_embedding_scale
        first = start - self.features.shape[1]
        hidden = self.draft(self.features, embedded, first_position=first, cache=self.cache)
        self.cache.crop(start)  # keep context keys only; the block is re-drafted
        hidden = hidden[:, 1:]
        return hidden, self.draft.logits(hidden, self.head)

    def propose(
        self, block: torch.Tensor, start: int, temperature: float, generator: Any
    ) -> Proposal:
        hidden, logits = self.draft_logits(block, start)
        selector = self.draft.candidate_selector
        if selector is not None:
            tokens, candidates, q = selector.select(
                hidden, logits, block[:, 0], temperature, generator
            )
            probs = None
            if q is not None:  # spread the candidate distribution over the vocabulary
                dense = torch.zeros(logits.shape, dtype=q.dtype, device=q.device)
                probs = dense.scatter_add_(-1, candidates, q)[0]
            return Proposal(tokens[0], probs)
        if temperature > 0:
            probs = torch.softmax(logits / temperature, dim=-1)[0]
            return Proposal(torch.multinomial(probs, 1, generator=generator)[:, 0], probs)
        return Proposal(logits.argmax(-1)[0])

    def commit(self, hidden_states: tuple[torch.Tensor, ...], produced: int) -> None:
        self.features = context_features(hidden_states, self.layer_ids)[:, :produced]


@torch.inference_mode()
def speculative_decode(
    target: Any,
    drafter: Drafter | DFlashDraft,
    prompt_ids: list[int],
    max_new_tokens: int,
    stop_ids: set[int],
    block_size: int,
    mask_token_id: int,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> DecodeResult:
    """Decode with block drafting and target verification; the cache is rolled back exactly."""
    if isinstance(drafter, DFlashDraft):
        drafter = DFlashDrafter(drafter, target)
    device = target.device
    _sync(device)
    t0 = time.perf_counter()
    n_prompt = len(prompt_ids)
    max_length = n_prompt + max_new_tokens
    cache = TargetCache(target, block_size=block_size)
    kv = _cache_kwarg(target)

    # Prefill: the target reads the prompt; its layer outputs become the first context.
    prompt = torch.tensor([prompt_ids], device=device)
    out = _forward(target, kv, cache.cache, prompt, 0, output_hidden_states=True, logits_to_keep=1)
    tokens = [*prompt_ids, int(_pick(out.logits[:, -1], temperature, generator)[0])]
    cache.end_prefill(n_prompt)
    drafter.begin(prompt_ids, out.hidden_states)
    result = DecodeResult([], 0.0, rollbacks=cache.rollbacks())
    start = n_prompt  # position of the last committed token, not yet seen by the target
    stopped = tokens[start] in stop_ids
    while start + 1 < max_length and not stopped:
        size = min(block_size, max_length - start)
        block = torch.full((1, size), mask_token_id, device=device, dtype=torch.long)
        block[0, 0] = tokens[start]
        proposal = None
        if size > 1:
            proposal = drafter.propose(block, start, temperature, generator)
            block[0, 1:] = proposal.tokens
        snapshot = cache.snapshot()
        out = _forward(target, kv, cache.cache, block, start, output_hidden_states=True)
        proposed = block[0, 1:]
        if temperature > 0:
            target_probs = torch.softmax(out.logits[0].float() / temperature, dim=-1)
            if proposal is not None and proposal.probs is not None:
                accepted, bonus = _accept_sampled(proposed, proposal.probs, target_probs, generator)
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
        # The cache keeps only committed positions (start .. start + produced - 1 of the block).
        if produced == size:
            cache.crop(0)
        elif snapshot is None:
            cache.crop(size - produced)
        elif start + produced + 1 < max_length and not stopped:
            # A recurrent state absorbed the rejected tokens: restore it and re-run the
            # accepted ones (skipped when the decode ends here).
            cache.restore(snapshot, size)
            _forward(target, kv, cache.cache, block[:, :produced], start, logits_to_keep=1)
            cache.crop(0)
            result.replays += 1
            result.replayed_tokens += produced
        drafter.commit(out.hidden_states, produced)
        start += produced
    _sync(device)
    result.seconds = time.perf_counter() - t0
    result.output_ids = tokens[n_prompt:max_length]
    return result
