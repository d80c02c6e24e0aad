"""What a check is asked: the settings every layer passes down as one value.

The CLI and ``pairs.yaml`` parse their options into a ``CheckSettings`` once (the runtime
selection already typed); ``run_check`` and ``check_views`` take it whole, so a new setting is
one field here, not a parameter added to every signature on the way down.
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.knowledge.selection import DEFAULT, Selection
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings


@dataclass(frozen=True)
class CheckSettings:
    """How to check a pair, parsed: everything but the two models and their tokenizers."""

    selection: Selection = DEFAULT
    """The runtimes to judge (``portable`` by default)."""
    ignore: frozenset[str] = frozenset()
    """Rule ids to skip."""
    strict: bool = False
    """Warnings and rules not checked make the pair incompatible (``--strict``)."""
    num_speculative_tokens: int | None = None
    """The engine's draft tokens per step the pair will be served with, if given."""
    speculative_method: str | None = None
    """The ``method`` the engine is asked for (vLLM's ``speculative_config.method``), if given."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The engine settings a verdict depends on (SGLang's DP attention and draft length), from
    the engine's own flags (``--engine-arg``, ``engine_args:``); each engine's defaults else."""


DEFAULT_SETTINGS = CheckSettings()
"""A portable check of every rule."""
