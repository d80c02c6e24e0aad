"""``--compare-bundled`` before any decode (``app/bundled_floor.py``): the block the bundled run
drafts, and the runs it does not attempt (nothing loaded, the reason kept for the report)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dflash_check.app import engine_smoke
from dflash_check.app.bundled_floor import bundled_block, measure_bundled
from dflash_check.app.smoke_pair import SmokeRequest, smoke_pair
from dflash_check.engines.errors import EngineRunFailedError
from dflash_check.smoke.report import EngineFailure
from dflash_check.smoke.run import DEFAULT_PROMPTS, SmokeOptions
from tests.support.helpers import check_files, files
from tests.unit.app.test_smoke_pair import DRAFT, ENGINE, TARGET, report
from tests.unit.check.test_eagle3 import LLAMA_31, LLAMA_HEAD, config, header


def never(_text: str) -> None:
    """A progress callback for runs that must not start a decode."""
    raise AssertionError("the bundled runtime was started")


def test_the_block_is_the_one_the_engine_is_asked_to_draft() -> None:
    """--block-size, else the checked draft length plus the bonus token, else the draft's."""
    checked = report()
    assert bundled_block(checked, 5) == 5
    assert bundled_block(replace(checked, num_speculative_tokens=9), None) == 10
    assert bundled_block(replace(checked, num_speculative_tokens=None), None) is None


def test_sampling_is_not_compared() -> None:
    """Sampled taus vary with the sampler's stream: no run, the reason, the engine's prompts."""
    options = SmokeOptions(temperature=0.7, prompts=("1 2 3",))
    bundled, prompts = measure_bundled(report(), DRAFT, TARGET, options, True, never)
    assert bundled.tau is None and bundled.why_not is not None
    assert "--temperature is above 0" in bundled.why_not
    assert prompts == ("1 2 3",)


def test_a_draft_the_bundled_runtime_cannot_build_is_not_compared() -> None:
    """An EAGLE-3 head: the bundled runtime has none, so it is not loaded at all."""
    eagle3 = check_files(
        files("draft", config(LLAMA_HEAD), header(LLAMA_HEAD)), files("target", config(LLAMA_31))
    )
    bundled, prompts = measure_bundled(eagle3, DRAFT, TARGET, SmokeOptions(), True, never)
    assert bundled.why_not == "the bundled runtime does not decode eagle3 drafts"
    assert prompts == DEFAULT_PROMPTS


def test_an_engine_failure_keeps_the_bundled_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled run happens before the engine; the engine's failure does not lose it."""
    failure = EngineFailure("start", "exited with 1", "ValueError: no", "engine.log")

    def launch(*_: object) -> None:
        raise EngineRunFailedError(failure)

    monkeypatch.setattr(engine_smoke, "run_engine", launch)
    engine = replace(ENGINE, compare_bundled=True)
    request = SmokeRequest(SmokeOptions(temperature=0.7), engine=engine)
    out = smoke_pair(report(), DRAFT, TARGET, request, never)
    assert out.smoke is not None and out.smoke.failure == failure
    assert out.smoke.bundled is not None and out.smoke.bundled.tau is None
    assert "--temperature is above 0" in (out.smoke.bundled.why_not or "")


def test_a_pair_too_big_for_this_machine_is_not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of memory while loading: the reason, not a traceback, and the engine run goes on."""
    from dflash_check.smoke import run

    def too_big(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(run, "run_smoke", too_big)
    bundled, _ = measure_bundled(report(), DRAFT, TARGET, SmokeOptions(), True, lambda _t: None)
    assert bundled.why_not == "the bundled runtime failed to load or decode the pair (MemoryError)"
