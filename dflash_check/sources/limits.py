"""How much of each input is ever read, and how long the Hub is given: one table, one place.

Every file the check reads is small in any real model; a larger one is malformed or hostile,
and is refused with one line instead of being read whole. The README's "Limits" section is
this table (a test keeps the two in agreement).
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1 << 20


@dataclass(frozen=True)
class ReadLimit:
    """The most bytes read of one kind of input."""

    kind: str
    """What the input is, as messages name it."""
    max_bytes: int
    """Larger inputs are refused (local files before reading, Hub bodies as they stream)."""
    why: str
    """What real inputs of this kind measure, for the README."""


READ_LIMITS: dict[str, ReadLimit] = {
    limit.kind: limit
    for limit in (
        ReadLimit("config.json", 4 * MB, "real configs are 1-10 KB"),
        ReadLimit(
            "model.safetensors.index.json", 16 * MB, "a 1,000-shard index of 100k tensors: ~8 MB"
        ),
        ReadLimit(
            "safetensors header",
            16 * MB,
            "a DFlash draft's header: a few KB; a 70B model's: ~1 MB",
        ),
        ReadLimit("tokenizer.json", 48 * MB, "Qwen3: 11 MB; Gemma 3 (262k tokens): 33 MB"),
        ReadLimit("README.md", 1 * MB, "model cards are a few KB; only the front matter is used"),
        ReadLimit("model info", 16 * MB, "the Hub's file list of a 10k-file repo: ~1 MB"),
        ReadLimit("pairs.yaml", 8 * MB, "a registry of 10,000 pairs: ~2 MB"),
        ReadLimit(
            "engine answer",
            4 * MB,
            "an engine's /metrics, /v1/models or one decode: a few KB to ~200 KB",
        ),
    )
}

DEADLINE_FACTOR = 3
"""Each model's whole Hub fetch (every request and retry) ends within ``--timeout`` times this;
a single request also ends within ``--timeout`` (per read, and overall with the deadline)."""


def limit_for(kind: str) -> int:
    """Return the byte cap of one kind of input."""
    return READ_LIMITS[kind].max_bytes
