"""The annotations a run produces, shared by the SARIF, JUnit and GitHub renderers.

One decision, made once: which findings of which outcomes are shown, at what level.
* A pair that is not as expected shows its error findings, plus DF090 (expectation mismatch).
* A pair that could not be checked shows DF091 with the error.
* A pair expected compatible shows its warnings (and with ``--strict`` they are errors).
* A pair expected and found incompatible shows nothing: the registry says it is known.
* What an ignored rule found (``--ignore``, a pair's ``ignore``) is shown as suppressed, at
  the level it would have had, so that no format presents a clean verdict without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import Finding, Severity, Verdict
from dflash_check.render.locations import (
    Location,
    expectation_text,
    finding_location,
    message,
    smoke_text,
)


@dataclass(frozen=True)
class Annotation:
    """One message to show at one place."""

    rule: str
    level: Severity
    text: str
    location: Location
    outcome: PairOutcome
    suppressed: bool = False
    """The rule was ignored: shown, never counted (SARIF ``suppressions``)."""


def outcome_annotation(result: RunResult, outcome: PairOutcome, rule: str) -> Annotation:
    """Return the annotation of an outcome as a whole (DF090 mismatch, DF091 not checked)."""
    return Annotation(
        rule,
        Severity.ERROR,
        expectation_text(outcome),
        finding_location(result, outcome, None),
        outcome,
    )


def collect_annotations(result: RunResult) -> Iterator[Annotation]:
    """Yield the annotations of a run, in outcome order."""
    for outcome in result.outcomes:
        if outcome.status == "error":
            yield outcome_annotation(result, outcome, "DF091")
            continue
        assert outcome.report is not None
        # Runtimes that share a range share a message: one annotation lists them all.
        merged: dict[tuple[str, str, Severity, bool], list[Finding]] = {}
        report = outcome.report
        for f in (*report.findings, *report.suppressed):
            suppressed = f.rule in report.ignored
            if f.severity is Severity.ERROR and (outcome.status == "mismatch" or suppressed):
                level = Severity.ERROR
            elif f.severity is Severity.WARNING and outcome.expect is Verdict.COMPATIBLE:
                level = Severity.ERROR if result.strict and not suppressed else Severity.WARNING
            else:
                continue
            merged.setdefault((f.rule, f.message, level, suppressed), []).append(f)
        # Each runtime is named with the release its verdict is for (vllm==0.34.0).
        labels = {p.name: p.label for p in report.profiles}
        for (rule, _, level, suppressed), findings in merged.items():
            runtimes = [labels.get(f.runtime, f.runtime) for f in findings if f.runtime]
            first = replace(findings[0], runtime=", ".join(runtimes) or None)
            yield Annotation(
                rule,
                level,
                f"{outcome.label}: {message(first)}",
                finding_location(result, outcome, first),
                outcome,
                suppressed,
            )
        if smoke_text(outcome) is not None:
            yield outcome_annotation(result, outcome, "DF092")
        elif outcome.status == "mismatch" and outcome.spec is not None:
            yield outcome_annotation(result, outcome, "DF090")
