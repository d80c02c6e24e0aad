"""The smoke flow after the static check (``app/smoke_pair.py``): whether the decode runs and an
engine that failed on the pair as a failed report."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dflash_check.app import engine_smoke
from dflash_check.app.smoke_pair import SmokeRequest, skipped, smoke_pair
from dflash_check.check.report import CheckReport, Verdict
from dflash_check.engines.errors import EngineRunFailedError, EngineUnreachableError
from dflash_check.engines.profiles import EngineOptions
from dflash_check.smoke.report import EngineFailure
from dflash_check.smoke.run import SmokeOptions
from dflash_check.sources.interface import parse_model_ref
from tests.support.helpers import (
    check_files,
    fc_tensors,
    files,
    qwen3_4b_config,
    seed_draft_config,
)

DRAFT, TARGET = parse_model_ref("org/draft"), parse_model_ref("org/target")
ENGINE = EngineOptions(engine="vllm", endpoint="", mode="launch")


def report(target_hidden: int = 2560) -> CheckReport:
    """The seed draft against Qwen3-4B, or against a target of another width (incompatible)."""
    draft = seed_draft_config()
    target = {**qwen3_4b_config(), "hidden_size": target_hidden}
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", target))


def test_a_failed_static_check_skips_the_decode_unless_forced() -> None:
    broken = report(target_hidden=4096)
    assert broken.verdict is Verdict.INCOMPATIBLE
    assert skipped(broken, SmokeRequest(SmokeOptions()))
    assert not skipped(broken, SmokeRequest(SmokeOptions(), force=True))
    assert not skipped(report(), SmokeRequest(SmokeOptions()))


def test_strict_warnings_do_not_skip_the_decode() -> None:
    """--strict decides the exit code, not whether the decode is worth running."""
    passing = replace(report(), strict=True)
    assert not skipped(passing, SmokeRequest(SmokeOptions()))


def test_an_engine_that_failed_on_the_pair_is_a_failed_smoke_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failure = EngineFailure("start", "exited with 1", "ValueError: no", "engine.log")

    def launch(*_: object) -> None:
        raise EngineRunFailedError(failure)

    monkeypatch.setattr(engine_smoke, "run_engine", launch)
    given = report()
    out = smoke_pair(given, DRAFT, TARGET, SmokeRequest(SmokeOptions(), engine=ENGINE), print)
    assert out.smoke is not None and out.smoke.failure == failure
    assert out.smoke.device == "vllm" and out.smoke.cases == ()
    assert replace(out, smoke=None) == given  # the static verdict is kept


def test_an_engine_that_could_not_run_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def attach(*_: object) -> None:
        raise EngineUnreachableError("connection refused")

    monkeypatch.setattr(engine_smoke, "run_engine", attach)
    request = SmokeRequest(SmokeOptions(), engine=ENGINE)
    with pytest.raises(EngineUnreachableError, match="connection refused"):
        smoke_pair(report(), DRAFT, TARGET, request, print)
