"""GitHub Actions workflow commands (``::error file=…,line=…,title=…::message``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflash_check.check.outcome import RunResult
from dflash_check.check.report import Severity
from dflash_check.render.annotations import collect_annotations
from dflash_check.sanitize import visible

if TYPE_CHECKING:
    from dflash_check.render import Page

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a message as the runner expects (%, CR, LF), other controls made visible."""
    return visible(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (also ':' and ',')."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: RunResult, page: Page | None = None) -> str:
    """Render a run as workflow commands, then a one-line notice with the counts.

    A document: ``page`` (a width) is not used; it is there to be a ``Renderer``.
    """
    lines = []
    for p in result.problems:  # a broken input file: an error at its line, nothing checked
        props = [f"file={escape_property(p.file)}"]
        if p.line is not None:
            props.append(f"line={p.line}")
        props.append("title=invalid input")
        lines.append(f"::error {','.join(props)}::{escape_data(p.message)}")
    for a in collect_annotations(result):
        props = []
        if a.location.uri is not None and a.location.is_local:
            props.append(f"file={escape_property(a.location.uri)}")
            if a.location.line is not None:
                props.append(f"line={a.location.line}")
        if a.suppressed:  # shown, never failing the job: a notice that says it was ignored
            props.append(f"title={escape_property(a.rule)} (ignored)")
            lines.append(f"::notice {','.join(props)}::{escape_data(a.text)}")
            continue
        props.append(f"title={escape_property(a.rule)}")
        lines.append(f"::{COMMAND[a.level]} {','.join(props)}::{escape_data(a.text)}")
    for k in result.skipped:  # an engine test entry the tool does not check: a notice
        props = [f"line={k.line}", "title=not checked"]
        if result.file is not None:
            props.insert(0, f"file={escape_property(result.file)}")
        text = f"{k.key}: {k.label}: not checked: {k.reason}"
        lines.append(f"::notice {','.join(props)}::{escape_data(text)}")
    total = len(result.outcomes)
    if result.file is None and total == 1:  # `pair`: one pair, said as its verdict
        o = result.outcomes[0]
        lines.append(f"::notice title=dflash-check::{escape_data(o.label)}: {o.verdict_text}")
        return "\n".join(lines) + "\n"
    skipped = f"; {len(result.skipped)} entries skipped" if result.skipped else ""
    lines.append(
        f"::notice title=dflash-check::{total} pair{'s' if total != 1 else ''}: "
        f"{result.count('ok')} as expected, {result.count('mismatch')} not as expected, "
        f"{result.count('error')} not checked{skipped}"
    )
    return "\n".join(lines) + "\n"
