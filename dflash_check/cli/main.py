"""The typer app: its commands (one module each), the ``--version`` callback and ``main``.

A run builds the app with only the command it names (``dflash-check pair …`` imports
``cli/pair.py`` and typer reads ``pair``'s parameters alone: start-up is the check path's cost,
benchmarks/bench_pair.py); anything else (``--help``, ``--version``, shell completion, an
unknown command) gets every command, as ``app`` (what tests and tools/gen_docs.py use) has them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import cache
from typing import Annotated

import typer

from dflash_check import __version__
from dflash_check.cli.output import debug_enabled, redact, stderr_console
from dflash_check.errors import ExitCode


def _new_app() -> typer.Typer:
    """Return the app with its callback and no command yet."""
    app = typer.Typer(
        name="dflash-check",
        help="Check, before loading a weight, whether a speculative-decoding draft (DFlash, "
        "DSpark, EAGLE-3) or a target's own MTP layers work with a target model in each serving "
        "engine.",
        no_args_is_help=True,
        add_completion=True,
        # -h as well, as hf, ruff and pip-audit take it (every command inherits it).
        context_settings={"help_option_names": ["-h", "--help"]},
        # Locals can hold an HF token: never show them (and tracebacks only with
        # DFLASH_CHECK_DEBUG).
        pretty_exceptions_show_locals=False,
        rich_markup_mode="rich",
    )
    app.callback()(main_callback)
    return app


def version_callback(value: bool) -> None:
    """Print the version and exit."""
    if value:
        typer.echo(f"dflash-check {__version__}")
        raise typer.Exit()


def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Check DFlash draft/target pairs from their configs, before any weight is loaded."""
    from dflash_check.cli.terminal import install

    # Again here for an app run without main() (typer's CliRunner, an embedding program): its
    # streams get the same guards. A no-op when main() installed them.
    install()


def _pair(app: typer.Typer) -> None:
    from dflash_check.cli import pair
    from dflash_check.cli.options import PairUsageCommand
    from dflash_check.cli.output import EXIT_CODES, epilog

    app.command(cls=PairUsageCommand, epilog=epilog(pair.PAIR_EXAMPLES, EXIT_CODES))(pair.pair)


def _registry(app: typer.Typer) -> None:
    from dflash_check.cli import registry_command as registry
    from dflash_check.cli.options import UsageCommand
    from dflash_check.cli.output import REGISTRY_EXIT_CODES, REGISTRY_EXIT_RULE, epilog

    text = epilog(registry.REGISTRY_EXAMPLES, REGISTRY_EXIT_CODES, REGISTRY_EXIT_RULE)
    app.command(cls=UsageCommand, epilog=text)(registry.registry)


def _rules(app: typer.Typer) -> None:
    from dflash_check.cli import rules
    from dflash_check.cli.options import UsageCommand

    app.command(cls=UsageCommand)(rules.rules)


def _explain(app: typer.Typer) -> None:
    from dflash_check.cli import rules
    from dflash_check.cli.options import UsageCommand

    app.command(cls=UsageCommand)(rules.explain)


def _runtimes(app: typer.Typer) -> None:
    from dflash_check.cli import info

    app.command()(info.runtimes)


def _formats(app: typer.Typer) -> None:
    from dflash_check.cli import info

    app.command()(info.formats)


def _docs(app: typer.Typer) -> None:
    from dflash_check.cli import docs
    from dflash_check.cli.options import UsageCommand

    app.command(cls=UsageCommand)(docs.docs)


COMMANDS: dict[str, Callable[[typer.Typer], None]] = {
    "pair": _pair,
    "registry": _registry,
    "rules": _rules,
    "explain": _explain,
    "runtimes": _runtimes,
    "formats": _formats,
    "docs": _docs,
}
"""Each command's name and how it is registered, in the order ``--help`` lists them."""
COMPLETE_ENV = "_DFLASH_CHECK_COMPLETE"
"""Set by the shell's completion script: completing lists every command."""


def build_app(only: str | None = None) -> typer.Typer:
    """Return the app with the command named ``only`` (None: with every command)."""
    app = _new_app()
    for name, register in COMMANDS.items():
        if only is None or name == only:
            register(app)
    return app


def chosen_command(argv: list[str]) -> str | None:
    """Return the command a command line names first (``pair`` of ``pair A B``), if it names
    one and the shell is not completing it; None: the app needs every command."""
    if COMPLETE_ENV in os.environ or not argv or argv[0] not in COMMANDS:
        return None
    return argv[0]


@cache
def full_app() -> typer.Typer:
    """Return the app with every command, built once (tests, tools/gen_docs.py)."""
    return build_app()


def __getattr__(name: str) -> typer.Typer:
    """``app``: the app with every command, built when first asked for."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return full_app()


def main() -> None:
    """Run the CLI; turn any unexpected exception into one line and exit 3.

    DFLASH_CHECK_DEBUG=1 adds the traceback and changes nothing else, the exit code included.
    """
    from dflash_check.cli.terminal import install

    install()  # ASCII-only terminals and closed or broken stdout (see terminal.py)
    app = build_app(chosen_command(sys.argv[1:]))
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
        from dflash_check.sanitize import data

        stderr_console().print(
            f"Error: unexpected {type(err).__name__}: {data(redact(str(err)), 1000)}",
            markup=False,
        )
        if not debug_enabled():
            stderr_console().print("Set DFLASH_CHECK_DEBUG=1 for the traceback.", markup=False)
        sys.exit(ExitCode.NOT_CHECKED)
