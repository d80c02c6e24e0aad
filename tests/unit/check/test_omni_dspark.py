"""vLLM's Qwen3-Omni DSpark contract (DF055) on the cases of vLLM 0.34.0's own tests
(``tests/test_config.py:4100-4176``): the same mutations of the same configs, the same
expectation (refused, with the message its ``pytest.raises(match=...)`` names, or accepted)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity
from dflash_check.knowledge.engines import VLLM
from tests.support.helpers import FIXTURES, check_files, files

CASES = FIXTURES / "vllm_tests"
RELEASES = tuple(r.spec for r in VLLM.releases if r.omni_dspark_contract)
"""The releases whose Qwen3-Omni DSpark contract was read (the newest last)."""

# (field, value, the match string of vLLM's test), test_config.py:4106-4127.
REFUSED: tuple[tuple[str, Any, str], ...] = (
    ("block_size", 5, "trained block_size"),
    ("target_hidden_size", 4096, "target_hidden_size"),
    ("hidden_size", 4096, "draft hidden_size"),
    ("num_attention_heads", 16, "num_attention_heads"),
    ("num_key_value_heads", 8, "num_key_value_heads"),
    ("head_dim", 64, "head_dim"),
    ("target_layer_ids", [7, 48], "zero-based text-layer"),
    ("target_layer_ids", [23, 7], "strictly increasing"),
    ("use_aux_hidden_state", False, "use_aux_hidden_state=true"),
    ("markov_rank", 0, "markov_rank"),
    ("markov_head_type", "gated", "markov_head_type='vanilla'"),
    ("sample_from_anchor", False, "sample_from_anchor=true"),
    ("dspark_bonus_anchor", True, "dspark_bonus_anchor=false"),
    ("vocab_size", 0, "input vocab_size must be a positive integer"),
    # test_qwen3_omni_dspark_rejects_generic_qwen3_architecture (:4112-4118)
    ("architectures", ["Qwen3DSparkModel"], "must be converted first"),
)


def _config(name: str) -> dict[str, Any]:
    return json.loads((CASES / name / "config.json").read_text())


def _check(draft: dict[str, Any], release: str) -> CheckReport:
    return check_files(
        files("draft", draft),
        files("target", _config("qwen3-omni-target")),
        release,
        num_speculative_tokens=7,
    )


def _errors(report: CheckReport) -> list[tuple[str, str]]:
    return [(f.rule, f.message) for f in report.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(("field", "value", "match"), REFUSED)
def test_refused_with_vllms_message(release: str, field: str, value: Any, match: str) -> None:
    """Each mutation is a DF055 error quoting the message vLLM's test matches."""
    draft = copy.deepcopy(_config("qwen3-omni-dspark"))
    draft[field] = value
    errors = _errors(_check(draft, release))
    df055 = [m for rule, m in errors if rule == "DF055"]
    assert len(df055) == 1, errors
    assert re.search(match, df055[0]), df055[0]
    assert "refuses it at load" in df055[0]


def test_mrope_draft_positions_are_refused() -> None:
    """test_qwen3_omni_dspark_rejects_mrope_draft_positions (:4139-4145)."""
    draft = _config("qwen3-omni-dspark")
    draft["rope_parameters"]["mrope_section"] = [24, 20, 20]
    (message,) = [m for rule, m in _errors(_check(draft, RELEASES[-1])) if rule == "DF055"]
    assert "logical 1-D RoPE" in message


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    "change",
    [
        {},  # test_qwen3_omni_dspark_checkpoint_contract_is_accepted (:4100-4103)
        # test_qwen3_omni_dspark_allows_draft_only_noise_token_row (:4148-4155)
        {"vocab_size": 152065, "draft_vocab_size": 152064, "mask_token_id": 152064},
        # test_qwen3_omni_dspark_allows_smaller_input_vocabulary (:4158-4164)
        {"vocab_size": 151936, "mask_token_id": 151669},
    ],
)
def test_accepted(release: str, change: dict[str, Any]) -> None:
    """What vLLM's tests accept draws no error on vLLM."""
    draft = _config("qwen3-omni-dspark") | change
    assert _errors(_check(draft, release)) == []


def test_no_contract_for_another_target() -> None:
    """The contract is Qwen3-Omni's: the same generic draft for a Qwen3 target is not DF055."""
    draft = _config("qwen3-omni-dspark") | {"architectures": ["Qwen3DSparkModel"]}
    target = _config("qwen3-omni-target")["thinker_config"]["text_config"]
    target = target | {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}
    report = check_files(files("draft", draft), files("target", target), RELEASES[-1])
    assert "DF055" not in {f.rule for f in report.findings}
