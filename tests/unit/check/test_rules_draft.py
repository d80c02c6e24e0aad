"""DF050: the draft's own layers, as each runtime's loader checks them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity, Verdict
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config

RUNTIMES = "portable,vllm-v1"


def check(draft: dict[str, Any]) -> CheckReport:
    """Check a seed-draft variant against its 36-layer target on every runtime and vllm-v1."""
    target = copy.deepcopy(qwen3_4b_config())
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", target), RUNTIMES)


def df050(report: CheckReport) -> dict[str, list[str]]:
    """Return DF050's error messages by runtime."""
    out: dict[str, list[str]] = {}
    for f in report.findings:
        if f.rule == "DF050" and f.severity is Severity.ERROR:
            out.setdefault(f.runtime or "", []).append(f.message)
    return out


def variant(**changes: Any) -> dict[str, Any]:
    """The seed draft (5 full-attention layers) with top-level ``changes`` (None deletes)."""
    draft = copy.deepcopy(draft_config())
    for key, value in changes.items():
        if value is None:
            draft.pop(key, None)
        else:
            draft[key] = value
    return draft


def test_the_seed_draft_passes_every_loader() -> None:
    """Five full-attention layers, every key MLX indexes: nothing to say."""
    report = check(variant())
    assert df050(report) == {}
    assert report.verdict is Verdict.COMPATIBLE


def test_sliding_layers_without_a_window() -> None:
    """MLX, SGLang and both vLLM runners refuse; the reference runs them as full attention
    (warning); mixing kinds is refused by vLLM's V1 runner only."""
    kinds = ["sliding_attention"] * 4 + ["full_attention"]
    report = check(variant(layer_types=kinds, sliding_window=None))
    errors = df050(report)
    assert set(errors) == {"mlx", "sglang", "vllm", "vllm-v1"}
    assert any("require config.sliding_window" in m for m in errors["sglang"])
    assert any("require the V2 model runner" in m for m in errors["vllm-v1"])
    assert any("requires a window size" in m for m in errors["vllm"])
    warnings = [f for f in report.findings if f.rule == "DF050" and f.runtime == "reference"]
    assert [w.severity for w in warnings] == [Severity.WARNING]


@pytest.mark.parametrize(
    ("model_type", "flag", "refusing"),
    [
        ("qwen3", None, {"sglang", "vllm"}),  # the z-lab Qwen3.5 drafts: "use_sliding_window": null
        ("qwen3", False, {"sglang", "vllm"}),
        ("qwen2", None, {"sglang", "vllm"}),
        ("qwen3", True, set()),
        ("laguna", None, set()),  # a class that keeps the window as stated
    ],
)
def test_a_window_the_config_class_drops(
    model_type: str, flag: bool | None, refusing: set[str]
) -> None:
    """A stated window the engine's config class drops (Qwen2/Qwen3 without
    use_sliding_window true) is no window to vLLM and SGLang; MLX reads the JSON as it is."""
    draft = variant(
        model_type=model_type,
        layer_types=["sliding_attention"] * 5,
        sliding_window=4096,
        use_sliding_window=flag,
    )
    if flag is None:
        draft["use_sliding_window"] = None  # stated as null, as z-lab publishes it
    errors = df050(check(draft))
    assert {r.removesuffix("-v1") for r in errors} == refusing
    for messages in errors.values():
        assert any("sliding_window 4096, which transformers' Qwen2/Qwen3" in m for m in messages)


def test_a_window_in_dflash_config_counts_for_vllm() -> None:
    """vLLM also reads dflash_config.swa_window_size; all-sliding drafts pass V1 too."""
    draft = variant(layer_types=["sliding_attention"] * 5, sliding_window=None)
    draft["dflash_config"]["swa_window_size"] = 2048
    assert df050(check(draft)) == {}


@pytest.mark.parametrize(("count", "who"), [(4, {"mlx", "reference"}), (6, {"mlx"})])
def test_layer_types_length(count: int, who: set[str]) -> None:
    """Too few entries break both references (the transformers one indexes per layer); too
    many only MLX's length check."""
    assert set(df050(check(variant(layer_types=["full_attention"] * count)))) == who


def test_unknown_layer_kind() -> None:
    """MLX knows two layer kinds; the others do not look."""
    errors = df050(check(variant(layer_types=["full_attention"] * 4 + ["linear_attention"])))
    assert set(errors) == {"mlx"} and "linear_attention" in errors["mlx"][0]
