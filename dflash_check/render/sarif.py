"""SARIF 2.1.0, as GitHub code scanning and other CI dashboards read it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dflash_check import __version__
from dflash_check.check.outcome import RunResult
from dflash_check.check.report import Severity
from dflash_check.check.rules import ALL_RULES
from dflash_check.render.annotations import collect_annotations
from dflash_check.sanitize import uri

if TYPE_CHECKING:
    from dflash_check.render import Page

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
IGNORED_BY = "rule ignored (--ignore, or the pair's ignore in pairs.yaml)"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def rule_entries() -> list[dict[str, Any]]:
    """Return a SARIF reportingDescriptor for every rule id."""
    return [
        {
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.why},
            "help": {"text": r.fix},
            "defaultConfiguration": {"level": LEVEL[r.severity]},
            "properties": {"runtimes": list(r.runtimes)},
        }
        for r in ALL_RULES
    ]


def notification(level: str, text: str, file: str | None, line: int | None) -> dict[str, Any]:
    """Return one SARIF notification at ``file:line`` (no location when the file is unknown)."""
    note: dict[str, Any] = {"level": level, "message": {"text": text}}
    if file is not None:
        note["locations"] = [_location(file, line)]
    return note


def _location(file: str, line: int | None) -> dict[str, Any]:
    """Return a SARIF location at ``file`` (and ``line`` when known)."""
    # A URI reference (RFC 3986): a space, '#', '?' or '%' in a path is percent-encoded.
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(file)}}
    if line is not None:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def render_sarif(result: RunResult, page: Page | None = None) -> str:
    """Render a run as one SARIF log with one run.

    A document: ``page`` (a width) is not used; it is there to be a ``Renderer``.
    """
    index = {r.id: i for i, r in enumerate(ALL_RULES)}
    results = []
    for a in collect_annotations(result):
        entry: dict[str, Any] = {
            "ruleId": a.rule,
            "ruleIndex": index[a.rule],
            "level": LEVEL[a.level],
            "message": {"text": a.text},
        }
        if a.location.uri is not None:
            entry["locations"] = [_location(a.location.uri, a.location.line)]
        if a.suppressed:
            # SARIF's own place for a result the user chose not to count: viewers grey it
            # out, and the log still shows what a clean verdict did not count.
            entry["suppressions"] = [{"kind": "external", "justification": IGNORED_BY}]
        entry["properties"] = {
            "pair": a.outcome.label,
            "verdict": a.outcome.verdict_text,
            "expect": a.outcome.expect.value,
        }
        report = a.outcome.report
        if report is not None and report.profiles:
            # The engine releases the verdict is for, and when each failing one fails (a
            # target asked about alone judges no runtime profile: nothing to name).
            entry["properties"]["releases"] = [p.label for p in report.profiles]
            stages = {p.label: report.runtime_stages.get(p.name) for p in report.profiles}
            entry["properties"]["stages"] = {k: v.value for k, v in stages.items() if v}
        # The engine settings it was judged with, as the JSON report names them (a target
        # asked about alone too: SGLang's draft steps); only when given, so a result without
        # them reads as it did.
        stated = a.outcome.engine_settings.stated()
        if stated:
            entry["properties"]["engine_settings"] = stated
        results.append(entry)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "dflash-check",
                "version": __version__,
                "rules": rule_entries(),
            }
        },
        "results": results,
    }
    notifications = [notification("error", p.message, p.file, p.line) for p in result.problems] + [
        notification("note", f"{k.key}: {k.label}: not checked: {k.reason}", result.file, k.line)
        for k in result.skipped
    ]
    if notifications:
        # What the tool did not do (an entry it does not check) or could not do (a broken
        # input file) is no finding: SARIF's place for it is a notification of the invocation,
        # at its line; a broken file makes the invocation unsuccessful.
        run["invocations"] = [
            {
                "executionSuccessful": not result.problems,
                "toolExecutionNotifications": notifications,
            }
        ]
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"
