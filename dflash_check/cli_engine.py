"""The command line of engine smoke runs: ``pair --engine vllm|sglang`` options and their flow.

Kept beside ``cli.py`` so the ``pair`` command only declares the options and hands over:
flag checks (usage errors, exit 2), ``--print-command``, and the attach / launch runner that
``cli.smoke`` calls instead of the bundled runtime. Messages go to stderr, data to stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # imported when used, to keep `--help` fast
    from dflash_check.core.engine_command import LaunchSpec
    from dflash_check.core.report import CheckReport
    from dflash_check.core.smoke_report import SmokeReport
    from dflash_check.hub.interface import ModelRef
    from dflash_check.runtime.engine import EngineOptions
    from dflash_check.runtime.smoke import SmokeOptions

ENGINE = "Smoke run in a serving engine"
ENGINE_KEY_ENV = "DFLASH_CHECK_ENGINE_API_KEY"


class EngineChoice(str, Enum):
    """Serving engines ``--smoke-run --engine`` drives (dflash_check.runtime.engine.ENGINES)."""

    vllm = "vllm"
    sglang = "sglang"


EngineOpt = Annotated[
    EngineChoice | None,
    typer.Option(
        "--engine",
        help="Run the smoke decode on this engine's server (see --endpoint) instead of "
        "the bundled runtime.",
        rich_help_panel=ENGINE,
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="Base URL of a running engine serving TARGET with DRAFT as its speculative "
        "model, e.g. http://gpu-node:8000.",
        rich_help_panel=ENGINE,
    ),
]
BaselineEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline-endpoint",
        help="Base URL of the same target served without speculation: outputs are compared "
        "token for token (lossless check).",
        rich_help_panel=ENGINE,
    ),
]
EngineApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--engine-api-key",
        envvar=ENGINE_KEY_ENV,
        help="Bearer key of the engine's API (never printed).",
        show_default=False,
        show_envvar=True,
        rich_help_panel=ENGINE,
    ),
]
EngineTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--engine-timeout",
        min=1.0,
        help="Seconds to wait for each engine answer.",
        rich_help_panel=ENGINE,
    ),
]
LaunchOpt = Annotated[
    bool,
    typer.Option(
        "--launch",
        help="Start the engine here with the pair (the --print-command command), run the "
        "smoke prompts, and stop it.",
        rich_help_panel=ENGINE,
    ),
]
PrintCommandOpt = Annotated[
    bool,
    typer.Option(
        "--print-command",
        help="Print the engine command that serves this pair (to run on your cluster) and exit.",
        rich_help_panel=ENGINE,
    ),
]
TensorParallelOpt = Annotated[
    int | None,
    typer.Option(
        "--tensor-parallel-size",
        min=1,
        help="Passed to the engine (--launch, --print-command).",
        rich_help_panel=ENGINE,
    ),
]
PipelineParallelOpt = Annotated[
    int | None,
    typer.Option(
        "--pipeline-parallel-size",
        min=1,
        help="Passed to the engine (--launch, --print-command).",
        rich_help_panel=ENGINE,
    ),
]
LaunchTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--launch-timeout",
        min=1.0,
        help="Seconds to wait for a launched engine to become healthy.",
        rich_help_panel=ENGINE,
    ),
]
EngineBinaryOpt = Annotated[
    str | None,
    typer.Option(
        "--engine-binary",
        help="--launch: the Python that has the engine installed (default: python3; vLLM runs "
        "as python -m vllm.entrypoints.openai.api_server), or a vllm executable.",
        rich_help_panel=ENGINE,
    ),
]
EngineArgOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--engine-arg",
        help="--launch: one more argument for the engine command (repeatable), e.g. "
        "--engine-arg=--enforce-eager.",
        rich_help_panel=ENGINE,
    ),
]


def check_engine_flags(
    smoke_run: bool,
    engine: EngineChoice | None,
    endpoint: str | None,
    baseline: str | None,
    launch: bool = False,
    print_command: bool = False,
) -> None:
    """Refuse engine flags that cannot work together, naming both flags."""
    for flag, on in (("--launch", launch), ("--print-command", print_command)):
        if on and engine is None:
            raise typer.BadParameter(f"{flag} needs --engine vllm|sglang", param_hint=flag)
    if print_command:
        return
    if engine is not None and not smoke_run:
        raise typer.BadParameter(
            "--engine needs --smoke-run (or --print-command)", param_hint="--engine"
        )
    if launch and endpoint is not None:
        raise typer.BadParameter(
            "--launch starts its own server; --endpoint attaches to a running one: use one",
            param_hint="--launch",
        )
    if engine is not None and endpoint is None and not launch:
        raise typer.BadParameter(
            f"--engine {engine.value} needs --endpoint URL (a running server to attach to) "
            "or --launch",
            param_hint="--engine",
        )
    for flag, value in (("--endpoint", endpoint), ("--baseline-endpoint", baseline)):
        if value is not None and engine is None:
            raise typer.BadParameter(f"{flag} needs --engine vllm|sglang", param_hint=flag)
        if value is not None and not value.startswith(("http://", "https://")):
            raise typer.BadParameter(
                f"{flag} {value!r}: give a URL such as http://host:8000", param_hint=flag
            )


def launch_spec(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    engine: str,
    tensor_parallel: int | None,
    pipeline_parallel: int | None,
    host: str,
    port: int,
) -> LaunchSpec:
    """Return what the engine command needs: the pair as given, the draft's block size and
    the draft length the pair was checked for (``--num-speculative-tokens``), if given."""
    from dflash_check.core.engine_command import LaunchSpec

    return LaunchSpec(
        engine=engine,
        target=target.spec,
        draft=draft.spec,
        block_size=report.draft.block_size,
        num_speculative_tokens=report.num_speculative_tokens,
        tensor_parallel=tensor_parallel,
        pipeline_parallel=pipeline_parallel,
        host=host,
        port=port,
    )


def print_engine_command(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    engine: EngineChoice,
    tensor_parallel: int | None,
    pipeline_parallel: int | None,
) -> None:
    """Print the command that serves the pair (stdout), after a passing static check."""
    from dflash_check.cli import stderr_console
    from dflash_check.core.engine_command import build_command, shell_line
    from dflash_check.core.report import Verdict

    if report.verdict is Verdict.INCOMPATIBLE:
        stderr_console().print(
            "No command printed: the static check failed (run without --print-command to see why).",
            markup=False,
        )
        return
    # 0.0.0.0: the server is meant to be reached from the machine that runs dflash-check.
    spec = launch_spec(
        report, draft, target, engine.value, tensor_parallel, pipeline_parallel, "0.0.0.0", 8000
    )
    sys.stdout.write(shell_line(build_command(spec)) + "\n")


def run_engine(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    engine: EngineOptions,
    say: Callable[[str], None],
) -> SmokeReport:
    """Run the smoke prompts on the engine (attached, or launched here first)."""
    from dflash_check.runtime.engine import run_engine_smoke
    from dflash_check.runtime.smoke import DEFAULT_PROMPTS

    def attach(engine: EngineOptions) -> SmokeReport:
        return run_engine_smoke(
            draft,
            target,
            options.prompts or DEFAULT_PROMPTS,  # the bundled runtime's prompts
            options.max_new_tokens,
            options.temperature,
            options.seed,
            options.chat_template,
            options.min_acceptance,
            options.block_size or report.draft.block_size,
            engine,
            say,
        )

    if engine.mode == "launch":
        return launch_and_attach(report, draft, target, engine, attach, say)
    return attach(engine)


def launch_and_attach(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    engine: EngineOptions,
    attach: Callable[[EngineOptions], SmokeReport],
    say: Callable[[str], None],
) -> SmokeReport:
    """Start the engine on a free loopback port, run the attach flow on it, and stop it."""
    import tempfile
    import threading
    from dataclasses import replace

    from dflash_check.core.engine_command import launch_command
    from dflash_check.runtime.engine import EngineError, free_port, launch_failure, launched

    port = free_port()
    spec = launch_spec(
        report,
        draft,
        target,
        engine.engine,
        engine.tensor_parallel,
        engine.pipeline_parallel,
        "127.0.0.1",
        port,
    )
    argv = [*launch_command(spec, engine.binary), *engine.extra_args]
    log = Path(tempfile.gettempdir()) / f"dflash-check-{engine.engine}-{os.getpid()}.log"
    url = f"http://127.0.0.1:{port}"
    ready = threading.Event()  # set once /health answered: later failures are at decode
    try:
        with launched(argv, engine.engine, url, engine.launch_timeout, log, say, ready=ready):
            return attach(replace(engine, endpoint=url))
    except EngineError as err:
        # The engine we started failed: the root cause sits in its log, not in the HTTP error.
        raise launch_failure(err, engine.engine, log, ready=ready.is_set(), url=url) from None
