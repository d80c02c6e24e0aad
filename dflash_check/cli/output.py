"""What the CLI prints and how it ends: consoles, redaction, one-line errors, the report's
destination, the summary line and the exit codes.

Only the CLI prints or exits. Data goes to stdout (or ``--output``), messages to stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from dflash_check.errors import CheckError, ExitCode

if TYPE_CHECKING:
    from rich.console import Console

    from dflash_check.check.outcome import RunResult
    from dflash_check.check.report import CheckReport
    from dflash_check.render import OutputFormat

ENGINE_KEY_ENV = "DFLASH_CHECK_ENGINE_API_KEY"

# Text reports written to a file have no terminal to fit; this reads well in an editor.
FILE_WIDTH = 100


def stderr_console() -> Console:
    """Return the console for messages (stderr)."""
    from dflash_check.sanitize import safe_console

    return safe_console(stderr=True, highlight=False, soft_wrap=True)


def stdout_console() -> Console:
    """Return the console for data (stdout)."""
    from dflash_check.sanitize import safe_console

    return safe_console(highlight=False)


# Text for a pipe or a file is never cut or wrapped to a terminal that is not there: `rules |
# grep DF004` finds the whole line (rich reports 80 columns for a pipe).
UNBOUNDED_WIDTH = 10_000


def listing_width() -> int:
    """Return the width to lay listings out at: the terminal's, or COLUMNS when set (`COLUMNS=80
    dflash-check rules | less`), else unbounded."""
    console = stdout_console()
    if console.is_terminal or os.environ.get("COLUMNS", "").strip():
        return console.width
    return UNBOUNDED_WIDTH


def note(text: str) -> None:
    """Print one plain line on stderr (no rich: machine formats never need it)."""
    from dflash_check.sanitize import visible

    sys.stderr.write(visible(text) + "\n")


_GIVEN_SECRETS: list[str] = []
"""Tokens given as options to the command running (``--token``, ``--engine-api-key``); the
environment's tokens are read when redacting. Replaced by each command, so that one run's token
never masks text in the next (tests invoke the app many times in one process)."""


def remember_secrets(*values: str | None) -> None:
    """Have ``values`` (tokens given as options) redacted from every message of this run."""
    _GIVEN_SECRETS[:] = [v for v in values if v]


def secrets() -> list[str]:
    """Return the token values that must never be printed."""
    values = [
        os.environ.get("HF_TOKEN"),
        os.environ.get("HUGGING_FACE_HUB_TOKEN"),
        os.environ.get(ENGINE_KEY_ENV),
        *_GIVEN_SECRETS,
    ]
    return [v for v in values if v and len(v) >= 4]


def redact(text: str) -> str:
    """Remove every known token value from ``text``."""
    for secret in secrets():
        text = text.replace(secret, "***")
    return text


def debug_enabled() -> bool:
    """Return whether ``DFLASH_CHECK_DEBUG`` asks for tracebacks."""
    return os.environ.get("DFLASH_CHECK_DEBUG", "") not in ("", "0")


def terminal_lines(console: Console, text: str) -> str:
    """Return ``text`` wrapped at spaces for a terminal (the terminal would fold it mid-word,
    `HF_END` / `POINT`); unchanged for a pipe or a file, where one line per message is easier
    to search."""
    if not console.is_terminal:
        return text
    from dflash_check.render.diagnostics import wrap

    return "\n".join(wrap(text, console.width, "", "  "))


def fail(err: CheckError, json_output: bool = False, output: Path | None = None) -> NoReturn:
    """Print one line for ``err`` (plus a hint) on stderr and exit 3.

    With ``--format json`` the error object is the report: it goes where the report would go
    (``--output`` or stdout).
    """
    print_error(err)
    if json_output:
        import json

        from dflash_check.render.json import error_dict

        payload = error_dict(
            redact(str(err)), redact(err.hint) if err.hint else None, type(err).__name__
        )
        write_output(json.dumps(payload, indent=2) + "\n", output)
    raise typer.Exit(ExitCode.NOT_CHECKED)


def print_error(err: CheckError, lines: tuple[str, ...] = ()) -> None:
    """Print ``err`` on stderr: an ``Error:`` line per entry of ``lines`` (default: the
    error's own message), its hint, and the traceback under ``DFLASH_CHECK_DEBUG``."""
    console = stderr_console()
    if debug_enabled():
        import traceback

        console.print(redact("".join(traceback.format_exception(err))), markup=False)
    from dflash_check.sanitize import one_line

    # One line each, whatever a message quotes (a name from a file with a newline in it).
    for text in lines or (str(err),):
        line = one_line(redact(text))
        console.print(terminal_lines(console, f"Error: {line}"), markup=False, style="bold red")
    if err.hint:
        hint = one_line(redact(err.hint))
        console.print(terminal_lines(console, f"Hint: {hint}"), markup=False)
    if not debug_enabled():
        console.print("Set DFLASH_CHECK_DEBUG=1 for details.", markup=False, style="dim")


def write_output(text: str, output: Path | None, commands: bool = False) -> None:
    """Write the rendered report to ``output``, or to stdout.

    ``commands``: the report is GitHub workflow commands (``--format github``); any other
    report has no line that a CI runner would obey (``sanitize.defuse_commands``), in a file
    too, since a CI step may print it.
    """
    from dflash_check.cli.terminal import write_commands
    from dflash_check.sanitize import defuse_commands, guard_document

    text = guard_document(text)  # a no-op unless a renderer let a control character through
    if not commands:
        text = defuse_commands(text)
    if output is None:
        if commands:
            write_commands(text)
        else:
            sys.stdout.write(text)
        return
    from dflash_check.sources.output import write_report

    try:
        write_report(output, text)  # atomic, never through a symlink (see output.py)
    except CheckError as err:
        fail(err)


def emit(result: RunResult, fmt: OutputFormat, output: Path | None, verbose: bool = False) -> None:
    """Render ``result`` in ``fmt`` and write it to ``output`` (or stdout): the one place both
    ``pair`` and ``registry`` hand a report over, whatever its format."""
    from dflash_check.render import Page

    # Only the table is laid out for the console, after a look at stdout; a document (JSON,
    # SARIF…) has no width, so it is written without a rich console (rich costs ~20 ms of
    # start-up), and so is a table for a pipe, which shows no style: rich's console is made
    # only for a terminal.
    to_console = output is None and fmt.for_terminal
    console: Console | None = None
    width = FILE_WIDTH
    if to_console:
        from dflash_check.cli.stdout import plain_width, plainly_not_terminal

        plain = plainly_not_terminal()
        console = None if plain else stdout_console()
        width = plain_width() if console is None else console.width
    page = Page(width, verbose, console=to_console, terminal=console is not None)
    rendered = fmt.render(result, page)
    if isinstance(rendered, str):
        write_output(rendered, output, commands=fmt.name == "github")
    else:
        assert to_console  # a renderer returns rich only for the console
        (console or stdout_console()).print(rendered, crop=False)


def summarise(text: str, output: Path | None) -> None:
    """Print the one-line summary on stderr, naming the file the report went to."""
    where = f"; report written to {output}" if output is not None else ""
    line = f"dflash-check: {text}{where}"
    if line.count(":") < 2:
        # What rich would write: no markup, no style, no wrapping (soft wrap); with one colon
        # there is no :emoji: code for it to replace. Plain, it spares the run rich's import.
        note(line)
        return
    stderr_console().print(line, markup=False)


EXIT_CODES = {
    ExitCode.COMPATIBLE: "compatible (warnings allowed unless --strict)",
    ExitCode.INCOMPATIBLE: "incompatible, a failed smoke run, or a warning under --strict; "
    "with one model: it has no MTP layers, or its checkpoint lacks them",
    ExitCode.USAGE: "usage error",
    ExitCode.NOT_CHECKED: "could not check (network, gated, offline miss, malformed input)",
}
REGISTRY_EXIT_CODES = {
    ExitCode.COMPATIBLE: "every pair as expected",
    ExitCode.INCOMPATIBLE: "a pair not as expected, whatever else happened",
    ExitCode.USAGE: "usage error",
    ExitCode.NOT_CHECKED: "none was not as expected, and a pair could not be checked or none "
    "was (every entry skipped)",
}
# The one statement of the registry's exit codes: the README and docs/ci.md quote it word for
# word, and a test reads all three (with --help) against it.
REGISTRY_EXIT_RULE = (
    "`registry` exits 1 when any pair is not as expected, whatever else happened; "
    "3 only when none was not as expected and some pair could not be checked, or no pair was "
    "checked at all (every entry of an engine's test registry skipped); "
    "0 when every pair was checked and as expected."
)


def epilog(examples: list[str], codes: dict[ExitCode, str], rule: str | None = None) -> str:
    """Return a command's help epilog: examples, then its exit codes (and ``rule``, the one
    sentence that orders them, when outcomes can mix)."""
    example_lines = "\n".join(["Examples:", *(f"  $ {e}" for e in examples)])
    code_lines = "\n".join(["Exit codes:", *(f"  {int(c)}  {text}" for c, text in codes.items())])
    if rule is not None:
        code_lines += "\n\n" + rule.replace("`", "")
    return f"{example_lines}\n\n{code_lines}"


def exit_code(report: CheckReport, strict: bool) -> int:
    """Return the exit code: 1 when the verdict is incompatible (which, with --strict, counts
    warnings and rules not checked: the printed verdict says so) or the smoke run fails."""
    from dflash_check.check.report import Verdict

    assert report.strict == strict  # the verdict printed is the one the code reflects
    if report.verdict is Verdict.INCOMPATIBLE:
        return ExitCode.INCOMPATIBLE
    if report.smoke is not None and not report.smoke.passed:
        return ExitCode.INCOMPATIBLE
    return ExitCode.COMPATIBLE


def registry_exit_code(result: RunResult) -> int:
    """Return the registry's exit code by severity (``REGISTRY_EXIT_RULE``): 1 when any pair is
    not as expected, whatever else happened (an unchecked pair must never hide a known
    incompatibility: CI retries 3 as "infrastructure"); else 3 when any pair could not be
    checked, or when none was (``nothing_checked``: a gate that checked nothing must not pass,
    as an empty ``pairs:`` list does not); else 0."""
    if result.count("mismatch"):
        return ExitCode.INCOMPATIBLE
    if result.count("error") or nothing_checked(result) is not None:
        return ExitCode.NOT_CHECKED
    return ExitCode.COMPATIBLE


def nothing_checked(result: RunResult) -> str | None:
    """Return the one line saying a registry run checked nothing because its file's every
    entry was skipped (an engine's test registry listing only methods the tool does not
    check), with why; None when a pair was checked, or the file listed no entry at all."""
    if result.outcomes or not result.skipped:
        return None
    reasons: dict[str, int] = {}
    for entry in result.skipped:
        reasons[entry.reason] = reasons.get(entry.reason, 0) + 1
    why = "; ".join(f"{r}: {n}" if len(reasons) > 1 else r for r, n in reasons.items())
    n = len(result.skipped)
    every = "its one entry was" if n == 1 else f"all {n} entries were"
    return f"{result.file or 'registry'}: nothing was checked: {every} skipped ({why})"


# REGISTRY_EXIT_RULE as an order: a later code never hides an earlier one.
SEVERITY_ORDER = (ExitCode.INCOMPATIBLE, ExitCode.NOT_CHECKED, ExitCode.USAGE)


def most_severe(codes: list[int]) -> int:
    """Return the code of several runs (the pre-commit hook's files): 1 when any run found a
    pair not as expected, else 3, else 2, else 0; an unknown code (a crash) wins over all."""
    unknown = [c for c in codes if c not in (ExitCode.COMPATIBLE, *SEVERITY_ORDER)]
    if unknown:
        return unknown[0]
    return next((int(c) for c in SEVERITY_ORDER if c in codes), int(ExitCode.COMPATIBLE))


def print_listing(kind: str, output_format: str) -> None:
    """Print the rule, runtime or format listing (``dflash_check.render.listing``) in the asked
    format: ``table`` (terminal text), ``json`` or ``markdown``."""
    import importlib

    listing = importlib.import_module(f"dflash_check.render.listing.{kind}")
    if output_format == "table":
        sys.stdout.write(getattr(listing, f"{kind}_text")(listing_width()))
    else:
        sys.stdout.write(getattr(listing, f"{kind}_{output_format}")())
