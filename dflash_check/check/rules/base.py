"""What every rule module shares: the context a rule sees, the issue it yields, the ``Rule``
record with its metadata, and the ``@rule`` decorator that builds one from a check function.

Nothing registers here: each rule module lists its rules in a ``RULES`` tuple, and
``rules/__init__.py`` concatenates those tuples into the one table (reports, SARIF rule
entries, ``docs/rules.md``). A rule yields ``Issue`` values; the checker turns them into
``Finding`` objects carrying the rule id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from dflash_check.check.report import LayerResolution, Severity
from dflash_check.knowledge.engines import VLLM_033, Release
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import METHOD_PROFILES, RuntimeProfile
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings
from dflash_check.views import DFLASH_METHODS, DraftView, TargetView

if TYPE_CHECKING:
    from dflash_check.check.tokenizers import TokenizerComparison

V033 = VLLM_033.source
"""vLLM 0.33.0, where the vLLM lines cited here were read."""


@dataclass(frozen=True)
class PairContext:
    """What a rule sees: both views and the runtimes being checked."""

    draft: DraftView
    target: TargetView
    profiles: tuple[RuntimeProfile, ...]
    resolutions: tuple[LayerResolution, ...]
    tokenizers: TokenizerComparison | None = None
    """Tokenizer comparison, when both models ship a ``tokenizer.json``."""
    num_speculative_tokens: int | None = None
    """Draft tokens per step the engine will be run with (``--num-speculative-tokens``), if
    given: vLLM's ``num_speculative_tokens``, TensorRT-LLM's ``max_draft_len``, SGLang's
    ``--speculative-num-draft-tokens`` minus one (SGLang counts the bonus token too) unless
    ``engine_settings`` gives SGLang's own, which SGLang's lines read instead."""
    speculative_method: str | None = None
    """The ``method`` the engine is asked for (``--speculative-method``, vLLM's
    ``speculative_config.method``), if given; None: the engine detects it from the draft."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The engine settings the pair is served with (``--engine-arg``), each engine's defaults
    where not given."""

    @cached_property
    def selected(self) -> frozenset[str]:
        """The names of the runtimes being checked (rules that speak for one engine ask)."""
        return frozenset(p.name for p in self.profiles)


@dataclass(frozen=True)
class Issue:
    """A rule's raw observation, before it becomes a ``Finding``."""

    message: str
    hint: str | None = None
    runtime: str | None = None
    severity: Severity | None = None
    field: str | None = None
    model: str | None = "draft"
    stage: Stage | None = None
    """When the engine shows it, where this pair decides it (else the outcome table's)."""


RuleCheck = Callable[[PairContext], Iterator[Issue]]


def per_runtime(
    ctx: PairContext,
    issue: Issue,
    skip: frozenset[str] = frozenset(),
    stages: Mapping[str, Stage] | None = None,
) -> Iterator[Issue]:
    """Yield ``issue`` once per selected runtime but those in ``skip``, each with its stage
    from ``stages`` where an engine shows it otherwise; the one runtime-less issue when there
    is nothing to tell apart."""
    stages = {k: v for k, v in (stages or {}).items() if k in ctx.selected}
    if not skip and not stages:
        yield issue
        return
    for p in ctx.profiles:
        if p.name not in skip:
            yield replace(issue, runtime=p.name, stage=stages.get(p.name, issue.stage))


RuntimesOf = tuple[str, ...] | Callable[[], tuple[str, ...]]
"""A rule's runtimes: named, or read from the registered engines each time they are asked."""


# eq=False: a rule is a behaviour (its check), one object per id, compared by identity; no
# generated __eq__/__hash__ to compile at import (53 rules load on every pair).
@dataclass(frozen=True, eq=False)
class Rule:
    """One rule of the table."""

    id: str
    """Stable id (``DF001``), used in SARIF ``ruleId`` and ``--ignore``."""
    name: str
    """Short kebab-case name."""
    severity: Severity
    """Default severity of its findings."""
    title: str
    """One-line summary."""
    why: str
    """Why the rule exists: what breaks, where, and how late."""
    fix: str
    """How to fix a failing pair; the default hint of its findings."""
    applies_to: RuntimesOf
    """Runtimes whose behaviour the rule is about, or how to read them from the registered
    engines when asked (``runtimes``)."""
    check: RuleCheck
    """The check itself."""
    methods: tuple[str, ...] = DFLASH_METHODS
    """The draft methods the rule applies to (DFlash keys mean nothing to an EAGLE-3 head)."""

    @property
    def runtimes(self) -> tuple[str, ...]:
        """The runtimes the rule is about, read now: a rule about every engine of a kind (the
        extracted ones) lists an engine registered after import too."""
        return self.applies_to() if callable(self.applies_to) else self.applies_to


def every_runtime() -> tuple[str, ...]:
    """Every runtime with a row for DFlash drafts, read from the runtime table when asked: the
    runtimes of a rule about all of them (the default), a runtime added later included."""
    return tuple(p.name for p in METHOD_PROFILES["dflash"])


ALL_METHODS: tuple[str, ...] = (*DFLASH_METHODS, "eagle3", "mtp")
"""Rules about facts every method shares (context length, named target, tokenizer, format,
capture support)."""


def rule(
    id: str,
    name: str,
    severity: Severity,
    title: str,
    why: str,
    fix: str,
    runtimes: RuntimesOf = every_runtime,
    methods: tuple[str, ...] = DFLASH_METHODS,
) -> Callable[[RuleCheck], Rule]:
    """Make a check function into a ``Rule`` with its metadata; the rule is in the table only
    once its module lists it in its ``RULES`` tuple (no registration as a side effect)."""

    def make(check: RuleCheck) -> Rule:
        return Rule(id, name, severity, title, why, fix, runtimes, check, methods)

    return make


MAX_IDS_SHOWN = 16
"""Longer id lists are shown by their ends and their length, so a message stays one line."""


def fmt_ids(ids: tuple[int, ...] | list[int]) -> str:
    """Format an id list as ``[1, 9, 17]`` (``[0, 1, …, 99999] (100000 ids)`` when long)."""
    if len(ids) > MAX_IDS_SHOWN:
        head = ", ".join(str(i) for i in ids[: MAX_IDS_SHOWN - 4])
        tail = ", ".join(str(i) for i in ids[-3:])
        return f"[{head}, …, {tail}] ({len(ids)} ids)"
    return "[" + ", ".join(str(i) for i in ids) + "]"


def contract_issues(
    ctx: PairContext,
    refusals: tuple[tuple[str, str], ...],
    contract: Callable[[Release], str | None],
    pair: str,
) -> Iterator[Issue]:
    """Yield one load-time issue per (field, the engine's message) of an engine's config
    contract, on each selected release that has it (``contract`` returns the release's reviewed
    citation of it, None where it has none); ``pair`` opens the message."""
    for p in ctx.profiles:
        where = contract(p.release) if p.release is not None else None
        if where is None:
            continue
        for field, message in refusals:
            yield Issue(
                f"{pair}: {p.label} refuses it at load ('{message}', {where})",
                runtime=p.name,
                field=field,
            )
