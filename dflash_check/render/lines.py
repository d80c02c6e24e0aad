"""The human report's lines as plain values: text already wrapped, and the styles a terminal
shows on it.

A pair's report is a list of lines wrapped at spaces (``diagnostics.wrap``); rich only colours
them. Kept apart from rich, a report for a pipe or a file is joined as text without importing
rich (some 20 ms of start-up, benchmarks/bench_pair.py); only a terminal gets rich ``Text``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text


@dataclass(frozen=True)
class Line:
    """One line of the report."""

    text: str
    """What it says, wrapped already (never wider than the page, but for one long token)."""
    style: str = ""
    """rich's style for the whole line (``"dim"``); empty: none."""
    spans: tuple[tuple[str, int, int | None], ...] = ()
    """(style, start, end) over part of the line, applied in order after ``style``; end None:
    to the end of the line."""

    def stylize(self, style: str, start: int = 0, end: int | None = None) -> Line:
        """Return the line with ``style`` over ``text[start:end]`` too (as ``Text.stylize``)."""
        return replace(self, spans=(*self.spans, (style, start, end)))


def lines(texts: list[str], style: str = "") -> list[Line]:
    """Return one line per wrapped string, each in ``style``."""
    return [Line(t, style) for t in texts]


def plain(report: list[Line]) -> str:
    """Return the lines as text, one per line: what rich prints of them where no style shows
    (a pipe, a file), without loading rich."""
    # rich drops a line's trailing blanks past the width, and text exports drop them all: the
    # wrapped lines have none, so stripping changes nothing but keeps the two paths alike.
    return "".join(line.text.rstrip() + "\n" for line in report)


def to_rich(report: list[Line]) -> list[Text]:
    """Return the lines as rich ``Text`` for a console, each kept whole: never wrapped again nor
    cut (print them with ``crop=False``), so that a token wider than the terminal stays whole."""
    from rich.text import Text

    out = []
    for line in report:
        text = Text(line.text, style=line.style, no_wrap=True, overflow="ignore")
        for style, start, end in line.spans:
            text.stylize(style, start, end)
        out.append(text)
    return out
