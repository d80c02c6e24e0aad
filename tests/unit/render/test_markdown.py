"""The Markdown rendering of a registry run (a job summary)."""

from __future__ import annotations

from dataclasses import replace

from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import Verdict
from dflash_check.render.markdown import render_markdown
from tests.golden.test_report import smoke_fixture
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


def test_a_failed_smoke_run_is_the_rows_outcome() -> None:
    """The verdict is the expected one but the smoke run failed: the row says the smoke run
    failed (as the registry table and the annotations do), not 'as expected'."""
    cfg = draft_config()
    report = check_files(files("draft", cfg, fc_tensors(cfg)), files("target", qwen3_4b_config()))
    assert report.verdict is Verdict.COMPATIBLE
    failing = replace(smoke_fixture(), min_acceptance=100.0)
    assert not failing.passed
    outcome = PairOutcome("d -> t", Verdict.COMPATIBLE, report=replace(report, smoke=failing))
    text = render_markdown(RunResult((outcome, outcome), file="pairs.yaml"))
    assert "smoke run tau" in text and "expected compatible" not in text
