"""The speculative settings a user gives an engine: the method vLLM is asked for
(``--speculative-method``, a ``pairs.yaml`` entry's ``method``) and the draft length
(``--num-speculative-tokens``), with what the engines accept of them.
"""

from __future__ import annotations

MAX_SPECULATIVE_TOKENS = 1024
"""Largest draft length accepted as an engine setting: drafts train blocks of 8-32, so more is
a typo, not a setting (``--num-speculative-tokens``, ``pairs.yaml``)."""

SPECULATIVE_METHODS: tuple[str, ...] = (
    "dflash",
    "dspark",
    "eagle",
    "eagle3",
    "mtp",
    "draft_model",
    "ngram",
    "ngram_gpu",
    "suffix",
    "extract_hidden_states",
)
"""The values of vLLM's ``speculative_config.method`` (``--speculative-method``), besides the
per-model MTP names ending in ``_mtp``, which it serves as ``mtp``
(vllm==0.34.0:vllm/config/speculative.py:53-97, 1375-1379)."""


def vllm_method(requested: str) -> str:
    """Return the method vLLM runs for ``requested``: a per-model MTP name is ``mtp``."""
    requested = requested.strip().lower()
    return "mtp" if requested.endswith("_mtp") else requested


def known_method(requested: str) -> bool:
    """Whether ``requested`` is a ``speculative_config.method`` vLLM accepts."""
    return vllm_method(requested) in SPECULATIVE_METHODS
