"""The command line: parse options into a request, run the check, render, pick the exit code.

One module per command (``pair``, ``registry``, ``rules`` with ``explain``, ``info`` with
``runtimes`` and ``formats``), the options they share in ``options``, what they print and how
they exit in ``output``, the typer app and ``main`` in ``app``. Only the CLI prints or exits.
"""

from __future__ import annotations

from dflash_check.cli.app import app, main

__all__ = ["app", "main"]
