"""The command line of engine smoke runs: ``pair --engine vllm|sglang`` options and their flow.

Kept beside ``cli/pair.py`` so the ``pair`` command only declares the options and hands over:
the flags gathered in ``EngineFlags``, their checks (usage errors, exit 2) and
``--print-command``. The attach / launch flow and the release pinning are ``app/``'s
(``engine_smoke.py``, ``served.py``); this module parses the flags into their ``EngineOptions``.
Messages go to stderr, data to stdout.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from dflash_check.cli.options import CHECK, one_of
from dflash_check.cli.output import ENGINE_KEY_ENV
from dflash_check.errors import ExitCode

if TYPE_CHECKING:  # imported when used, to keep `--help` fast
    from dflash_check.check.report import CheckReport
    from dflash_check.engines.profiles import EngineOptions
    from dflash_check.knowledge.selection import Selection
    from dflash_check.knowledge.settings import EngineSettings
    from dflash_check.sources.interface import ModelRef

ENGINE = "Smoke run in a serving engine"


def engine_names() -> tuple[str, ...]:
    """Return the engines ``--smoke-run --engine`` drives: the registered engines with an HTTP
    profile (``engines.profiles.profiles``), read when asked, so that an engine registered with
    one is a choice (an enum of them would import every engine module at start-up)."""
    from dflash_check.engines.profiles import profiles

    return tuple(profiles())


def choose_engine(value: str | None) -> str | None:
    """Accept a drivable engine's name, as typer's choice of an enum did: exact, in its words."""
    if value is None:  # no --engine: the table is not read
        return None
    return one_of(value, engine_names())


def complete_engine(incomplete: str) -> list[str]:
    """Shell completion of ``--engine``: the drivable engines' names."""
    return [n for n in engine_names() if n.startswith(incomplete)]


def finite_timeout(value: float) -> float:
    """Refuse a timeout of nan / inf (typer's min= lets both through): usage error, exit 2."""
    import math

    if not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number of seconds, not {value}")
    return value


EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        metavar="ENGINE",
        callback=choose_engine,
        autocompletion=complete_engine,
        help="Smoke-run on this engine's server instead of the bundled runtime.",
        rich_help_panel=ENGINE,
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        metavar="URL",
        help="Base URL of an engine serving the pair, e.g. http://gpu-node:8000.",
        rich_help_panel=ENGINE,
    ),
]
BaselineEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline-endpoint",
        metavar="URL",
        help="Base URL of the target served without speculation (lossless check).",
        rich_help_panel=ENGINE,
    ),
]
EngineApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--engine-api-key",
        metavar="KEY",
        envvar=ENGINE_KEY_ENV,
        help=f"The engine API key (or {ENGINE_KEY_ENV}; never printed).",
        show_default=False,
        show_envvar=False,
        rich_help_panel=ENGINE,
    ),
]
EngineTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--engine-timeout",
        metavar="SECS",
        min=1.0,
        callback=finite_timeout,
        help="Seconds per engine request, whole answer included.",
        rich_help_panel=ENGINE,
    ),
]
TrustServedDraftOpt = Annotated[
    bool,
    typer.Option(
        "--trust-served-draft",
        help="Trust the server's draft.",
        rich_help_panel=ENGINE,
    ),
]
CompareBundledOpt = Annotated[
    bool,
    typer.Option(
        "--compare-bundled",
        help="Decode in the bundled runtime first; floor from its tau.",
        rich_help_panel=ENGINE,
    ),
]
LaunchOpt = Annotated[
    bool,
    typer.Option(
        "--launch",
        help="Start the engine here (--print-command's command), run the prompts, stop it.",
        rich_help_panel=ENGINE,
    ),
]
PrintCommandOpt = Annotated[
    bool,
    typer.Option(
        "--print-command",
        # Judged on that engine's own release (its newest when --runtime names none of it):
        # another engine's verdict neither prints nor withholds it (docs/engines.md).
        help="Print the command serving the pair on --engine if it passes there, and exit.",
        rich_help_panel=ENGINE,
    ),
]
TensorParallelOpt = Annotated[
    int | None,
    typer.Option(
        "--tensor-parallel-size",
        metavar="N",
        min=1,
        help="Passed to the engine.",
        rich_help_panel=ENGINE,
    ),
]
PipelineParallelOpt = Annotated[
    int | None,
    typer.Option(
        "--pipeline-parallel-size",
        metavar="N",
        min=1,
        help="Passed to the engine.",
        rich_help_panel=ENGINE,
    ),
]
LaunchTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--launch-timeout",
        metavar="SECS",
        min=1.0,
        callback=finite_timeout,
        help="Seconds a launched engine has to get healthy.",
        rich_help_panel=ENGINE,
    ),
]
EngineBinaryOpt = Annotated[
    str | None,
    typer.Option(
        "--engine-binary",
        metavar="PATH",
        help="--launch: the engine's Python (default: python3), or a vllm executable.",
        rich_help_panel=ENGINE,
    ),
]
EngineArgOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--engine-arg",
        metavar="ARG",
        # The check reads the ones a verdict depends on (knowledge/settings.py, docs/guide.md),
        # so the option changes the static verdict: it sits in the Check panel.
        help="Engine argument (repeatable): SGLang's DP attention and speculative flags are "
        "checked.",
        rich_help_panel=CHECK,
    ),
]


@dataclass(frozen=True, eq=False)
class EngineFlags:
    """The engine options of ``pair``, as typed."""

    engine: str | None
    """A drivable engine's name (``choose_engine``), or None for the bundled runtime."""
    endpoint: str | None
    baseline_endpoint: str | None
    api_key: str | None
    timeout: float
    launch: bool
    print_command: bool
    tensor_parallel: int | None
    pipeline_parallel: int | None
    launch_timeout: float
    binary: str | None
    extra_args: tuple[str, ...]
    trust_served_draft: bool
    compare_bundled: bool = False

    @classmethod
    def parse(
        cls,
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
        trust_served_draft: TrustServedDraftOpt = False,
        compare_bundled: CompareBundledOpt = False,
    ) -> EngineFlags:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(
            engine, endpoint, baseline_endpoint, engine_api_key, engine_timeout, launch,
            print_command, tensor_parallel_size, pipeline_parallel_size, launch_timeout,
            engine_binary, tuple(engine_arg or ()), trust_served_draft, compare_bundled,
        )  # fmt: skip

    def settings(self) -> EngineSettings:
        """Return the engine settings ``--engine-arg`` gives (``knowledge.settings``); a bad
        value of one the check reads is a usage error (exit 2)."""
        from dflash_check.knowledge.settings import SettingsError, parse_engine_args

        try:
            return parse_engine_args(self.extra_args)
        except SettingsError as err:
            raise typer.BadParameter(str(err), param_hint="--engine-arg") from None

    def check(self, smoke_run: bool) -> None:
        """Refuse flags that cannot work together (usage error, exit 2)."""
        check_engine_flags(
            smoke_run,
            self.engine,
            self.endpoint,
            self.baseline_endpoint,
            self.launch,
            self.print_command,
            self.compare_bundled,
        )

    def served_selection(self, selection: Selection) -> Selection:
        """Return ``selection`` pinned to the release the smoke run decodes on
        (``app.served``)."""
        from dflash_check.app.served import served_selection

        return served_selection(selection, self.options())

    def command_selection(self, selection: Selection) -> Selection:
        """Return ``selection`` judging the engine whose command ``--print-command`` prints:
        as given where it names a runtime of it (``-r vllm-v1==0.32.0``), else with the
        engine's default runtime at its newest release added, so that the command is printed
        on that engine's own verdict (``-r vllm --engine sglang`` judges SGLang too)."""
        from dflash_check.knowledge.engines import ENGINES_BY_NAME
        from dflash_check.knowledge.selection import Selection, choose

        if self.engine is None or selection.names_engine(self.engine):
            return selection
        default = choose(ENGINES_BY_NAME[self.engine].runtime_names[0])
        return Selection.of((*selection.choices, default), selection.portable, selection.served)

    def print_command_for(self, report: CheckReport, draft: ModelRef, target: ModelRef) -> ExitCode:
        """``--print-command``: print the command that serves the pair (stdout) when the pair
        is compatible on the engine's selected runtimes (``command_selection``), whatever the
        other engines' verdicts; else the report (stderr) and why no command is printed.
        Return the exit code: the engine's verdict."""
        from dflash_check.app.engine_smoke import serve_command
        from dflash_check.check.report import Verdict
        from dflash_check.cli.output import stderr_console
        from dflash_check.render.table import render_table

        engine = self.options()
        assert engine is not None  # check() refused --print-command without --engine
        rows = [p for p in report.profiles if p.engine_name == engine.engine]
        failing = [p.label for p in rows if report.runtime_verdict(p.name) is Verdict.INCOMPATIBLE]
        if failing or not rows:
            console = stderr_console()
            console.print(render_table(report, console.width), crop=False)
            why = (
                f"the static check failed on {', '.join(failing)}"
                if failing
                else f"the check judged no runtime of {engine.engine} for this draft"
            )
            console.print(f"No command printed: {why}.", markup=False)
            return ExitCode.INCOMPATIBLE
        sys.stdout.write(serve_command(report, draft, target, engine) + "\n")
        others = [
            p.label
            for p in report.profiles
            if p not in rows and report.runtime_verdict(p.name) is Verdict.INCOMPATIBLE
        ]
        if others:  # said, so that a printed command is not read as the whole verdict
            stderr_console().print(
                f"Note: the pair is incompatible on {', '.join(others)} (not {engine.engine}): "
                f"the command is printed on {engine.engine}'s own verdict.",
                markup=False,
            )
        if report.target.remote_code:
            stderr_console().print(
                "Note: the target's config names its own code (auto_map): the command "
                "passes --trust-remote-code, which runs that code.",
                markup=False,
            )
        return ExitCode.COMPATIBLE

    def options(self) -> EngineOptions | None:
        """Return the engine client's options, or None for the bundled runtime."""
        if self.engine is None:
            return None
        from dflash_check.engines.profiles import EngineOptions

        return EngineOptions(
            engine=self.engine,
            endpoint=self.endpoint or "",
            baseline_endpoint=self.baseline_endpoint,
            api_key=self.api_key,
            timeout=self.timeout,
            tensor_parallel=self.tensor_parallel,
            pipeline_parallel=self.pipeline_parallel,
            mode="launch" if self.launch else "attach",
            launch_timeout=self.launch_timeout,
            binary=self.binary,
            extra_args=self.extra_args,
            trust_served_draft=self.trust_served_draft,
            compare_bundled=self.compare_bundled,
        )


def check_engine_flags(
    smoke_run: bool,
    engine: str | None,
    endpoint: str | None,
    baseline: str | None,
    launch: bool = False,
    print_command: bool = False,
    compare_bundled: bool = False,
) -> None:
    """Refuse engine flags that cannot work together, naming both flags."""
    on_engine = (("--launch", launch), ("--print-command", print_command))
    for flag, on in (*on_engine, ("--compare-bundled", compare_bundled)):
        if on and engine is None:
            names = "|".join(engine_names())
            raise typer.BadParameter(f"{flag} needs --engine {names}", param_hint=flag)
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
            f"--engine {engine} needs --endpoint URL (a running server to attach to) or --launch",
            param_hint="--engine",
        )
    for flag, value in (("--endpoint", endpoint), ("--baseline-endpoint", baseline)):
        if value is not None and engine is None:
            names = "|".join(engine_names())
            raise typer.BadParameter(f"{flag} needs --engine {names}", param_hint=flag)
        if value is not None:
            from dflash_check.engines.http import EndpointError, parse_endpoint

            try:
                parse_endpoint(value)
            except EndpointError as err:
                # The URL as typed may hold a password: show its host part only.
                shown = value.rpartition("@")[2] if "@" in value else value
                raise typer.BadParameter(f"{flag} {shown!r}: {err}", param_hint=flag) from None
