"""MTP: a NextN draft checkpoint checked against its target (DF040); other MTP drafts named."""

from __future__ import annotations

from typing import Any

import pytest

from dflash_check.core.check import run_check
from dflash_check.core.formats import normalise_draft
from dflash_check.core.report import CheckReport, Verdict
from dflash_check.core.rules import RULES_BY_ID
from dflash_check.core.safetensors_header import TensorInfo
from dflash_check.errors import NotADraftError
from tests.helpers import files

# deepseek-ai/DeepSeek-V3 (model-facts.md): 61 layers, hidden 7168, vocabulary 129280, one MTP
# layer; its NextN export keeps the config and names the MTP layer model.layers.61.
DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
    "max_position_embeddings": 163840,
}
NEXTN = DEEPSEEK_V3 | {"architectures": ["DeepseekV3ForCausalLMNextN"]}


def header(layer: int) -> dict[str, TensorInfo]:
    return {
        f"model.layers.{layer}.eh_proj.weight": TensorInfo("BF16", (7168, 2 * 7168)),
        f"model.layers.{layer}.enorm.weight": TensorInfo("BF16", (7168,)),
        f"model.layers.{layer}.hnorm.weight": TensorInfo("BF16", (7168,)),
    }


def check(target: dict[str, Any], layer: int = 61) -> CheckReport:
    return run_check(files("draft", NEXTN, header(layer)), files("target", target))


def test_nextn_checkpoint_is_read_as_mtp() -> None:
    view = normalise_draft(files("draft", NEXTN, header(61)))
    assert (view.method, view.format, view.nextn_layers) == ("mtp", "nextn", (61,))
    assert RULES_BY_ID["DF040"].methods == ("mtp",)


def test_nextn_with_its_target_passes() -> None:
    report = check(DEEPSEEK_V3)
    assert [f for f in report.findings if f.rule == "DF040"] == []
    assert report.verdict is Verdict.COMPATIBLE


@pytest.mark.parametrize(
    ("target", "layer", "needle"),
    [
        (DEEPSEEK_V3 | {"hidden_size": 4096}, 61, "hidden_size 7168 != target"),
        (DEEPSEEK_V3 | {"vocab_size": 151936}, 61, "vocab_size 129280 != target"),
        (DEEPSEEK_V3 | {"num_hidden_layers": 60}, 61, "61-layer target"),
        (DEEPSEEK_V3, 60, "weights sit under layer [60]"),
    ],
)
def test_nextn_against_another_target_fails(
    target: dict[str, Any], layer: int, needle: str
) -> None:
    report = check(target, layer)
    hits = [f for f in report.findings if f.rule == "DF040"]
    assert hits and any(needle in f.message for f in hits), hits
    assert report.verdict is Verdict.INCOMPATIBLE


def test_other_mtp_drafts_are_named() -> None:
    with pytest.raises(NotADraftError, match="MTP"):
        normalise_draft(files("draft", {"architectures": ["DeepSeekMTPModel"]}))
