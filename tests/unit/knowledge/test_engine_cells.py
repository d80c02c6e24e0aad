"""Engine facts that a review of real pairs found mis-modelled, one test per fact.

Each test pairs a real (or real-shaped) config with a target and asserts the verdict per
runtime, with the engine source in the docstring; each would fail on the table as it stood.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.render.diagnostics import where_it_works
from dflash_check.views import ModelFiles
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.support.paths import FIXTURES

TARGETS = FIXTURES / "targets"
MUSE = TARGETS / "meta-models--Muse-Glimmer-30B"
MUSE_ASSISTANT = FIXTURES / "drafts" / "meta-models--Muse-Glimmer-30B-assistant"
GPT_OSS_RECIPE = FIXTURES / "eagle3" / "specforge--gpt-oss-20B-eagle3"
GPT_OSS_20B = FIXTURES / "hub" / "openai" / "gpt-oss-20b"


def load(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json."""
    return json.loads((folder / "config.json").read_text())


def pair(draft: dict[str, Any], target: dict[str, Any], runtime: str) -> CheckReport:
    """Check two configs (no header)."""
    return check_files(
        ModelFiles("draft", "d", draft, "d/config.json"),
        ModelFiles("target", "t", target, "t/config.json"),
        runtime,
    )


def errors(report: CheckReport, rule: str) -> set[str | None]:
    """Return the runtimes with an error of ``rule``."""
    return {f.runtime for f in report.findings if f.rule == rule and f.severity is Severity.ERROR}


def test_null_nested_ids_with_a_top_level_copy() -> None:
    """dflash_config.target_layer_ids: null, top-level ids: vLLM V2 skips the null and reads the
    top level; V1, TensorRT-LLM and llama.cpp read dflash_config only (defaults, nothing, a
    load error); SGLang takes the null and guesses with its formula (dflash_utils.py:657-675)."""
    draft = copy.deepcopy(draft_config())
    draft["dflash_config"]["target_layer_ids"] = None
    draft["target_layer_ids"] = [2, 10, 18, 26, 34]
    target = copy.deepcopy(qwen3_4b_config())
    report = check_files(
        files("draft", draft, fc_tensors(draft)), files("target", target), "portable,vllm-v1"
    )
    assert errors(report, "DF009") == {"vllm-v1", "sglang", "trtllm", "llamacpp"}
    assert errors(report, "DF001") == {"reference", "mlx"}  # they take the null and fail
    assert report.runtime_verdicts["vllm"] is Verdict.COMPATIBLE


def test_sglang_on_muse_glimmer_remaps_only_its_own_drafts() -> None:
    """SGLang's Muse Glimmer hook captures raw ids before layer i; +1 is added first only for
    MuseGlimmerAssistantModel and DFlash2DraftModel drafts (spec_aux_hidden_state.py:17-29),
    so a plain DFlash draft with the same ids is fed every feature one layer early."""
    assistant = load(MUSE_ASSISTANT)
    target = load(MUSE)
    assert pair(assistant, target, "sglang").verdict is Verdict.COMPATIBLE
    plain = {
        **copy.deepcopy(assistant),
        "architectures": ["DFlashDraftModel"],
        "dflash_config": {"target_layer_ids": assistant["target_layer_ids"], "mask_token_id": 1},
        "num_target_layers": target["num_hidden_layers"],
    }
    report = pair(plain, target, "sglang,vllm")
    assert report.runtime_verdicts == {"sglang": Verdict.INCOMPATIBLE, "vllm": Verdict.COMPATIBLE}
    (message,) = [f.message for f in report.findings if f.rule == "DF009"]
    assert "layer outputs [0, 12, 24, 36, 48]" in message and "silently" in message


def test_sglang_has_no_dflash_hook_for_mixtral() -> None:
    """Mixtral is not among SGLang 0.5.23's files with set_dflash_layers_to_capture."""
    draft = copy.deepcopy(draft_config())
    mixtral = load(TARGETS / "mistralai--Mixtral-8x7B-v0.1")
    assert "sglang" in errors(pair(draft, mixtral, "sglang"), "DF017")


def test_sglang_has_no_eagle3_hook_for_step3_or_muse() -> None:
    """attention_backend_setup.py:54-61: no set_eagle3_layers_to_capture on Step-3.x or Muse."""
    head = load(GPT_OSS_RECIPE)
    for folder in (TARGETS / "stepfun-ai--Step-3.7-Flash", MUSE):
        assert "sglang" in errors(pair(head, load(folder), "sglang"), "DF017"), folder.name


def test_vllm_v2_feeds_an_eagle3_head_its_dflash_style_ids() -> None:
    """get_eagle3_aux_layers_from_config reads dflash_config.target_layer_ids (+1) for every
    method (eagle3_utils.py:113-150): a head carrying them is fed them."""
    head = load(GPT_OSS_RECIPE)
    head["dflash_config"] = {"target_layer_ids": [1, 11, 21]}
    report = pair(head, load(GPT_OSS_20B), "vllm")
    (res,) = report.resolutions
    assert res.key == "dflash_config.target_layer_ids"
    assert report.runtime_verdicts["vllm"] is Verdict.COMPATIBLE


def test_a_nested_eagle3_list_reaching_the_depth_is_capture_points() -> None:
    """[2, 12, 24] on 24-layer gpt-oss cannot be SpecForge layer outputs (it refuses ids >= N);
    SGLang's gpt-oss hook takes such a list raw (gpt_oss.py:1337-1352): compatible there."""
    head = load(GPT_OSS_RECIPE)
    head["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [2, 12, 24]
    report = pair(head, load(GPT_OSS_20B), "sglang")
    assert report.runtime_verdicts["sglang"] is Verdict.COMPATIBLE, report.findings


def test_sglang_reads_dspark_ids_only_for_dspark_drafts() -> None:
    """Only SGLang's DSpark parser reads dspark_target_layer_ids (dspark_config.py:299-309)."""
    draft = copy.deepcopy(draft_config())
    draft["dspark_target_layer_ids"] = [2, 10, 18, 26, 34]
    report = pair(draft, copy.deepcopy(qwen3_4b_config()), "sglang")
    assert errors(report, "DF009") == set()
    (res,) = report.resolutions
    assert res.key == "dflash_config.target_layer_ids"


def test_the_headline_names_the_runtimes_each_way() -> None:
    """A pair that works on some runtimes says which, instead of 'on every runtime'."""
    report = pair(load(GPT_OSS_RECIPE), load(GPT_OSS_20B), "portable")
    assert "(it works on sglang" in where_it_works(report)
    muse = pair(load(MUSE_ASSISTANT), load(MUSE), "portable")
    assert where_it_works(muse).endswith(
        f"on {VLLM.newest.spec} and {SGLANG.newest.spec} (the runtimes that load it)"
    )


def test_a_known_family_without_a_read_cell_is_noted() -> None:
    """DF051 names the engines whose code was read for other families but not this one, and
    every engine for a family the tool does not know."""
    draft = copy.deepcopy(draft_config())
    target = {**copy.deepcopy(qwen3_4b_config()), "architectures": ["Qwen3MoeForCausalLM"]}
    assert not [f for f in pair(draft, target, "portable").findings if f.rule == "DF051"]
    target["architectures"], target["model_type"] = ["OlmoeForCausalLM"], "olmoe"
    (note,) = [f for f in pair(draft, target, "vllm").findings if f.rule == "DF051"]
    assert "in no target family" in note.message and "vllm is checked" in note.message
