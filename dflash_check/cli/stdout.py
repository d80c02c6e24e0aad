"""What rich's console would decide about stdout, answered without importing rich.

A report printed to a pipe or a CI log shows no style: it is its text alone, which the table
renderer writes without rich (rich costs some 20 ms of start-up, benchmarks/bench_pair.py). To
print the same text at the same width, the two answers rich's ``Console`` gives are repeated
here, for the cases where they are plain to see; anything else (Windows, Jupyter) gets rich's
own answer. tests/unit/cli/test_stdout.py holds both to rich's across the environments that
change them.
"""

from __future__ import annotations

import builtins
import os
import sys

STREAMS = (0, 1, 2)
"""The descriptors rich asks for a terminal size, in order (stdin, stdout, stderr)."""
DEFAULT_WIDTH = 80
"""rich's width where no descriptor is a terminal and ``COLUMNS`` is not set."""


def plainly_not_terminal() -> bool:
    """Return True when rich's console for stdout would be no terminal (no style, no colour)
    for reasons read without rich; False when it would be one, or when only rich can tell."""
    if sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False  # legacy Windows consoles and Jupyter: rich's own rules
    # rich's Console.is_terminal, in its order: TTY_COMPATIBLE, FORCE_COLOR, then isatty().
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "0"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color == ""
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        return isatty is None or not isatty()
    except ValueError:  # a closed stream: rich says no terminal too
        return True


def plain_width() -> int:
    """Return the width rich's console gives stdout when it is no terminal
    (``plainly_not_terminal``): ``COLUMNS`` when set, else the size of the first standard
    descriptor that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for descriptor in STREAMS:
        try:
            # A pseudo-terminal can report 0 columns: rich takes 80 then.
            return os.get_terminal_size(descriptor).columns or DEFAULT_WIDTH
        except (AttributeError, ValueError, OSError):
            continue
    return DEFAULT_WIDTH
