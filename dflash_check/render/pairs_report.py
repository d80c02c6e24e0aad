"""The registry's own reports: one line per pair for people, a JSON document for machines."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from dflash_check.check.entries import SkippedEntry
from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import Severity
from dflash_check.check.target_alone import MtpReport
from dflash_check.render.diagnostics import NBSP, diagnostics, wrap
from dflash_check.render.json import SCHEMA_VERSION, report_dict
from dflash_check.render.locations import smoke_text

STATUS_MARK = {
    "ok": ("✓", "green"),
    "mismatch": ("✗", "bold red"),
    "error": ("?", "bold yellow"),
}
SKIPPED_MARK = "-"
"""An engine test entry the tool does not check (its reason follows): never a failure."""


def _grouped(outcomes: Sequence[PairOutcome]) -> Counter[str]:
    """Count the pairs not checked by the cause they share: its ``SharedCause`` where the error
    has one, else its hint. A cause counted more than once is given once, after the pairs."""
    return Counter(
        o.error_shared.hint if o.error_shared else o.error_hint
        for o in outcomes
        if o.report is None and (o.error_shared or o.error_hint)
    )


def _pair_line(result: RunResult, o: PairOutcome, width: int, brief: bool) -> list[Text]:
    """Return one pair's line: mark, file:line, full ids, runtimes and the outcome (with the
    error's few words when ``brief``: its cause is given once, after the pairs)."""
    spec = o.spec
    assert spec is not None  # registry outcomes always carry their entry
    mark, style = STATUS_MARK[o.status]
    if o.status == "error":
        outcome = "not checked"
        if brief and o.error_shared is not None:
            outcome += f": {o.error_shared.brief}"
    elif o.status == "ok":
        outcome = f"{o.verdict.value}, as expected"
    elif o.verdict is o.expect:  # the verdict matched, the smoke run did not pass
        outcome = f"{o.verdict.value}, smoke run failed"
    else:
        outcome = f"{o.verdict.value}, expected {o.expect.value}"
    if o.report is not None and o.report.ignored:  # a pass must never hide what it ignored
        outcome += f" ({o.report.ignored_summary})"
    # The arrow stays with the draft, so a wrapped line ends in "->" rather than starting with it.
    label = spec.label.replace(" -> ", f"{NBSP}-> ", 1)
    # The engine settings the entry is judged with go with what it is judged for.
    settings = spec.engine_settings.text()
    judged = ", ".join(spec.runtimes) + (f"; {settings}" if settings else "")
    text = f"{mark} {result.file}:{spec.line}  {label}  [{judged}]  "
    lines = [Text(s) for s in wrap(text + outcome, width, "", "    ")]
    lines[0].stylize(style, 0, 1)
    lines[-1].stylize(style, len(lines[-1]) - len(outcome))
    return lines


def _details(o: PairOutcome, width: int, shared: set[str]) -> list[Text]:
    """Return what went wrong with a pair that is not as expected (nothing for the others).

    A hint in ``shared`` (several pairs failed the same way: no network, one endpoint) is left
    out here; the table gives it once, after the pairs.
    """
    out: list[Text] = []
    if o.status == "ok":
        return out
    if o.spec is not None and o.spec.reason and o.status == "mismatch":
        out += [
            Text(s, style="dim") for s in wrap(f"reason: {o.spec.reason}", width, "    ", "      ")
        ]
    if o.report is None:
        if o.error_shared is not None and o.error_shared.hint in shared:
            return out  # the pair's line says it in a few words; the cause follows the pairs
        out += [Text(s) for s in wrap(f"error: {o.error}", width, "    ", "      ")]
        if o.error_hint and o.error_hint not in shared:
            out += [Text(s) for s in wrap(f"= hint: {o.error_hint}", width, "      ", "        ")]
        return out
    failed_smoke = smoke_text(o)
    if failed_smoke is not None:
        out += [Text(s) for s in wrap(failed_smoke, width, "    ", "      ")]
    # Under --strict a warning decides the verdict too: it is shown as the errors are.
    failing = {Severity.ERROR, Severity.WARNING} if o.report.strict else {Severity.ERROR}
    for d in diagnostics(o.report):
        if d.severity not in failing:
            continue
        head = f"{d.severity.value}[{d.rule}]: {d.headline or d.rule}"
        out += [Text(s) for s in wrap(head, width, "    ", "      ")]
        for note in d.runtime_notes():
            out += [Text(s) for s in wrap(note, width, "      = ", "        ")]
    return out


def _skipped_line(result: RunResult, k: SkippedEntry, width: int) -> list[Text]:
    """Return the line of an entry listed as not checked, with its reason."""
    label = k.label.replace(" -> ", f"{NBSP}-> ", 1)
    text = f"{SKIPPED_MARK} {result.file}:{k.line}  {k.key}  {label}  not checked: {k.reason}"
    return [Text(s, style="dim") for s in wrap(text, width, "", "    ")]


def render_registry_table(result: RunResult, width: int = 80) -> RenderableType:
    """Return one line per pair, full ids, and under each failing pair what went wrong; an
    engine's test registry adds, in line order, one line per entry not checked.

    The counts are not repeated here: the CLI prints them once, on stderr.
    """
    hints = _grouped(result.outcomes)
    shared = {hint for hint, n in hints.items() if n > 1}
    rows: list[tuple[int, PairOutcome | SkippedEntry]] = [
        (o.spec.line if o.spec else 0, o) for o in result.outcomes
    ]
    rows += [(k.line, k) for k in result.skipped]
    parts: list[Text] = []
    for p in result.problems:  # a broken input file: each mistake at its line, nothing checked
        parts += [Text(s) for s in wrap(f"✗ {p.text}", width, "", "    ")]
    for _, row in sorted(rows, key=lambda r: r[0]) if result.skipped else rows:
        if isinstance(row, SkippedEntry):
            parts += _skipped_line(result, row, width)
            continue
        brief = row.error_shared is not None and row.error_shared.hint in shared
        parts += _pair_line(result, row, width, brief)
        parts += _details(row, width, shared)
    for hint, n in hints.items():  # in first-seen order (Counter keeps insertion order)
        if n < 2:
            continue
        remedies = dict.fromkeys(  # each distinct command once, in the pairs' order
            o.error_shared.remedy
            for o in result.outcomes
            if o.report is None and o.error_shared and o.error_shared.hint == hint
            if o.error_shared.remedy
        )
        head = f"hint ({n} pairs not checked): {hint}" + (":" if remedies else "")
        parts += [Text(s, style="yellow") for s in wrap(head, width, "", "  ")]
        parts += [Text(s, style="yellow") for r in remedies for s in wrap(r, width, "  ", "    ")]
    for part in parts:
        part.no_wrap = True
        part.overflow = "ignore"
    return Group(*parts)


def registry_dict(result: RunResult) -> dict[str, Any]:
    """Return the registry run as one JSON object."""
    pairs = []
    for o in result.outcomes:
        spec = o.spec
        assert spec is not None
        pairs.append(
            {
                "line": spec.line,
                "draft": spec.draft,
                "target": spec.target,
                "draft_revision": spec.draft_revision,
                "target_revision": spec.target_revision,
                "runtimes": list(spec.runtimes),
                "expect": o.expect.value,
                "verdict": o.verdict.value,
                "status": o.status,
                "reason": spec.reason,
                "source": spec.source,
                "error": None if o.error is None else {"message": o.error, "hint": o.error_hint},
                "report": _report(o),
            }
        )
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "file": result.file,
        "summary": {
            "pairs": len(result.outcomes),
            "as_expected": result.count("ok"),
            "not_as_expected": result.count("mismatch"),
            "not_checked": result.count("error"),
        },
        "pairs": pairs,
        # Mistakes in the input files: each at its file and line (nothing checked then).
        "errors": [{"file": p.file, "line": p.line, "message": p.message} for p in result.problems],
    }
    if result.about is not None:  # an engine's test registry: its entries not checked too
        data["about"] = result.about
        data["summary"]["skipped"] = len(result.skipped)
        data["skipped"] = [
            {"line": k.line, "key": k.key, "label": k.label, "reason": k.reason}
            for k in result.skipped
        ]
    return data


def _report(o: PairOutcome) -> dict[str, Any] | None:
    """Return a pair's report, or a target's own MTP report (``"kind": "mtp"``)."""
    if o.report is None:
        return None
    if isinstance(o.report, MtpReport):
        from dflash_check.render.target_alone import mtp_dict

        return mtp_dict(o.report)
    return report_dict(o.report)


def render_registry_json(result: RunResult) -> str:
    """Render the registry run as JSON: one compact line (a registry can hold 1,000 reports;
    ``jq .`` pretty-prints it)."""
    return json.dumps(registry_dict(result), separators=(",", ":")) + "\n"
