"""The ``registry`` command's run: a registry file read into the pairs to check, then checked.

A registry is a pairs file (``app/pairs_run.py``) or an engine's test registry
(``app/engine_tests/``). The CLI parses its options into a ``RegistryRequest``, reads the file
with this module, and shows the progress; the per-pair work is the two modules named above.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_check.app.engine_tests.plan import Plan
    from dflash_check.app.pipeline import ModelCache
    from dflash_check.check.entries import PairSpec
    from dflash_check.check.outcome import PairOutcome, RunResult
    from dflash_check.knowledge.selection import Selection


@dataclass(frozen=True)
class RegistryRequest:
    """What ``registry`` asks for, parsed from its options."""

    file: Path
    kind: str
    """``pairs``, ``vllm`` or ``sglang`` (``--kind``, or what the content says)."""
    only: str | None = None
    """``--only``: a glob the draft or the target must match."""
    overrides: Path | None = None
    """``--overrides``: an engine's test registry only."""
    selection: Selection | None = None
    """``--runtime``: an engine's test registry only (None: the engine at its release)."""
    strict: bool = False
    """Each pair checked as ``pair --strict`` would check it."""
    workers: int = 8


@dataclass(frozen=True)
class RegistryPairs:
    """A registry file as read: the pairs to check and, for an engine's test registry, its plan."""

    specs: tuple[PairSpec, ...]
    plan: Plan | None = None
    """The engine's test registry's plan (its skipped entries too); None for a pairs file."""
    about: str | None = None
    """What the file is, for the summary (an engine's test registry only)."""


def read_registry(request: RegistryRequest, text: str) -> RegistryPairs:
    """Return the pairs of the registry file ``text`` (narrowed by ``--only``, made strict by
    ``--strict``); a broken file raises its ``CheckError`` (every mistake at its line)."""
    name = str(request.file)
    if request.kind == "pairs":
        from dflash_check.app.pairs_run import load_pairs, select

        read = RegistryPairs(select(load_pairs(request.file, name, text), request.only))
    else:
        from dflash_check.app.engine_tests.plan import narrow, prepare

        plan, about = prepare(
            request.file, name, request.kind, text, request.overrides, request.selection
        )
        plan = narrow(plan, request.only)
        read = RegistryPairs(plan.specs, plan, about)
    if not request.strict:
        return read
    specs = tuple(replace(s, strict=True) for s in read.specs)
    plan = replace(read.plan, specs=specs) if read.plan is not None else None
    return replace(read, specs=specs, plan=plan)


def check_registry(
    request: RegistryRequest,
    pairs: RegistryPairs,
    cache: ModelCache,
    done: Callable[[PairOutcome], None],
) -> RunResult:
    """Check every pair, ``request.workers`` at once (``done`` after each), into one result."""
    from dflash_check.check.entries import SkippedEntry
    from dflash_check.check.outcome import RunResult

    base = request.file.parent
    skipped: tuple[SkippedEntry, ...] = ()
    if pairs.plan is None:
        from dflash_check.app.pairs_run import check_pairs

        outcomes = check_pairs(pairs.specs, base, cache, request.workers, done)
    else:
        from dflash_check.app.engine_tests.plan import run_plan

        outcomes, skipped = run_plan(pairs.plan, base, cache, request.workers, done)
    return RunResult(
        outcomes, strict=request.strict, file=str(request.file), skipped=skipped, about=pairs.about
    )
