"""Rules from the engines' load-time checks: DFlash 2 keys and tensor shapes, the
target's LM head, sample_from_anchor, SGLang's mask-token lookup, on real configs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dflash_check.app.pipeline import CheckRequest, check_pair
from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.check.target import normalise_target
from dflash_check.knowledge.outcomes import Stage
from dflash_check.sources.interface import parse_model_ref
from dflash_check.sources.safetensors_header import dflash2_draft_tensors
from dflash_check.views import TensorInfo
from tests.support.helpers import (
    FIXTURES,
    check_files,
    draft_config,
    fc_tensors,
    files,
    write_model,
)

DFLASH2 = FIXTURES / "drafts" / "z-lab--Qwen3.8-27B-DFlash2"
TARGETS = FIXTURES / "targets"
QWEN36_27B = TARGETS / "Qwen--Qwen3.6-27B"
QWEN36_27B_NVFP4 = TARGETS / "nvidia--Qwen3.6-27B-NVFP4"


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json."""
    return json.loads((folder / "config.json").read_text())


# z-lab/Qwen3.8-27B-DFlash2's tensors, written out from its config (hidden 5120, 5 layers,
# conv_kernel_size 2, conv_group_size 16: 320 groups, selector_rank 256, vocab 248320) with the
# reference's names: the shapes the engines build from the same config.
REAL_DFLASH2_SHAPES = {
    "layers.0.attention_conv.base_kernel": (2, 2, 5120),
    "layers.0.attention_conv.kernel_projection.weight": (1280, 5120),
    "layers.4.mlp_conv.base_kernel": (2, 2, 5120),
    "layers.4.mlp_conv.kernel_projection.weight": (1280, 5120),
    "candidate_selector.predecessor_codebook": (248320, 256),
    "candidate_selector.successor_codebook": (248320, 256),
    "candidate_selector.hidden_projection.weight": (256, 5120),
}


def dflash2_header(cfg: dict[str, Any]) -> dict[str, TensorInfo]:
    """Return the header of the DFlash 2 draft: fc and layers, plus the DFlash 2 tensors."""
    tensors = fc_tensors(cfg, target_hidden=cfg["hidden_size"])
    dfc = cfg["dflash_config"]
    tensors |= dflash2_draft_tensors(
        hidden=cfg["hidden_size"],
        layers=cfg["num_hidden_layers"],
        kernel=dfc["conv_kernel_size"],
        group=dfc["conv_group_size"],
        rank=dfc["selector_rank"],
        vocab=cfg["vocab_size"],
    )
    return tensors


def check_dflash2(
    tensors: dict[str, TensorInfo] | None = None,
    target: Path = QWEN36_27B,
    draft: dict[str, Any] | None = None,
) -> CheckReport:
    """Check the real DFlash 2 draft config (with a header) against a target."""
    cfg = draft or config(DFLASH2)
    header = dflash2_header(cfg) if tensors is None else tensors
    return check_files(files("draft", cfg, header), files("target", config(target)))


def hits(report: CheckReport, rule: str) -> dict[str | None, str]:
    """Return runtime -> message of one rule's findings."""
    return {f.runtime: f.message for f in report.findings if f.rule == rule}


# -- DF020: DFlash 2 tensor shapes ------------------------------------------------------------


def test_real_dflash2_draft_header_passes() -> None:
    """The header the real config describes has the shapes written out above, and passes."""
    header = dflash2_header(config(DFLASH2))
    for name, shape in REAL_DFLASH2_SHAPES.items():
        assert header[name].shape == shape, name
    report = check_dflash2(header)
    assert report.verdict is Verdict.COMPATIBLE, report.findings
    assert report.draft.method == "dflash2" and len(report.draft.dflash2_tensors) == 23


@pytest.mark.parametrize(
    ("name", "shape", "needle"),
    [
        (
            "layers.2.attention_conv.kernel_projection.weight",
            (640, 5120),  # a group of 32 (trained with another conv_group_size)
            "layers.2.attention_conv.kernel_projection.weight is [640, 5120], "
            "expected [1280, 5120]",
        ),
        (
            "candidate_selector.successor_codebook",
            (248320, 128),  # selector_rank 128
            "candidate_selector.successor_codebook is [248320, 128], expected [248320, 256]",
        ),
        (
            "candidate_selector.predecessor_codebook",
            (151936, 256),  # another vocabulary
            "candidate_selector.predecessor_codebook is [151936, 256], expected [248320, 256]",
        ),
        (
            "layers.0.mlp_conv.base_kernel",
            (2, 4, 5120),  # conv_kernel_size 4
            "layers.0.mlp_conv.base_kernel is [2, 4, 5120], expected [2, 2, 5120]",
        ),
    ],
)
def test_mutated_dflash2_header_fails_on_every_engine_that_loads_it(
    name: str, shape: tuple[int, ...], needle: str
) -> None:
    """One tensor of another shape: the weights fail to load, on each DFlash 2 engine."""
    header = dflash2_header(config(DFLASH2))
    header[name] = TensorInfo("BF16", shape)
    found = hits(check_dflash2(header), "DF020")
    assert set(found) == {"reference", "vllm", "sglang", "trtllm", "llamacpp"}
    assert all(needle in message for message in found.values()), found


def test_missing_dflash2_tensors_and_module_prefixes() -> None:
    """A header without the selector fails; the same tensors under 'model.' pass."""
    header = dflash2_header(config(DFLASH2))
    without = {k: v for k, v in header.items() if not k.startswith("candidate_selector.")}
    (message,) = set(hits(check_dflash2(without), "DF020").values())
    assert "no candidate_selector.predecessor_codebook [248320, 256]" in message
    prefixed = {
        ("model." + k if "conv" in k or "selector" in k else k): v for k, v in header.items()
    }
    assert not hits(check_dflash2(prefixed), "DF020")
    layers = {k: v for k, v in header.items() if not k.startswith("layers.3.mlp_conv.")}
    (message,) = set(hits(check_dflash2(layers), "DF020").values())
    assert "no layers.3.mlp_conv.base_kernel [2, 2, 5120]" in message


def test_dflash2_tensors_are_not_judged_without_a_header() -> None:
    """Config only (no safetensors): nothing to compare, so DF020 is silent."""
    report = check_files(files("draft", config(DFLASH2)), files("target", config(QWEN36_27B)))
    assert not hits(report, "DF020")


# -- DF018: DFlash 2 keys, per engine ---------------------------------------------------------


def dflash2_with(**dfc: Any) -> dict[str, Any]:
    """Return the real DFlash 2 config with dflash_config keys changed (None deletes)."""
    cfg = copy.deepcopy(config(DFLASH2))
    for key, value in dfc.items():
        if value is None:
            cfg["dflash_config"].pop(key)
        else:
            cfg["dflash_config"][key] = value
    return cfg


def df018(cfg: dict[str, Any]) -> dict[str | None, str]:
    """Return DF018's findings for a DFlash 2 config on its target (no header)."""
    report = check_files(files("draft", cfg), files("target", config(QWEN36_27B)))
    return hits(report, "DF018")


def test_sglang_conv_keys_go_together_and_conv_is_optional() -> None:
    """SGLang runs without a convolution, but not with half of one."""
    half = df018(dflash2_with(conv_group_size=None))
    assert "conv_kernel_size and conv_group_size together" in half["sglang"]
    assert "Got conv_kernel_size=2, conv_group_size=0." in half["sglang"]
    neither = df018(dflash2_with(conv_group_size=None, conv_kernel_size=None))
    assert "sglang" not in neither
    assert {"reference", "vllm", "trtllm", "llamacpp"} <= set(neither)


def test_sglang_selector_needs_its_rank() -> None:
    """SGLang: no selector at all is refused by the DFlash 2 model; half a selector earlier."""
    neither = df018(dflash2_with(selector_rank=None, selector_top_k=None))
    assert "requires dflash_config.selector_rank" in neither["sglang"]
    half = df018(dflash2_with(selector_rank=None))
    assert "selector needs rank and top_k together" in half["sglang"]


def test_trtllm_needs_two_selector_candidates() -> None:
    """selector_top_k 1 is TensorRT-LLM's 'leaves no candidates' error only."""
    found = df018(dflash2_with(selector_top_k=1))
    assert set(found) == {"trtllm"}
    assert "leaves no candidates to choose between" in found["trtllm"]
    assert not df018(dflash2_with(selector_top_k=2))


def test_top_level_dflash2_keys_fail_the_dflash_config_readers() -> None:
    """Keys only at the top level: vLLM, SGLang and TensorRT-LLM read dflash_config only; the
    reference falls back to the top level."""
    cfg = copy.deepcopy(config(DFLASH2))
    cfg["selector_rank"] = cfg["dflash_config"].pop("selector_rank")
    found = df018(cfg)
    assert {"vllm", "trtllm", "sglang"} <= set(found)
    assert "reference" not in found and "llamacpp" not in found
    assert "(only at the top level)" in found["vllm"]


# -- DF023: the target's LM head for DFlash 2 in SGLang ---------------------------------------


def test_nvfp4_target_that_quantises_lm_head() -> None:
    """nvidia/Qwen3.6-27B-NVFP4 names lm_head among its quantised layers (W4A16 NVFP4):
    a warning for SGLang with the DFlash 2 draft; the BF16 original and vLLM say nothing."""
    quantised = normalise_target(files("target", config(QWEN36_27B_NVFP4)))
    assert quantised.lm_head_quantization == "modelopt W4A16_NVFP4"
    assert normalise_target(files("target", config(QWEN36_27B))).lm_head_quantization is None
    report = check_dflash2(target=QWEN36_27B_NVFP4)
    found = [f for f in report.findings if f.rule == "DF023"]
    assert [(f.runtime, f.severity) for f in found] == [("sglang", Severity.WARNING)]
    assert "requires a dense FP16/BF16/FP32 target lm_head" in found[0].message
    assert not hits(check_dflash2(), "DF023")


@pytest.mark.parametrize(
    ("quantization", "expected"),
    [
        ({"quant_method": "fp8", "modules_to_not_convert": ["lm_head"]}, None),
        (
            {"quant_method": "modelopt", "ignore": ["lm_head"], "config_groups": {}},
            None,
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {
                    "g": {"targets": ["lm_head"], "weights": {"num_bits": 8, "type": "float"}}
                },
            },
            "compressed-tensors 8-bit float weights",
        ),
        ({"quant_method": "modelopt", "quantized_layers": "lm_head"}, None),  # ill-typed
        ("not an object", None),
    ],
)
def test_lm_head_quantisation_only_when_named(quantization: Any, expected: str | None) -> None:
    """Only a config that names lm_head among its quantised modules counts."""
    target = {**config(TARGETS / "Qwen--Qwen3-8B"), "quantization_config": quantization}
    assert normalise_target(files("target", target)).lm_head_quantization == expected


# -- DF022: SGLang's mask token, from the tokenizers ------------------------------------------


def tokenizer(vocab: dict[str, int], added: dict[str, int]) -> str:
    """Return a minimal tokenizer.json (a BPE vocabulary plus added tokens)."""
    return json.dumps(
        {
            "model": {"type": "BPE", "vocab": vocab},
            "added_tokens": [{"id": i, "content": t, "special": True} for t, i in added.items()],
        }
    )


def local_pair(tmp_path: Path, draft_mask: str | None, target_added: dict[str, int]) -> CheckReport:
    """Check the seed draft against a Qwen3-4B-shaped target, each with a tokenizer.json."""
    from tests.support.helpers import qwen3_4b_config

    cfg = draft_config()
    if draft_mask is not None:
        cfg["dflash_config"]["mask_token"] = draft_mask
    draft = write_model(tmp_path / "draft", cfg, fc_tensors(cfg))
    target = write_model(tmp_path / "target", qwen3_4b_config())
    vocab = {"a": 0, "b": 1}
    (draft / "tokenizer.json").write_text(tokenizer(vocab, {"<|im_end|>": 2}))
    (target / "tokenizer.json").write_text(tokenizer(vocab, target_added))
    request = CheckRequest(parse_model_ref(str(draft)), parse_model_ref(str(target)))
    return check_pair(request)


def test_sglang_mask_token_conflicts_with_the_tokenizer(tmp_path: Path) -> None:
    """The seed draft's mask id 151669 against a tokenizer whose <|MASK|> is 151670: SGLang
    refuses to start; the same id passes, and a tokenizer without the token accepts it."""
    wrong = local_pair(tmp_path / "a", None, {"<|MASK|>": 151670})
    found = hits(wrong, "DF022")
    assert set(found) == {"sglang"}
    assert "mask_token_id=151669, tokenizer_vocab_id=151670" in found["sglang"]
    assert wrong.runtime_verdicts["sglang"] is Verdict.INCOMPATIBLE
    assert wrong.runtime_verdicts["vllm"] is Verdict.COMPATIBLE
    assert not hits(local_pair(tmp_path / "b", None, {"<|MASK|>": 151669}), "DF022")
    assert not hits(local_pair(tmp_path / "c", None, {"<|other|>": 151670}), "DF022")


def test_sglang_looks_up_the_drafts_own_mask_token(tmp_path: Path) -> None:
    """dflash_config.mask_token names the token SGLang looks up instead of <|MASK|>."""
    added = {"<|MASK|>": 151669, "<mask>": 151670}
    found = hits(local_pair(tmp_path / "a", "<mask>", added), "DF022")
    assert '"<mask>" at id 151670' in found["sglang"]
    assert not hits(local_pair(tmp_path / "b", None, added), "DF022")


def test_speculators_draft_without_ids_fails_vllms_loader() -> None:
    """No aux_hidden_state_layer_ids: vLLM's speculators loader indexes the key (KeyError),
    it never reaches the default aux layers (DF001)."""
    cfg = config(FIXTURES / "hub" / "huaxuan250" / "dflash_zlab_full_atten_speculators")
    del cfg["aux_hidden_state_layer_ids"]
    target = config(FIXTURES / "hub" / "nvidia" / "Qwen3.6-35B-A3B-NVFP4")
    found = hits(check_files(files("draft", cfg), files("target", target)), "DF001")
    assert set(found) == {"vllm"}
    assert "KeyError 'aux_hidden_state_layer_ids'" in found["vllm"]


def test_speculative_length_needs_a_block_size() -> None:
    """Without block_size there is nothing to compare the engine setting with: DF019 is silent
    (DF012 warns about the missing key); with one, the setting is in the report."""
    cfg = draft_config(block_size=None)
    target = files("target", config(TARGETS / "Qwen--Qwen3-8B"))
    report = check_files(files("draft", cfg, fc_tensors(cfg)), target, num_speculative_tokens=40)
    assert not hits(report, "DF019") and hits(report, "DF012")
    cfg = draft_config()
    report = check_files(files("draft", cfg, fc_tensors(cfg)), target, num_speculative_tokens=40)
    assert report.num_speculative_tokens == 40 and hits(report, "DF019")


@pytest.mark.parametrize(
    ("tokens", "engine_args", "sglang", "others"),
    [
        # SGLang's own setting wins over what --num-speculative-tokens implies for it.
        (None, ("--speculative-num-draft-tokens=16",), None, set()),
        (20, ("--speculative-num-draft-tokens", "16"), None, {"vllm", "trtllm"}),
        (15, ("--speculative-num-draft-tokens=8",), 8, set()),
        (None, ("--speculative-num-draft-tokens=24",), 24, set()),
        (None, ("--speculative-dflash-block-size=12",), 12, set()),
        # Without SGLang's own flag its line reads N + 1, the value the launch passes.
        (7, (), 8, set()),
        (15, (), None, set()),
        (None, ("--attn-dp-size=2",), None, set()),
    ],
    ids=["own-fits", "own-wins", "own-short", "own-long", "block-alias", "n", "n-fits", "none"],
)
def test_sglang_reads_its_own_draft_length(
    tokens: int | None, engine_args: tuple[str, ...], sglang: int | None, others: set[str]
) -> None:
    """DF019 on SGLang's line compares SGLang's --speculative-num-draft-tokens (or
    --speculative-dflash-block-size) with the block of 16 where it is given: SGLang warns and
    drafts that many positions (dflash_worker_v2.py:511-522)."""
    cfg = draft_config()
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)),
        files("target", config(TARGETS / "Qwen--Qwen3-8B")),
        "sglang,vllm,trtllm",
        num_speculative_tokens=tokens,
        engine_args=engine_args,
    )
    found = hits(report, "DF019")
    assert set(found) == others | ({"sglang"} if sglang is not None else set())
    if sglang is not None:
        assert (
            f"--speculative-num-draft-tokens {sglang} warns 'DFLASH block size mismatch: "
            in found["sglang"]
        )
        assert f"block_size=16.' and drafts {sglang} positions" in found["sglang"]


@pytest.mark.parametrize(
    ("engine_args", "refused"),
    [
        (("--speculative-num-draft-tokens=8", "--speculative-dflash-block-size=16"), True),
        (("--speculative-dflash-block-size", "12", "--speculative-num-draft-tokens", "16"), True),
        # Equal, they are one setting: the block of 16 fits.
        (("--speculative-num-draft-tokens=16", "--speculative-dflash-block-size=16"), False),
    ],
    ids=["differ", "differ-2", "equal"],
)
def test_sglang_refuses_two_dflash_draft_lengths_that_differ(
    engine_args: tuple[str, ...], refused: bool
) -> None:
    """DF019 on SGLang's line for a DFlash draft: the draft tokens and the DFlash block size
    given with different values are refused while the server arguments resolve
    (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:374-384); vLLM reads neither."""
    cfg = draft_config()
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)),
        files("target", config(TARGETS / "Qwen--Qwen3-8B")),
        "sglang,vllm",
        engine_args=engine_args,
    )
    found = [f for f in report.findings if f.rule == "DF019"]
    if not refused:
        assert not found, found
        return
    (finding,) = found
    assert finding.runtime == "sglang" and finding.severity is Severity.ERROR
    assert "sglang refuses to start" in finding.message
    assert "For DFLASH they must match." in finding.message
    block = cfg["block_size"]
    assert (
        finding.hint == f"Give only one of the two flags, set to {block} (the draft's block size)."
    )
    assert report.runtime_stages["sglang"] is Stage.LOAD
    assert report.runtime_stages.get("vllm-v1") is None
    assert report.verdict is Verdict.INCOMPATIBLE


DSPARK_EXPORT = FIXTURES / "drafts" / "sgl-project--SpecForge-qwen3.6-27b-dspark-export"
"""A DSpark draft whose block_size, gamma, is 16: SGLang's window is 17."""


@pytest.mark.parametrize(
    ("tokens", "engine_args", "message", "stage"),
    [
        # SGLang's own window, or N + 1 from --num-speculative-tokens, other than gamma + 1.
        (None, ("--speculative-num-draft-tokens=16",), "num_draft_tokens=16.'", Stage.LOAD),
        (None, ("--speculative-num-draft-tokens", "8"), "num_draft_tokens=8.'", Stage.LOAD),
        (7, (), "speculative_num_draft_tokens=8.'", Stage.LOAD),
        # A gamma of its own: the window must be that gamma + 1.
        (None, ("--speculative-dspark-block-size=7", "--speculative-num-draft-tokens=17"),
         "(= 8 for gamma=7), but got speculative_num_draft_tokens=17.'", Stage.LOAD),
        # The gamma alone starts, warning when the worker loads a draft trained with another.
        (None, ("--speculative-dspark-block-size", "7"), "'DSpark gamma mismatch: using "
         "gamma=7 (from speculative_num_draft_tokens=8) but draft config block_size=16.'", None),
    ],
    ids=["own-window", "own-window-2", "n", "own-gamma-window", "own-gamma"],
)  # fmt: skip
def test_sglang_dspark_window_is_gamma_plus_one(
    tokens: int | None, engine_args: tuple[str, ...], message: str, stage: Stage | None
) -> None:
    """DF019 on SGLang's line for a DSpark draft: a window other than gamma + 1 is refused at
    start-up (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:824-834)."""
    cfg = config(DSPARK_EXPORT)
    report = check_files(
        files("draft", cfg, fc_tensors(cfg, target_hidden=5120)),
        files("target", config(TARGETS / "Qwen--Qwen3.6-27B")),
        "sglang,vllm",
        num_speculative_tokens=tokens,
        engine_args=engine_args,
    )
    (finding,) = [f for f in report.findings if f.rule == "DF019"]
    assert finding.runtime == "sglang" and message in finding.message, finding.message
    if stage is None:
        assert finding.severity is Severity.WARNING
    else:
        assert finding.severity is Severity.ERROR and "refuses to start" in finding.message
        assert report.verdict.value == "incompatible"
        assert report.runtime_stages["sglang"] is stage


@pytest.mark.parametrize(
    ("tokens", "engine_args"),
    [
        (None, ()),
        (16, ()),
        (None, ("--speculative-num-draft-tokens=17",)),
        (None, ("--speculative-dspark-block-size=16",)),
        # SGLang reads --speculative-dflash-block-size for DFLASH only: not the DSpark window.
        (None, ("--speculative-dflash-block-size=8",)),
        # ... nor refuses it beside a window that differs (speculative_hook.py:374-384 is
        # DFLASH's).
        (None, ("--speculative-dflash-block-size=8", "--speculative-num-draft-tokens=17")),
    ],
    ids=["none", "n-fits", "window-fits", "gamma-fits", "dflash-alias", "dflash-alias-differs"],
)
def test_sglang_dspark_window_that_fits(tokens: int | None, engine_args: tuple[str, ...]) -> None:
    cfg = config(DSPARK_EXPORT)
    report = check_files(
        files("draft", cfg, fc_tensors(cfg, target_hidden=5120)),
        files("target", config(TARGETS / "Qwen--Qwen3.6-27B")),
        "sglang,vllm",
        num_speculative_tokens=tokens,
        engine_args=engine_args,
    )
    assert not hits(report, "DF019"), report.findings


DEEPSEEK_V4 = {
    # The keys the tool reads of deepseek-ai/DeepSeek-V4-Flash's config.json, as published.
    "architectures": ["DeepseekV4ForCausalLM"],
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_nextn_predict_layers": 1,
    "vocab_size": 129280,
    "max_position_embeddings": 1048576,
    "bos_token_id": 0,
    "eos_token_id": 1,
}


def test_sglang_refuses_dflash_on_a_deepseek_v4_target_at_start_up() -> None:
    """SGLang 0.5.23 admits EAGLE and DSPARK only on DeepseekV4ForCausalLM, asserted while the
    server arguments resolve (deepseek_v4_hook.py:148-158): a DFlash draft is refused at load
    on SGLang's line alone (DF058), whatever else the pair gets wrong."""
    cfg = draft_config()
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)), files("target", DEEPSEEK_V4), "sglang,vllm"
    )
    found = hits(report, "DF058")
    assert set(found) == {"sglang"}
    assert "refuses --speculative-algorithm DFLASH" in found["sglang"]
    assert "'Only EAGLE and DSPARK speculative algorithms are supported for" in found["sglang"]
    (f,) = [f for f in report.findings if f.rule == "DF058"]
    assert f.severity is Severity.ERROR and f.stage is not None and f.stage.name == "LOAD"


@pytest.mark.parametrize("topk", [None, 1, 4])
def test_sglang_refuses_a_nextn_tree_on_a_deepseek_v4_target(topk: int | None) -> None:
    """A NextN checkpoint runs as EAGLE, which SGLang's DeepSeek V4 hook admits with topk 1
    only (deepseek_v4_hook.py:156-158): a topk above 1 is DF058 at load."""
    draft = DEEPSEEK_V4 | {"architectures": ["DeepseekV4ForCausalLMNextN"]}
    args = () if topk is None else (f"--speculative-eagle-topk={topk}",)
    report = check_files(
        files("draft", draft), files("target", DEEPSEEK_V4), "sglang", engine_args=args
    )
    found = hits(report, "DF058")
    if topk is None or topk == 1:
        assert found == {}
        return
    assert set(found) == {"sglang"}
    assert f"refuses --speculative-eagle-topk {topk} when it starts" in found["sglang"]
    (f,) = [f for f in report.findings if f.rule == "DF058"]
    assert f.stage is not None and f.stage.name == "LOAD"
