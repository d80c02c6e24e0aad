"""An engine's test registry run (``app/engine_tests/plan.py``): a target-alone entry is
checked for the engine and release the run selects, with the entry's draft length, as a pair
entry is; the other engines say nothing about it."""

from __future__ import annotations

import json
from pathlib import Path

from dflash_check.app.engine_tests.plan import Plan, run_plan
from dflash_check.app.pipeline import ModelCache
from dflash_check.check.entries import PairSpec
from dflash_check.check.report import Verdict
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.knowledge.selection import engine_release
from tests.support.helpers import write_model
from tests.support.paths import FIXTURES


def _alone(tmp_path: Path, engine: str, version: str) -> tuple[str, ...]:
    """Run one target-alone entry of ``engine``'s test registry at ``version``: a DeepSeek-V3
    target with 2 MTP layers, served with 3 draft tokens; return the report's rule ids."""
    config = json.loads(
        (FIXTURES / "targets" / "deepseek-ai--DeepSeek-V3" / "config.json").read_text()
    )
    folder = write_model(tmp_path / "ds", config | {"num_nextn_predict_layers": 2})
    spec = PairSpec(
        str(folder),
        str(folder),
        Verdict.COMPATIBLE,
        line=1,
        index=0,
        selection=engine_release(engine, version),
        num_speculative_tokens=3,
    )
    plan = Plan((spec,), frozenset({0}), (), {0: "DeepSeekMTPModel"})
    (outcome,), _ = run_plan(plan, tmp_path, ModelCache(), workers=1)
    report = outcome.report
    assert report is not None
    assert [e.engine for e in report.engines] == [engine]  # the run's engine alone
    return tuple(f.rule for f in report.findings)


def test_a_target_alone_entry_is_checked_for_the_run_s_engine_and_draft_length(
    tmp_path: Path,
) -> None:
    # vLLM refuses 3 draft tokens over 2 MTP layers (not a multiple): DF044.
    assert _alone(tmp_path / "v", "vllm", VLLM.newest.version) == ("DF044",)
    # SGLang is asked with its own flags; vLLM's draft length alone says nothing there.
    assert "DF044" not in _alone(tmp_path / "s", "sglang", SGLANG.newest.version)
