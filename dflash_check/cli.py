"""The command line: parse options into a request, run the check, render, pick the exit code.

Only this module prints or exits. Data goes to stdout, messages to stderr.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from dflash_check import __version__
from dflash_check.cli_engine import (
    ENGINE_KEY_ENV,
    BaselineEndpointOpt,
    EndpointOpt,
    EngineApiKeyOpt,
    EngineBinaryOpt,
    EngineOpt,
    EngineTimeoutOpt,
    LaunchOpt,
    LaunchTimeoutOpt,
    PipelineParallelOpt,
    PrintCommandOpt,
    TensorParallelOpt,
    check_engine_flags,
)
from dflash_check.errors import CheckError, ExitCode

if TYPE_CHECKING:  # imported lazily at run time, to keep `--help` and start-up fast
    from dflash_check.core.outcome import RunResult
    from dflash_check.core.report import CheckReport
    from dflash_check.hub.interface import ModelRef
    from dflash_check.runtime.engine import EngineOptions
    from dflash_check.runtime.smoke import SmokeOptions

app = typer.Typer(
    name="dflash-check",
    help="Check, before loading a weight, whether a DFlash draft works with a target model.",
    no_args_is_help=True,
    add_completion=True,
    # Locals can hold an HF token: never show them (and tracebacks only with DFLASH_CHECK_DEBUG).
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
)

PAIR_EXAMPLES = [
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16 Qwen/Qwen3-4B",
    "dflash-check pair examples/Qwen3-4B-DFlash-b16 examples/Qwen3.5-4B",
    "dflash-check pair DRAFT TARGET --runtime vllm --format json",
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16@main Qwen/Qwen3-4B --offline",
    "dflash-check pair z-lab/Qwen3-8B-DFlash-b16 Qwen/Qwen3-8B --smoke-run --engine vllm "
    "--endpoint http://gpu-node:8000",
    "dflash-check pair DRAFT TARGET --engine sglang --print-command --tensor-parallel-size 8",
]


def stderr_console() -> Console:
    """Return the console for messages (stderr)."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def stdout_console() -> Console:
    """Return the console for data (stdout)."""
    return Console(highlight=False)


def secrets() -> list[str]:
    """Return the token values that must never be printed."""
    values = [
        os.environ.get("HF_TOKEN"),
        os.environ.get("HUGGING_FACE_HUB_TOKEN"),
        os.environ.get(ENGINE_KEY_ENV),
        _TOKEN[0],
        _ENGINE_KEY[0],
    ]
    return [v for v in values if v and len(v) >= 4]


_TOKEN: list[str | None] = [None]
_ENGINE_KEY: list[str | None] = [None]


def redact(text: str) -> str:
    """Remove every known token value from ``text``."""
    for secret in secrets():
        text = text.replace(secret, "***")
    return text


def debug_enabled() -> bool:
    """Return whether ``DFLASH_CHECK_DEBUG`` asks for tracebacks."""
    return os.environ.get("DFLASH_CHECK_DEBUG", "") not in ("", "0")


def fail(err: CheckError, json_output: bool = False) -> NoReturn:
    """Print one line for ``err`` (plus a hint) on stderr and exit 3."""
    console = stderr_console()
    if debug_enabled():
        import traceback

        console.print(redact("".join(traceback.format_exception(err))), markup=False)
    console.print(f"Error: {redact(str(err))}", markup=False, style="bold red")
    if err.hint:
        console.print(f"Hint: {redact(err.hint)}", markup=False)
    if not debug_enabled():
        console.print("Set DFLASH_CHECK_DEBUG=1 for details.", markup=False, style="dim")
    if json_output:
        import json

        from dflash_check.render.json import error_dict

        payload = error_dict(
            redact(str(err)), redact(err.hint) if err.hint else None, type(err).__name__
        )
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    raise typer.Exit(ExitCode.NOT_CHECKED)


class OutputFormat(str, Enum):
    """Report formats of ``pair`` and ``registry``."""

    table = "table"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"


def render_ci(result: RunResult, output_format: OutputFormat) -> str:
    """Render a run in one of the CI formats (SARIF, JUnit, GitHub annotations)."""
    if output_format is OutputFormat.sarif:
        from dflash_check.render.sarif import render_sarif

        return render_sarif(result)
    if output_format is OutputFormat.junit:
        from dflash_check.render.junit import render_junit

        return render_junit(result)
    from dflash_check.render.github import render_github

    return render_github(result)


CI_FORMATS = (OutputFormat.sarif, OutputFormat.junit, OutputFormat.github)


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


SMOKE = "Smoke run"


def _runtime_enum() -> type[Enum]:
    """Build the ``--runtime`` choices from the runtime profile table."""
    from dflash_check.core.runtimes import RUNTIME_NAMES

    return Enum("RuntimeChoice", {n: n for n in RUNTIME_NAMES}, type=str)  # type: ignore[return-value]


RuntimeChoice = _runtime_enum()

RuntimeOpt = Annotated[
    RuntimeChoice,  # type: ignore[valid-type]
    typer.Option(
        "--runtime",
        "-r",
        help="Check for one runtime, or 'portable' (every runtime; ids must satisfy t ≤ N-2).",
        case_sensitive=False,
    ),
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format.")]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write the report to FILE (only once it exists).", dir_okay=False
    ),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Fail (exit 1) on warnings too.")]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option("--ignore", help="Skip a rule by id (repeatable), e.g. --ignore DF013."),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Hugging Face token (default: HF_TOKEN or the saved login).",
        show_default=False,
    ),
]
RevisionOpt = Annotated[
    str | None, typer.Option("--revision", help="Revision (branch, tag, commit) for both models.")
]
DraftRevisionOpt = Annotated[
    str | None, typer.Option("--draft-revision", help="Revision of the draft.")
]
TargetRevisionOpt = Annotated[
    str | None, typer.Option("--target-revision", help="Revision of the target.")
]
OfflineOpt = Annotated[
    bool, typer.Option("--offline", help="Use the Hugging Face cache only (as HF_HUB_OFFLINE=1).")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait for each Hub response.", min=0.1)
]


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


def pick_revision(flag: str | None, both: str | None, other_flag: str) -> str | None:
    """Return the revision for one side, refusing two flags that disagree."""
    if flag is not None and both is not None and flag != both:
        raise typer.BadParameter(
            f"--revision {both!r} conflicts with {other_flag} {flag!r}; use one of them",
            param_hint=other_flag,
        )
    return flag or both


def write_output(text: str, output: Path | None) -> None:
    """Write the rendered report to ``output``, or to stdout."""
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text)
    except OSError as err:
        fail(CheckError(f"cannot write {output}: {err.strerror}"))


@app.command(epilog="Examples:\n\n" + "\n\n".join(f"  $ {e}" for e in PAIR_EXAMPLES))
def pair(
    draft: Annotated[str, typer.Argument(help="Draft: Hub repo id (ORG/NAME[@REV]) or directory.")],
    target: Annotated[
        str, typer.Argument(help="Target: Hub repo id (ORG/NAME[@REV]) or directory.")
    ],
    runtime: RuntimeOpt = "portable",  # type: ignore[assignment]
    output_format: FormatOpt = OutputFormat.table,
    output: OutputOpt = None,
    strict: StrictOpt = False,
    ignore: IgnoreOpt = None,
    revision: RevisionOpt = None,
    draft_revision: DraftRevisionOpt = None,
    target_revision: TargetRevisionOpt = None,
    token: TokenOpt = None,
    offline: OfflineOpt = False,
    timeout: TimeoutOpt = 10.0,
    smoke_run: Annotated[
        bool,
        typer.Option(
            "--smoke-run",
            help="Also run a real speculative decode (needs the smoke "
            "extra; runs on CUDA or, slowly, on the CPU).",
            rich_help_panel=SMOKE,
        ),
    ] = False,
    device: Annotated[
        DeviceChoice, typer.Option("--device", help="Smoke-run device.", rich_help_panel=SMOKE)
    ] = DeviceChoice.auto,
    dtype: Annotated[
        DtypeChoice,
        typer.Option(
            "--dtype",
            help="Smoke-run dtype (auto: bfloat16 on CUDA, float32 on CPU).",
            rich_help_panel=SMOKE,
        ),
    ] = DtypeChoice.auto,
    prompt: Annotated[
        list[str] | None,
        typer.Option(
            "--prompt",
            help="Smoke-run prompt (repeatable; default: built-in prompts).",
            rich_help_panel=SMOKE,
        ),
    ] = None,
    max_new_tokens: Annotated[
        int,
        typer.Option(
            "--max-new-tokens", min=1, help="Tokens to generate per prompt.", rich_help_panel=SMOKE
        ),
    ] = 64,
    block_size: Annotated[
        int | None,
        typer.Option(
            "--block-size", min=2, help="Override the draft's block_size.", rich_help_panel=SMOKE
        ),
    ] = None,
    temperature: Annotated[
        float,
        typer.Option(
            "--temperature",
            min=0.0,
            help="0 for greedy verification "
            "(checked lossless); above 0 samples with rejection sampling.",
            rich_help_panel=SMOKE,
        ),
    ] = 0.0,
    min_acceptance: Annotated[
        float,
        typer.Option(
            "--min-acceptance",
            min=1.0,
            help="Fail (exit 1) when tau, the mean tokens per target step, is below this.",
            rich_help_panel=SMOKE,
        ),
    ] = 1.5,
    no_chat_template: Annotated[
        bool,
        typer.Option(
            "--no-chat-template",
            help="Feed prompts raw, without the tokenizer's chat template.",
            rich_help_panel=SMOKE,
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Run the smoke run even when the static check fails.",
            rich_help_panel=SMOKE,
        ),
    ] = False,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            "--trust-remote-code",
            help="Let transformers run the target repo's own code (off by default).",
            rich_help_panel=SMOKE,
        ),
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.", rich_help_panel=SMOKE)] = 0,
    engine: EngineOpt = None,
    endpoint: EndpointOpt = None,
    baseline_endpoint: BaselineEndpointOpt = None,
    engine_api_key: EngineApiKeyOpt = None,
    engine_timeout: EngineTimeoutOpt = 300.0,
    launch: LaunchOpt = False,
    print_command: PrintCommandOpt = False,
    tensor_parallel_size: TensorParallelOpt = None,
    pipeline_parallel_size: PipelineParallelOpt = None,
    launch_timeout: LaunchTimeoutOpt = 1800.0,
    engine_binary: EngineBinaryOpt = None,
) -> None:
    """Check that DRAFT works with TARGET in every runtime (or one, with --runtime)."""
    from dflash_check.core.rules import RULES_BY_ID
    from dflash_check.hub.interface import BadModelSpec, parse_model_ref

    _TOKEN[0] = token
    _ENGINE_KEY[0] = engine_api_key
    check_engine_flags(smoke_run, engine, endpoint, baseline_endpoint, launch, print_command)
    json_output = output_format is OutputFormat.json
    ignored = frozenset(r.upper() for r in ignore or [])
    unknown = sorted(ignored - set(RULES_BY_ID))
    if unknown:
        raise typer.BadParameter(f"unknown rule id {', '.join(unknown)}", param_hint="--ignore")
    try:
        draft_ref = parse_model_ref(
            draft, pick_revision(draft_revision, revision, "--draft-revision")
        )
        target_ref = parse_model_ref(
            target, pick_revision(target_revision, revision, "--target-revision")
        )
    except BadModelSpec as err:
        raise typer.BadParameter(str(err)) from None

    from dflash_check.hub.hub import HubOptions, HubSource
    from dflash_check.pipeline import CheckRequest, ModelCache, check_pair

    cache = ModelCache(hub=HubSource(HubOptions(token=token, offline=offline, timeout=timeout)))
    request = CheckRequest(draft_ref, target_ref, runtime.value, ignored)  # type: ignore[attr-defined]
    from dflash_check.core.outcome import PairOutcome, RunResult
    from dflash_check.core.report import Verdict

    label = f"{draft} -> {target}"
    try:
        report = check_pair(request, cache)
    except CheckError as err:
        if output_format in CI_FORMATS:
            outcome = PairOutcome(
                label, Verdict.COMPATIBLE, error=redact(str(err)), error_hint=err.hint
            )
            write_output(render_ci(RunResult((outcome,), strict=strict), output_format), output)
        fail(err, json_output)

    if print_command and engine is not None:
        from dflash_check.cli_engine import print_engine_command

        print_engine_command(
            report, draft_ref, target_ref, engine, tensor_parallel_size, pipeline_parallel_size
        )
        raise typer.Exit(exit_code(report, strict))

    if smoke_run:
        from dflash_check.runtime.smoke import SmokeOptions

        options = SmokeOptions(
            device=device.value,
            dtype=dtype.value,
            prompts=tuple(prompt or ()),
            max_new_tokens=max_new_tokens,
            block_size=block_size,
            temperature=temperature,
            min_acceptance=min_acceptance,
            chat_template=not no_chat_template,
            trust_remote_code=trust_remote_code,
            seed=seed,
            token=token,
            offline=offline,  # HubSource also honours HF_HUB_OFFLINE itself
        )
        engine_options = None
        if engine is not None:
            from dflash_check.runtime.engine import EngineOptions

            engine_options = EngineOptions(
                engine=engine.value,
                endpoint=endpoint or "",
                baseline_endpoint=baseline_endpoint,
                api_key=engine_api_key,
                timeout=engine_timeout,
                tensor_parallel=tensor_parallel_size,
                pipeline_parallel=pipeline_parallel_size,
                mode="launch" if launch else "attach",
                launch_timeout=launch_timeout,
                binary=engine_binary,
            )
        report = smoke(report, draft_ref, target_ref, options, force, json_output, engine_options)

    if output_format in CI_FORMATS:
        outcome = PairOutcome(label, Verdict.COMPATIBLE, report=report)
        write_output(render_ci(RunResult((outcome,), strict=strict), output_format), output)
        stderr_console().print(f"dflash-check: {report.verdict.value}", markup=False)
    elif json_output:
        from dflash_check.render.json import render_json

        write_output(render_json(report), output)
        stderr_console().print(
            f"dflash-check: {report.verdict.value} ({len(report.findings)} findings)",
            markup=False,
        )
    elif output is not None:
        from dflash_check.render.table import render_text

        write_output(render_text(report), output)
    else:
        from dflash_check.render.table import render_table

        stdout_console().print(render_table(report))
    raise typer.Exit(exit_code(report, strict))


def smoke(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    force: bool,
    json_output: bool,
    engine: EngineOptions | None = None,
) -> CheckReport:
    """Run the smoke decode after a passing static check (or with --force); attach it.

    With ``engine`` the decode runs on that serving engine, else in the bundled runtime.
    """
    from dataclasses import replace

    from dflash_check.core.report import Verdict
    from dflash_check.runtime.smoke import run_smoke

    err_console = stderr_console()
    if report.verdict is Verdict.INCOMPATIBLE and not force:
        err_console.print(
            "Smoke run skipped: the static check failed (--force runs it anyway).", markup=False
        )
        return report
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(
        SpinnerColumn(),
        TextColumn("smoke run: {task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )
    with progress:
        task = progress.add_task("starting", total=None)
        try:

            def say(text: str) -> None:
                progress.update(task, description=text)

            if engine is None:
                measured = run_smoke(draft, target, options, say)
            else:
                from dflash_check.cli_engine import run_engine

                measured = run_engine(report, draft, target, options, engine, say)
        except CheckError as err:
            fail(err, json_output)
    return replace(report, smoke=measured)


def exit_code(report: CheckReport, strict: bool) -> int:
    """Return the exit code: 1 when incompatible, when the smoke run fails, or warned under
    --strict."""
    from dflash_check.core.report import Severity, Verdict

    if report.verdict is Verdict.INCOMPATIBLE:
        return ExitCode.INCOMPATIBLE
    if report.smoke is not None and not report.smoke.passed:
        return ExitCode.INCOMPATIBLE
    if strict and report.count(Severity.WARNING):
        return ExitCode.INCOMPATIBLE
    return ExitCode.COMPATIBLE


REGISTRY_EXAMPLES = [
    "dflash-check registry",
    "dflash-check registry pairs.yaml --format sarif --output dflash.sarif",
    "dflash-check registry --only 'z-lab/Qwen3.5-*' --format github",
    "HF_HUB_OFFLINE=1 dflash-check registry --format junit -o junit.xml",
]


@app.command(epilog="Examples:\n\n" + "\n\n".join(f"  $ {e}" for e in REGISTRY_EXAMPLES))
def registry(
    file: Annotated[Path, typer.Argument(help="The registry of pairings.", dir_okay=False)] = Path(
        "pairs.yaml"
    ),
    only: Annotated[
        str | None,
        typer.Option("--only", help="Check only pairs whose draft or target matches this glob."),
    ] = None,
    output_format: FormatOpt = OutputFormat.table,
    output: OutputOpt = None,
    workers: Annotated[
        int, typer.Option("--workers", "-j", help="Pairs checked at once.", min=1, max=64)
    ] = 8,
    token: TokenOpt = None,
    offline: OfflineOpt = False,
    timeout: TimeoutOpt = 10.0,
) -> None:
    """Check every pair of a pairs.yaml against its expected verdict (a CI gate)."""
    from dflash_check.core.outcome import PairOutcome, RunResult
    from dflash_check.hub.hub import HubOptions, HubSource
    from dflash_check.pipeline import ModelCache
    from dflash_check.registry import load_pairs, run_registry, select

    _TOKEN[0] = token
    try:
        specs = load_pairs(file, str(file))
    except CheckError as err:
        fail(err, output_format is OutputFormat.json)
    selected = select(specs, only)
    if not selected:
        raise typer.BadParameter(f"no pair of {file} matches {only!r}", param_hint="--only")
    cache = ModelCache(hub=HubSource(HubOptions(token=token, offline=offline, timeout=timeout)))

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    err_console = stderr_console()
    progress = Progress(
        TextColumn("checking pairs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )
    with progress:
        task = progress.add_task("", total=len(selected))

        def done(outcome: PairOutcome) -> None:
            progress.update(task, advance=1, description=outcome.label)

        outcomes = run_registry(selected, file.parent, cache, workers, done)
    result = RunResult(outcomes, file=str(file))

    if output_format in CI_FORMATS:
        write_output(render_ci(result, output_format), output)
    elif output_format is OutputFormat.json:
        from dflash_check.render.registry import render_registry_json

        write_output(render_registry_json(result), output)
    else:
        from dflash_check.render.registry import render_registry_table

        if output is not None:
            from dflash_check.render.table import export_text

            write_output(export_text(render_registry_table(result), width=160), output)
        else:
            stdout_console().print(render_registry_table(result))
    for o in outcomes:
        if o.status == "error" and o.spec is not None:
            err_console.print(
                f"Error: {file}:{o.spec.line}: {o.label}: {redact(o.error or '')}", markup=False
            )
    err_console.print(
        f"dflash-check registry: {len(outcomes)} pairs, {result.count('ok')} as expected, "
        f"{result.count('mismatch')} not as expected, {result.count('error')} not checked",
        markup=False,
    )
    if result.count("mismatch"):
        raise typer.Exit(ExitCode.INCOMPATIBLE)
    if result.count("error"):
        raise typer.Exit(ExitCode.NOT_CHECKED)
    raise typer.Exit(ExitCode.COMPATIBLE)


class DocFormat(str, Enum):
    """Formats of ``rules`` and ``runtimes``."""

    table = "table"
    json = "json"
    markdown = "markdown"


def print_doc(output_format: DocFormat, kind: str) -> None:
    """Print the rule or runtime table in the asked format (from ``dflash_check.docs``)."""
    from dflash_check import docs

    if output_format is DocFormat.markdown:
        sys.stdout.write(getattr(docs, f"{kind}_markdown")())
    elif output_format is DocFormat.json:
        sys.stdout.write(getattr(docs, f"{kind}_json")())
    else:
        stdout_console().print(getattr(docs, f"{kind}_table")())


DocFormatOpt = Annotated[DocFormat, typer.Option("--format", "-f")]


@app.command()
def rules(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List every rule: id, severity, what it checks, why and how to fix it."""
    print_doc(output_format, "rules")


@app.command()
def runtimes(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List the runtime profiles: how each runtime reads target_layer_ids."""
    print_doc(output_format, "runtimes")


def main() -> None:
    """Run the CLI; turn any unexpected exception into one line and exit 3."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        stderr_console().print("Interrupted.")
        sys.exit(130)
    except Exception as err:
        if debug_enabled():
            raise
        stderr_console().print(
            f"Error: unexpected {type(err).__name__}: {redact(str(err))}", markup=False
        )
        stderr_console().print("Set DFLASH_CHECK_DEBUG=1 for the traceback.", markup=False)
        sys.exit(ExitCode.NOT_CHECKED)
