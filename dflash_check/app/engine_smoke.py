"""What an engine smoke run reports when the engine dflash-check launched fails on the pair.

A failed engine is a result, not an error: the smoke report carries the failure (the engine's
own words, from its log) next to the static verdict, so that a ``--force`` run on a broken pair
shows both. The CLI only hands the failure over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_check.check.report import CheckReport
    from dflash_check.smoke.report import EngineFailure, SmokeReport
    from dflash_check.smoke.run import SmokeOptions


def block_size_of(report: CheckReport, given: int | None) -> int | None:
    """Return ``--block-size``, else the draft's own (a DFlash-family draft states one)."""
    dflash = report.draft.dflash
    return given or (dflash.block_size if dflash is not None else None)


def failed_run(
    report: CheckReport, options: SmokeOptions, engine: str, failure: EngineFailure
) -> SmokeReport:
    """Return the smoke report of a run whose engine failed with ``failure``: no cases, the
    settings it was started with."""
    from dflash_check.engines.command import DEFAULT_BLOCK_SIZE
    from dflash_check.smoke.report import SmokeReport

    return SmokeReport(
        device=engine,
        dtype="as served",
        block_size=block_size_of(report, options.block_size) or DEFAULT_BLOCK_SIZE,
        temperature=options.temperature,
        min_acceptance=options.min_acceptance,
        cases=(),
        failure=failure,
    )
