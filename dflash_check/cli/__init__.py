"""The command line: parse options into a request, run the check, render, pick the exit code.

One module per command (``pair``, ``registry``, ``rules`` with ``explain``, ``info`` with
``runtimes`` and ``formats``), the options they share in ``options``, what they print and how
they exit in ``output``, the typer app and ``main`` in ``main``. Only the CLI prints or exits.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from dflash_check.cli.main import main

if TYPE_CHECKING:
    import typer

__all__ = ["app", "main"]


def __getattr__(name: str) -> typer.Typer:
    """``app``: the typer app with every command (built on first use: a run builds its own)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The submodule, not the function ``main`` this package binds under the same name.
    return sys.modules["dflash_check.cli.main"].full_app()
