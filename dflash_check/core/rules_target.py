"""Rules about the target alone: what the tool knows of the engine code that serves it."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.core.report import Severity
from dflash_check.core.rules import Issue, PairContext, rule


@rule(
    "DF051",
    "family-unknown",
    Severity.INFO,
    "The target's family is unknown, so the engines' general conventions are assumed",
    "Engines capture hidden states in each target family's own model code, and that code "
    "decides the numbering, the range and whether capture exists at all (docs/runtimes.md, "
    "per target family). For a target whose architectures and model types match no family "
    "the tool knows, each engine's general convention is assumed: the verdict holds for the "
    "common case, but a family-specific range or a missing capture hook would go unseen.",
    "Check the engine's model file for this architecture (its aux-hidden-state or capture "
    "hook) before relying on the verdict, and report the family so it can join the table.",
)
def check_family_known(ctx: PairContext) -> Iterator[Issue]:
    """Note, once, the engines whose family-specific behaviour is assumed, not read."""
    t = ctx.target
    if t.family is not None:
        return
    assumed = [p.name for p in ctx.profiles if not p.family_independent]
    if not assumed:
        return  # the references capture the same way for every family
    what = ", ".join(t.architectures) or ", ".join(t.model_types) or "no architectures"
    yield Issue(
        f"target {t.name} ({what}) is in no target family the tool knows; "
        f"{', '.join(assumed)} are checked with their general conventions "
        "(capture range, capture hook), not verified for this family",
        field="architectures",
        model="target",
    )
