"""vLLM's MLA DSpark contract (DF057) and the DSpark config families of vLLM's own tests, on
the configs they write (``tests/fixtures/vllm_tests``, from vLLM 0.34.0's
``tests/transformers_utils/test_dspark_mla_config.py`` and ``test_muse_spark_config.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity
from dflash_check.knowledge.engines import VLLM
from tests.support.helpers import FIXTURES, check_files, files

CASES = FIXTURES / "vllm_tests"
RELEASES = tuple(r.spec for r in VLLM.releases if r.mla_dspark_contract)

# test_dspark_mla_rejects_unsupported_checkpoint_options's rows (:78-91), and the field DF057
# names; vLLM's test matches "MLA DSpark" for each.
REFUSED: tuple[tuple[dict[str, Any], str], ...] = (
    ({"mla_use_nope": True}, "mla_use_nope"),
    ({"mla_use_output_gate": True}, "mla_use_output_gate"),
    ({"mla_use_qk_norm": True}, "mla_use_qk_norm"),
    ({"dspark_bonus_anchor": True}, "dspark_bonus_anchor"),
    ({"q_lora_rank": None}, "q_lora_rank"),
    ({"draft_vocab_size": 8192}, "draft_vocab_size"),
    ({"target_layer_ids": []}, "target_layer_ids"),
    ({"num_target_layers": 4}, "num_target_layers"),
)


def _config(name: str) -> dict[str, Any]:
    return json.loads((CASES / name / "config.json").read_text())


def _check(draft: dict[str, Any], target: str, release: str, k: int) -> CheckReport:
    return check_files(
        files("draft", draft), files("target", _config(target)), release, num_speculative_tokens=k
    )


def _errors(report: CheckReport, rule: str) -> list[Any]:
    return [f for f in report.findings if f.rule == rule and f.severity is Severity.ERROR]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(("change", "field"), REFUSED)
def test_refused_with_vllms_message(release: str, change: dict[str, Any], field: str) -> None:
    report = _check({**_config("k3-dspark-mla"), **change}, "k3-dspark-target", release, 8)
    (finding,) = _errors(report, "DF057")
    assert "MLA DSpark" in finding.message and "refuses it at load" in finding.message
    assert finding.field == field


@pytest.mark.parametrize("release", RELEASES)
def test_the_tests_draft_breaks_no_contract(release: str) -> None:
    """The config vLLM's test accepts: no DF057, and num_target_layers (the id count here) is
    not read as the target's depth (no DF011 against the 93-layer target)."""
    report = _check(_config("k3-dspark-mla"), "k3-dspark-target", release, 8)
    assert not _errors(report, "DF057")
    assert not _errors(report, "DF011")


def test_the_contract_is_only_for_mla_drafts() -> None:
    draft = {**_config("k3-dspark-mla"), "architectures": ["Qwen3DSparkModel"]}
    draft["mla_use_nope"] = True
    assert not _errors(_check(draft, "k3-dspark-target", RELEASES[-1], 8), "DF057")


def test_a_stated_target_depth_still_counts() -> None:
    """An MLA draft's target depth is target_num_hidden_layers: another target's is DF011."""
    draft = {**_config("k3-dspark-mla"), "target_num_hidden_layers": 61}
    (finding,) = _errors(_check(draft, "k3-dspark-target", RELEASES[-1], 8), "DF011")
    assert "61" in finding.message


def test_muse_spark_draft_as_vllms_test_writes_it_is_compatible() -> None:
    """No architectures (MuseSparkDSparkConfig sets it), sliding layers windowed by
    global_attn_cfg, num_target_layers the id count: vLLM 0.34.0 accepts it (its oracle run
    too: conformance/results/oracle/vllm-0.34.0.json)."""
    report = _check(_config("muse-spark-dspark"), "muse-spark-target", "vllm==0.34.0", 7)
    errors = [f.rule for f in report.findings if f.severity is Severity.ERROR]
    assert errors == []
    assert report.draft.architectures == ("MuseSparkDSparkModel",)
