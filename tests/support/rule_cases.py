"""One pass/fail harness for every method's rules (DFlash, EAGLE-3, MTP).

Each method's test module keeps its own case type (a mutation of its own fixture pair) and its
own ``run`` (case → report), and states a passing and a failing case per rule id; this module
turns that table into the same three tests everywhere:

- ``test_every_rule_has_cases``: the table names exactly the rules the method owns, so a new
  rule without cases fails;
- ``test_rule_passes``: the passing case raises no finding of the rule;
- ``test_rule_fails``: the failing case raises the rule, with the registry's severity and a hint;
- ``test_rule_errors_have_stages``: every error either case raises states, for each runtime it
  counts against, when that runtime shows it (a rule whose default is a warning may still
  raise an error for one runtime, which the rule-level stage contract cannot see).

Use: ``test_every_rule_has_cases, test_rule_passes, test_rule_fails,
test_rule_errors_have_stages = RuleCases(...).tests()`` at module level (pytest collects the
names it finds there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import pytest

from dflash_check.check.report import Severity
from dflash_check.check.rules import ALL_RULES

CaseT = TypeVar("CaseT")


class HasFindings(Protocol):
    """A report of any method: the pair check's and the MTP target-alone check's."""

    @property
    def findings(self) -> Sequence[Any]: ...


def severity_of(rule_id: str) -> Severity:
    """Return the registry's severity of ``rule_id`` (pair, target-alone or outcome rule)."""
    return next(r.severity for r in ALL_RULES if r.id == rule_id)


@dataclass(frozen=True)
class RuleCases(Generic[CaseT]):
    """A method's rule cases and how to check one."""

    owned: Collection[str]
    """The rule ids the method owns, read from the registry: the table must name exactly these."""
    cases: Mapping[str, tuple[CaseT, CaseT]]
    """rule id → (a passing case, a failing case). The passing case is a valid pair near the
    rule's boundary; the failing one must raise the rule."""
    run: Callable[[CaseT], HasFindings]
    """Check one case and return its report."""

    def hits(self, rule_id: str, case: CaseT) -> list[Any]:
        """Return the findings of ``rule_id`` in ``case``'s report."""
        return [f for f in self.run(case).findings if f.rule == rule_id]

    def tests(
        self,
    ) -> tuple[
        Callable[[], None], Callable[[str], None], Callable[[str], None], Callable[[str], None]
    ]:
        """Return the four tests, as fresh functions for the calling module."""
        ids = sorted(self.cases)

        def test_every_rule_has_cases() -> None:
            """A new rule without a passing and a failing case fails here."""
            assert set(self.cases) == set(self.owned)

        @pytest.mark.parametrize("rule_id", ids)
        def test_rule_passes(rule_id: str) -> None:
            """The passing case raises no finding of the rule."""
            assert self.hits(rule_id, self.cases[rule_id][0]) == []

        @pytest.mark.parametrize("rule_id", ids)
        def test_rule_fails(rule_id: str) -> None:
            """The failing case raises the rule with its severity and a hint."""
            report = self.run(self.cases[rule_id][1])
            hits = [f for f in report.findings if f.rule == rule_id]
            assert hits, report.findings
            assert hits[0].severity is severity_of(rule_id)
            assert hits[0].hint

        @pytest.mark.parametrize("rule_id", ids)
        def test_rule_errors_have_stages(rule_id: str) -> None:
            """Each error of either case has a stage for every runtime it counts against."""
            for case in self.cases[rule_id]:
                report = self.run(case)
                runtimes = [p.name for p in getattr(report, "profiles", ())]
                unstaged = [
                    (f.rule, name)
                    for f in report.findings
                    if f.severity is Severity.ERROR
                    for name in runtimes
                    if report.applies(f, name) and f.stage_for(name) is None
                ]
                assert unstaged == [], unstaged

        return (
            test_every_rule_has_cases,
            test_rule_passes,
            test_rule_fails,
            test_rule_errors_have_stages,
        )
