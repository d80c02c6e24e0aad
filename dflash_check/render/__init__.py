"""Output formats of ``pair`` and ``registry``: one ``Renderer`` interface, one name → format table.

Every format renders the same result type, the ``RunResult`` of ``check.outcome`` (``pair``
wraps its one report in it), so the commands dispatch through ``OUTPUT_FORMATS`` and never
branch on a format's name. Adding a format is one renderer module and one row below.

This module imports no renderer: a row names its module, imported when the format is used, so
that the CLI can list the names (``--format``, its help) without paying for rich tables or the
rule table at start-up.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import RenderableType

    from dflash_check.check.outcome import RunResult


# eq=False: a page is made once per report and never compared (as OutputFormat, below).
@dataclass(frozen=True, eq=False)
class Page:
    """Where a report goes, as far as a renderer needs to know."""

    width: int
    """Columns to fit (the terminal's, or a fixed width for a file)."""
    verbose: bool = False
    """``--verbose``: the table adds both models and each runtime's layer resolution."""
    console: bool = False
    """The report goes to the console (stdout), which prints rich renderables itself; else it
    goes to a file or a pipe as plain text (and a document format, ``for_terminal`` False, is
    always written as plain text)."""
    terminal: bool = False
    """The console shows styles (rich's ``Console.is_terminal``); else what it prints is the
    text alone, which a renderer may return as a string instead of loading rich for it."""


class Renderer(Protocol):
    """Render a run: a string (a document), or for the console a rich renderable."""

    def __call__(self, result: RunResult, page: Page, /) -> str | RenderableType:
        """Return the report of ``result`` laid out for ``page``."""
        ...


# eq=False: a format names its renderer, one object per --format, compared by identity; no
# generated __eq__/__hash__ to compile on every pair's start-up.
@dataclass(frozen=True, eq=False)
class OutputFormat:
    """One ``--format`` of ``pair`` and ``registry``."""

    name: str
    """What ``--format`` takes."""
    module: str
    """The module holding the renderer, imported only when this format is used."""
    function: str
    """The renderer in ``module`` (a ``Renderer``)."""
    renders_failures: bool = False
    """A pair that could not be checked is still a document in this format (a SARIF result, a
    failed JUnit case), written before the error line and exit 3."""
    error_object: bool = False
    """The error itself is the report (JSON's error object), written where the report goes."""
    for_terminal: bool = False
    """A report a person reads at the terminal: printed there, it is its own summary (no
    summary line on stderr), and it shows each registry pair that could not be checked (no
    error line per pair on stderr). Only such a format is laid out for the terminal (its width,
    ``Page.console``) and may return a rich renderable; any other is a document, a string."""

    def renderer(self) -> Renderer:
        """Import and return the renderer."""
        found: Renderer = getattr(importlib.import_module(self.module), self.function)
        return found

    def render(self, result: RunResult, page: Page) -> str | RenderableType:
        """Render ``result`` in this format."""
        return self.renderer()(result, page)


PACKAGE = "dflash_check.render"
RUN = f"{PACKAGE}.run"  # the table and JSON renderers (one pair or a registry)

OUTPUT_FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("table", RUN, "render_run_table", for_terminal=True),
        OutputFormat("json", RUN, "render_run_json", error_object=True),
        OutputFormat("sarif", f"{PACKAGE}.sarif", "render_sarif", renders_failures=True),
        OutputFormat("junit", f"{PACKAGE}.junit", "render_junit", renders_failures=True),
        OutputFormat("github", f"{PACKAGE}.github", "render_github", renders_failures=True),
        OutputFormat("markdown", f"{PACKAGE}.markdown", "render_markdown", renders_failures=True),
    )
}
"""Every output format by name, in the order ``--help`` lists them."""
