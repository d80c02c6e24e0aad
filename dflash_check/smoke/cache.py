"""The target's cache during a speculative decode, and how each layer type is rolled back.

A verify step feeds the whole drafted block to the target; afterwards the cache must hold
exactly the committed prefix, as if the rejected tokens had never been seen. How that is done
depends on what a layer caches (transformers' ``cache_utils`` layer classes):

* keys and values per position (full, sliding and chunked attention, MLA, indexed sparse
  attention): crop the rejected positions. Sliding windows record their past during the step
  (``activate_past_recording``), or positions that fell out of the window could not come back.
* a recurrent state (linear attention: Gated DeltaNet in Qwen3.5/3.6/Next, Mamba-style layers):
  the state after the block has absorbed the rejected tokens. From transformers 5.25 the
  cache can record the state after each of the last ``recurrent_states_to_keep`` tokens of a
  forward (``activate_past_recording(recurrent_states_to_keep=...)``); with one recorded per
  block position, ``crop`` returns the state after the last accepted token exactly, with no
  extra forward. Where the model's code does not record them (older transformers, or a model
  that ignores the setting; seen after the prefill), the state is snapshotted before the
  verify forward, restored after it, and the accepted tokens are re-run (one extra forward
  of at most ``block_size`` tokens, only when a block is partly accepted). z-lab's reference
  crops the conv state only and keeps the polluted recurrent state: lossless there only when
  a whole block is accepted.
* nothing (a layer that reads another layer's keys and values, Gemma 4's shared-KV layers):
  rolled back with the layer it reads.

Every crop also trims windows and conv states back to their working size (``crop(0)`` is not a
no-op for them). A cache layer class not in ``ROLLBACKS`` is refused before the decode starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from dflash_check.errors import CheckError


@dataclass(frozen=True)
class Rollback:
    """How one kind of cache layer returns to the committed prefix."""

    method: str
    """``crop``, ``restore+replay`` or ``shared``."""
    what: str
    """The layer kind, as the report names it."""


CROP = "crop"
REPLAY = "restore+replay"
RECORDED = "crop (recorded states)"
SHARED = "shared"

# transformers cache layer class -> rollback. Linear-attention classes are decided per layer
# once their states exist: a conv-only state (LFM2's short convolutions) crops exactly.
ROLLBACKS: dict[str, Rollback] = {
    "DynamicLayer": Rollback(CROP, "full attention"),
    "DynamicSlidingWindowLayer": Rollback(CROP, "sliding-window attention (past recorded)"),
    "DynamicIndexedLayer": Rollback(CROP, "indexed sparse attention (keys and indexer keys)"),
    "DummyLayer": Rollback(SHARED, "shared-KV or attention-free layer"),
    "LinearAttentionLayer": Rollback(REPLAY, "linear attention (recurrent state)"),
    "LinearAttentionAndFullAttentionLayer": Rollback(
        REPLAY, "linear + full attention (recurrent state)"
    ),
    "LinearAttentionAndSlidingWindowAttentionLayer": Rollback(
        REPLAY, "linear + sliding attention (recurrent state)"
    ),
}
CONV_ONLY = Rollback(CROP, "short convolution (conv state recorded)")
RECORDED_STATES = {
    rollback.what: Rollback(RECORDED, rollback.what.replace("recurrent state", "states recorded"))
    for rollback in ROLLBACKS.values()
    if rollback.method == REPLAY
}


class RollbackUnsupportedError(CheckError):
    """The target has a cache layer type the smoke run cannot roll back."""


def _has_recurrent_state(layer: Any) -> bool:
    states = getattr(layer, "is_recurrent_states_initialized", None)
    return bool(states) and any(states.values())


def _recorded(layer: Any) -> list[int]:
    """Return how many recurrent states each initialised state of ``layer`` has recorded."""
    history = getattr(layer, "recurrent_states_history", None) or {}
    ready = getattr(layer, "is_recurrent_states_initialized", {})
    return [len(history.get(i) or ()) for i, on in ready.items() if on]


def records_intermediate_states(cache: Any) -> bool:
    """Whether this transformers' cache can record per-token recurrent states (5.25 and later).

    Older releases take no argument in ``activate_past_recording``; 5.25 reads the count back
    with ``get_recurrent_states_to_keep`` and, given none, compares ``None`` with an int inside
    the model's forward (the TypeError seen on every hybrid target), so the count is always
    passed where the cache knows it.
    """
    return hasattr(cache, "get_recurrent_states_to_keep")


class TargetCache:
    """A transformers ``DynamicCache`` for the target, with an exact rollback per layer."""

    def __init__(self, model: Any, label: str = "target", block_size: int = 1) -> None:
        from transformers import DynamicCache

        self.cache = DynamicCache(config=model.config)
        if records_intermediate_states(self.cache):
            # One state per block position: a crop of the rejected tokens then lands on the
            # state after the last accepted one, whatever the acceptance.
            self.cache.activate_past_recording(recurrent_states_to_keep=block_size)
            for layer in self.cache.layers:
                if hasattr(layer, "recurrent_states_history"):
                    # 5.25 starts every state index on one shared list (dict.fromkeys(..., []));
                    # a layer with several recurrent states would mix their histories.
                    layer.recurrent_states_history = {
                        i: [] for i in range(getattr(layer, "number_of_states", 1))
                    }
        else:
            self.cache.activate_past_recording()
        for index, layer in enumerate(self.cache.layers):
            name = type(layer).__name__
            if name not in ROLLBACKS:
                raise RollbackUnsupportedError(
                    f"{label}: layer {index} caches its state as {name}, which the smoke run "
                    "cannot roll back after a partly accepted block",
                    hint="the static check still applies; this target type needs its own rollback",
                )
        self.records_states = False
        """Whether every recurrent state is recorded per token (decided by ``end_prefill``)."""

    def end_prefill(self, prompt_length: int) -> None:
        """Learn from the prefill whether the model recorded its per-token recurrent states.

        A model whose code reads the count records ``min(count, tokens)`` states in a forward;
        one that ignores it records only the state before the forward. A one-token prompt
        cannot tell the two apart, so it keeps the replay. Then trims the cache as after
        every forward.
        """
        counts = [n for layer in self.cache.layers for n in _recorded(layer)]
        self.records_states = prompt_length > 1 and bool(counts) and min(counts) > 1
        self.crop(0)

    def rollbacks(self) -> dict[str, Rollback]:
        """Return the rollback each layer kind of this target gets (after the prefill)."""
        seen: dict[str, Rollback] = {}
        for layer in self.cache.layers:
            rollback = ROLLBACKS[type(layer).__name__]
            if rollback.method == REPLAY and not _has_recurrent_state(layer):
                rollback = CONV_ONLY
            elif rollback.method == REPLAY and self.records_states:
                rollback = RECORDED_STATES[rollback.what]
            seen.setdefault(rollback.what, rollback)
        return seen

    @property
    def needs_replay(self) -> bool:
        """Whether a partly accepted block needs a snapshot and a replay (after the prefill)."""
        if self.records_states:
            return False
        return any(_has_recurrent_state(layer) for layer in self.cache.layers)

    def length(self) -> int:
        """Return the number of positions the cache has seen."""
        return int(self.cache.get_seq_length())

    def snapshot(self) -> list[dict[int, torch.Tensor]] | None:
        """Copy every recurrent state (None where no layer has one)."""
        if not self.needs_replay:
            return None
        copies: list[dict[int, torch.Tensor]] = []
        for layer in self.cache.layers:
            states = getattr(layer, "recurrent_states", None) or {}
            copies.append({i: s.clone() for i, s in states.items() if s is not None})
        return copies

    def crop(self, remove: int) -> None:
        """Drop the last ``remove`` positions and trim windows and conv states."""
        self.cache.crop(-remove)

    def restore(self, snapshot: list[dict[int, torch.Tensor]], remove: int) -> None:
        """Return to the state before the last ``remove`` positions, recurrent states included."""
        self.cache.crop(-remove)
        for layer, states in zip(self.cache.layers, snapshot, strict=True):
            for i, state in states.items():
                layer.recurrent_states[i] = state
