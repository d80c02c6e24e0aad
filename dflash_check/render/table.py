"""The human report: the answer first, then one block per diagnostic (as rustc and ruff print).

``--verbose`` adds the full tables (both models side by side, each runtime's layer resolution:
``grid.py``); a smoke run adds its block (``smoke_text.py``). Every line is wrapped at spaces,
so no name, id, path or number is split across lines.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from dflash_check.check.report import CheckReport, Severity
from dflash_check.check.rules import ALL_RULES, fmt_ids
from dflash_check.render.diagnostics import (
    VERDICT_STYLE,
    Diagnostic,
    answer,
    count_text,
    diagnostics,
    runtime_text,
    wrap,
)
from dflash_check.render.lines import Line, lines, plain, to_rich

if TYPE_CHECKING:
    from rich.console import RenderableType

RULES_TITLE = {r.id: r.title for r in ALL_RULES}

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def identity_lines(report: CheckReport, width: int) -> list[Line]:
    """Return the target-identity evidence when some of it disagrees (known facts only)."""
    if not any(e.agrees is False for e in report.identity):
        return []
    marks = {True: "✓", False: "✗", None: "?"}
    facts = [
        f"{e.fact} {e.draft} vs {e.target} {marks[e.agrees]}"
        for e in report.identity
        if e.draft is not None
    ]
    text = "target identity: " + "; ".join(facts)
    return lines(wrap(text, width, "", "  "), "dim")


def not_checked_lines(report: CheckReport, width: int) -> list[Line]:
    """Return the rules that could not be applied, if any."""
    # A finding that already says so ("fc width not verified (DF005 not checked)") is the one
    # line for that rule: the list below names only the others.
    said = " ".join(f.message for f in report.findings)
    left = [n for n in report.not_checked if f"{n.rule} not checked" not in said]
    if not left:
        return []
    text = "not checked: " + "; ".join(f"{n.rule} ({n.reason})" for n in left)
    return lines(wrap(text, width, "", "  "), "yellow")


def _location(report: CheckReport, diag: Diagnostic) -> str:
    """Return where a diagnostic's field lives: the file (path or Hub repo@commit) and field."""
    target = diag.model == "target"
    view_name = report.target.name if target else report.draft.name
    location = (report.target_location if target else report.draft_location) or view_name
    field = diag.field
    if field is None:
        return location
    if field.endswith(".json") and location.endswith("config.json"):
        return location[: -len("config.json")] + field
    if not target and field == report.draft.fc_weight_name:
        return f"{view_name} safetensors header: {field}"
    if field == "base_model":
        return f"{view_name} model card: {field}"
    return f"{location}: {field}"


def diagnostic_block(report: CheckReport, diag: Diagnostic, width: int) -> list[Line]:
    """Return one diagnostic as rustc does: headline, location, per-runtime notes, help."""
    label = f"{diag.severity.value}[{diag.rule}]"
    headline = diag.headline or RULES_TITLE.get(diag.rule, diag.rule)
    head = lines(wrap(f"{label}: {headline}", width, "", "  "))
    head[0] = (
        head[0].stylize(SEVERITY_STYLE[diag.severity], 0, len(label)).stylize("bold", len(label))
    )
    out = [head[0], *(line.stylize("bold") for line in head[1:])]
    location = _location(report, diag)
    if diag.model in ("draft", "target") and len(location.split(": ")[0]) > width - 6:
        # A path longer than the line (the headline already names the folder) would take two
        # lines in every block: name the file as the draft's or the target's instead.
        file, _, field = location.rpartition("/")[2].partition(": ")
        location = f"the {diag.model}'s {file}" + (f": {field}" if field else "")
    out += lines(wrap(location, width, "  --> ", "      "), "dim")
    if diag.per_runtime:
        for text in diag.runtime_notes():
            out += lines(wrap(text, width, "   = ", "     "))
    elif diag.runtimes:
        out += lines(wrap(f"runtimes: {', '.join(diag.runtimes)}", width, "   = ", "     "))
    help_lines = lines(wrap(f"help: {diag.hint}", width, "   = ", "     "))
    help_lines[0] = help_lines[0].stylize("bold cyan", 5, 10)
    return out + help_lines


def answer_lines(report: CheckReport, diags: tuple[Diagnostic, ...], width: int) -> list[Line]:
    """Return the report's first lines: the verdict, the deciding numbers, the counts."""
    verdict, sentences = answer(report)
    head = lines(wrap(f"{verdict}: {sentences[0]}", width, "", "  "))
    head[0] = head[0].stylize(VERDICT_STYLE[report.verdict], 0, len(verdict))
    counts = count_text(diags) if diags else "no findings"
    # The counts come right after the verdict: with long paths the why can take lines, and
    # the answer must stay on the first screen.
    checked = (
        "portable check (every runtime)"
        if report.selection.portable_only
        else f"checked for {runtime_text(report)}"
    )
    # The engine settings a verdict was judged with belong beside what it was judged for:
    # the same pair under other settings may get another verdict (DF019, DF056).
    settings = report.engine_settings.text()
    checked += f", with {settings}." if settings else "."
    out = head + lines(wrap(f"{counts}; {checked}", width, "  ", "  "), "dim")
    for sentence in sentences[1:]:
        out += lines(wrap(sentence, width, "  ", "  "))
    return out


def feeds_lines(report: CheckReport, width: int) -> list[Line]:
    """Return, for an EAGLE-3 head, the tensors each runtime feeds it: the key it reads and
    the raw list (or its default), the numbering, and the HF ``hidden_states`` indices."""
    if report.draft.method != "eagle3":
        return []
    out = [Line("tensors each runtime feeds the head (HF hidden_states[k]):", "bold")]
    name_width = max((len(p.name) for p in report.profiles), default=0)
    by_name = {r.runtime.name: r for r in report.resolutions}
    for p in report.profiles:
        res = by_name.get(p.name)
        verdict = report.runtime_verdict(p.name)
        if res is None:
            text = f"{p.name:<{name_width}}  no key it reads is present, and {p.without_ids}"
        else:
            fed = res.hidden_states
            if res.guessed:
                how = f"default {fmt_ids(res.capture_indices)}"
            else:
                step = fed[0] - res.raw_ids[0] if res.raw_ids else 0
                how = f"{res.key} {fmt_ids(res.raw_ids)} " + ("raw" if step == 0 else f"{step:+d}")
            text = f"{p.name:<{name_width}}  {how} → hidden_states{fmt_ids(list(fed))}"
        found = lines(wrap(f"{text}  {verdict.value}", width, "  ", "    "))
        last = found[-1]
        found[-1] = last.stylize(VERDICT_STYLE[verdict], len(last.text) - len(verdict.value))
        out += found
    return out


def report_lines(report: CheckReport, width: int, verbose: bool = False) -> list[Line]:
    """Return the human report's lines past ``--verbose``'s tables: the answer first, then one
    block per diagnostic, what was not checked and the smoke run."""
    diags = diagnostics(report)
    out = answer_lines(report, diags, width)
    feeds = feeds_lines(report, width)
    if feeds:
        out += [Line(""), *feeds]
    for diag in diags:
        out += [Line(""), *diagnostic_block(report, diag, width)]
    # The identity evidence is in --verbose: its disagreements are findings already.
    extra = [*(identity_lines(report, width) if verbose else []), *not_checked_lines(report, width)]
    if extra:
        out += [Line(""), *extra]
    if report.smoke is not None:
        from dflash_check.render.smoke_text import smoke_lines  # only a smoke run has its block

        out += [Line(""), *smoke_lines(report.smoke, width)]
    return out


def render_table(report: CheckReport, width: int = 80, verbose: bool = False) -> RenderableType:
    """Return the human report for a console: the answer first, then one block per diagnostic.

    Every line is wrapped here, at spaces only, to ``width``; print it with ``crop=False`` so
    that a token wider than the terminal stays whole.
    """
    from rich.console import Group
    from rich.text import Text

    parts: list[RenderableType] = []
    if verbose:
        from dflash_check.render.grid import verbose_parts  # rich.table: only for --verbose

        parts += [*verbose_parts(report, width), Text("")]
        for part in parts:
            if isinstance(part, Text):
                part.no_wrap = True
                part.overflow = "ignore"
    return Group(*parts, *to_rich(report_lines(report, width, verbose)))


def export_text(renderable: RenderableType, width: int = 120) -> str:
    """Render any report to plain text (for ``--output`` files and tests)."""
    from dflash_check.sanitize import safe_console

    console = safe_console(width=width, record=True, no_color=True, file=io.StringIO())
    console.print(renderable, crop=False)
    return "\n".join(line.rstrip() for line in console.export_text().split("\n"))


def render_text(report: CheckReport, width: int = 80, verbose: bool = False) -> str:
    """Render the human report to plain text at ``width`` columns (without rich, unless
    ``--verbose`` adds its tables)."""
    if verbose:
        return export_text(render_table(report, width, verbose), width)
    return plain(report_lines(report, width))
