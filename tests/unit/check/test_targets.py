"""Real target configs (verbatim public copies in tests/fixtures/targets) normalise correctly."""

from __future__ import annotations

import json

import pytest

from dflash_check.check.target import normalise_target
from dflash_check.views import build_target_layer_ids
from tests.support.helpers import FIXTURES, files

# folder -> (N, hidden, vocab, layers key)
EXPECTED = {
    "Qwen--Qwen3-8B": (36, 4096, 151936, "num_hidden_layers"),
    "Qwen--Qwen3.5-27B": (64, 5120, 248320, "text_config.num_hidden_layers"),
    "google--gemma-4-26B-A4B": (30, 2816, 262144, "text_config.num_hidden_layers"),
    "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16": (108, 8192, 131072, "len(layers_block_type)"),
    "moonshotai--Kimi-K2.5": (61, 7168, 163840, "text_config.num_hidden_layers"),
    "meta-llama--Meta-Llama-3.1-8B": (32, 4096, 128256, "num_hidden_layers"),
    "Qwen--Qwen3-VL-4B-Instruct": (36, 2560, 151936, "text_config.num_hidden_layers"),
    "Qwen--Qwen3-VL-30B-A3B-Instruct": (48, 2048, 151936, "text_config.num_hidden_layers"),
    "meta-llama--Llama-4-Scout-17B-16E-Instruct": (
        48,
        5120,
        202048,
        "text_config.num_hidden_layers",
    ),
    "mistralai--Mixtral-8x7B-v0.1": (32, 4096, 32000, "num_hidden_layers"),
    "stepfun-ai--Step-3.7-Flash": (45, 4096, 128896, "num_hidden_layers"),
}


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_real_targets(folder: str) -> None:
    """Dimensions match model-facts, nested or not."""
    cfg = json.loads((FIXTURES / "targets" / folder / "config.json").read_text())
    view = normalise_target(files("target", cfg))
    assert (view.num_hidden_layers, view.hidden_size, view.vocab_size, view.layers_key) == (
        EXPECTED[folder]
    )


@pytest.mark.parametrize(
    ("n", "layers", "ids"),
    [
        (36, 5, (1, 9, 17, 25, 33)),
        (32, 5, (1, 8, 15, 22, 29)),
        (24, 5, (1, 6, 11, 16, 21)),
        (64, 5, (1, 16, 31, 46, 61)),
        (61, 6, (1, 12, 24, 35, 47, 58)),
        (32, 8, (1, 5, 9, 13, 17, 21, 25, 29)),
        (40, 8, (1, 6, 11, 16, 22, 27, 32, 37)),
        (36, 1, (18,)),
    ],
)
def test_z_lab_formula(n: int, layers: int, ids: tuple[int, ...]) -> None:
    """The reference's default ids, as tabulated in runtime-semantics §9."""
    assert build_target_layer_ids(n, layers) == ids


def test_qwen3_omni_reads_the_thinker_text_config() -> None:
    """Qwen3-Omni keeps its decoder under thinker_config.text_config, where vLLM reads it
    (0.34.0 vllm/config/speculative.py:167-172): N, hidden and vocab come from there, and every
    key names the nesting."""
    cfg = json.loads((FIXTURES / "vllm_tests" / "qwen3-omni-target" / "config.json").read_text())
    view = normalise_target(files("target", cfg))
    assert (view.num_hidden_layers, view.hidden_size, view.vocab_size) == (48, 2048, 152064)
    assert view.layers_key == "thinker_config.text_config.num_hidden_layers"
    assert view.key("vocab_size") == "thinker_config.text_config.vocab_size"
    assert view.model_types == ("qwen3_omni_moe", "qwen3_omni_moe_text")
