"""Rules about the target alone: what the tool knows of the engine code that serves it."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, rule
from dflash_check.knowledge.runtimes import engines_with_cells


@rule(
    "DF051",
    "family-unknown",
    Severity.INFO,
    "The engines' code for the target's family was not read, so their general conventions "
    "are assumed",
    "Engines capture hidden states in each target family's own model code, and that code "
    "decides the numbering, the range and whether capture exists at all (dflash-check docs "
    "runtimes, "
    "per target family). For a target whose architectures and model types match no family "
    "the tool knows, each engine's general convention is assumed: the verdict holds for the "
    "common case, but a family-specific range or a missing capture hook would go unseen. "
    "Engines whose release code is read as data (vLLM, SGLang: dflash-check docs engine-facts) "
    "are left "
    "out where that code settles the architecture (DF052, DF053, or a capture the general "
    "convention describes).",
    "Check the engine's model file for this architecture (its aux-hidden-state or capture "
    "hook) before relying on the verdict, and report the family so it can join the table.",
)
def check_family_known(ctx: PairContext) -> Iterator[Issue]:
    """Note, once, the engines whose family-specific behaviour is assumed, not read: every
    engine on an unknown family; on a known one, the engines whose code was read for other
    families but not this one (an engine with no cells at all keeps its general convention
    everywhere, and the runtime table says so)."""
    from dflash_check.check.rules.coverage import settled_by_data

    t = ctx.target
    settled = settled_by_data(ctx)
    assumed = [
        p.name
        for p in ctx.profiles
        if not p.family_independent
        and p.cell_citation is None
        and (t.family is None or p.engine_name in engines_with_cells(p.method))
        # The release's extracted code settles it (knowledge/data, DF052/DF053).
        and p.name not in settled
    ]
    if not assumed:
        return  # the references capture the same way for every family
    what = ", ".join(t.architectures) or ", ".join(t.model_types) or "no architectures"
    where = (
        "is in no target family the tool knows"
        if t.family is None
        else f"is in family {t.family}, whose model code was not read for {', '.join(assumed)}"
    )
    verb = "is" if len(assumed) == 1 else "are"
    yield Issue(
        f"target {t.name} ({what}) {where}; {', '.join(assumed)} {verb} checked with the "
        "general convention (capture range, capture hook), not verified for this family",
        field="architectures",
        model="target",
    )


RULES: tuple[Rule, ...] = (check_family_known,)
