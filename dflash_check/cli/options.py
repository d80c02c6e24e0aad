"""The options of ``pair`` and ``registry``, declared once, and the groups they are read into.

Each option is an ``Annotated`` alias that the commands put in their signatures (typer reads
the parameters); a command then gathers its parameters into the frozen groups at the bottom
(``CheckFlags``, ``OutputOptions``; the Hub's in ``cli/hub_options.py``, the smoke run's in
``cli/smoke.py`` and ``cli/engine.py``), which is what its flows take.
Help texts that name table rows (runtimes, output formats) hold a slot filled when the help is
shown: importing those tables at start-up would cost every run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from dflash_check.cli.completion import complete_rule, complete_runtime
from dflash_check.knowledge.settings import MAX_SPECULATIVE_TOKENS

if TYPE_CHECKING:
    from dflash_check.knowledge.selection import Selection
    from dflash_check.render import OutputFormat

RUNTIMES_SLOT = "{runtimes}"
"""Stands in help text for the runtime names, filled when help is shown: the names come from
the runtime table, whose import would cost every run ~0.2 s if the help were built at import."""
FORMATS_SLOT = "{formats}"
"""Stands in help text for the output format names (``dflash_check.render.OUTPUT_FORMATS``)."""
KINDS_SLOT = "{kinds}"
"""Stands in ``registry --kind``'s metavar for the kinds of registry file (``kind_names``),
joined as typer shows a choice (``<auto|pairs|vllm|sglang>``)."""
KIND_FILES_SLOT = "{kind_files}"
"""Stands in ``registry --kind``'s help for each engine's kind and the file it names
(``kind_files``), so that an engine registered with a ``test_file`` needs no edit there."""
AUTO_KIND = "auto"
"""``registry --kind``: tell the file's kind by its content."""


def runtime_names() -> tuple[str, ...]:
    """Return every name ``--runtime`` accepts, from the one runtime table (help and errors)."""
    from dflash_check.knowledge import selection

    return selection.runtime_names()


def format_names() -> tuple[str, ...]:
    """Return every name ``--format`` of ``pair`` and ``registry`` accepts, from the table."""
    from dflash_check.render import OUTPUT_FORMATS

    return tuple(OUTPUT_FORMATS)


def kind_names() -> tuple[str, ...]:
    """Return every name ``registry --kind`` accepts: ``auto``, ``pairs`` and each engine whose
    test registry is read (``Engine.test_file``), read when asked, so that an engine registered
    with one is a choice."""
    from dflash_check.app.engine_tests import PAIRS
    from dflash_check.knowledge.engines import engines_with_test_files

    return (AUTO_KIND, PAIRS, *(e.name for e in engines_with_test_files()))


def _or(items: list[str]) -> str:
    """Join ``a, b or c``."""
    return " or ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


def kind_files() -> str:
    """Return each engine's ``--kind`` and the file it names, from the readers
    (``vllm (its tests/models/registry.py) or sglang (...)``)."""
    from dflash_check.knowledge.engines import engines_with_test_files

    return _or([f"{e.name} (its {e.test_file.display})" for e in engines_with_test_files()])


def fill_help_slots(command: Any) -> None:
    """Write the runtime and format names into every help text of ``command`` with a slot, and
    the registry kinds into a metavar with one (and their files into a help with a slot)."""
    slots = {
        RUNTIMES_SLOT: lambda: ", ".join(runtime_names()),
        FORMATS_SLOT: lambda: ", ".join(format_names()),
        KIND_FILES_SLOT: kind_files,
    }
    for param in command.params:
        for slot, text in slots.items():
            help_text = getattr(param, "help", None)
            if help_text and slot in help_text:
                param.help = help_text.replace(slot, text())
        metavar = getattr(param, "metavar", None)
        if metavar and KINDS_SLOT in metavar:
            param.metavar = metavar.replace(KINDS_SLOT, "|".join(kind_names()))


class UsageCommand(TyperCommand):
    """A command whose usage line reads ``DRAFT TARGET``, as its help text says.

    typer wraps required arguments in braces (``{DRAFT} {TARGET}``), which reads like a
    placeholder syntax the shell would not accept.
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Fill the runtime and format names in, then show the help."""
        fill_help_slots(self)
        return super().format_help(ctx, formatter)

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        """Return the usage pieces without typer's braces around required arguments."""
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class PairUsageCommand(UsageCommand):
    """``pair``'s usage line reads ``[DRAFT] TARGET``: one model given is the target.

    The arguments are parsed in order (DRAFT, then TARGET); ``pair`` moves a lone first one to
    the target itself, so the line says what the user may type, not how it is parsed.
    """

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        """Return the usage pieces with ``DRAFT [TARGET]`` shown as ``[DRAFT] TARGET``."""
        pieces = super().collect_usage_pieces(ctx)
        return [{"[DRAFT]": "[DRAFT]", "[TARGET]": "TARGET"}.get(p, p) for p in pieces]


def one_of(value: str, names: tuple[str, ...]) -> str:
    """Accept ``value`` if it is one of ``names`` (a table's rows, read when the option is
    parsed: an enum of them would import the table at start-up); else a usage error worded as
    typer's choice of an enum words it."""
    if value not in names:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(repr(n) for n in names)}.")
    return value


def choose_format(value: str) -> str:
    """Accept a name of the output-format table, so that a row added to it is a choice."""
    return one_of(value.lower(), format_names())  # -f JSON as -r VLLM: any case


def complete_format(incomplete: str) -> list[str]:
    """Shell completion of ``--format``: the table's names."""
    return [n for n in format_names() if n.startswith(incomplete.lower())]


# Help panels of `pair` and `registry`: grouped so that 40 options read at 80 columns.
CHECK = "Check"
HUB = "Hub"
OUTPUT = "Output"
SMOKE = "Smoke run"


class DeviceChoice(str, Enum):
    """Devices of the smoke run."""

    auto = "auto"
    cuda = "cuda"
    cpu = "cpu"


class DtypeChoice(str, Enum):
    """Dtypes of the smoke run."""

    auto = "auto"
    bfloat16 = "bfloat16"
    float16 = "float16"
    float32 = "float32"


def panel_option(*names: str, panel: str, **kwargs: Any) -> Any:
    """Return a ``typer.Option`` shown in the help panel ``panel``."""
    return typer.Option(*names, rich_help_panel=panel, **kwargs)


RuntimeOpt = Annotated[
    list[str] | None,
    panel_option(
        "--runtime",
        "-r",
        panel=CHECK,
        metavar="RUNTIME",
        autocompletion=complete_runtime,
        help=f"Runtimes to check: {RUNTIMES_SLOT}; pin a release as vllm==0.33.0 or "
        "vllm=installed; leave an engine out of portable as -vllm. Default: portable (all, "
        "newest releases).",
        show_default=False,
    ),
]
FormatOpt = Annotated[
    str,
    panel_option(
        "--format",
        "-f",
        panel=OUTPUT,
        metavar="FORMAT",
        callback=choose_format,
        autocompletion=complete_format,
        help=f"Report format: {FORMATS_SLOT}.",
    ),
]


def output_path(value: Path | None) -> Path | None:
    """Read ``-o -`` as stdout, as other tools do (a file named '-' is ``-o ./-``)."""
    return None if value is not None and str(value) == "-" else value


OutputOpt = Annotated[
    Path | None,
    panel_option(
        "--output",
        "-o",
        panel=OUTPUT,
        metavar="FILE",
        callback=output_path,
        help="Write the report (json: errors too) to FILE ('-': stdout); a summary line "
        "goes to stderr.",
        dir_okay=False,
    ),
]
StrictOpt = Annotated[bool, panel_option("--strict", panel=CHECK, help="Exit 1 on warnings too.")]
VerboseOpt = Annotated[
    bool,
    panel_option(
        "--verbose",
        "-v",
        panel=OUTPUT,
        help="Table report: add both models side by side and each runtime's layer resolution.",
    ),
]
QuietOpt = Annotated[
    bool,
    panel_option(
        "--quiet",
        "-q",
        panel=OUTPUT,
        help="Only errors on stderr (no summary or progress).",
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    panel_option(
        "--ignore",
        panel=CHECK,
        metavar="ID",
        autocompletion=complete_rule,
        help="Skip a rule (repeatable): --ignore DF013.",
    ),
]
NumSpeculativeTokensOpt = Annotated[
    int | None,
    panel_option(
        "--num-speculative-tokens",
        panel=CHECK,
        metavar="N",
        min=1,
        max=MAX_SPECULATIVE_TOKENS,
        help="vLLM's num_speculative_tokens, checked against the block size or MTP layers.",
        show_default=False,
    ),
]


def _method(value: str | None) -> str | None:
    """Check ``--speculative-method`` against vLLM's methods (a usage error otherwise)."""
    from dflash_check.knowledge.settings import SPECULATIVE_METHODS, known_method, vllm_method

    if value is None:
        return None
    if not known_method(value):
        raise typer.BadParameter(
            f"unknown method '{value}'; choose from {', '.join(SPECULATIVE_METHODS)} "
            "or a model's *_mtp"
        )
    return vllm_method(value)


SpeculativeMethodOpt = Annotated[
    str | None,
    panel_option(
        "--speculative-method",
        panel=CHECK,
        metavar="METHOD",
        callback=_method,
        help="vLLM's method, checked against the draft's.",
        show_default=False,
    ),
]


def parse_runtimes(values: list[str] | None) -> Selection:
    """Return the runtime selection of repeated or comma-separated ``--runtime`` values.

    Every value counts (a repeated option never drops one); ``portable`` among them means every
    runtime. A runtime may name its release pip-style (``vllm==0.34.0``; alone, the newest
    release known) or ``vllm=installed`` (the version installed here, from package metadata).
    An unknown runtime or release, or a runner the release lacks, is a usage error.
    """
    from dflash_check.knowledge.selection import SelectionError, parse_selection

    try:
        return parse_selection(values or ())
    except SelectionError as err:
        from dflash_check.sanitize import data

        # The message quotes the value (and package metadata): one line, no escape sequence.
        raise typer.BadParameter(data(str(err), 2000), param_hint="--runtime") from None


def check_output(output: Path | None) -> None:
    """Refuse an ``--output`` path that cannot be written, before any fetch or smoke run."""
    if output is None:
        return
    parent = output.parent
    if output.is_dir():
        reason = "is a directory"
    elif not parent.is_dir():
        reason = f"directory {str(parent)!r} does not exist"
    elif not os.access(parent, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        reason = "is not writable"
    else:
        return
    raise typer.BadParameter(f"cannot write {str(output)!r}: {reason}", param_hint="--output")


@dataclass(frozen=True, eq=False)
class CheckFlags:
    """``--runtime``, ``--strict``, ``--ignore`` and the engine settings, as given (parsed into
    the check's settings once the usage checks pass)."""

    runtime: list[str] | None
    strict: bool
    ignore: list[str] | None
    num_speculative_tokens: int | None
    speculative_method: str | None

    @classmethod
    def parse(
        cls,
        runtime: RuntimeOpt = None,
        strict: StrictOpt = False,
        ignore: IgnoreOpt = None,
        num_speculative_tokens: NumSpeculativeTokensOpt = None,
        speculative_method: SpeculativeMethodOpt = None,
    ) -> CheckFlags:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(runtime, strict, ignore, num_speculative_tokens, speculative_method)


@dataclass(frozen=True, eq=False)
class OutputOptions:
    """``--format``, ``--output``, ``--verbose``, ``--quiet``: what the report looks like, where
    it goes, and whether anything but the report and errors is said on stderr."""

    format_name: str
    output: Path | None
    verbose: bool = False
    quiet: bool = False

    @classmethod
    def parse(
        cls,
        output_format: FormatOpt = "table",
        output: OutputOpt = None,
        verbose: VerboseOpt = False,
        quiet: QuietOpt = False,
    ) -> OutputOptions:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(output_format, output, verbose, quiet)

    @property
    def format(self) -> OutputFormat:
        """The output format's row (``dflash_check.render.OUTPUT_FORMATS``)."""
        from dflash_check.render import OUTPUT_FORMATS

        return OUTPUT_FORMATS[self.format_name]

    @property
    def json(self) -> bool:
        """Whether an error is itself the report (``--format json``)."""
        return self.format.error_object
