"""Where a finding points: the pairs.yaml line of its entry, or the model's config.json."""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import Finding


@dataclass(frozen=True)
class Location:
    """A file (a path, or a URL for Hub models) and an optional line."""

    uri: str | None
    line: int | None
    is_local: bool


def config_location(outcome: PairOutcome, model: str | None) -> Location:
    """Return the config.json of the draft (default) or the target of a checked pair."""
    report = outcome.report
    if report is None:
        return Location(None, None, False)
    if model == "target":
        name, location, revision = (
            report.target.name,
            report.target_location,
            report.target_revision,
        )
    else:
        name, location, revision = report.draft.name, report.draft_location, report.draft_revision
    if revision is None:  # a local directory
        return Location(location, None, True)
    repo = name.split("@", 1)[0]
    return Location(f"https://huggingface.co/{repo}/blob/{revision}/config.json", None, False)


def field_line(path: str, field: str | None) -> int:
    """Return the line of ``field``'s last key in a local config.json (1 when not found):
    code scanning places a result on a line, and the key is where the fix goes."""
    if field is None:
        return 1
    key = f'"{field.rsplit(".", 1)[-1]}"'
    try:
        with open(path, encoding="utf-8") as f:
            return next((i for i, line in enumerate(f, 1) if key in line), 1)
    except (OSError, UnicodeDecodeError):
        return 1


def finding_location(result: RunResult, outcome: PairOutcome, finding: Finding | None) -> Location:
    """Return where a finding (or an outcome without one) should be shown: the entry's line in
    the registry, else the field's line in a local config.json (a Hub file: no line)."""
    if outcome.spec is not None and result.file is not None:
        return Location(result.file, outcome.spec.line, True)
    where = config_location(outcome, finding.model if finding else "draft")
    if where.is_local and where.uri is not None:
        return Location(where.uri, field_line(where.uri, finding.field if finding else None), True)
    return where


def message(finding: Finding) -> str:
    """Return a finding's message prefixed with its runtime, if any."""
    return f"[{finding.runtime}] {finding.message}" if finding.runtime else finding.message


def smoke_text(outcome: PairOutcome) -> str | None:
    """Return the DF092 message when the outcome's smoke run failed, else None."""
    smoke = outcome.report.smoke if outcome.report is not None else None
    if smoke is None or smoke.passed:
        return None
    if smoke.failure is not None:
        why = smoke.failure.root_cause or smoke.failure.message
        return f"{outcome.label}: smoke run failed at the {smoke.failure.stage}: {why}"
    if smoke.lossless is False:
        bad = sum(1 for c in smoke.cases if c.lossless is False)
        return (
            f"{outcome.label}: smoke run NOT lossless: {bad} of {len(smoke.cases)} prompts "
            "differ from the plain greedy decode"
        )
    # A floor from the bundled run of the pair is not a figure the user typed: say whose it is.
    whose = f" ({smoke.min_acceptance_reason})" if smoke.min_acceptance_source == "bundled" else ""
    return (
        f"{outcome.label}: smoke run tau = {smoke.mean_acceptance_length:.2f} tokens per "
        f"target step, below --min-acceptance {smoke.min_acceptance:g}{whose}"
    )


def expectation_text(outcome: PairOutcome) -> str:
    """Return the DF090 / DF091 / DF092 message of an outcome that is not ok."""
    if outcome.status == "error":
        return f"{outcome.label}: could not check: {outcome.error}"
    failed_smoke = smoke_text(outcome)
    if failed_smoke is not None:
        return failed_smoke
    return f"{outcome.label}: expected {outcome.expect.value}, got {outcome.verdict_text}" + (
        f" ({outcome.spec.reason})" if outcome.spec and outcome.spec.reason else ""
    )
