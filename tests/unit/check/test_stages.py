"""Where an engine shows an incompatible pair (load, first decode, silently), as the engines'
code and the real runs say (issue 29): the cases the stage table had wrong."""

from __future__ import annotations

from typing import Any

from dflash_check.check.check import run_check
from dflash_check.check.report import CheckReport, Finding
from dflash_check.knowledge.outcomes import Stage
from tests.support.helpers import draft_config, fc_tensors, files, qwen3_4b_config


def _check(cfg: dict[str, Any], runtime: str, fc_in: int | None = None) -> CheckReport:
    draft = files("draft", cfg, fc_tensors(cfg, fc_in))
    return run_check(draft, files("target", qwen3_4b_config()), runtime)


def _finding(report: CheckReport, rule: str, runtime: str) -> Finding:
    return next(f for f in report.findings if f.rule == rule and f.runtime == runtime)


def _with_ids(ids: list[int]) -> dict[str, Any]:
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = ids
    return cfg


def test_sglang_n_minus_1_is_no_load_time_refusal() -> None:
    """SGLang's startup check refuses t >= N only (dflash_utils.py:611-643): N-1 passes it and
    fails when the first batch runs; a layer the target lacks is still refused at startup."""
    last = _check(_with_ids([1, 9, 17, 25, 35]), "sglang")
    assert _finding(last, "DF004", "sglang").stage is Stage.FIRST_DECODE
    past = _check(_with_ids([1, 9, 17, 25, 36]), "sglang")
    assert _finding(past, "DF004", "sglang").stage is Stage.LOAD


def test_duplicate_ids_are_refused_at_start_up_on_vllm_034() -> None:
    """vLLM 0.34 de-duplicates the capture list while fc is sized from the full list, and its
    start-up memory profile runs the drafter; other runtimes keep the table's stage."""
    report = _check(_with_ids([1, 9, 9, 25, 33]), "vllm==0.34.0,sglang")
    on_034 = _finding(report, "DF003", "vllm")
    assert on_034.stage is Stage.LOAD
    assert "interfaces.py:1630" in on_034.message
    assert _finding(report, "DF003", "sglang").stage is Stage.SILENT
    # 0.33 was not read to refuse it: the table's stage, no claim of a refusal.
    (older,) = [f for f in _check(_with_ids([1, 9, 9, 25, 33]), "vllm==0.33.0").findings]
    assert older.rule == "DF003" and older.stage is Stage.SILENT
