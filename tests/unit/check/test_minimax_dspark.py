"""SGLang's translation of a MiniMax DSpark draft (DF062): each key configure_minimax_m3_dspark
requires (sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111), on tiny configs built from
the DSpark export fixture, flat and nested under text_config."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.knowledge.outcomes import Stage
from tests.support.helpers import FIXTURES, check_files, files

EXPORT = FIXTURES / "drafts" / "sgl-project--SpecForge-qwen3.6-27b-dspark-export"
TARGET = FIXTURES / "targets" / "Qwen--Qwen3.6-27B"
SGL = tuple(r.spec for r in SGLANG.releases if r.minimax_dspark_contract)


def _json(folder: Any) -> dict[str, Any]:
    return copy.deepcopy(json.loads((folder / "config.json").read_text()))


def minimax(nested: bool) -> dict[str, Any]:
    """A MiniMax DSpark draft SGLang translates: the export's keys plus what the translation
    reads (prefixed dspark_* keys, a dense FFN, dflash_config's counts), flat or under
    text_config."""
    cfg = _json(EXPORT)
    cfg.pop("architectures")
    cfg.update(
        dspark_block_size=16,
        dspark_markov_rank=256,
        dspark_noise_token_id=248070,
        dspark_config={"use_dense_ffn": True, "ffn_hidden_size": 17408},
    )
    cfg["dflash_config"].update(num_hidden_layers=5, num_target_layers=64)
    arch = {"architectures": ["DSparkMiniMaxDraftModel"]}
    return {**arch, "text_config": cfg} if nested else {**arch, **cfg}


def df062(cfg: dict[str, Any], runtime: str) -> list[Any]:
    report: CheckReport = check_files(files("draft", cfg), files("target", _json(TARGET)), runtime)
    return [f for f in report.findings if f.rule == "DF062"]


@pytest.mark.parametrize("release", SGL)
@pytest.mark.parametrize("nested", [False, True])
def test_a_complete_minimax_draft_passes(release: str, nested: bool) -> None:
    assert df062(minimax(nested), release) == []


# (where the key sits in the draft, relative to its root; the field DF062 names, relative to
# the root unless it is a top-level dspark_* key; SGLang's words)
MISSING = (
    ("dspark_config.use_dense_ffn", "dspark_config.use_dense_ffn", "dense draft FFN"),
    ("dflash_config.num_target_layers", "dflash_config.num_target_layers", "KeyError"),
    ("dflash_config.num_hidden_layers", "dflash_config.num_hidden_layers", "KeyError"),
    ("dspark_config.ffn_hidden_size", "dspark_config.ffn_hidden_size", "TypeError"),
    ("dspark_block_size", "dspark_block_size", "AttributeError"),
    ("dspark_markov_rank", "dspark_markov_rank", "AttributeError"),
    ("dspark_noise_token_id", "dspark_noise_token_id", "AttributeError"),
    ("dflash_config.target_layer_ids", "dflash_config.target_layer_ids", "KeyError"),
)


@pytest.mark.parametrize("release", SGL)
@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize(("path", "field", "said"), MISSING)
def test_each_missing_key_is_refused_at_load_on_sglang_alone(
    release: str, nested: bool, path: str, field: str, said: str
) -> None:
    cfg = minimax(nested)
    root = cfg["text_config"] if nested else cfg
    parent, _, last = path.rpartition(".")
    del (root[parent] if parent else root)[last]
    (finding,) = df062(cfg, f"{release},{VLLM.newest.spec}")
    assert finding.runtime == "sglang" and finding.severity is Severity.ERROR
    assert finding.stage is Stage.LOAD
    flat = "." not in field
    assert finding.field == (field if flat or not nested else f"text_config.{field}")
    assert said in finding.message and "minimax_vl.py:64-111" in finding.message


@pytest.mark.parametrize("release", SGL)
def test_top_level_dspark_keys_are_copied_onto_text_config(release: str) -> None:
    """SGLang copies the top-level dspark_* keys onto text_config (minimax_vl.py:67-68): a
    nested draft whose block size and dense-FFN section sit at the top level passes."""
    cfg = minimax(True)
    for key in ("dspark_block_size", "dspark_config"):
        cfg[key] = cfg["text_config"].pop(key)
    assert df062(cfg, release) == []


@pytest.mark.parametrize("release", SGL)
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"dspark_config": {"use_dense_ffn": False, "ffn_hidden_size": 17408}}, "dense draft FFN"),
        ({"dspark_markov_rank": None}, "int() of null"),
    ],
)
def test_a_false_or_null_value_is_refused(release: str, change: dict[str, Any], said: str) -> None:
    (finding,) = df062({**minimax(False), **change}, release)
    assert said in finding.message


@pytest.mark.parametrize("release", SGL)
@pytest.mark.parametrize("ids", [[], [2, 2, 17], [2, 17, 64]])
def test_ids_must_be_unique_and_inside_the_trained_depth(release: str, ids: list[int]) -> None:
    cfg = minimax(False)
    cfg["dflash_config"]["target_layer_ids"] = ids
    found = [f for f in df062(cfg, release) if f.field == "dflash_config.target_layer_ids"]
    (finding,) = found
    assert "unique and in [0, target depth)" in finding.message


def test_other_dspark_drafts_are_not_translated() -> None:
    """A Qwen3 DSpark draft without any of those keys: SGLang reads it directly."""
    assert df062(_json(EXPORT), SGL[0]) == []
