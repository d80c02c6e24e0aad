"""Standard streams that never turn a report into a crash.

Two things a user's shell can do to the tool's output, and what happens instead:

* a terminal or pipe that cannot encode the report (``PYTHONIOENCODING=ascii``, a C locale):
  the text is written with ASCII stand-ins for the few symbols the reports use (``->`` for
  ``→``, ``x`` for ``✗`` …), anything else as ``?``; rich already draws ASCII table borders
  for such a stream;
* a closed stdout (``>&-``) or one whose reader went away (``| head -1``): the rest of the
  output is dropped silently and the exit code is still the verdict's, as documented;
* a CI runner that reads a line starting with ``::`` as a workflow command: no line written
  here can start one (``sanitize.defuse_commands``), except the report of ``--format github``,
  which is written with :meth:`SafeStream.write_commands`. The check follows the line across
  writes, so that a message split over two ``write`` calls is guarded too.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any, TextIO

from dflash_check.sanitize import command_head, defuse_commands

# The non-ASCII symbols the reports and messages use, and their ASCII stand-ins.
ASCII_FALLBACK = str.maketrans(
    {
        "–": "-",
        "—": "-",
        "…": "...",
        "≤": "<=",
        "≥": ">=",
        "→": "->",
        "×": "x",
        "✓": "ok",
        "✗": "x",
        "●": "*",
        "█": "#",
        "░": ".",
        "│": "|",
        "─": "-",
        "·": ".",
        "§": "S",
        "τ": "tau",
    }
)


class SafeStream(io.TextIOBase):
    """A text stream that degrades to ASCII and goes quiet on a broken pipe."""

    def __init__(self, inner: TextIO | None) -> None:
        self._inner = inner
        self._broken = inner is None
        # What the current line holds while it could still become a command (blanks, then at
        # most one ':'); None once it cannot. A stream starts at the start of a line.
        self._head: str | None = ""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        return bool(self._inner is not None and not self._broken and self._inner.isatty())

    def fileno(self) -> int:
        if self._inner is None:
            raise io.UnsupportedOperation("stream is closed")
        return self._inner.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str | bytes) -> int:  # type: ignore[override]
        if isinstance(text, (bytes, bytearray)):
            # click's echo writes bytes to a stream without a binary ``buffer`` (this one has
            # none, so that nothing bypasses the guard below): typer's help does, when
            # stdout is a pipe. Decoded here and guarded like any text.
            text = bytes(text).decode(self.encoding, "replace")
        return self._write(self._defuse(text), len(text))

    def write_commands(self, text: str) -> int:
        """Write ``text`` as it is: workflow commands the tool itself wrote (``--format
        github``, whose renderer escapes every value from data the runner's way)."""
        self._advance(text)
        return self._write(text, len(text))

    def _defuse(self, text: str) -> str:
        """Return ``text`` with no line that would start a workflow command."""
        if not text:
            return text
        head = self._head
        if head is not None and head.endswith(":") and text.startswith(":"):
            # The line's first ':' is already out: break the pair here, and guard the lines
            # the rest of text starts.
            text = "\\" + defuse_commands("-" + text)[1:]
        else:
            # What the line already holds is put back in front, so that a command split across
            # writes is seen whole; mid-line ("-") only the lines text starts are guarded.
            prefix = "-" if head is None else head
            text = defuse_commands(prefix + text)[len(prefix) :]
        self._advance(text)
        return text

    def _advance(self, text: str) -> None:
        """Follow the current line over ``text`` (written as is)."""
        # Without a line break in text, the line that was open goes on.
        self._head = command_head(text if self._head is None else "\n" + self._head + text)

    def _write(self, text: str, size: int) -> int:
        if self._broken or self._inner is None:
            return size
        try:
            try:
                self._inner.write(text)
            except UnicodeEncodeError:
                encoding = self.encoding
                safe = text.translate(ASCII_FALLBACK).encode(encoding, "replace")
                self._inner.write(safe.decode(encoding))
        except (BrokenPipeError, ValueError, OSError):
            self._go_quiet()
        return size

    def flush(self) -> None:
        if self._broken or self._inner is None:
            return
        try:
            self._inner.flush()
        except (BrokenPipeError, ValueError, OSError):
            self._go_quiet()

    def _go_quiet(self) -> None:
        """Drop all further output, and point the descriptor at /dev/null so that the
        interpreter's own flush at exit does not report the broken pipe either."""
        self._broken = True
        inner = self._inner
        if inner is None:
            return
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, inner.fileno())
            os.close(devnull)


def write_commands(text: str) -> None:
    """Write workflow commands the tool wrote (``--format github``) to stdout, unguarded."""
    stream = sys.stdout
    if isinstance(stream, SafeStream):
        stream.write_commands(text)
    else:
        stream.write(text)


def install() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` (once)."""
    for name in ("stdout", "stderr"):
        current: Any = getattr(sys, name)
        if not isinstance(current, SafeStream):
            setattr(sys, name, SafeStream(current))


def shown(progress: Any) -> contextlib.AbstractContextManager[Any]:
    """Enter a rich ``Progress`` only where it is drawn (a terminal).

    rich before 14.3 writes a blank line to its console when a disabled transient progress
    stops: in a pipe that is one stray line of stderr before the summary. Updating a progress
    that was never started is harmless, so the callers keep one code path.
    """
    return contextlib.nullcontext(progress) if progress.disable else progress
