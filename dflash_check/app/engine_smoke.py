"""The engine smoke run: attach to a server, or launch one here and attach, and report.

The CLI parses ``--engine`` and its flags and hands the flow over: the launch command is built
from the checked pair (``launch_spec``), the engine is started on a free loopback port and
stopped after, the prompts run through its HTTP API. A failed engine is a result, not an
error: the smoke report carries the failure (the engine's own words, from its log) next to the
static verdict, so that a ``--force`` run on a broken pair shows both.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_check.check.report import CheckReport
    from dflash_check.engines.command import LaunchSpec
    from dflash_check.engines.profiles import EngineOptions
    from dflash_check.knowledge.acceptance import BundledTau
    from dflash_check.knowledge.engines.interface import EngineLimit
    from dflash_check.smoke.report import EngineFailure, EngineRun, SmokeReport
    from dflash_check.smoke.run import SmokeOptions
    from dflash_check.sources.interface import ModelRef


def block_size_of(report: CheckReport, given: int | None) -> int | None:
    """Return ``--block-size``, else the draft's own (a DFlash-family draft states one)."""
    dflash = report.draft.dflash
    return given or (dflash.block_size if dflash is not None else None)


def failed_run(
    report: CheckReport,
    options: SmokeOptions,
    engine: str,
    failure: EngineFailure,
    run: EngineRun | None = None,
    bundled: BundledTau | None = None,
) -> SmokeReport:
    """Return the smoke report of a run whose engine failed with ``failure``: no cases, the
    settings it was started with, and the engine as launched (``run``: engine, endpoint,
    parallelism), so that the failure says where it happened; ``bundled``:
    ``--compare-bundled``'s run, kept for the report."""
    from dflash_check.engines.command import DEFAULT_BLOCK_SIZE
    from dflash_check.knowledge.acceptance import floor_for
    from dflash_check.smoke.report import SmokeReport

    block = block_size_of(report, options.block_size) or DEFAULT_BLOCK_SIZE
    return SmokeReport(
        device=engine,
        dtype="as served",
        block_size=block,
        temperature=options.temperature,
        min_acceptance=floor_for(block, options.min_acceptance).tau,
        cases=(),
        engine=run,
        failure=failure,
        bundled=bundled,
    )


def launch_spec(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    engine: EngineOptions,
    host: str,
    port: int,
) -> LaunchSpec:
    """Return what the engine command needs: the pair as given, the draft's block size, the
    draft length the pair was checked for (``--num-speculative-tokens``), if given, the
    engine's parallelism, served on ``host``:``port``, and the engine arguments with the
    settings the check read from them (the serve command's draft length among them)."""
    from dflash_check.engines.command import LaunchSpec

    return LaunchSpec(
        engine=engine.engine,
        target=target.spec,
        draft=draft.spec,
        block_size=block_size_of(report, None),
        num_speculative_tokens=report.num_speculative_tokens,
        method=report.draft.method,
        tensor_parallel=engine.tensor_parallel,
        pipeline_parallel=engine.pipeline_parallel,
        host=host,
        port=port,
        engine_settings=report.engine_settings,
        engine_args=engine.extra_args,
    )


def served_name(ref: ModelRef) -> str:
    """Return the model as an engine command names it: a Hub spec, or an absolute path."""
    return str(ref.path.expanduser().resolve()) if ref.path is not None else ref.spec


def serve_command(
    report: CheckReport, draft: ModelRef, target: ModelRef, engine: EngineOptions
) -> str:
    """Return the one-line shell command that serves the pair (``--print-command``), for a
    server meant to be reached from the machine that runs dflash-check (0.0.0.0:8000)."""
    from dataclasses import replace

    from dflash_check.engines.command import build_command, shell_line
    from dflash_check.sanitize import one_line

    spec = launch_spec(report, draft, target, engine, "0.0.0.0", 8000)
    # The command runs elsewhere ("your cluster"), from another directory: local folders are
    # given as absolute paths, which the user can see and rewrite for that machine. A target
    # that names its own code is refused by both engines without --trust-remote-code
    # (conformance/results/oracle/commands/: MiMo-V2.5-Pro); the printed line says so openly.
    spec = replace(
        spec,
        target=served_name(target),
        draft=served_name(draft),
        trust_remote_code=report.target.remote_code,
    )
    # shell quoting keeps an ESC in a folder name; a terminal must see it, not obey it.
    return one_line(shell_line(build_command(spec)))


def run_engine(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    engine: EngineOptions,
    say: Callable[[str], None],
    bundled: BundledTau | None = None,
    prompts: tuple[str, ...] = (),
) -> SmokeReport:
    """Run ``prompts`` (default: the bundled runtime's) on the engine (attached, or launched
    here first); ``bundled``: ``--compare-bundled``'s run of the pair, for the floor."""
    from dflash_check.engines.smoke_run import run_engine_smoke
    from dflash_check.smoke.run import DEFAULT_PROMPTS

    prompts = prompts or options.prompts or DEFAULT_PROMPTS

    block_size = block_size_of(report, options.block_size)

    def attach(engine: EngineOptions) -> SmokeReport:
        return run_engine_smoke(
            draft,
            target,
            prompts,
            options.max_new_tokens,
            options.temperature,
            options.seed,
            options.chat_template,
            options.min_acceptance,
            block_size,
            engine,
            say,
            bundled,
        )

    if engine.mode == "launch":
        return launch_and_attach(report, draft, target, engine, attach, say)
    return attach(engine)


def limit_before_launch(engine: EngineOptions, method: str) -> EngineLimit | None:
    """Return the limit the engine ``--launch`` starts would hit on this run (None: none known,
    or the engine is not installed as a package: then only its log can tell)."""
    from dflash_check.engines.command import launch_python
    from dflash_check.knowledge.engine_limits import limit_for
    from dflash_check.knowledge.installed import NotInstalled, installed_build

    try:
        version = installed_build(
            engine.engine, launch_python(engine.engine, engine.binary)
        ).version
    except NotInstalled:
        return None
    return limit_for(engine.engine, version, method, engine.pipeline_parallel)


def launch_and_attach(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    engine: EngineOptions,
    attach: Callable[[EngineOptions], SmokeReport],
    say: Callable[[str], None],
) -> SmokeReport:
    """Start the engine on a free loopback port, run the attach flow on it, and stop it."""
    import threading
    from dataclasses import replace

    from dflash_check.engines.command import launch_command
    from dflash_check.engines.errors import EngineError, EngineLimitError, EngineRunFailedError
    from dflash_check.engines.launch import free_port, launch_failure, launched, private_log
    from dflash_check.knowledge.engine_limits import limit_in_log, limit_message
    from dflash_check.sanitize import one_line
    from dflash_check.smoke.report import EngineRun

    port = free_port()
    spec = launch_spec(report, draft, target, engine, "127.0.0.1", port)
    argv = list(launch_command(spec, engine.binary))  # the engine arguments included
    method = report.draft.method
    known = limit_before_launch(engine, method)
    if known is not None:
        sys.stderr.write(
            one_line(f"dflash-check: {limit_message(engine.engine, known)}; {known.instead}") + "\n"
        )
    log = private_log(engine.engine)  # a fresh 0700 folder: nothing planted at a known name
    url = f"http://127.0.0.1:{port}"
    ready = threading.Event()  # set once /health answered: later failures are at decode
    try:
        with launched(argv, engine.engine, url, engine.launch_timeout, log, say, ready=ready):
            return attach(replace(engine, endpoint=url))
    except EngineError as err:
        # The engine we started failed: the root cause sits in its log, not in the HTTP error.
        names = (draft.spec, target.spec, Path(draft.spec).name, Path(target.spec).name)
        failed = launch_failure(err, engine.engine, log, ready=ready.is_set(), url=url, names=names)
        if isinstance(failed, EngineRunFailedError):
            hit = limit_in_log(
                engine.engine, failed.failure.root_cause, method, engine.pipeline_parallel
            )
            if hit is not None:
                raise EngineLimitError(
                    f"{limit_message(engine.engine, hit)}; engine log: "
                    f"{failed.failure.root_cause} (log {failed.failure.log})",
                    hint=hit.instead,
                ) from None
            failed.run = EngineRun(
                engine=engine.engine,
                mode="launch",
                endpoint=url,
                served_model=target.spec,
                draft_model=draft.spec,
                draft_evidence="launch",  # dflash-check started it with this draft
                tensor_parallel=engine.tensor_parallel,
                pipeline_parallel=engine.pipeline_parallel,
            )
        raise failed from None
