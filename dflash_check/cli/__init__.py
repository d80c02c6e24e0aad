"""The command line: parse options into a request, run the check, render, pick the exit code.

Only this module prints or exits. Data goes to stdout, messages to stderr.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperCommand

from dflash_check import __version__
from dflash_check.cli.engine import (
    ENGINE_KEY_ENV,
    BaselineEndpointOpt,
    EndpointOpt,
    EngineApiKeyOpt,
    EngineArgOpt,
    EngineBinaryOpt,
    EngineOpt,
    EngineTimeoutOpt,
    LaunchOpt,
    LaunchTimeoutOpt,
    PipelineParallelOpt,
    PrintCommandOpt,
    TensorParallelOpt,
    check_engine_flags,
    finite_timeout,
)
from dflash_check.engines.command import MAX_SPECULATIVE_TOKENS
from dflash_check.errors import CheckError, ExitCode
from dflash_check.sources.limits import DEADLINE_FACTOR

if TYPE_CHECKING:  # imported lazily at run time, to keep `--help` and start-up fast
    from collections.abc import Callable

    from rich.console import Console

    from dflash_check.check.outcome import RunResult
    from dflash_check.check.report import CheckReport
    from dflash_check.engines.profiles import EngineOptions
    from dflash_check.smoke.run import SmokeOptions
    from dflash_check.sources.hub import HubOptions
    from dflash_check.sources.interface import ModelRef, ModelSource

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


RUNTIMES_SLOT = "{runtimes}"
"""Stands in help text for the runtime names, filled when help is shown: the names come from
the runtime table, whose import would cost every run ~0.2 s if the help were built at import."""


def fill_runtime_help(command: Any) -> None:
    """Write the runtime names into every help text of ``command`` that has the slot."""
    for param in command.params:
        help_text = getattr(param, "help", None)
        if help_text and RUNTIMES_SLOT in help_text:
            param.help = help_text.replace(RUNTIMES_SLOT, ", ".join(runtime_names()))


class UsageCommand(TyperCommand):
    """A command whose usage line reads ``DRAFT TARGET``, as its help text says.

    typer wraps required arguments in braces (``{DRAFT} {TARGET}``), which reads like a
    placeholder syntax the shell would not accept.
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Fill the runtime names in, then show the help."""
        fill_runtime_help(self)
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


PAIR_EXAMPLES = [
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16 Qwen/Qwen3-4B",
    "dflash-check pair examples/Qwen3-4B-DFlash-b16 examples/Qwen3.5-4B",
    "dflash-check pair DRAFT TARGET --runtime vllm --format json",
    "dflash-check pair deepseek-ai/DeepSeek-V3    # one model: its MTP layers",
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16@main Qwen/Qwen3-4B --offline",
    "dflash-check pair DRAFT TARGET --smoke-run --engine vllm --endpoint URL",
    "dflash-check pair DRAFT TARGET --engine sglang --print-command",
]


def stderr_console() -> Console:
    """Return the console for messages (stderr)."""
    from dflash_check.sanitize import safe_console

    return safe_console(stderr=True, highlight=False, soft_wrap=True)


def stdout_console() -> Console:
    """Return the console for data (stdout)."""
    from dflash_check.sanitize import safe_console

    return safe_console(highlight=False)


def note(text: str) -> None:
    """Print one plain line on stderr (no rich: machine formats never need it)."""
    from dflash_check.sanitize import visible

    sys.stderr.write(visible(text) + "\n")


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


def terminal_lines(console: Console, text: str) -> str:
    """Return ``text`` wrapped at spaces for a terminal (the terminal would fold it mid-word,
    `HF_END` / `POINT`); unchanged for a pipe or a file, where one line per message is easier
    to search."""
    if not console.is_terminal:
        return text
    from dflash_check.render.diagnostics import wrap

    return "\n".join(wrap(text, console.width, "", "  "))


def fail(err: CheckError, json_output: bool = False, output: Path | None = None) -> NoReturn:
    """Print one line for ``err`` (plus a hint) on stderr and exit 3.

    With ``--format json`` the error object is the report: it goes where the report would go
    (``--output`` or stdout).
    """
    console = stderr_console()
    if debug_enabled():
        import traceback

        console.print(redact("".join(traceback.format_exception(err))), markup=False)
    console.print(
        terminal_lines(console, f"Error: {redact(str(err))}"), markup=False, style="bold red"
    )
    if err.hint:
        console.print(terminal_lines(console, f"Hint: {redact(err.hint)}"), markup=False)
    if not debug_enabled():
        console.print("Set DFLASH_CHECK_DEBUG=1 for details.", markup=False, style="dim")
    if json_output:
        import json

        from dflash_check.render.json import error_dict

        payload = error_dict(
            redact(str(err)), redact(err.hint) if err.hint else None, type(err).__name__
        )
        write_output(json.dumps(payload, indent=2) + "\n", output)
    raise typer.Exit(ExitCode.NOT_CHECKED)


class OutputFormat(str, Enum):
    """Report formats of ``pair`` and ``registry``."""

    table = "table"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"
    markdown = "markdown"


def render_ci(result: RunResult, output_format: OutputFormat) -> str:
    """Render a run in one of the CI formats (SARIF, JUnit, GitHub annotations, Markdown)."""
    if output_format is OutputFormat.sarif:
        from dflash_check.render.sarif import render_sarif

        return render_sarif(result)
    if output_format is OutputFormat.junit:
        from dflash_check.render.junit import render_junit

        return render_junit(result)
    if output_format is OutputFormat.markdown:
        from dflash_check.render.markdown import render_markdown

        return render_markdown(result)
    from dflash_check.render.github import render_github

    return render_github(result)


CI_FORMATS = (OutputFormat.sarif, OutputFormat.junit, OutputFormat.github, OutputFormat.markdown)


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
# Help panels of `pair` and `registry`: grouped so that 40 options read at 80 columns.
CHECK = "Check"
HUB = "Hub"
OUTPUT = "Output"


def runtime_names() -> tuple[str, ...]:
    """Return every name ``--runtime`` accepts, from the one runtime table (help and errors)."""
    from dflash_check.knowledge.runtimes import RUNTIME_NAMES

    return RUNTIME_NAMES


RuntimeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--runtime",
        "-r",
        metavar="RUNTIME",
        help=f"Runtimes to check: {RUNTIMES_SLOT}; pin a release as vllm==0.33.0 or "
        "vllm=installed. Default: portable (all, newest releases).",
        show_default=False,
        rich_help_panel=CHECK,
    ),
]


def parse_runtimes(values: list[str] | None) -> str:
    """Return the runtime selection of repeated or comma-separated ``--runtime`` values.

    Every value counts (a repeated option never drops one); ``portable`` among them means every
    runtime. A runtime may name its release pip-style (``vllm==0.34.0``; alone, the newest
    release known) or ``vllm=installed`` (the version installed here, from package metadata).
    The result is the core's selection string (``portable`` or ``vllm==0.34.0,sglang``); an
    unknown runtime or release, or a runner the release lacks, is a usage error.
    """
    from dflash_check.knowledge.runtimes import SelectionError, join_selection, parse_part

    chosen: dict[str, str | None] = {}
    try:
        for value in values or ["portable"]:
            for part in value.split(","):
                if part.strip():
                    name, version = parse_part(part)
                    if name in chosen and chosen[name] != version:
                        raise SelectionError(
                            f"{name} is named with two releases ({chosen[name] or 'newest'} and "
                            f"{version or 'newest'}); check one release per run"
                        )
                    chosen[name] = version
        if not chosen:
            raise SelectionError("no runtime given")
    except SelectionError as err:
        raise typer.BadParameter(str(err), param_hint="--runtime") from None
    return join_selection(chosen)


FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help=f"Report format: {', '.join(f.value for f in OutputFormat)}.",
        rich_help_panel=OUTPUT,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report (for json, also the error object) to FILE instead of stdout; "
        "a one-line summary goes to stderr.",
        dir_okay=False,
        rich_help_panel=OUTPUT,
    ),
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Fail (exit 1) on warnings too.", rich_help_panel=CHECK)
]
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Table report: add both models side by side and each runtime's layer resolution.",
        rich_help_panel=OUTPUT,
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ignore",
        metavar="ID",
        help="Skip a rule by id (repeatable), e.g. --ignore DF013.",
        rich_help_panel=CHECK,
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        metavar="TOKEN",
        help="Hugging Face token (default: HF_TOKEN or the saved login).",
        show_default=False,
        rich_help_panel=HUB,
    ),
]
RevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--revision",
        metavar="REV",
        help="Revision (branch, tag, commit) for both models.",
        rich_help_panel=HUB,
    ),
]
DraftRevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--draft-revision", metavar="REV", help="Revision of the draft.", rich_help_panel=HUB
    ),
]
TargetRevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--target-revision", metavar="REV", help="Revision of the target.", rich_help_panel=HUB
    ),
]
DraftSubfolderOpt = Annotated[
    str | None,
    typer.Option(
        "--draft-subfolder",
        metavar="DIR",
        help="Folder of the draft's repo that holds it (as DRAFT ORG/NAME:SUBFOLDER).",
        rich_help_panel=HUB,
    ),
]
TargetSubfolderOpt = Annotated[
    str | None,
    typer.Option(
        "--target-subfolder",
        metavar="DIR",
        help="Folder of the target's repo that holds it.",
        rich_help_panel=HUB,
    ),
]
OfflineOpt = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="Use the Hugging Face cache only (as HF_HUB_OFFLINE=1).",
        rich_help_panel=HUB,
    ),
]


TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help=f"Seconds per Hub response (a model's whole fetch: {DEADLINE_FACTOR}x this).",
        min=0.1,
        callback=finite_timeout,
        rich_help_panel=HUB,
    ),
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
    return flag if flag is not None else both


def hub_options(
    token: str | None,
    offline: bool,
    timeout: float,
    on_retry: Callable[[str], None] | None = None,
) -> HubOptions:
    """Return the Hub options of a command, with retries announced on stderr (one line each,
    unless ``on_retry`` shows them some other way)."""
    from dflash_check.sources.hub import HubOptions

    def announce(text: str) -> None:
        stderr_console().print(f"Hub: {redact(text)}", markup=False, style="yellow")

    return HubOptions(token=token, offline=offline, timeout=timeout, on_retry=on_retry or announce)


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


def hub_factory(
    token: str | None,
    offline: bool,
    timeout: float,
    on_retry: Callable[[str], None] | None = None,
) -> Callable[[], ModelSource]:
    """Return what builds the Hub source, so that local checks never import it."""

    def build() -> ModelSource:
        from dflash_check.sources.hub import HubSource

        return HubSource(hub_options(token, offline, timeout, on_retry))

    return build


def write_output(text: str, output: Path | None) -> None:
    """Write the rendered report to ``output``, or to stdout."""
    from dflash_check.sanitize import guard_document

    text = guard_document(text)  # a no-op unless a renderer let a control character through
    if output is None:
        sys.stdout.write(text)
        return
    from dflash_check.sources.output import write_report

    try:
        write_report(output, text)  # atomic, never through a symlink (see output.py)
    except CheckError as err:
        fail(err)


def summarise(text: str, output: Path | None) -> None:
    """Print the one-line summary on stderr, naming the file the report went to."""
    where = f"; report written to {output}" if output is not None else ""
    stderr_console().print(f"dflash-check: {text}{where}", markup=False)


EXIT_CODES = {
    ExitCode.COMPATIBLE: "compatible (warnings allowed unless --strict)",
    ExitCode.INCOMPATIBLE: "incompatible, a failed smoke run, or a warning under --strict; "
    "with one model: it has no MTP layers, or its checkpoint lacks them",
    ExitCode.USAGE: "usage error",
    ExitCode.NOT_CHECKED: "could not check (network, gated, offline miss, malformed input)",
}
REGISTRY_EXIT_CODES = {
    ExitCode.COMPATIBLE: "every pair as expected",
    ExitCode.INCOMPATIBLE: "a pair not as expected",
    ExitCode.USAGE: "usage error",
    ExitCode.NOT_CHECKED: "a pair could not be checked (and none was not as expected)",
}


def epilog(examples: list[str], codes: dict[ExitCode, str]) -> str:
    """Return a command's help epilog: examples, then its exit codes."""
    example_lines = "\n".join(["Examples:", *(f"  $ {e}" for e in examples)])
    code_lines = "\n".join(["Exit codes:", *(f"  {int(c)}  {text}" for c, text in codes.items())])
    return f"{example_lines}\n\n{code_lines}"


@app.command(cls=PairUsageCommand, epilog=epilog(PAIR_EXAMPLES, EXIT_CODES))
def pair(
    draft: Annotated[
        str | None,
        typer.Argument(
            metavar="DRAFT",
            help="The draft: a local path, or a Hub repo id ORG/NAME, ORG/NAME:SUBFOLDER or "
            "ORG/NAME@REVISION (docs/cli.md#local-or-hub).",
            show_default=False,
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Argument(
            metavar="TARGET",
            help="The target, as DRAFT. Alone (pair TARGET): the target's own MTP layers, "
            "what each engine builds from them; exit 1 when it has none.",
            show_default=False,
        ),
    ] = None,
    runtime: RuntimeOpt = None,
    output_format: FormatOpt = OutputFormat.table,
    output: OutputOpt = None,
    strict: StrictOpt = False,
    verbose: VerboseOpt = False,
    ignore: IgnoreOpt = None,
    num_speculative_tokens: Annotated[
        int | None,
        typer.Option(
            "--num-speculative-tokens",
            metavar="N",
            min=1,
            max=MAX_SPECULATIVE_TOKENS,
            help="vLLM's num_speculative_tokens, checked against the block size or MTP layers.",
            show_default=False,
            rich_help_panel=CHECK,
        ),
    ] = None,
    revision: RevisionOpt = None,
    draft_revision: DraftRevisionOpt = None,
    target_revision: TargetRevisionOpt = None,
    draft_subfolder: DraftSubfolderOpt = None,
    target_subfolder: TargetSubfolderOpt = None,
    token: TokenOpt = None,
    offline: OfflineOpt = False,
    timeout: TimeoutOpt = 10.0,
    smoke_run: Annotated[
        bool,
        typer.Option(
            "--smoke-run",
            help="Also run a real speculative decode (the smoke extra; CUDA or CPU).",
            rich_help_panel=SMOKE,
        ),
    ] = False,
    device: Annotated[
        DeviceChoice,
        typer.Option("--device", metavar="DEVICE", help="Smoke-run device.", rich_help_panel=SMOKE),
    ] = DeviceChoice.auto,
    dtype: Annotated[
        DtypeChoice,
        typer.Option(
            "--dtype",
            metavar="DTYPE",
            help="Smoke-run dtype (auto: bfloat16 on CUDA, else float32).",
            rich_help_panel=SMOKE,
        ),
    ] = DtypeChoice.auto,
    prompt: Annotated[
        list[str] | None,
        typer.Option(
            "--prompt",
            metavar="TEXT",
            help="Smoke-run prompt (repeatable; default: built-in prompts).",
            rich_help_panel=SMOKE,
        ),
    ] = None,
    max_new_tokens: Annotated[
        int,
        typer.Option(
            "--max-new-tokens",
            metavar="N",
            min=1,
            help="Tokens to generate per prompt.",
            rich_help_panel=SMOKE,
        ),
    ] = 64,
    block_size: Annotated[
        int | None,
        typer.Option(
            "--block-size",
            metavar="N",
            min=2,
            help="Override the draft's block_size.",
            rich_help_panel=SMOKE,
        ),
    ] = None,
    temperature: Annotated[
        float,
        typer.Option(
            "--temperature",
            metavar="T",
            min=0.0,
            help="0: greedy (checked lossless); above 0: rejection sampling.",
            rich_help_panel=SMOKE,
        ),
    ] = 0.0,
    min_acceptance: Annotated[
        float,
        typer.Option(
            "--min-acceptance",
            metavar="TAU",
            min=1.0,
            help="Fail (exit 1) below this tau (mean tokens per target step).",
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
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Sampling seed.", rich_help_panel=SMOKE)
    ] = 0,
    timing_repeats: Annotated[
        int,
        typer.Option(
            "--timing-repeats",
            metavar="N",
            min=1,
            max=100,
            help="Timed runs after a warm-up; the speedup is their median.",
            rich_help_panel=SMOKE,
        ),
    ] = 3,
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
    engine_arg: EngineArgOpt = None,
) -> None:
    """Check that DRAFT works with TARGET in every runtime (or the ones --runtime names).

    With one model (pair TARGET): report the target's own MTP layers instead.
    """
    from dflash_check.check.rules import RULES_BY_ID
    from dflash_check.sources.interface import BadModelSpec, parse_model_ref

    if draft is None:  # both arguments are optional to typer: the usage line says [DRAFT] TARGET
        raise typer.BadParameter("missing: pair needs a TARGET (and usually a DRAFT before it)")
    check_output(output)  # before any fetch: a bad path must not cost a whole smoke run
    _TOKEN[0] = token
    selection = parse_runtimes(runtime)
    if target is None:
        alone = draft  # one model given: it is the target
        refused = {
            "--smoke-run": smoke_run,
            "--engine": engine is not None,
            "--ignore": bool(ignore),
            "--draft-revision": draft_revision is not None,
            "--draft-subfolder": draft_subfolder is not None,
            f"--format {output_format.value}": output_format in CI_FORMATS,
        }
        used = [flag for flag, given in refused.items() if given]
        if used:
            raise typer.BadParameter(
                f"{', '.join(used)} needs a DRAFT and a TARGET; with one model, pair reports "
                "the target's own MTP layers (as table or json)"
            )
        try:
            ref = parse_model_ref(
                alone,
                pick_revision(target_revision, revision, "--target-revision"),
                target_subfolder,
            )
        except BadModelSpec as err:
            raise typer.BadParameter(str(err)) from None
        mtp_alone(
            ref,
            selection,
            strict,
            num_speculative_tokens,
            output_format,
            output,
            token,
            offline,
            timeout,
        )
    assert target is not None  # the one-model question returned above
    _ENGINE_KEY[0] = engine_api_key
    check_engine_flags(smoke_run, engine, endpoint, baseline_endpoint, launch, print_command)
    json_output = output_format is OutputFormat.json
    ignored = frozenset(r.upper() for r in ignore or [])
    unknown = sorted(ignored - set(RULES_BY_ID))
    if unknown:
        raise typer.BadParameter(f"unknown rule id {', '.join(unknown)}", param_hint="--ignore")
    try:
        draft_ref = parse_model_ref(
            draft, pick_revision(draft_revision, revision, "--draft-revision"), draft_subfolder
        )
        target_ref = parse_model_ref(
            target, pick_revision(target_revision, revision, "--target-revision"), target_subfolder
        )
    except BadModelSpec as err:
        raise typer.BadParameter(str(err)) from None

    from dflash_check.app.pipeline import CheckRequest, ModelCache, check_pair

    cache = ModelCache(hub_factory=hub_factory(token, offline, timeout))
    if smoke_run and engine is not None and endpoint and not launch:
        # The server says which release it is: the static verdict is for that release.
        from dflash_check.cli.engine import endpoint_selection

        selection = endpoint_selection(
            selection, engine.value, endpoint, engine_api_key, engine_timeout
        )
    request = CheckRequest(
        draft_ref, target_ref, selection, ignored, strict, num_speculative_tokens
    )
    from dflash_check.check.outcome import PairOutcome, RunResult
    from dflash_check.check.report import Verdict

    label = f"{draft} -> {target}"
    try:
        report = check_pair(request, cache)
    except CheckError as err:
        if output_format in CI_FORMATS:
            from dflash_check.check.outcome import PairOutcome, RunResult
            from dflash_check.check.report import Verdict

            outcome = PairOutcome(
                label, Verdict.COMPATIBLE, error=redact(str(err)), error_hint=err.hint
            )
            write_output(render_ci(RunResult((outcome,), strict=strict), output_format), output)
        fail(err, json_output, output)

    if print_command and engine is not None:
        from dflash_check.cli.engine import print_engine_command

        print_engine_command(
            report, draft_ref, target_ref, engine, tensor_parallel_size, pipeline_parallel_size
        )
        raise typer.Exit(exit_code(report, strict))

    if smoke_run:
        from dflash_check.smoke.run import SMOKE_METHODS, SmokeOptions, SmokeUnsupportedError

        if report.draft.method not in SMOKE_METHODS:
            # Refused before any weight is fetched: the bundled runtime has no EAGLE-3 head.
            fail(
                SmokeUnsupportedError(
                    f"draft {draft}: a {report.draft.method} draft; the smoke run supports "
                    "DFlash and DFlash2 drafts",
                    hint="the static check (without --smoke-run) applies to it",
                ),
                json_output,
                output,
            )
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
            repeats=timing_repeats,
        )
        engine_options = None
        if engine is not None:
            from dflash_check.engines.profiles import EngineOptions

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
                extra_args=tuple(engine_arg or ()),
            )
        report = smoke(
            report, draft_ref, target_ref, options, force, json_output, output, engine_options
        )

    from dflash_check.render.diagnostics import summary_line

    if output_format in CI_FORMATS:
        from dflash_check.check.outcome import PairOutcome, RunResult
        from dflash_check.check.report import Verdict

        outcome = PairOutcome(label, Verdict.COMPATIBLE, report=report)
        write_output(render_ci(RunResult((outcome,), strict=strict), output_format), output)
        summarise(summary_line(report), output)
    elif json_output:
        from dflash_check.render.json import render_json

        write_output(render_json(report), output)
        summarise(summary_line(report), output)
    elif output is not None:
        from dflash_check.render.table import render_text

        write_output(render_text(report, FILE_WIDTH, verbose), output)
        summarise(summary_line(report), output)
    else:
        from dflash_check.render.table import render_table

        console = stdout_console()
        console.print(render_table(report, console.width, verbose), crop=False)
    raise typer.Exit(exit_code(report, strict))


def mtp_alone(
    ref: ModelRef,
    selection: str,
    strict: bool,
    num_speculative_tokens: int | None,
    output_format: OutputFormat,
    output: Path | None,
    token: str | None,
    offline: bool,
    timeout: float,
) -> NoReturn:
    """Report a target's own MTP layers (``pair TARGET``) and exit: 0 servable, 1 not, 3 unread."""
    from dataclasses import replace

    from dflash_check.app.pipeline import ModelCache, check_target_alone
    from dflash_check.check.formats import normalise_draft
    from dflash_check.render.mtp import render_mtp_json, render_mtp_text, summary_line

    json_output = output_format is OutputFormat.json
    cache = ModelCache(hub_factory=hub_factory(token, offline, timeout))
    try:
        files = cache.fetch(ref, "target")
        try:
            normalise_draft(replace(files, role="draft"))
        except CheckError:
            pass  # not a draft: the question stands
        else:
            # A forgotten TARGET must not read as "this model has no MTP layers".
            raise typer.BadParameter(
                f"{ref.spec} is a draft; name its target too: dflash-check pair DRAFT TARGET"
            )
        report = check_target_alone(ref, cache, strict, num_speculative_tokens)
    except CheckError as err:
        fail(err, json_output, output)
    if selection != "portable":
        from dflash_check.knowledge.runtimes import selection_names

        names = selection_names(selection)
        report = replace(report, engines=tuple(r for r in report.engines if r.engine in names))
    width = stdout_console().width if output is None else FILE_WIDTH
    text = render_mtp_json(report) if json_output else render_mtp_text(report, width)
    if json_output or output is not None:
        write_output(text, output)
        summarise(summary_line(report), output)
    else:
        sys.stdout.write(text)
    from dflash_check.check.report import Verdict

    code = ExitCode.COMPATIBLE if report.verdict is Verdict.COMPATIBLE else ExitCode.INCOMPATIBLE
    raise typer.Exit(code)


# Text reports written to a file have no terminal to fit; this reads well in an editor.
FILE_WIDTH = 100


def smoke(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    force: bool,
    json_output: bool,
    output: Path | None = None,
    engine: EngineOptions | None = None,
) -> CheckReport:
    """Run the smoke decode after a passing static check (or with --force); attach it.

    With ``engine`` the decode runs on that serving engine, else in the bundled runtime.
    """
    from dataclasses import replace

    from dflash_check.check.report import Verdict
    from dflash_check.smoke.run import run_smoke

    err_console = stderr_console()
    # --strict decides the exit code, not whether the decode is worth running.
    if replace(report, strict=False).verdict is Verdict.INCOMPATIBLE and not force:
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
    failed: CheckError | None = None
    with progress:
        task = progress.add_task("starting", total=None)
        try:

            def say(text: str) -> None:
                progress.update(task, description=text)

            if engine is None:
                measured = run_smoke(draft, target, options, say)
            else:
                from dflash_check.cli.engine import run_engine

                measured = run_engine(report, draft, target, options, engine, say)
        except CheckError as err:
            failure = getattr(err, "failure", None)
            if engine is None or failure is None:
                failed = err
            else:
                # The engine dflash-check launched failed on the pair: a failed smoke run,
                # with the static verdict kept (a --force run on a broken pair shows both).
                from dflash_check.smoke.report import SmokeReport

                measured = SmokeReport(
                    device=engine.engine,
                    dtype="as served",
                    block_size=options.block_size or report.draft.block_size or 16,
                    temperature=options.temperature,
                    min_acceptance=options.min_acceptance,
                    cases=(),
                    failure=failure,
                )
    if failed is not None:  # after the spinner is cleared: the error stands alone
        fail(failed, json_output, output)
    return replace(report, smoke=measured)


def exit_code(report: CheckReport, strict: bool) -> int:
    """Return the exit code: 1 when the verdict is incompatible (which, with --strict, counts
    warnings and rules not checked: the printed verdict says so) or the smoke run fails."""
    from dflash_check.check.report import Verdict

    assert report.strict == strict  # the verdict printed is the one the code reflects
    if report.verdict is Verdict.INCOMPATIBLE:
        return ExitCode.INCOMPATIBLE
    if report.smoke is not None and not report.smoke.passed:
        return ExitCode.INCOMPATIBLE
    return ExitCode.COMPATIBLE


REGISTRY_EXAMPLES = [
    "dflash-check registry",
    "dflash-check registry pairs.yaml --format sarif --output dflash.sarif",
    "dflash-check registry --only 'z-lab/Qwen3.5-*' --format github",
    "HF_HUB_OFFLINE=1 dflash-check registry --format junit -o junit.xml",
    "dflash-check registry tests/models/registry.py --format sarif -o dflash.sarif   (vLLM)",
    "dflash-check registry python/sglang/test/test_utils.py -r sglang   (SGLang)",
]


class RegistryKind(str, Enum):
    """What the registry file is."""

    auto = "auto"
    pairs = "pairs"
    vllm = "vllm"
    sglang = "sglang"


@app.command(cls=UsageCommand, epilog=epilog(REGISTRY_EXAMPLES, REGISTRY_EXIT_CODES))
def registry(
    file: Annotated[
        Path,
        typer.Argument(
            help="The registry of pairings: a pairs.yaml, vLLM's tests/models/registry.py or "
            "SGLang's python/sglang/test/test_utils.py (read, never imported or run).",
            dir_okay=False,
        ),
    ] = Path("pairs.yaml"),
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
    kind: Annotated[
        RegistryKind,
        typer.Option(
            "--kind",
            help="What FILE is: auto (told by its content), pairs (a pairs.yaml), vllm (its "
            "tests/models/registry.py) or sglang (its test_utils.py constants).",
        ),
    ] = RegistryKind.auto,
    overrides: Annotated[
        Path | None,
        typer.Option(
            "--overrides",
            help="An engine's test file only: YAML naming the entries expected incompatible "
            "(expect, reason) or not to check (skip); every other entry is expected compatible.",
            dir_okay=False,
        ),
    ] = None,
    runtime: Annotated[
        list[str] | None,
        typer.Option(
            "--runtime",
            "-r",
            metavar="RUNTIME",
            help="An engine's test file only: the runtimes its entries must work in (default: "
            "the engine itself, at the checkout's release).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check every pair of a pairs.yaml, or every speculative entry of an engine's own test
    registry, against its expected verdict (a CI gate)."""
    from dflash_check.app.engine_tests import detect_kind, read_text
    from dflash_check.app.pipeline import ModelCache
    from dflash_check.app.registry import load_pairs, run_registry, select
    from dflash_check.check.outcome import PairOutcome, RunResult, SkippedEntry

    check_output(output)
    _TOKEN[0] = token
    json_output = output_format is OutputFormat.json
    try:
        text = read_text(file, str(file))
    except CheckError as err:
        fail(err, json_output, output)
    found = detect_kind(file, text) if kind is RegistryKind.auto else kind.value
    plan, about = None, None
    if found == "pairs":
        if overrides is not None or runtime:
            raise typer.BadParameter(
                "--overrides and --runtime apply to an engine's test file (vLLM's "
                "tests/models/registry.py, SGLang's test_utils.py); a pairs.yaml states "
                "expect and runtimes per pair"
            )
        try:
            selected = select(load_pairs(file, str(file)), only)
        except CheckError as err:
            fail(err, json_output, output)
    else:
        from dflash_check.app.engine_tests.plan import narrow, prepare, run_plan

        selection = parse_runtimes(runtime) if runtime else None
        try:
            plan, about = prepare(file, str(file), found, text, overrides, selection)
        except CheckError as err:
            fail(err, json_output, output)
        plan = narrow(plan, only)
        selected = plan.specs
    if not selected and (plan is None or only):
        raise typer.BadParameter(f"no pair of {file} matches {only!r}", param_hint="--only")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    err_console = stderr_console()
    retry = [""]  # the latest retry, shown in the bar's status line (never one line per retry)

    def retrying(text: str) -> None:
        retry[0] = f"Hub: {redact(text)}"
        if progress.live.is_started:
            progress.update(task, status=retry[0])

    # Without a terminal the retries are not shown: each pair's error says "after N attempts",
    # and the table gives the network hint once.
    cache = ModelCache(hub_factory=hub_factory(token, offline, timeout, retrying))
    progress = Progress(
        TextColumn("checking pairs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.fields[status]}", style="yellow"),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )
    with progress:
        task = progress.add_task("", total=len(selected), status="")

        def done(outcome: PairOutcome) -> None:
            progress.update(task, advance=1, description=outcome.label)

        skipped: tuple[SkippedEntry, ...] = ()
        if plan is None:
            outcomes = run_registry(selected, file.parent, cache, workers, done)
        else:
            outcomes, skipped = run_plan(plan, file.parent, cache, workers, done)
    result = RunResult(outcomes, file=str(file), skipped=skipped, about=about)

    if output_format in CI_FORMATS:
        write_output(render_ci(result, output_format), output)
    elif output_format is OutputFormat.json:
        from dflash_check.render.registry import render_registry_json

        write_output(render_registry_json(result), output)
    else:
        from dflash_check.render.registry import render_registry_table

        if output is not None:
            from dflash_check.render.table import export_text

            text = export_text(render_registry_table(result, FILE_WIDTH), FILE_WIDTH)
            write_output(text, output)
        else:
            console = stdout_console()
            console.print(render_registry_table(result, console.width), crop=False)
    if output_format is not OutputFormat.table:  # the table already shows each error
        for o in outcomes:
            if o.status == "error" and o.spec is not None:
                err_console.print(
                    f"Error: {file}:{o.spec.line}: {o.label}: {redact(o.error or '')}",
                    markup=False,
                )
    from dflash_check.render.diagnostics import plural

    entries = f"{len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'}"
    listed = f"; {entries} skipped" if skipped else ""
    summarise(
        f"registry{f' ({about})' if about else ''}: {plural(len(outcomes), 'pair')}, "
        f"{result.count('ok')} as expected, {result.count('mismatch')} not as expected, "
        f"{result.count('error')} not checked{listed}",
        output,
    )
    raise typer.Exit(registry_exit_code(result))


def registry_exit_code(result: RunResult) -> int:
    """Return the registry's exit code: 3 when any pair could not be checked (even if others
    are not as expected: the file has no verdict then, and an unchecked pair must not hide
    behind a mismatch), else 1 when any pair is not as expected, else 0 (README)."""
    if result.count("error"):
        return ExitCode.NOT_CHECKED
    if result.count("mismatch"):
        return ExitCode.INCOMPATIBLE
    return ExitCode.COMPATIBLE


class DocFormat(str, Enum):
    """Formats of ``rules`` and ``runtimes``."""

    table = "table"
    json = "json"
    markdown = "markdown"


def print_doc(output_format: DocFormat, kind: str) -> None:
    """Print the rule or runtime table in the asked format (from ``dflash_check.cli.docs``)."""
    from dflash_check.cli import docs

    if output_format is DocFormat.markdown:
        sys.stdout.write(getattr(docs, f"{kind}_markdown")())
    elif output_format is DocFormat.json:
        sys.stdout.write(getattr(docs, f"{kind}_json")())
    else:
        sys.stdout.write(getattr(docs, f"{kind}_text")(stdout_console().width))


DocFormatOpt = Annotated[DocFormat, typer.Option("--format", "-f")]
RuleArg = Annotated[
    str | None,
    typer.Argument(
        metavar="RULE", help="Explain one rule, by id (DF004) or name.", show_default=False
    ),
]


def explain_rule(query: str) -> None:
    """Print one rule's why, runtimes and fix; an unknown id is a usage error (exit 2)."""
    from dflash_check.cli import docs

    found = docs.find_rule(query)
    if found is None:
        close = docs.closest_rule(query)
        suggestion = f" (did you mean {close}?)" if close else ""
        raise typer.BadParameter(
            f"no rule {query!r}{suggestion}; `dflash-check rules` lists them all",
            param_hint="RULE",
        )
    sys.stdout.write(docs.explain_text(found, stdout_console().width))


@app.command(cls=UsageCommand)
def rules(
    rule_id: RuleArg = None,
    output_format: DocFormatOpt = DocFormat.table,
    long: Annotated[
        bool, typer.Option("--long", help="Each rule in full: runtimes, why, how to fix.")
    ] = False,
) -> None:
    """List every rule by id, one line each (--long: why and how to fix too)."""
    if rule_id is not None:
        explain_rule(rule_id)
        return
    if output_format is DocFormat.table and not long:
        from dflash_check.cli import docs

        sys.stdout.write(docs.rules_short_text(stdout_console().width))
        return
    print_doc(output_format, "rules")


@app.command(cls=UsageCommand)
def explain(
    rule_id: Annotated[str, typer.Argument(metavar="RULE", help="Rule id (DF004) or name.")],
) -> None:
    """Explain one rule: what it checks, the runtimes it concerns, why it exists, how to fix."""
    explain_rule(rule_id)


@app.command()
def runtimes(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List the runtime profiles: how each runtime reads target_layer_ids."""
    print_doc(output_format, "runtimes")


@app.command()
def formats(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List the draft formats: how each keeps its keys and numbers its layer ids."""
    print_doc(output_format, "formats")


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
