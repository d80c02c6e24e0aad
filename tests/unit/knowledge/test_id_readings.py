"""Each runtime reads layer ids from its own keys, in its own order and numbering.

One draft config can hold several id lists (a DFlash list, a vLLM aux list, a speculators
list); every runtime feeds the draft the first list *it* reads, or its own default. These tests
pin, per runtime, which list that is and what the report says when it is not the trained one.
"""

from __future__ import annotations

import copy
from typing import Any

from dflash_check.check.report import CheckReport, Verdict
from dflash_check.knowledge.runtimes import PROFILES_BY_NAME, resolve_ids
from dflash_check.knowledge.selection import parse_selection, select_profiles
from dflash_check.views import IdSource
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config

TRAINED = [1, 9, 17, 25, 33]


def check(draft: dict[str, Any], runtime: str = "portable") -> CheckReport:
    """Check ``draft`` against the 36-layer Qwen3-4B target it was trained for."""
    target = copy.deepcopy(qwen3_4b_config())
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", target), runtime)


def top_level_only(ids: list[int]) -> dict[str, Any]:
    """The seed draft with its ids at the top level only (original z-lab Qwen3 layout)."""
    draft = copy.deepcopy(draft_config())
    del draft["dflash_config"]["target_layer_ids"]
    draft["target_layer_ids"] = ids
    return draft


def messages(report: CheckReport, rule: str, runtime: str) -> list[str]:
    """Return the messages of ``rule`` for ``runtime``."""
    return [f.message for f in report.findings if f.rule == rule and f.runtime == runtime]


def test_vllm_v1_captures_its_defaults_when_ids_are_top_level_only() -> None:
    """Model Runner V1 never reads a top-level target_layer_ids: it captures aux (2, N//2, N-3)
    while fc is sized for 5 features (V2 reader), so the first decode fails."""
    report = check(top_level_only(TRAINED), "vllm,vllm-v1")
    assert report.runtime_verdicts["vllm"] is Verdict.COMPATIBLE
    assert report.runtime_verdicts["vllm-v1"] is Verdict.INCOMPATIBLE
    (message,) = messages(report, "DF009", "vllm-v1")
    assert "captures its default: layer outputs [1, 17, 32]" in message
    assert "aux layers [2, 18, 33]" in message
    assert "3 features where fc takes 5" in message
    res = {r.runtime.name: r for r in report.resolutions}
    assert res["vllm-v1"].guessed and res["vllm"].key == "target_layer_ids"


def test_vllm_v1_with_three_top_level_ids_is_silent_in_the_engine() -> None:
    """Three ids: the count matches, nothing fails, and the wrong layers are fed."""
    draft = top_level_only([3, 11, 20])
    draft["num_hidden_layers"] = 3
    (message,) = messages(check(draft, "vllm-v1"), "DF009", "vllm-v1")
    assert "nothing fails and acceptance silently collapses" in message


def test_vllm_v1_is_opt_in_for_portable_and_refuses_dflash2() -> None:
    """portable covers the default runner; V1 is checked when named, and refuses DFlash 2."""
    assert "vllm-v1" not in {p.name for p in select_profiles(parse_selection(["portable"]))}
    assert "vllm-v1" in {p.name for p in select_profiles(parse_selection(["portable,vllm-v1"]))}
    draft = copy.deepcopy(draft_config())
    draft["architectures"] = ["DFlash2DraftModel"]
    draft["dflash_config"].update(
        conv_kernel_size=4, conv_group_size=64, selector_rank=64, selector_top_k=4
    )
    report = check(draft, "vllm-v1")
    (message,) = messages(report, "DF016", "vllm-v1")
    assert "Model Runner V1 does not support: DFlash candidate-head drafts" in message


def test_vllm_reads_a_top_level_eagle_list_first_as_aux_indices() -> None:
    """A top-level eagle_aux_hidden_state_layer_ids wins in vLLM, raw: the aux copy of the
    DFlash ids is harmless, a copy left in DFlash numbering shifts every feature one layer."""
    draft = copy.deepcopy(draft_config())
    draft["eagle_aux_hidden_state_layer_ids"] = [t + 1 for t in TRAINED]
    report = check(draft, "vllm,sglang")
    assert report.verdict is Verdict.COMPATIBLE
    res = {r.runtime.name: r for r in report.resolutions}
    assert res["vllm"].key == "eagle_aux_hidden_state_layer_ids"
    assert res["vllm"].raw_ids == (2, 10, 18, 26, 34) and res["vllm"].layer_ids == tuple(TRAINED)

    draft["eagle_aux_hidden_state_layer_ids"] = TRAINED
    report = check(draft, "vllm,sglang")
    assert report.runtime_verdicts == {"vllm": Verdict.INCOMPATIBLE, "sglang": Verdict.COMPATIBLE}
    (message,) = messages(report, "DF009", "vllm")
    assert "layer outputs [0, 8, 16, 24, 32]" in message
    assert "silently" in message


def test_null_nested_ids_mean_different_things_per_runtime() -> None:
    """dflash_config.target_layer_ids: null with a top-level copy: vLLM skips the null and
    reads the top level, SGLang takes the null and guesses (z-lab formula), the reference
    fails."""
    draft = top_level_only(TRAINED)
    draft["dflash_config"]["target_layer_ids"] = None
    by_name = {
        name: resolve_ids(PROFILES_BY_NAME[name], view, 36)
        for name in ("vllm", "sglang", "reference")
        for view in [check(draft).draft]
    }
    assert by_name["vllm"] is not None and by_name["vllm"].key == "target_layer_ids"
    assert by_name["sglang"] is not None and by_name["sglang"].guessed
    assert by_name["sglang"].ids == (1, 9, 17, 25, 33)  # the formula for 36 layers, 5 draft layers
    assert by_name["reference"] is None


def test_speculators_ids_are_read_as_aux_indices_by_vllm() -> None:
    """The speculators list is vLLM aux numbering: the report shows raw and converted ids."""
    draft = {
        "architectures": ["DFlashSpeculator"],
        "speculators_model_type": "dflash",
        "aux_hidden_state_layer_ids": [2, 10, 18, 26, 34],
        "mask_token_id": 151669,
        "block_size": 16,
        "transformer_layer_config": {
            "hidden_size": 2560,
            "num_hidden_layers": 5,
            "vocab_size": 151936,
        },
    }
    target = copy.deepcopy(qwen3_4b_config())
    report = check_files(files("draft", draft), files("target", target), "vllm")
    (res,) = report.resolutions
    assert res.key == "aux_hidden_state_layer_ids"
    assert res.raw_ids == (2, 10, 18, 26, 34) and res.layer_ids == tuple(TRAINED)
    assert res.capture_indices == (2, 10, 18, 26, 34)


def test_id_sources_keep_every_list_raw() -> None:
    """The view keeps every list the config has, raw, in the order runtimes are listed."""
    draft = copy.deepcopy(draft_config())
    draft["target_layer_ids"] = [0, 1]
    draft["eagle_aux_hidden_state_layer_ids"] = None
    sources = check(draft).draft.id_sources
    assert IdSource("dflash_config.target_layer_ids", tuple(TRAINED)) in sources
    assert IdSource("target_layer_ids", (0, 1)) in sources
    assert IdSource("eagle_aux_hidden_state_layer_ids", None) in sources
