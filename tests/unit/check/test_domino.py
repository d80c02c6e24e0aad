"""SGLang's Domino draft-config contract (DF056) on the cases of SGLang's own tests
(``test/registered/unit/spec/test_dflash_domino_config.py``, sgl-project/sglang@8e4cc8bc7) and
on the rest of ``parse_dflash_draft_config``'s Domino branch (sglang==0.5.23:sglang/srt/
speculative/dflash_utils.py:727-791): the same mutations of the same config, refused with
SGLang's message or accepted."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Severity
from dflash_check.check.rules.domino import domino_refusals
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.knowledge.outcomes import Stage
from dflash_check.views import TensorInfo
from tests.support.helpers import FIXTURES, check_files, files

RELEASES = tuple(r.spec for r in SGLANG.releases if r.domino_contract)
"""The SGLang releases whose Domino contract was read."""
TARGET = json.loads((FIXTURES / "targets" / "Qwen--Qwen3-8B" / "config.json").read_text())


def _ordinary() -> dict[str, Any]:
    """The DFlash draft SGLang's test builds for Qwen3-8B (its ``_base_config``)."""
    return {
        "architectures": ["DFlashDraftModel"],
        "block_size": 16,
        "dflash_config": {
            "mask_token_id": 151669,
            "target_layer_ids": [1, 9, 17, 25, 33],
            "num_target_layers": 36,
        },
        "head_dim": 128,
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "model_type": "qwen3",
        "num_attention_heads": 32,
        "num_hidden_layers": 1,
        "num_key_value_heads": 8,
        "num_target_layers": 36,
        "rms_norm_eps": 1e-06,
        "vocab_size": 151936,
    }


def _domino() -> dict[str, Any]:
    """The Domino draft of ``test_domino_config_parses`` (:59-79)."""
    config = _ordinary()
    config["dflash_config"].update(
        projector_type="domino", gru_hidden_dim=1024, pure_draft_prefix_len=1, shift_label=True
    )
    config["emb_dim"] = 256
    return config


def _check(
    draft: dict[str, Any], release: str, tensors: dict[str, TensorInfo] | None = None
) -> CheckReport:
    return check_files(files("draft", draft, tensors), files("target", TARGET), release)


def _projector(prefix: str = "", **shapes: tuple[int, ...]) -> dict[str, TensorInfo]:
    """The four projector tensors of ``_domino()`` (hidden 4096, GRU 1024, emb 256, vocabulary
    151936) as SGLang builds them (models/dflash.py:784-803), with ``shapes`` changed."""
    want = {
        "prefix_gru.weight_ih_l0": (3072, 4096),
        "prefix_gru.weight_hh_l0": (3072, 1024),
        "embed_proj.0.weight": (256, 5120),
        "embed_proj.2.weight": (151936, 256),
    } | {name.replace("__", "."): shape for name, shape in shapes.items()}
    return {f"{prefix}{name}": TensorInfo("BF16", shape) for name, shape in want.items()}


def _df056(report: CheckReport) -> list[str]:
    return [
        f.message for f in report.findings if f.rule == "DF056" and f.severity is Severity.ERROR
    ]


def _errors(report: CheckReport) -> list[str]:
    return [f.rule for f in report.findings if f.severity is Severity.ERROR]


def _without(config: dict[str, Any], *path: str) -> dict[str, Any]:
    out = copy.deepcopy(config)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return out


def _with(config: dict[str, Any], value: Any, *path: str) -> dict[str, Any]:
    out = copy.deepcopy(config)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


# (draft, SGLang's message), the test's cases first (:81-104).
REFUSED: tuple[tuple[str, dict[str, Any], str], ...] = (
    (
        "missing gru_hidden_dim",
        _without(_domino(), "dflash_config", "gru_hidden_dim"),
        "DFLASH Domino requires dflash_config.gru_hidden_dim.",
    ),
    (
        "missing emb_dim",
        _without(_domino(), "emb_dim"),
        "DFLASH Domino requires dflash_config.emb_dim.",
    ),
    (
        "pure_draft_prefix_len 2",
        _with(_domino(), 2, "dflash_config", "pure_draft_prefix_len"),
        "DFLASH Domino currently requires pure_draft_prefix_len=1, got 2.",
    ),
    (
        "shift_label 1",
        _with(_domino(), 1, "dflash_config", "shift_label"),
        "DFLASH Domino requires dflash_config.shift_label to be a bool, got 1.",
    ),
    (
        "missing pure_draft_prefix_len",
        _without(_domino(), "dflash_config", "pure_draft_prefix_len"),
        "DFLASH Domino currently requires pure_draft_prefix_len=1, got None.",
    ),
    (
        "gru_hidden_dim 0",
        _with(_domino(), 0, "dflash_config", "gru_hidden_dim"),
        "DFLASH Domino gru_hidden_dim must be positive, got 0.",
    ),
    (
        "gru_hidden_dim not a number",
        _with(_domino(), "wide", "dflash_config", "gru_hidden_dim"),
        "Invalid DFLASH Domino gru_hidden_dim='wide'.",
    ),
    (
        "negative pure_draft_prefix_len",
        _with(_domino(), -1, "dflash_config", "pure_draft_prefix_len"),
        "DFLASH Domino pure_draft_prefix_len must be >= 0, got -1.",
    ),
    (
        "emb_dim differs between the two places",
        _with(_domino(), 128, "dflash_config", "emb_dim"),
        "DFLASH Domino emb_dim differs between dflash_config and the top-level config: 128 != 256.",
    ),
    (
        "a block of one token",
        _with(_domino(), 1, "block_size"),
        "DFLASH Domino requires block_size > 1, got 1.",
    ),
    (
        "a null in dflash_config hides the top-level value",
        _with(_with(_domino(), None, "dflash_config", "shift_label"), True, "shift_label"),
        "DFLASH Domino requires dflash_config.shift_label to be a bool, got None.",
    ),
)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    ("draft", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_refused_with_sglangs_message(release: str, draft: dict[str, Any], message: str) -> None:
    """Each refusal is one DF056 error at load quoting SGLang's ValueError."""
    found = _df056(_check(draft, release))
    assert len(found) == 1, found
    assert f"'{message}'" in found[0]
    assert "refuses it at load" in found[0]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    "draft",
    [
        _ordinary(),  # test_ordinary_config_still_parses (:50-57)
        _domino(),  # test_domino_config_parses (:59-79)
        # The keys at the top level, as the fallback of dict.get reads them.
        {**_ordinary(), "projector_type": "domino", "gru_hidden_dim": 1024}
        | {"pure_draft_prefix_len": 1, "shift_label": False, "emb_dim": 256},
        # int() as Python converts it: a numeric string and a bool are accepted.
        _with(
            _with(_domino(), "1024", "dflash_config", "gru_hidden_dim"),
            True,
            "dflash_config",
            "pure_draft_prefix_len",
        ),
        # Both emb_dims stated and equal.
        _with(_domino(), 256, "dflash_config", "emb_dim"),
        # Another projector type is not Domino: its keys are not read.
        _with(_without(_domino(), "emb_dim"), "linear", "dflash_config", "projector_type"),
    ],
    ids=["ordinary", "domino", "top-level", "int-coercion", "emb-both", "other-projector"],
)
def test_accepted(release: str, draft: dict[str, Any]) -> None:
    """What SGLang accepts draws no error on SGLang."""
    assert _errors(_check(draft, release)) == []


def test_every_refusal_in_sglangs_order() -> None:
    """SGLang stops at its first refusal; the rule names each, in SGLang's order."""
    stated = {
        "dflash_config.projector_type": "domino",
        "dflash_config.shift_label": "yes",
        "dflash_config.pure_draft_prefix_len": 0,
        "block_size": 1,
    }
    assert [field for field, _ in domino_refusals(stated)] == [
        "dflash_config.shift_label",
        "dflash_config.pure_draft_prefix_len",
        "gru_hidden_dim",
        "dflash_config.emb_dim",
        "block_size",
    ]


def test_vllm_does_not_read_the_domino_keys() -> None:
    """vLLM has no Domino contract: a Domino draft missing its keys is not DF056 there."""
    draft = _without(_domino(), "emb_dim")
    report = _check(draft, VLLM.newest.spec)
    assert "DF056" not in {f.rule for f in report.findings}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("prefix", ["", "model."])
def test_the_projector_weights_as_built_are_accepted(release: str, prefix: str) -> None:
    """The four tensors with the shapes the config builds draw no DF056."""
    assert _df056(_check(_domino(), release, _projector(prefix))) == []


# (draft, header, SGLang's message): DFlashDraftModel.load_weights (models/dflash.py:921-1000).
WEIGHTS_REFUSED: tuple[tuple[str, dict[str, Any], dict[str, TensorInfo], str], ...] = (
    (
        "projector weights without a Domino projector",
        _ordinary(),
        _projector(),
        "DFLASH checkpoint contains Domino projector weights but projector_type=None.",
    ),
    (
        "a GRU wider than the config's",
        _domino(),
        _projector(prefix_gru__weight_hh_l0=(3072, 2048)),
        "DFLASH Domino projector weight shape mismatch: expected "
        "prefix_gru.weight_hh_l0(3072, 1024), got (3072, 2048) from 'prefix_gru.weight_hh_l0'.",
    ),
    (
        "a missing output projection",
        _domino(),
        {k: v for k, v in _projector().items() if k != "embed_proj.2.weight"},
        "DFLASH Domino checkpoint is missing required projector weights: ['embed_proj.2.weight'].",
    ),
)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    ("draft", "tensors", "message"),
    [c[1:] for c in WEIGHTS_REFUSED],
    ids=[c[0] for c in WEIGHTS_REFUSED],
)
def test_projector_weights_refused(
    release: str, draft: dict[str, Any], tensors: dict[str, TensorInfo], message: str
) -> None:
    """SGLang refuses a Domino tensor its config does not build, at load."""
    found = _df056(_check(draft, release, tensors))
    assert len(found) == 1, found
    assert message in found[0]
    assert "refuses it at load" in found[0]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("vocab", [151669, 152064])  # another tokenizer; only padding
def test_the_worker_refuses_another_vocabulary(release: str, vocab: int) -> None:
    """SGLang's DFlash worker compares the Domino draft's vocabulary with the target's row for
    row when it starts (domino_utils.py:157-161, run by the oracle's worker guards): padding
    is refused too, at load, where a plain DFlash draft's padding is a note."""
    report = _check({**_domino(), "vocab_size": vocab}, release)
    found = _df056(report)
    assert len(found) == 1, found
    assert f"got target=151936, draft={vocab}." in found[0]
    plain = _check({**_ordinary(), "vocab_size": vocab}, release)
    assert _df056(plain) == []


WORKER_RELEASES = tuple(r.spec for r in SGLANG.releases if r.domino_worker)
"""The SGLang releases whose DFlash worker's start-up guards were read."""
DP_ATTENTION = ("--enable-dp-attention", "--dp-size", "2", "--tp-size", "2")
"""The oracle's case: the deprecated spelling of --attn-dp-size 2."""
ONE_TOKEN = ("--speculative-num-draft-tokens", "1")


def _server(draft: dict[str, Any], release: str, *engine_args: str) -> CheckReport:
    return check_files(
        files("draft", draft), files("target", TARGET), release, engine_args=engine_args
    )


@pytest.mark.parametrize("release", WORKER_RELEASES)
@pytest.mark.parametrize(
    ("engine_args", "message", "cited"),
    [
        (DP_ATTENTION, "Domino and LiLiCorr heads are not supported.", ":455-460"),
        (("--attn-dp-size=2",), "Domino and LiLiCorr heads are not supported.", ":455-460"),
        (ONE_TOKEN, "requires speculative_num_draft_tokens > 1, got 1.", ":525-529"),
        (("--speculative-num-draft-tokens=1",), "num_draft_tokens > 1, got 1.", ":525-529"),
    ],
    ids=["dp-attention", "attn-dp-size", "one-token", "one-token-inline"],
)
def test_the_worker_refuses_a_domino_draft_under_the_server_setting(
    release: str, engine_args: tuple[str, ...], message: str, cited: str
) -> None:
    """SGLang's DFlash worker refuses a Domino draft when it starts under DP attention or with
    one draft token (dflash_worker_v2.py:455-460, 525-529): an error at load, citing the line,
    with a fix about the setting, not the draft's keys."""
    report = _server(_domino(), release, *engine_args)
    (finding,) = [f for f in report.findings if f.rule == "DF056"]
    assert finding.severity is Severity.ERROR and finding.runtime == "sglang"
    assert finding.stage is Stage.LOAD
    assert message in finding.message
    assert f"dflash_worker_v2.py{cited}" in finding.message
    assert finding.hint is not None and "--" in finding.hint
    assert report.verdict.value == "incompatible"


@pytest.mark.parametrize("release", WORKER_RELEASES)
@pytest.mark.parametrize(
    "engine_args", [DP_ATTENTION, ONE_TOKEN], ids=["dp-attention", "one-token"]
)
def test_the_guards_pass_a_plain_draft(release: str, engine_args: tuple[str, ...]) -> None:
    """A plain DFlash draft passes both guards (the oracle's control case)."""
    assert _df056(_server(_ordinary(), release, *engine_args)) == []


@pytest.mark.parametrize("release", WORKER_RELEASES)
@pytest.mark.parametrize(
    "engine_args",
    [(), ("--enable-dp-attention",), ("--speculative-num-draft-tokens=2",), ("--dp-size=2",)],
    ids=["none", "dp-flag-alone", "two-tokens", "replicas"],
)
def test_a_domino_draft_passes_what_sglang_allows(
    release: str, engine_args: tuple[str, ...]
) -> None:
    """Without settings SGLang's defaults hold (no DP attention, the draft's block size), as
    before; --enable-dp-attention alone keeps DP width 1, replicas are not attention DP."""
    assert _df056(_server(_domino(), release, *engine_args)) == []


def test_vllm_is_not_judged_by_sglang_settings() -> None:
    """The settings are SGLang's: a vLLM check of the same pair does not change."""
    report = _server(_domino(), VLLM.newest.spec, *DP_ATTENTION, *ONE_TOKEN)
    assert "DF056" not in {f.rule for f in report.findings}
