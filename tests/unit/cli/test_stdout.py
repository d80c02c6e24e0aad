"""``cli/stdout.py`` answers as rich's console would: is stdout a terminal, and how wide.

A table for a pipe is written without rich only when rich would print it unstyled, at the
width rich would give it; every environment variable rich reads for either answer is varied
here, with stdout a pipe and a terminal, and a terminal on another descriptor or none.
"""

from __future__ import annotations

import io
import os
import sys

import pytest
from rich.console import Console

from dflash_check.cli import stdout

ENVIRONMENTS = [
    {},
    {"COLUMNS": "57"},
    {"COLUMNS": "0"},
    {"COLUMNS": "wide"},
    {"FORCE_COLOR": ""},
    {"FORCE_COLOR": "1"},
    {"FORCE_COLOR": "0"},
    {"TTY_COMPATIBLE": "0"},
    {"TTY_COMPATIBLE": "1"},
    {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
    {"TTY_COMPATIBLE": "auto", "FORCE_COLOR": "1"},
    {"TERM": "dumb"},
    {"COLUMNS": "57", "LINES": "20"},
]
RICH_VARIABLES = ("COLUMNS", "LINES", "FORCE_COLOR", "TTY_COMPATIBLE", "TERM", "NO_COLOR")


class Stream(io.StringIO):
    """Standard output that says whether it is a terminal."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture(params=[None, 0, 2, "zero"], ids=["no-terminal", "stdin", "stderr", "0-cols"])
def terminal_size(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which standard descriptor is a terminal (of 123 columns): none, stdin, stderr, or
    stdin reporting 0 columns (a pseudo-terminal)."""
    where = request.param

    def size(descriptor: int = 1) -> os.terminal_size:
        if where == "zero" and descriptor == 0:
            return os.terminal_size((0, 0))
        if descriptor == where:
            return os.terminal_size((123, 40))
        raise OSError("not a terminal")

    monkeypatch.setattr(os, "get_terminal_size", size)


@pytest.mark.usefixtures("terminal_size")
@pytest.mark.parametrize(
    "env", ENVIRONMENTS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()) or "none"
)
@pytest.mark.parametrize("tty", [False, True], ids=["pipe", "tty"])
def test_answers_as_rich_does(
    env: dict[str, str], tty: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain exactly when rich's console is no terminal, and then rich's width."""
    for name in RICH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stdout", Stream(tty))
    console = Console()
    assert stdout.plainly_not_terminal() is (not console.is_terminal)
    if not console.is_terminal:
        assert stdout.plain_width() == console.width


def test_jupyter_is_left_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under IPython rich has its own width: the table is printed by rich there."""
    import builtins

    monkeypatch.setattr(builtins, "get_ipython", lambda: None, raising=False)
    monkeypatch.setattr(sys, "stdout", Stream(False))
    assert not stdout.plainly_not_terminal()


def test_a_closed_stream_is_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """``isatty`` on a closed stream raises; rich takes it for no terminal, and so does this."""
    closed = io.StringIO()
    closed.close()
    for name in RICH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdout", closed)
    assert stdout.plainly_not_terminal() is (not Console().is_terminal) is True
