"""The one place where text from outside (files, repos, servers, the user) is made safe to show.

A config string, a model card field or a server's error body may hold control characters: an
``ESC ] 0 ; … BEL`` that retitles the terminal, ``ESC [ 2 J`` that clears it, an OSC-8 link, an
8-bit CSI (U+009B), or a ``\\x01`` that no XML parser accepts. Every output path runs such text
through this module, so that each of them is shown instead of obeyed:

* terminal text (the table, stderr messages and hints, ``--print-command``, plain ``--output``
  files) gets :func:`visible`: C0 controls (newline, and tab where the format allows it, stay),
  DEL and C1 controls become their Python escape (``\\x1b``, ``\\x7f``, ``\\u009b``); an escape
  sequence loses its ESC and so is printed as harmless text;
* JSON and SARIF are written by ``json.dumps`` with ``ensure_ascii``, which escapes every
  control character by JSON's own rules;
* JUnit XML gets :func:`xml_text` (XML 1.0 forbids most C0 controls even as references);
* GitHub annotations get :func:`visible` and then the runner's own ``%`` escapes;
* a value from data inside a one-line message gets :func:`data`: :func:`one_line`, then cut
  at :data:`DATA_LIMIT` characters with an ellipsis (a 3 MB version string is not a message);
* Markdown (the job summary) gets :func:`markdown_text` and :func:`code_span`; SARIF URIs get
  :func:`uri` (RFC 3986 percent-encoding).

A GitHub runner reads every line of a step's output that starts, after blanks, with ``::`` as
a workflow command (``::error``, ``::add-mask::``, ``::stop-commands::``). Only
``--format github`` writes such lines on purpose; :func:`defuse_commands` is the boundary pass
that every other stream and document gets (``cli/terminal.py`` applies it to stdout and
stderr, ``cli/output.py`` to ``--output``): a line that would start a command is written with a
leading ``\\`` instead, which the runner shows as text.

:func:`guard_document` is the last pass over a finished document: it leaves well-formed output
unchanged and turns any control character a renderer let through into a ``\\uXXXX`` text that
is valid inside JSON strings and XML text alike. The tool's own colours never come from data:
they are rich styles, and rich markup is never parsed from data (``markup=False``, ``Text``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# C0 controls, DEL and C1 controls. Newline and tab are kept or escaped per call. Compiled at
# import, as is the guard on every write (``_HEAD``); the other patterns are strings that re
# compiles on first use and caches: most runs write no XML, Markdown or workflow command, and
# ``pair`` pays at start-up for every compile (benchmarks/bench_pair.py).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Characters XML 1.0 forbids outright (besides the C0 controls): lone surrogates and the two
# non-characters U+FFFE / U+FFFF.
_XML_ILLEGAL = r"[\ud800-\udfff\ufffe\uffff]"


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    """Return the Python-style visible form of one control character (``\\n`` for a newline,
    as a reader of the message would type it)."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def visible(text: str, keep: str = "\n") -> str:
    """Return ``text`` with every control character but those in ``keep`` made visible."""
    if not _CONTROL.search(text):  # the common case: nothing to do, no copy
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def one_line(text: str) -> str:
    """Return ``text`` made visible with newlines escaped too (for single-line messages)."""
    return visible(text, keep="")


DATA_LIMIT = 200
"""How many characters of one value from data a message shows (docs/limits.md)."""


def clip(text: str, limit: int = DATA_LIMIT) -> str:
    """Return ``text`` cut to ``limit`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def data(text: object, limit: int = DATA_LIMIT) -> str:
    """Return a value from data as one visible line of at most ``limit`` characters.

    Cut before escaping, so that a long value costs ``limit`` characters of work, not its size.
    """
    return clip(one_line(str(text)[: limit + 1]), limit)


# What ends a line for a runner (.NET's line reader: CR, LF) and for Python's splitlines
# (which a log viewer may follow); a command may follow blanks.
_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_COMMAND = f"(^|[{_BREAKS}])([^\\S{_BREAKS}]*)::"


def defuse_commands(text: str) -> str:
    """Return ``text`` with every line that would start a workflow command (``::`` after
    blanks) prefixed with a backslash, so that the runner shows it instead of obeying it."""
    if "::" not in text:
        return text
    return re.sub(_COMMAND, lambda m: f"{m.group(1)}{m.group(2)}\\::", text)


# The current line, when it could still become a command: after the last break, blanks and at
# most one ':' up to the end (run on every write to stdout and stderr: compiled once, at import).
_HEAD = re.compile(f"[{_BREAKS}]([^\\S{_BREAKS}]*:?)\\Z")


def command_head(tail: str) -> str | None:
    """Return what a stream's current line holds when it could still become a command (blanks,
    then at most one ``:``), given the text written last; None when it cannot."""
    found = _HEAD.search(tail)
    return found.group(1) if found else None


# What starts Markdown inline syntax where a cell or sentence holds data: emphasis, code,
# links and images (``[``; ``](`` needs it), raw HTML and autolinks (``<``), entities (``&``),
# table cells (``|``), strikethrough (``~``). Line-start syntax (``#``, ``-``, ``>``) cannot
# occur: a value from data never starts a line of a report.
_MARKDOWN_SPECIAL = r"([\\`*_\[\]<>|~&])"


def markdown_text(text: object) -> str:
    """Return a value from data as Markdown text that renders as itself: every character with
    an inline meaning in GitHub Markdown is backslash-escaped (``<`` too, so no HTML element
    from data is ever written), controls and newlines made visible."""
    return re.sub(_MARKDOWN_SPECIAL, r"\\\1", one_line(str(text)))


def code_span(text: object) -> str:
    """Return a value from data as a Markdown code span whose fence is longer than any run of
    backticks inside it (CommonMark: the span ends at a run of the same length)."""
    shown = one_line(str(text))
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    # A pipe would end the table cell the span sits in; GitHub reads \| inside a span as |.
    return f"{fence}{pad}{shown.replace('|', chr(92) + '|')}{pad}{fence}"


def uri(path: str) -> str:
    """Return a relative path or URI reference percent-encoded per RFC 3986 (a space, ``#``,
    ``?``, ``%`` and non-ASCII are encoded; ``/`` and an ``scheme:`` prefix are kept)."""
    from urllib.parse import quote

    scheme, sep, rest = path.partition("://")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return f"{scheme}://{quote(rest, safe=_URI_SAFE + ':')}"
    # A ':' in a relative reference's first segment would read as a scheme: encoded too.
    return quote(path, safe=_URI_SAFE)


# Unreserved and sub-delimiter characters, '/' and '@' (RFC 3986, section 3.3: pchar).
_URI_SAFE = "/!$&'()*+,;=-._~@"


def xml_text(text: str) -> str:
    """Return ``text`` safe as XML 1.0 character data: controls visible, illegal code points
    replaced by their visible form (``ElementTree`` then escapes ``<``, ``&`` and quotes)."""
    text = visible(text, keep="\n\t")
    return re.sub(_XML_ILLEGAL, lambda m: f"\\u{ord(m.group()):04x}", text)


def guard_document(text: str, keep: str = "\n\t") -> str:
    """Return a finished document with any stray control character as a ``\\uXXXX`` text.

    A no-op for output that the renderers made safe. ``\\uXXXX`` is chosen because it stays
    valid in every format written: a JSON string escape, literal XML text, plain text.
    """
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(
        lambda m: m.group() if m.group() in keep else f"\\u{ord(m.group()):04x}", text
    )


def shorten(items: list[str] | tuple[str, ...], limit: int = 5, width: int = 200) -> str:
    """Return a comma list of at most ``limit`` items and ``width`` characters, saying how many
    were left off (a server may list 300 000 models; a message needs a few)."""
    shown = [one_line(i) for i in items[:limit]]
    text = ", ".join(shown)
    text = clip(text, width)
    left = len(items) - min(len(items), limit)
    return f"{text} (and {left} more)" if left else text


def safe_console(**kwargs: object) -> Console:
    """Return a rich console whose every text segment is made visible before it is written.

    The renderers already pass data through :func:`visible` before layout (so columns line up);
    this is the boundary guarantee for any string that reaches a console another way. Markup
    and highlighting are off by default: a ``[bold]`` in a model name is text, not a style.
    """
    from rich.console import Console as RichConsole
    from rich.segment import Segment

    class SafeConsole(RichConsole):
        def print(self, *objects: Any, **kwargs: Any) -> None:
            # Before rich sees a string: its Text drops BEL and friends silently; shown is better.
            super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)

        def render(self, renderable: Any, options: Any = None) -> Iterator[Segment]:  # type: ignore[override]
            for segment in super().render(renderable, options):
                if segment.control is None and _CONTROL.search(segment.text):
                    yield Segment(visible(segment.text), segment.style)
                else:
                    yield segment

    kwargs.setdefault("markup", False)
    kwargs.setdefault("highlight", False)  # no colours picked from data (numbers, URLs)
    return SafeConsole(**kwargs)  # type: ignore[arg-type]
