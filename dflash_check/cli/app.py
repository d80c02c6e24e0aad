"""The typer app: its commands (one module each), the ``--version`` callback and ``main``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from dflash_check import __version__
from dflash_check.cli import info, pair, registry, rules
from dflash_check.cli.options import PairUsageCommand, UsageCommand
from dflash_check.cli.output import (
    EXIT_CODES,
    REGISTRY_EXIT_CODES,
    debug_enabled,
    epilog,
    redact,
    stderr_console,
)
from dflash_check.errors import ExitCode

app = typer.Typer(
    name="dflash-check",
    help="Check, before loading a weight, whether a speculative-decoding draft (DFlash, DSpark, "
    "EAGLE-3) or a target's own MTP layers work with a target model in each serving engine.",
    no_args_is_help=True,
    add_completion=True,
    # Locals can hold an HF token: never show them (and tracebacks only with DFLASH_CHECK_DEBUG).
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
)


def version_callback(value: bool) -> None:
    """Print the version and exit."""
    if value:
        typer.echo(f"dflash-check {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Check DFlash draft/target pairs from their configs, before any weight is loaded."""


# In the order `--help` lists them.
app.command(cls=PairUsageCommand, epilog=epilog(pair.PAIR_EXAMPLES, EXIT_CODES))(pair.pair)
app.command(cls=UsageCommand, epilog=epilog(registry.REGISTRY_EXAMPLES, REGISTRY_EXIT_CODES))(
    registry.registry
)
app.command(cls=UsageCommand)(rules.rules)
app.command(cls=UsageCommand)(rules.explain)
app.command()(info.runtimes)
app.command()(info.formats)


def main() -> None:
    """Run the CLI; turn any unexpected exception into one line and exit 3.

    DFLASH_CHECK_DEBUG=1 adds the traceback and changes nothing else, the exit code included.
    """
    from dflash_check.cli.terminal import install

    install()  # ASCII-only terminals and closed or broken stdout (see terminal.py)
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        stderr_console().print("Interrupted.")
        sys.exit(130)
    except Exception as err:  # noqa: BLE001 - the last resort: one line, exit 3
        if debug_enabled():
            import traceback

            stderr_console().print(redact(traceback.format_exc()), markup=False)
        stderr_console().print(
            f"Error: unexpected {type(err).__name__}: {redact(str(err))}", markup=False
        )
        if not debug_enabled():
            stderr_console().print("Set DFLASH_CHECK_DEBUG=1 for the traceback.", markup=False)
        sys.exit(ExitCode.NOT_CHECKED)
