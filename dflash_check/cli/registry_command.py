"""``registry``: check every pair of a pairs.yaml, or every speculative entry of an engine's
own test registry, against its expected verdict (a CI gate)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from dflash_check.cli.completion import complete_runtime
from dflash_check.cli.hub_options import HubFlags, OfflineOpt, TimeoutOpt, TokenOpt
from dflash_check.cli.options import (
    AUTO_KIND,
    KIND_FILES_SLOT,
    KINDS_SLOT,
    FormatOpt,
    OutputOpt,
    OutputOptions,
    QuietOpt,
    check_output,
    kind_names,
    one_of,
    parse_runtimes,
)
from dflash_check.cli.output import (
    emit,
    nothing_checked,
    print_error,
    redact,
    registry_exit_code,
    remember_secrets,
    stderr_console,
    summarise,
)
from dflash_check.errors import CheckError, ExitCode

if TYPE_CHECKING:
    from dflash_check.app.pipeline import ModelCache
    from dflash_check.app.registry_run import RegistryPairs, RegistryRequest
    from dflash_check.check.outcome import PairOutcome, RunResult

REGISTRY_EXAMPLES = [
    "dflash-check registry",
    "dflash-check registry pairs.yaml --format sarif --output dflash.sarif",
    "dflash-check registry --only 'z-lab/Qwen3.5-*' --format github",
    "HF_HUB_OFFLINE=1 dflash-check registry --format junit -o junit.xml",
    "dflash-check registry tests/models/registry.py --format sarif -o dflash.sarif   (vLLM)",
    "dflash-check registry python/sglang/test/test_utils.py -r sglang   (SGLang)",
]


def choose_kind(value: str) -> str:
    """Accept a kind of registry file (``kind_names``), as typer's choice of an enum did:
    exact, in its words; ``auto``, the default, reads no table."""
    if value == AUTO_KIND:
        return value
    return one_of(value, kind_names())


def complete_kind(incomplete: str) -> list[str]:
    """Shell completion of ``--kind``: the kinds of registry file."""
    return [n for n in kind_names() if n.startswith(incomplete)]


RegistryFileArg = Annotated[
    Path,
    typer.Argument(
        help="The registry of pairings: a pairs.yaml, vLLM's tests/models/registry.py or "
        "SGLang's python/sglang/test/test_utils.py (read, never imported or run).",
        dir_okay=False,
    ),
]
OnlyOpt = Annotated[
    str | None,
    typer.Option("--only", help="Check only pairs whose draft or target matches this glob."),
]
WorkersOpt = Annotated[
    int, typer.Option("--workers", "-j", help="Pairs checked at once.", min=1, max=64)
]
KindOpt = Annotated[
    str,
    typer.Option(
        "--kind",
        metavar=f"<{KINDS_SLOT}>",
        callback=choose_kind,
        autocompletion=complete_kind,
        help=f"What FILE is: auto (told by its content), pairs (a pairs.yaml), {KIND_FILES_SLOT}.",
    ),
]
OverridesOpt = Annotated[
    Path | None,
    typer.Option(
        "--overrides",
        help="An engine's test file only: YAML naming the entries expected incompatible "
        "(expect, reason) or not to check (skip); every other entry is expected compatible.",
        dir_okay=False,
    ),
]
EngineRuntimeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--runtime",
        "-r",
        metavar="RUNTIME",
        autocompletion=complete_runtime,
        help="An engine's test file only: the runtimes its entries must work in (default: "
        "the engine itself, at the checkout's release).",
        show_default=False,
    ),
]

RegistryStrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Warnings (and rules not checked) make a pair incompatible, as with "
        "'pair --strict': a pair expected compatible then fails the gate on a warning.",
    ),
]


def registry(
    file: RegistryFileArg = Path("pairs.yaml"),
    only: OnlyOpt = None,
    output_format: FormatOpt = "table",
    output: OutputOpt = None,
    workers: WorkersOpt = 8,
    token: TokenOpt = None,
    offline: OfflineOpt = False,
    timeout: TimeoutOpt = 10.0,
    kind: KindOpt = AUTO_KIND,
    overrides: OverridesOpt = None,
    runtime: EngineRuntimeOpt = None,
    quiet: QuietOpt = False,
    strict: RegistryStrictOpt = False,
) -> None:
    """Check every pair of a pairs.yaml, or every speculative entry of an engine's own test
    registry, against its expected verdict (a CI gate)."""
    from dflash_check.app.engine_tests import detect_kind, read_text
    from dflash_check.app.registry_run import RegistryRequest

    check_output(output)
    remember_secrets(token)
    out = OutputOptions(output_format, output, quiet=quiet)
    try:
        text = read_text(file, str(file))
    except CheckError as err:
        input_failed(err, file, out)
    found = detect_kind(file, text) if kind == AUTO_KIND else kind
    if found == "pairs" and (overrides is not None or runtime):
        raise typer.BadParameter(
            "--overrides and --runtime apply to an engine's test file (vLLM's "
            "tests/models/registry.py, SGLang's test_utils.py); a pairs.yaml states "
            "expect and runtimes per pair"
        )
    selection = parse_runtimes(runtime) if runtime else None
    request = RegistryRequest(file, found, only, overrides, selection, strict, workers)
    pairs = read_registry(request, text, out)
    if not pairs.specs and (pairs.plan is None or only):
        raise typer.BadParameter(f"no pair of {file} matches {only!r}", param_hint="--only")
    result = run_pairs(request, pairs, HubFlags(token, offline, timeout), not quiet)
    emit(result, out.format, output)
    if not out.format.for_terminal:  # the table already shows each error
        for o in result.outcomes:
            if o.status == "error" and o.spec is not None:
                stderr_console().print(
                    f"Error: {file}:{o.spec.line}: {o.label}: {redact(o.error or '')}",
                    markup=False,
                )
    if not quiet:
        summarise(summary(result), output)
    unchecked = nothing_checked(result)
    if unchecked is not None:  # exit 3 below: say why, as any other input that checks nothing
        from dflash_check.sanitize import one_line

        stderr_console().print(f"Error: {one_line(redact(unchecked))}", markup=False)
    raise typer.Exit(registry_exit_code(result))


def read_registry(request: RegistryRequest, text: str, out: OutputOptions) -> RegistryPairs:
    """Return the registry's pairs (``app.registry_run``); an unreadable file fails, exit 3."""
    from dflash_check.app.registry_run import read_registry as read

    try:
        return read(request, text)
    except CheckError as err:
        input_failed(err, request.file, out)


def input_failed(err: CheckError, file: Path, out: OutputOptions) -> NoReturn:
    """End a run whose input files are broken: the report (in the asked format, to ``-o`` or
    stdout, replacing any earlier one) holds every mistake at its file and line; stderr has
    one ``Error:`` line each; exit 3 (nothing was checked, so nothing was not as expected)."""
    from dflash_check.check.outcome import RunResult
    from dflash_check.errors import RegistryError
    from dflash_check.problems import FileProblem

    problems = (
        err.problems_in(str(file))
        if isinstance(err, RegistryError)
        else (FileProblem(str(file), None, str(err)),)
    )
    result = RunResult((), file=str(file), problems=problems)
    # On a terminal the Error lines below are the report; a file (-o) is always rewritten, so
    # that no report of an earlier run is left behind.
    if not out.format.for_terminal or out.output is not None:
        emit(result, out.format, out.output)
    print_error(err, tuple(p.text for p in problems))
    raise typer.Exit(ExitCode.NOT_CHECKED)


def run_pairs(
    request: RegistryRequest, pairs: RegistryPairs, hub: HubFlags, show_progress: bool = True
) -> RunResult:
    """Check the pairs (``app.registry_run``) with a progress bar on a terminal (stderr; never
    in a pipe or a CI log, nor with ``--quiet``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from dflash_check.app.pipeline import ModelCache
    from dflash_check.app.registry_run import check_registry
    from dflash_check.cli.terminal import shown

    err_console = stderr_console()
    retry = [""]  # the latest retry, shown in the bar's status line (never one line per retry)

    def retrying(text: str) -> None:
        retry[0] = f"Hub: {redact(text)}"
        if progress.live.is_started:
            progress.update(task, status=retry[0])

    # Without a terminal the retries are not shown: each pair's error says "after N attempts",
    # and the table gives the network hint once.
    cache: ModelCache = ModelCache(hub_factory=hub.factory(retrying))
    progress = Progress(
        TextColumn("checking pairs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.fields[status]}", style="yellow"),
        console=err_console,
        transient=True,
        disable=not (show_progress and err_console.is_terminal),
    )
    with shown(progress):
        task = progress.add_task("", total=len(pairs.specs), status="")

        def done(outcome: PairOutcome) -> None:
            progress.update(task, advance=1, description=outcome.label)

        return check_registry(request, pairs, cache, done)


def summary(result: RunResult) -> str:
    """Return the registry's one-line summary."""
    from dflash_check.render.diagnostics import plural

    skipped = result.skipped
    entries = f"{len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'}"
    listed = f"; {entries} skipped" if skipped else ""
    about = f" ({result.about})" if result.about else ""
    return (
        f"registry{about}: {plural(len(result.outcomes), 'pair')}, "
        f"{result.count('ok')} as expected, {result.count('mismatch')} not as expected, "
        f"{result.count('error')} not checked{listed}"
    )
