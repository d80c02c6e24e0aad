"""Every rule has a passing and a failing case, on fixture configs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.check.rules import RULES
from dflash_check.check.tokenizers import TokenizerComparison, compare_vocabs
from dflash_check.sources.safetensors_header import dflash2_draft_tensors
from dflash_check.views import TensorInfo
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.support.releases import BEFORE_METHOD_CHECK, CHECKS_METHOD
from tests.support.rule_cases import RuleCases

Config = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """A draft/target mutation and the runtime to check it for."""

    draft: Callable[[Config], Config] = lambda c: c
    target: Callable[[Config], Config] = lambda c: c
    fc_in: int | None = None
    tensors: bool = True
    runtime: str = "portable"
    base_model: tuple[str, ...] = ()
    tokenizers: TokenizerComparison | None = None
    spec_tokens: int | None = None
    """``--num-speculative-tokens``."""
    method: str | None = None
    """``--speculative-method``."""
    header: Callable[[Config, dict[str, TensorInfo]], dict[str, TensorInfo]] = lambda c, t: t
    """A mutation of the draft's header tensors (after the DFlash 2 ones are added)."""


DOMINO = {
    "projector_type": "domino",
    "gru_hidden_dim": 64,
    "pure_draft_prefix_len": 1,
    "shift_label": True,
}
"""A Domino projector's keys but emb_dim
(sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:734-791)."""


def with_dfc(**kv: Any) -> Callable[[Config], Config]:
    """Return a mutation setting keys inside dflash_config (None deletes)."""

    def mutate(cfg: Config) -> Config:
        for k, v in kv.items():
            if v is None:
                cfg["dflash_config"].pop(k, None)
            else:
                cfg["dflash_config"][k] = v
        return cfg

    return mutate


def with_top(**kv: Any) -> Callable[[Config], Config]:
    """Return a mutation setting top-level keys (None deletes)."""

    def mutate(cfg: Config) -> Config:
        for k, v in kv.items():
            if v is None:
                cfg.pop(k, None)
            else:
                cfg[k] = v
        return cfg

    return mutate


def chain(*fns: Callable[[Config], Config]) -> Callable[[Config], Config]:
    """Compose mutations."""

    def mutate(cfg: Config) -> Config:
        for fn in fns:
            cfg = fn(cfg)
        return cfg

    return mutate


# The DFlash 2 keys of z-lab/Qwen3.8-27B-DFlash2, on the seed draft (hidden 2560: 160 groups).
DFLASH2_KEYS = {
    "conv_kernel_size": 2,
    "conv_group_size": 16,
    "selector_rank": 256,
    "selector_top_k": 16,
}
as_dflash2 = chain(with_top(architectures=["DFlash2DraftModel"]), with_dfc(**DFLASH2_KEYS))


def reshape(name: str, shape: tuple[int, ...]) -> Callable[[Config, dict], dict]:
    """Return a header mutation giving tensor ``name`` another shape."""

    def mutate(cfg: Config, tensors: dict[str, TensorInfo]) -> dict[str, TensorInfo]:
        return {**tensors, name: TensorInfo("BF16", shape)}

    return mutate


def domino_tensors(cfg: Config, tensors: dict[str, TensorInfo]) -> dict[str, TensorInfo]:
    """Add the four Domino projector tensors a config's widths build (SGLang's shapes)."""
    dfc, hidden = cfg["dflash_config"], cfg["hidden_size"]
    gru, emb = dfc["gru_hidden_dim"], dfc.get("emb_dim", 32)
    return tensors | {
        "prefix_gru.weight_ih_l0": TensorInfo("BF16", (3 * gru, hidden)),
        "prefix_gru.weight_hh_l0": TensorInfo("BF16", (3 * gru, gru)),
        "embed_proj.0.weight": TensorInfo("BF16", (emb, hidden + gru)),
        "embed_proj.2.weight": TensorInfo("BF16", (cfg["vocab_size"], emb)),
    }


def to_speculators(cfg: Config) -> Config:
    """Rewrite a z-lab draft config in the speculators format (as the converter does)."""
    dfc = cfg.pop("dflash_config")
    layer = {k: cfg.pop(k) for k in ("hidden_size", "num_hidden_layers", "vocab_size") if k in cfg}
    return {
        "architectures": ["DFlashDraftModel"],
        "speculators_model_type": "dflash",
        "transformer_layer_config": {**layer, "max_position_embeddings": 40960},
        "aux_hidden_state_layer_ids": [t + 1 for t in dfc["target_layer_ids"]],
        "mask_token_id": dfc["mask_token_id"],
        "block_size": cfg.get("block_size", 16),
        "draft_vocab_size": layer.get("vocab_size"),
        "target_hidden_size": None,
        "speculators_config": {"verifier": {"name_or_path": "Mem/Target"}},
    }


def to_dspark(**kv: Any) -> Callable[[Config], Config]:
    """Return a mutation making the seed draft a Qwen3 DSpark draft with its Markov head at the
    top level, where vLLM's model class reads it, plus top-level keys ``kv`` (None deletes)."""
    return chain(
        with_top(architectures=["Qwen3DSparkModel"], markov_rank=256, markov_head_type="vanilla"),
        with_top(**kv),
    )


def to_laguna(**kv: Any) -> Callable[[Config], Config]:
    """Return a mutation making the seed draft a Laguna DFlash draft (draft_vocab_size equal to
    the target's, as the loader requires), plus top-level keys ``kv`` (None deletes)."""
    return chain(
        with_top(architectures=["DFlashLagunaForCausalLM"], draft_vocab_size=151936),
        with_top(**kv),
    )


LAGUNA_T = with_top(architectures=["LagunaForCausalLM"], model_type="laguna")
"""The seed target as a Laguna model: LagunaConfig's layout (layer 0 dense, the rest sparse)."""


# rule id -> (a passing case, a failing case). The passing case is a valid pair that
# exercises the same code path near its boundary; the failing one must raise the rule.
CASES: dict[str, tuple[Case, Case]] = {
    "DF001": (Case(), Case(draft=with_dfc(target_layer_ids=None))),
    "DF002": (
        Case(draft=with_dfc(target_layer_ids=[0, 9, 17, 25, 33])),
        Case(draft=with_dfc(target_layer_ids=[-1, 9, 17, 25, 33])),
    ),
    "DF003": (
        Case(draft=with_dfc(target_layer_ids=[1, 2, 3, 4, 5])),
        Case(draft=with_dfc(target_layer_ids=[1, 17, 9, 25, 33])),
    ),
    "DF004": (
        Case(draft=with_dfc(target_layer_ids=[1, 9, 17, 25, 34])),  # 34 = N-2 on 36 layers
        Case(draft=with_dfc(target_layer_ids=[1, 9, 17, 25, 35])),  # 35 = N-1: not portable
    ),
    "DF005": (Case(fc_in=5 * 2560), Case(fc_in=4 * 2560)),
    "DF006": (
        Case(),
        Case(target=with_top(hidden_size=4096)),
    ),
    "DF007": (Case(), Case(target=with_top(vocab_size=248320))),
    "DF008": (
        Case(draft=with_dfc(mask_token_id=151935)),
        Case(draft=with_dfc(mask_token_id=151936)),
    ),
    "DF009": (
        Case(runtime="mlx"),
        Case(
            draft=chain(with_dfc(mask_token_id=None), with_top(mask_token_id=151669)),
            runtime="llamacpp",
        ),
    ),
    "DF010": (Case(), Case(tensors=False)),
    "DF011": (Case(), Case(draft=with_top(num_target_layers=32))),
    "DF012": (Case(draft=with_top(block_size=2)), Case(draft=with_top(block_size=1))),
    "DF013": (
        Case(draft=with_top(max_position_embeddings=40960)),
        Case(draft=with_top(max_position_embeddings=2048)),
    ),
    "DF014": (
        Case(base_model=("Mem/Target",)),
        Case(base_model=("Qwen/Qwen3.5-4B",)),
    ),
    "DF015": (
        Case(tokenizers=compare_vocabs({0: "a", 1: "b"}, {0: "a", 1: "b", 2: "c"})),
        Case(tokenizers=compare_vocabs({0: "a", 1: "b"}, {0: "a", 1: "B"})),
    ),
    "DF017": (
        Case(runtime="vllm"),
        Case(target=with_top(architectures=["Glm4MoeForCausalLM"]), runtime="vllm"),
    ),
    "DF018": (
        Case(),
        Case(
            draft=chain(
                with_top(architectures=["DFlash2DraftModel"]),
                with_dfc(conv_kernel_size=2, conv_group_size=16),
            )
        ),
    ),
    "DF025": (Case(draft=to_dspark()), Case(draft=to_dspark(markov_rank=0))),
    "DF026": (
        Case(draft=to_dspark(dspark_noise_token_id=151669)),
        Case(draft=to_dspark(dspark_noise_token_id=151670)),
    ),
    "DF027": (
        Case(draft=to_dspark(draft_vocab_size=151936)),
        Case(draft=to_dspark(draft_vocab_size=32000)),
    ),
    "DF028": (Case(draft=to_laguna()), Case(draft=to_laguna(draft_vocab_size=None))),
    # vLLM builds a Laguna draft's sparse layers as MoE named like a Laguna target's: an
    # all-dense mlp_layer_types passes, LagunaConfig's default (layers 1-4 sparse) fails.
    "DF093": (
        Case(draft=to_laguna(model_type="laguna", mlp_layer_types=["dense"] * 5), target=LAGUNA_T),
        Case(draft=to_laguna(model_type="laguna"), target=LAGUNA_T),
    ),
    "DF016": (
        Case(draft=to_speculators, runtime="vllm", tensors=False),
        Case(draft=to_speculators, runtime="reference", tensors=False),
    ),
    "DF051": (
        Case(),
        Case(target=with_top(architectures=["NewModelForCausalLM"], model_type="new_model")),
    ),
    # From the extracted registries (knowledge/data): not registered, and served without
    # the capture interface (vLLM 0.34's text-only Qwen4Exp).
    "DF052": (
        Case(runtime="sglang"),
        Case(target=with_top(architectures=["NewModelForCausalLM"]), runtime="sglang"),
    ),
    "DF053": (
        Case(runtime="vllm"),
        Case(target=with_top(architectures=["Qwen4ExpForCausalLM"]), runtime="vllm"),
    ),
    # vLLM (from 0.34) compares the requested method with the one the draft's class declares.
    "DF054": (
        Case(draft=to_dspark(), runtime=CHECKS_METHOD.spec, method="dspark"),
        Case(draft=to_dspark(), runtime=CHECKS_METHOD.spec, method="dflash"),
    ),
    # SGLang builds a Domino projector from gru_hidden_dim and emb_dim: both must be stated.
    "DF056": (
        Case(draft=with_dfc(**DOMINO, emb_dim=32), runtime="sglang", header=domino_tensors),
        Case(draft=with_dfc(**DOMINO), runtime="sglang", header=domino_tensors),
    ),
    "DF050": (
        Case(
            draft=with_top(
                layer_types=["sliding_attention"] * 5, sliding_window=2048, use_sliding_window=True
            )
        ),
        Case(draft=with_top(layer_types=["sliding_attention"] * 5, sliding_window=None)),
    ),
    # SGLang admits only EAGLE and DSPARK on a DeepSeek V4 target (deepseek_v4_hook.py:148-158).
    "DF058": (
        Case(target=with_top(architectures=["DeepseekV3ForCausalLM"]), runtime="sglang"),
        Case(target=with_top(architectures=["DeepseekV4ForCausalLM"]), runtime="sglang"),
    ),
    # block_size 16: 15 draft tokens fit, 16 do not (vLLM warns, TensorRT-LLM fails).
    "DF019": (Case(spec_tokens=15), Case(spec_tokens=16)),
    "DF020": (
        Case(draft=as_dflash2),
        Case(draft=as_dflash2, header=reshape("layers.0.mlp_conv.base_kernel", (2, 3, 2560))),
    ),
    "DF021": (
        Case(draft=with_dfc(sample_from_anchor=False)),
        Case(draft=with_dfc(sample_from_anchor=True)),
    ),
    "DF022": (
        Case(tokenizers=compare_vocabs({0: "a"}, {0: "a", 151669: "<|MASK|>"}, ("<|MASK|>",))),
        Case(tokenizers=compare_vocabs({0: "a"}, {0: "a", 151670: "<|MASK|>"}, ("<|MASK|>",))),
    ),
    "DF023": (
        Case(draft=as_dflash2),
        Case(
            draft=as_dflash2,
            target=with_top(
                quantization_config={
                    "quant_method": "modelopt",
                    "quantized_layers": {"lm_head": {"quant_algo": "W4A16_NVFP4"}},
                }
            ),
        ),
    ),
}


def run_case(case: Case) -> CheckReport:
    """Check a case's pair."""
    draft = case.draft(copy.deepcopy(draft_config()))
    target = case.target(copy.deepcopy(qwen3_4b_config()))
    tensors = None
    if case.tensors:
        tensors = fc_tensors(draft, case.fc_in)
        if "DFlash2DraftModel" in draft["architectures"]:
            dfc = draft["dflash_config"]
            tensors |= dflash2_draft_tensors(
                hidden=draft["hidden_size"],
                layers=draft["num_hidden_layers"],
                kernel=dfc.get("conv_kernel_size") or 1,
                group=dfc.get("conv_group_size") or 1,
                rank=dfc.get("selector_rank") or 1,
                vocab=draft["vocab_size"],
            )
        tensors = case.header(draft, tensors)
    draft_files = replace(files("draft", draft, tensors), extras={"base_model": case.base_model})
    return check_files(
        draft_files,
        files("target", target),
        case.runtime,
        tokenizers=case.tokenizers,
        num_speculative_tokens=case.spec_tokens,
        speculative_method=case.method,
    )


# The shared pass/fail harness (EAGLE-3's and MTP's cases: test_eagle3.py, test_target_alone.py).
(
    test_every_rule_has_cases,
    test_rule_passes,
    test_rule_fails,
    test_rule_errors_have_stages,
) = RuleCases(
    owned={r.id for r in RULES if "dflash" in r.methods}, cases=CASES, run=run_case
).tests()


def test_seed_pair_is_clean() -> None:
    """The seed draft with its real target has no findings at all."""
    assert run_case(Case()).findings == ()


def test_rule_ids_are_stable_and_ordered() -> None:
    """Ids are DF + three digits, unique, in table order."""
    ids = [r.id for r in RULES]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 5 and i.startswith("DF") and i[2:].isdigit() for i in ids)


def test_fc_width_message_names_both_widths() -> None:
    """DF005 states the header width and the expected width."""
    report = run_case(CASES["DF005"][1])
    (finding,) = [f for f in report.findings if f.rule == "DF005"]
    assert "10240" in finding.message and "12800" in finding.message


def test_missing_ids_name_each_runtimes_guess() -> None:
    """DF001 is an error on every runtime, naming what each would use instead: the z-lab
    formula's guess for 36 target layers and 5 draft layers, vLLM's default aux layers."""
    report = run_case(CASES["DF001"][1])
    by_runtime = {f.runtime: f.message for f in report.findings if f.rule == "DF001"}
    assert set(by_runtime) == {"reference", "vllm", "sglang", "trtllm", "llamacpp", "mlx"}
    assert "[1, 9, 17, 25, 33]" in by_runtime["sglang"]
    assert "aux layers [2, 18, 33]" in by_runtime["vllm"]
    assert "layer outputs [1, 17, 32]" in by_runtime["vllm"]
    assert "target_layers' in GGUF metadata" in by_runtime["llamacpp"]
    assert report.verdict.value == "incompatible"


def test_duplicate_ids_are_named() -> None:
    """DF003 names the repeated id."""
    report = run_case(Case(draft=with_dfc(target_layer_ids=[1, 9, 9, 25, 33])))
    findings = [f for f in report.findings if f.rule == "DF003"]
    assert findings and all("repeats [9]" in f.message for f in findings)


def test_top_level_ids_fail_the_dflash_config_readers() -> None:
    """Ids only at the top level are read by the reference, vLLM, SGLang and llama.cpp's newest
    release (0c1e57098, whose converter falls back to them), not by TensorRT-LLM or MLX."""
    case = Case(
        draft=chain(with_dfc(target_layer_ids=None), with_top(target_layer_ids=[1, 9, 17, 25, 33]))
    )
    report = run_case(case)
    verdicts = report.runtime_verdicts
    for name in ("trtllm", "mlx"):
        assert verdicts.pop(name).value == "incompatible"
    assert {v.value for v in verdicts.values()} == {"compatible"}


def test_warnings_do_not_make_incompatible() -> None:
    """A warning-only report is compatible."""
    report = run_case(CASES["DF013"][1])
    assert report.count(Severity.WARNING) == 1
    assert report.verdict.value == "compatible"


def test_tokenizer_message_names_the_first_difference() -> None:
    """DF015 says how many ids differ and shows the first one."""
    report = run_case(CASES["DF015"][1])
    (finding,) = [f for f in report.findings if f.rule == "DF015"]
    assert "1 of 2 shared token ids differ" in finding.message
    assert 'id 1 is "b" for the draft, "B" for the target' in finding.message


def test_identical_tokenizer_files_pass() -> None:
    """Same hash: no comparison, no finding."""
    report = run_case(Case(tokenizers=TokenizerComparison(same_file=True)))
    assert not [f for f in report.findings if f.rule == "DF015"]


def df054(case: Case) -> list[str]:
    """Return the DF054 messages of a case."""
    return [f.message for f in run_case(case).findings if f.rule == "DF054"]


def test_method_check_is_per_release() -> None:
    """A DSpark draft asked for as dflash: vLLM 0.34 refuses it at load, 0.33 has no check."""
    wrong = Case(draft=to_dspark(), runtime=CHECKS_METHOD.spec, method="dflash")
    report = run_case(wrong)
    (finding,) = [f for f in report.findings if f.rule == "DF054"]
    assert finding.stage is not None and finding.stage.text == "refuses at load"
    assert "'dspark' checkpoint" in finding.message and "method 'dflash'" in finding.message
    assert "speculator_config.py:413" in finding.message
    assert report.verdict is Verdict.INCOMPATIBLE
    assert df054(replace(wrong, runtime=BEFORE_METHOD_CHECK.spec)) == []


def test_method_check_maps_the_tools_methods_to_vllms() -> None:
    """DFlash 2 drafts declare vLLM's dflash; an MTP alias is mtp; no method: nothing."""
    checks = CHECKS_METHOD.spec
    assert df054(Case(draft=as_dflash2, runtime=checks, method="dflash")) == []
    assert df054(Case(draft=as_dflash2, runtime=checks, method="dspark"))
    assert df054(Case(runtime=checks, method="eagle3"))
    assert df054(Case(runtime=checks, method="qwen3_next_mtp"))
    assert df054(Case(runtime=checks)) == []
    assert df054(Case(runtime="sglang", method="dspark")) == []
