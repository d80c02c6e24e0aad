"""dflash-mlx 0.1.8 (``-r dflash-mlx``): the facts read from its released code, one test each.

Each test would fail on the table without the dflash-mlx row or with a fact changed; the
conformance run on mlx[cpu] (``conformance/results/dflash-mlx-0.1.8.json``) saw the same.
"""

from __future__ import annotations

import copy
from typing import Any

from dflash_check.check.report import CheckReport
from dflash_check.knowledge.outcomes import Stage, stage_of
from dflash_check.knowledge.runtimes import (
    PROFILES_BY_NAME,
    at_release,
    on_family,
)
from dflash_check.knowledge.selection import parse_selection, select_profiles
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


def check(draft: dict[str, Any], target: dict[str, Any], runtime: str) -> CheckReport:
    """Check a pair of in-memory configs, with the draft's fc in its header."""
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", target), runtime)


def nested_block_size() -> dict[str, Any]:
    """The seed draft with block_size only in dflash_config, as z-lab's Qwen3.5 drafts state it."""
    draft = draft_config(block_size=None)
    draft["dflash_config"]["block_size"] = 16
    return draft


def rules_for(report: CheckReport, runtime: str) -> set[str]:
    """Return the ids of the errors ``report`` raises for ``runtime``."""
    return {f.rule for f in report.findings if f.runtime == runtime and f.severity.name == "ERROR"}


def test_block_size_only_in_dflash_config_is_refused_by_dflash_mlx_only() -> None:
    """``DFlashDraftModelArgs`` has ``block_size`` as a field without default, and mlx-lm fills
    it from the top-level keys only (dflash-mlx==0.1.8:dflash_mlx/model.py:236, :246-268):
    'missing 1 required positional argument: block_size' at load. The references read it
    from dflash_config."""
    report = check(nested_block_size(), qwen3_4b_config(), "dflash-mlx,reference")
    hits = [f for f in report.findings if f.rule == "DF012"]
    assert [f.runtime for f in hits] == ["dflash-mlx"]
    assert "top level" in hits[0].message and hits[0].stage is Stage.LOAD
    assert "block_size (16)" in (hits[0].hint or "")


def test_a_top_level_block_size_loads_in_dflash_mlx() -> None:
    """The seed draft states block_size at the top level: nothing to say for dflash-mlx."""
    report = check(draft_config(), qwen3_4b_config(), "dflash-mlx")
    assert report.findings == ()


def test_a_null_top_level_block_size_counts_as_missing() -> None:
    """``int(None)`` fails as surely as a missing key (model.py:695)."""
    draft = nested_block_size()
    draft["block_size"] = None
    assert "DF012" in rules_for(check(draft, qwen3_4b_config(), "dflash-mlx"), "dflash-mlx")


def test_dflash_mlx_serves_qwen_and_gemma4_targets_only() -> None:
    """TARGET_BACKENDS is qwen_gdn (model_type containing 'qwen') and gemma4
    (dflash_mlx/engine/target_ops.py:116-145); any other target raises NotImplementedError."""
    row = PROFILES_BY_NAME["dflash-mlx"]
    for family in ("qwen3", "qwen3_moe", "qwen3_5", "qwen3_next", "gemma4"):
        assert on_family(row, family).cannot_capture is None, family
    for family in ("llama", "gpt_oss", "deepseek_v3", "gemma3", "minimax_m2"):
        said = on_family(row, family).cannot_capture
        assert said is not None and "NotImplementedError" in said, family
    llama = qwen3_4b_config()
    llama.update(architectures=["LlamaForCausalLM"], model_type="llama")
    assert "DF017" in rules_for(check(draft_config(), llama, "dflash-mlx"), "dflash-mlx")


def test_dflash_mlx_reads_ids_from_dflash_config_only_and_guesses_without_them() -> None:
    """``dflash_config.get('target_layer_ids') or build_target_layer_ids(num_target_layers,
    num_hidden_layers)`` (model.py:687-691): a top-level list is never read."""
    row = at_release(PROFILES_BY_NAME["dflash-mlx"])
    assert row.label == "dflash-mlx==0.1.8"
    assert row.id_keys == ("dflash_config.target_layer_ids",)
    assert row.default_ids == "zlab" and row.reads_num_target_layers
    # The formula gives [1, 9, 17, 25, 33] for this 5-layer draft of a 36-layer target.
    draft = draft_config(target_layer_ids=[2, 10, 18, 26, 34])
    draft["dflash_config"].pop("target_layer_ids")
    hits = [f for f in check(draft, qwen3_4b_config(), "dflash-mlx").findings if f.rule == "DF009"]
    assert [f.runtime for f in hits] == ["dflash-mlx"]
    assert "[1, 9, 17, 25, 33]" in hits[0].message and hits[0].stage is Stage.SILENT
    # Where the guess is the trained list (the seed draft's ids), nothing is fed wrongly.
    draft = draft_config(target_layer_ids=[1, 9, 17, 25, 33])
    draft["dflash_config"].pop("target_layer_ids")
    assert "DF009" not in rules_for(check(draft, qwen3_4b_config(), "dflash-mlx"), "dflash-mlx")


def test_dflash_mlx_failure_stages() -> None:
    """What the conformance run saw: -1 and a vocabulary mismatch run silently (key 0 is the
    embeddings; the target's head drafts), a missing mask token serves with token 0, an id past
    the range fails at the first decode (KeyError), another hidden size at load (fc shape)."""
    assert stage_of("DF002", "dflash-mlx") is Stage.SILENT
    assert stage_of("DF007", "dflash-mlx") is Stage.SILENT
    assert stage_of("DF008", "dflash-mlx") is Stage.SILENT
    assert stage_of("DF004", "dflash-mlx") is Stage.FIRST_DECODE
    assert stage_of("DF006", "dflash-mlx") is Stage.LOAD


def test_dflash_mlx_is_opt_in() -> None:
    """Not in ``portable``: it serves only Qwen-family and Gemma 4 targets, and refuses drafts
    that state block_size only in dflash_config (z-lab's own Qwen3.5 drafts among them), so it
    is checked when named (``-r portable,dflash-mlx``)."""
    assert "dflash-mlx" not in {p.name for p in select_profiles(parse_selection(["portable"]))}
    assert "dflash-mlx" in {
        p.name for p in select_profiles(parse_selection(["portable,dflash-mlx"]))
    }
    report = check(copy.deepcopy(nested_block_size()), qwen3_4b_config(), "portable")
    assert not [f for f in report.findings if f.runtime == "dflash-mlx"]
