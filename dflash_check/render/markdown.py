"""Markdown reports, for ``$GITHUB_STEP_SUMMARY`` and model cards.

One pair gives its answer, a runtime table and its problems (grouped as the terminal table
groups them, each with the runtimes it applies to); a registry run gives one row per pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import CheckReport
from dflash_check.render.diagnostics import answer, count_text, diagnostics, plural
from dflash_check.render.locations import smoke_text
from dflash_check.sanitize import code_span, markdown_text

if TYPE_CHECKING:
    from dflash_check.render import Page


def cell(text: str) -> str:
    """Return ``text`` safe inside a Markdown table cell or sentence: one line (no pipe, no
    line break) whose Markdown and HTML characters are escaped, so that an ``architectures``
    value of ``<img …>`` or ``[link](…)`` from a config renders as itself."""
    return markdown_text(" ".join(text.split()))


def report_markdown(report: CheckReport) -> list[str]:
    """Return one pair's answer, runtime verdicts and problems as Markdown lines."""
    verdict, sentences = answer(report)
    diags = diagnostics(report)
    lines = [f"**{verdict}** ({count_text(diags)})", "", *sentences, ""]
    lines += ["| runtime | verdict |", "|---|---|"]
    lines += [f"| {cell(name)} | {v.value} |" for name, v in report.runtime_verdicts.items()]
    if diags:
        lines += ["", "| rule | severity | runtimes | problem | fix |", "|---|---|---|---|---|"]
        for d in diags:
            runtimes = ", ".join(d.runtimes) or "all"
            problem = d.headline + "".join(f"; {note}" for note in d.runtime_notes())
            lines.append(
                f"| {cell(d.rule)} | {d.severity.value} | {cell(runtimes)} | {cell(problem)} | "
                f"{cell(d.hint)} |"
            )
    if report.not_checked:
        skipped = "; ".join(f"{n.rule}: {n.reason}" for n in report.not_checked)
        lines += ["", f"Not checked: {cell(skipped)}"]
    return lines


def outcome_text(o: PairOutcome) -> str:
    """Return a registry row's outcome: as expected, or what was expected, or not checked."""
    if o.status == "error":
        return f"not checked: {o.error}"
    if o.status == "ok":
        return f"{o.verdict_text}, as expected"
    failed_smoke = smoke_text(o)  # the verdict may be the expected one: the smoke run failed
    if failed_smoke is not None:
        return failed_smoke.removeprefix(f"{o.label}: ")
    rules = [] if o.report is None else [d.rule for d in diagnostics(o.report)]
    why = f" ({', '.join(dict.fromkeys(rules))})" if rules else ""
    return f"{o.verdict_text}, expected {o.expect.value}{why}"


def render_markdown(result: RunResult, page: Page | None = None) -> str:
    """Render a ``pair`` or ``registry`` run as Markdown.

    A document: ``page`` (a width) is not used; it is there to be a ``Renderer``.
    """
    if result.file is None and len(result.outcomes) == 1:
        o = result.outcomes[0]
        lines = [f"## dflash-check: {code_span(o.label)}", ""]
        if o.report is None:
            lines.append(f"**not checked**: {cell(o.error or '')}")
        else:
            lines += report_markdown(o.report)
        return "\n".join(lines) + "\n"
    mark = {"ok": "✅", "mismatch": "❌", "error": "❓"}
    lines = [f"## dflash-check: {code_span(result.file)}", ""]
    if result.problems:  # a broken input file: one row per mistake, nothing checked
        lines += [
            f"{plural(len(result.problems), 'mistake')} in the input, nothing checked.",
            "",
            "| | file | line | error |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| ❌ | {code_span(p.file)} | {p.line or ''} | {cell(p.message)} |"
            for p in result.problems
        ]
        return "\n".join(lines) + "\n"
    lines += [
        f"{len(result.outcomes)} pairs: {result.count('ok')} as expected, "
        f"{result.count('mismatch')} not as expected, {result.count('error')} not checked.",
        "",
        "| | line | pair | runtimes | outcome |",
        "|---|---|---|---|---|",
    ]
    for o in result.outcomes:
        line = str(o.spec.line) if o.spec is not None else ""
        runtimes = ", ".join(o.spec.runtimes) if o.spec is not None else ""
        lines.append(
            f"| {mark[o.status]} | {line} | {code_span(o.label)} | {cell(runtimes)} | "
            f"{cell(outcome_text(o))} |"
        )
    return "\n".join(lines) + "\n"
