"""The table and JSON ``Renderer``s over a ``RunResult`` (rows of ``OUTPUT_FORMATS``).

The table and JSON reports of one pair differ from those of a registry (one pair's report in
full against a line per pair), so their renderers tell the two apart here; the CI formats
render any run alike, and their rows name their own modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflash_check.check.report import CheckReport

if TYPE_CHECKING:
    from rich.console import RenderableType

    from dflash_check.check.outcome import RunResult
    from dflash_check.render import Page


def pair_report(result: RunResult) -> CheckReport | None:
    """Return the report when ``result`` is one ``pair`` run (no registry file), else None."""
    if result.file is None and len(result.outcomes) == 1:
        report = result.outcomes[0].report
        if isinstance(report, CheckReport):
            return report
    return None


def render_run_table(result: RunResult, page: Page) -> str | RenderableType:
    """The human report: rich for a terminal; for a pipe or a file, plain text at the page's
    width (one pair's report, but for ``--verbose``'s tables, without loading rich)."""
    from dflash_check.render.table import export_text, render_table, render_text

    report = pair_report(result)
    if report is not None and not page.terminal and not page.verbose:
        return render_text(report, page.width)  # the text rich would print: no rich loaded
    if report is not None:
        table = render_table(report, page.width, page.verbose)
    else:  # imported only here: one pair's report needs none of the registry's renderer
        from dflash_check.render.pairs_report import render_registry_table

        table = render_registry_table(result, page.width)
    return table if page.console else export_text(table, page.width)


def render_run_json(result: RunResult, page: Page) -> str:
    """The JSON report: one pair's report in full, or the registry's list of pairs."""
    report = pair_report(result)
    if report is not None:
        from dflash_check.render.json import render_json

        return render_json(report)
    from dflash_check.render.pairs_report import render_registry_json

    return render_registry_json(result)
