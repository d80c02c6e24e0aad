"""``pair``: check a draft against a target (or one target's own MTP layers) and report.

The command gathers its options into groups and hands them to one flow each: the target alone
(MTP), the usage checks, the check itself, ``--print-command``, the smoke run and the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from dflash_check.cli.engine import EngineFlags
from dflash_check.cli.groups import grouped
from dflash_check.cli.hub_options import HubFlags, ModelFlags
from dflash_check.cli.options import CheckFlags, OutputOptions, check_output, parse_runtimes
from dflash_check.cli.output import emit, exit_code, fail, redact, remember_secrets, summarise
from dflash_check.cli.smoke import SmokeFlags
from dflash_check.errors import CheckError, ExitCode

if TYPE_CHECKING:
    from dflash_check.app.pipeline import CheckRequest, ModelCache
    from dflash_check.check.report import CheckReport
    from dflash_check.check.request import CheckSettings
    from dflash_check.sources.interface import ModelRef

PAIR_EXAMPLES = [
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16 Qwen/Qwen3-4B",
    "dflash-check pair examples/Qwen3-4B-DFlash-b16 examples/Qwen3.5-4B",
    "dflash-check pair DRAFT TARGET --runtime vllm --format json",
    "dflash-check pair deepseek-ai/DeepSeek-V3    # one model: its MTP layers",
    "dflash-check pair z-lab/Qwen3-4B-DFlash-b16@main Qwen/Qwen3-4B --offline",
    "dflash-check pair DRAFT TARGET --smoke-run --engine vllm --endpoint URL",
    "dflash-check pair DRAFT TARGET --engine sglang --print-command",
]
MTP_FORMATS = ("table", "json")
"""The formats of a target's MTP report (``render.target_alone``): not a pair's ``RunResult``."""

DraftArg = Annotated[
    str | None,
    typer.Argument(
        metavar="DRAFT",
        help="The draft: a local path, or a Hub repo id ORG/NAME, ORG/NAME:SUBFOLDER or "
        "ORG/NAME@REVISION.",
        show_default=False,
    ),
]
TargetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="TARGET",
        help="The target, as DRAFT. Alone (pair TARGET): the target's own MTP layers, "
        "what each engine builds from them; exit 1 when it has none.",
        show_default=False,
    ),
]


@grouped
def pair(
    draft: DraftArg = None,
    target: TargetArg = None,
    *,
    check: CheckFlags,
    out: OutputOptions,
    models: ModelFlags,
    hub: HubFlags,
    smoke: SmokeFlags,
    engines: EngineFlags,
) -> None:
    """Check that DRAFT works with TARGET in every runtime (or the ones --runtime names).

    With one model (pair TARGET): report the target's own MTP layers instead.
    """
    if draft is None:  # both arguments are optional to typer: the usage line says [DRAFT] TARGET
        raise typer.BadParameter("missing: pair needs a TARGET (and usually a DRAFT before it)")
    check_output(out.output)  # before any fetch: a bad path must not cost a whole smoke run
    remember_secrets(hub.token, engines.api_key)
    selection = parse_runtimes(check.runtime)
    from dflash_check.check.request import CheckSettings

    if target is None:  # one model given: it is the target
        refuse_with_one_model(out, smoke.smoke_run, engines, models, check)
        ref = models.target(draft)
        settings = CheckSettings(
            selection,
            strict=check.strict,
            num_speculative_tokens=check.num_speculative_tokens,
            engine_settings=engines.settings(),  # before any fetch, as every usage check
        )
        target_alone(ref, settings, out, hub)
    engines.check(smoke.smoke_run)
    engine_settings = engines.settings()  # before any fetch, as every usage check
    ignored = checked_ignores(check.ignore)
    draft_ref, target_ref = models.draft(draft), models.target(target)
    from dflash_check.app.pipeline import CheckRequest, ModelCache

    if smoke.smoke_run:  # the static verdict is for the release the smoke run decodes on
        selection = engines.served_selection(selection)
    if engines.print_command:  # the command is printed on its own engine's verdict
        selection = engines.command_selection(selection)
    settings = CheckSettings(
        selection,
        ignored,
        check.strict,
        check.num_speculative_tokens,
        check.speculative_method,
        engine_settings,
    )
    request = CheckRequest(draft_ref, target_ref, settings)
    report = run_check(request, ModelCache(hub_factory=hub.factory()), f"{draft} -> {target}", out)
    if engines.print_command and engines.engine is not None:
        raise typer.Exit(engines.print_command_for(report, draft_ref, target_ref))
    if smoke.smoke_run:
        from dflash_check.cli.smoke import smoke_flags

        report = smoke_flags(report, draft, draft_ref, target_ref, smoke, hub, engines, out)
    report_pair(report, f"{draft} -> {target}", out, check.strict)


def refuse_with_one_model(
    out: OutputOptions, smoke_run: bool, engines: EngineFlags, models: ModelFlags, check: CheckFlags
) -> None:
    """Refuse the options that need a draft when only a target is given (usage error)."""
    refused = {
        "--smoke-run": smoke_run,
        "--engine": engines.engine is not None,
        "--ignore": bool(check.ignore),
        "--speculative-method": check.speculative_method is not None,
        "--draft-revision": models.draft_revision is not None,
        "--draft-subfolder": models.draft_subfolder is not None,
        f"--format {out.format_name}": out.format_name not in MTP_FORMATS,
    }
    used = [flag for flag, given in refused.items() if given]
    if used:
        raise typer.BadParameter(
            f"{', '.join(used)} needs a DRAFT and a TARGET; with one model, pair reports "
            "the target's own MTP layers (as table or json)"
        )


def checked_ignores(ignore: list[str] | None) -> frozenset[str]:
    """Return the ``--ignore`` rule ids, upper-cased; an unknown id is a usage error."""
    from dflash_check.check.rules import RULES_BY_ID

    ignored = frozenset(r.upper() for r in ignore or [])
    unknown = sorted(ignored - set(RULES_BY_ID))
    if unknown:
        raise typer.BadParameter(f"unknown rule id {', '.join(unknown)}", param_hint="--ignore")
    return ignored


def run_check(
    request: CheckRequest, cache: ModelCache, label: str, out: OutputOptions
) -> CheckReport:
    """Return the pair's report; when it cannot be checked, write the document the format
    makes of that (SARIF, JUnit...) and exit 3 with one line."""
    from dflash_check.app.pipeline import check_pair

    try:
        return check_pair(request, cache)
    except CheckError as err:
        if out.format.renders_failures:
            from dflash_check.check.outcome import PairOutcome, RunResult
            from dflash_check.check.report import Verdict

            outcome = PairOutcome(
                label, Verdict.COMPATIBLE, error=redact(str(err)), error_hint=err.hint
            )
            emit(RunResult((outcome,), strict=request.settings.strict), out.format, out.output)
        fail(err, out.json, out.output)


def report_pair(report: CheckReport, label: str, out: OutputOptions, strict: bool) -> NoReturn:
    """Write the pair's report in its format, the summary line unless the report went to the
    terminal, and exit with the verdict's code."""
    from dflash_check.check.outcome import PairOutcome, RunResult
    from dflash_check.check.report import Verdict
    from dflash_check.render.diagnostics import summary_line

    result = RunResult((PairOutcome(label, Verdict.COMPATIBLE, report=report),), strict=strict)
    emit(result, out.format, out.output, out.verbose)
    if not out.quiet and (out.output is not None or not out.format.for_terminal):
        summarise(summary_line(report), out.output)
    raise typer.Exit(exit_code(report, strict))


def target_alone(
    ref: ModelRef, settings: CheckSettings, out: OutputOptions, hub: HubFlags
) -> NoReturn:
    """Report a target's own MTP layers (``pair TARGET``) and exit: 0 servable, 1 not, 3 unread."""
    import sys

    from dflash_check.app.pipeline import GivenADraft, ModelCache
    from dflash_check.app.pipeline import target_alone as report_target
    from dflash_check.cli.output import FILE_WIDTH, stdout_console, write_output
    from dflash_check.render.target_alone import render_mtp_json, render_mtp_text, summary_line

    try:
        report = report_target(ref, ModelCache(hub_factory=hub.factory()), settings)
    except GivenADraft as err:
        raise typer.BadParameter(str(err)) from None
    except CheckError as err:
        fail(err, out.json, out.output)
    if out.json:  # a document: no width, so no rich console to ask for one
        text = render_mtp_json(report)
    else:
        width = stdout_console().width if out.output is None else FILE_WIDTH
        text = render_mtp_text(report, width)
    if out.json or out.output is not None:
        write_output(text, out.output)
        if not out.quiet:
            summarise(summary_line(report), out.output)
    else:
        sys.stdout.write(text)
    from dflash_check.check.report import Verdict

    code = ExitCode.COMPATIBLE if report.verdict is Verdict.COMPATIBLE else ExitCode.INCOMPATIBLE
    raise typer.Exit(code)
