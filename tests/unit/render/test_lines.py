"""The human report without rich: for a pipe or a file, the text rich would print, unchanged.

``render.lines`` keeps the report's lines and their styles apart from rich, so that a report
with no terminal to colour it is joined as text without loading rich. These hold the two
paths to one output: the plain text is what rich prints on a console that is no terminal, and
a terminal shows the same text with its styles.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest

from dflash_check.app.pipeline import CheckRequest, check_pair
from dflash_check.check.report import CheckReport
from dflash_check.render.lines import Line, plain, to_rich
from dflash_check.render.table import render_table, render_text
from dflash_check.sanitize import safe_console
from dflash_check.sources.interface import parse_model_ref
from tests.golden.test_report import seed_report, smoke_fixture
from tests.support.helpers import FIXTURES, QWEN3_4B, settings

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def eagle3_report() -> CheckReport:
    """An EAGLE-3 head and its target: the report lists the tensors each runtime feeds it."""
    head = FIXTURES / "eagle3" / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
    target = FIXTURES / "targets" / "meta-llama--Meta-Llama-3.1-8B"
    request = CheckRequest(parse_model_ref(str(head)), parse_model_ref(str(target)), settings())
    return check_pair(request)


REPORTS = {
    "seed, portable": lambda: seed_report(),
    "seed, on vLLM": lambda: seed_report(runtime="vllm"),
    "seed on its own target, with a smoke run": lambda: replace(
        seed_report(QWEN3_4B), smoke=smoke_fixture()
    ),
    "EAGLE-3": eagle3_report,
}


def printed(report: CheckReport, width: int, terminal: bool) -> str:
    """Return what the CLI's rich console prints of the report at ``width``."""
    out = io.StringIO()
    # NO_COLOR (which the test environment may set) would leave the bold alone.
    options = {"force_terminal": True, "color_system": "standard", "no_color": False}
    console = safe_console(highlight=False, file=out, width=width, **(options if terminal else {}))
    assert console.is_terminal is terminal
    console.print(render_table(report, width), crop=False)
    return out.getvalue()


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("width", [30, 80, 120])
def test_plain_text_is_what_rich_prints_to_a_pipe(name: str, width: int) -> None:
    """Byte for byte, at a width that wraps every block and at wide ones."""
    report = REPORTS[name]()
    assert render_text(report, width) == printed(report, width, terminal=False)


@pytest.mark.parametrize("name", REPORTS)
def test_a_terminal_shows_the_same_text_styled(name: str) -> None:
    """At a terminal the text is the same; the styles are what rich adds to it."""
    report = REPORTS[name]()
    styled = printed(report, 80, terminal=True)
    assert styled != render_text(report, 80)
    assert ANSI.sub("", styled) == render_text(report, 80)


def test_the_verdict_and_a_label_keep_their_colours() -> None:
    """The answer's verdict in bold red, a diagnostic's label in bold red, its help in bold
    cyan (as rich showed them before the lines were kept apart from it)."""
    styled = printed(seed_report(), 80, terminal=True)
    assert "\x1b[1;31mincompatible on all 6 runtimes\x1b[0m" in styled
    assert "\x1b[1;31merror[DF007]\x1b[0m\x1b[1m: " in styled
    assert "\x1b[1;36mhelp:\x1b[0m" in styled


def test_spans_apply_in_order_over_the_line_style() -> None:
    """A line's spans are applied after its own style, as ``Text.stylize`` calls were."""
    line = Line("warning[DF001]: x", "dim").stylize("yellow", 0, 14).stylize("bold", 14)
    (text,) = to_rich([line])
    assert str(text.style) == "dim"
    assert [(s.start, s.end, str(s.style)) for s in text.spans] == [
        (0, 14, "yellow"),
        (14, 17, "bold"),
    ]
    assert text.no_wrap and text.overflow == "ignore"
    assert plain([line, Line("")]) == "warning[DF001]: x\n\n"
