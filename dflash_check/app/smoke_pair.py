"""``pair --smoke-run`` after the static check: decode the pair, attach the result to the report.

The CLI builds a ``SmokeRequest`` from its options and shows a spinner; this module decides
whether the decode runs, runs it in the bundled runtime or on a serving engine
(``app/engine_smoke.py``), and turns an engine that failed on the pair into a failed smoke
report. What could not run at all is raised as a ``CheckError`` for the CLI to report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dflash_check.errors import CheckError

if TYPE_CHECKING:
    from dflash_check.check.report import CheckReport
    from dflash_check.engines.profiles import EngineOptions
    from dflash_check.smoke.run import SmokeOptions
    from dflash_check.sources.interface import ModelRef

SKIPPED = "Smoke run skipped: the static check failed (--force runs it anyway)."
"""What is said (stderr) when the decode is not run after a failing static check."""


@dataclass(frozen=True)
class SmokeRequest:
    """What ``pair --smoke-run`` asks for, parsed from its options."""

    options: SmokeOptions
    """The decode's settings (prompts, tokens, temperature, floor, Hub access)."""
    force: bool = False
    """``--force``: decode even when the static check failed."""
    engine: EngineOptions | None = None
    """The serving engine to decode on (attached or launched); None: the bundled runtime."""


def skipped(report: CheckReport, request: SmokeRequest) -> bool:
    """Whether the decode is not worth running: the static check failed and no ``--force``.
    ``--strict`` decides the exit code, not this."""
    from dflash_check.check.report import Verdict

    failed = replace(report, strict=False).verdict is Verdict.INCOMPATIBLE
    return failed and not request.force


def smoke_pair(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    request: SmokeRequest,
    say: Callable[[str], None],
) -> CheckReport:
    """Run the decode and return ``report`` with its smoke report attached.

    On an engine, a failure of the engine on the pair is a result (a failed smoke report, the
    static verdict kept, so that a ``--force`` run on a broken pair shows both); any other
    ``CheckError`` propagates.
    """
    engine = request.engine
    if engine is None:
        from dflash_check.smoke.run import run_smoke

        return replace(report, smoke=run_smoke(draft, target, request.options, say))
    from dflash_check.app.engine_smoke import failed_run, run_engine

    options = request.options
    bundled, prompts = None, options.prompts
    if engine.compare_bundled:
        from dflash_check.app.bundled_floor import measure_bundled
        from dflash_check.engines.profiles import profile

        # SGLang's native API takes raw text: the bundled run then feeds raw prompts too.
        chat = options.chat_template and profile(engine.engine).counts_from_metrics
        # Before the engine: a launched one may need the GPU the bundled run uses.
        bundled, prompts = measure_bundled(report, draft, target, options, chat, say)
    try:
        measured = run_engine(report, draft, target, options, engine, say, bundled, prompts)
    except CheckError as err:
        failure = getattr(err, "failure", None)
        if failure is None:
            raise
        run = getattr(err, "run", None)
        measured = failed_run(report, options, engine.engine, failure, run, bundled)
    return replace(report, smoke=measured)
