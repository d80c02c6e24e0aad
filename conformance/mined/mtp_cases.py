"""vLLM's MTP tests as cases: the draft config vLLM derives from a target's own config
(``SpeculativeConfig.hf_config_override``: model type, architecture, ``n_predict`` per family).

An MTP case has a target and no draft (``draft`` None): the tool answers it with ``dflash-check
pair TARGET``, the oracle with ``speculative_config={"method": "mtp"}`` and no draft model.
``expect_mtp`` is what the test asserts of the draft config (its architecture and ``n_predict``,
where the test asserts them).

The target is written as the test builds it. Where the test's architecture is a placeholder
(``LlamaForCausalLM`` or ``SomeArch`` beside another family's ``model_type``: vLLM's
``hf_config_override`` branches on the model type) the family's real architecture is written
instead, because the oracle runs the whole start-up path, which resolves the target's model
class (``completed`` says so). A quantization config the test passes through is left out: the
tool does not judge it, and the CPU platform refuses FP8.

The tests of this group that assert nothing a pre-load check can be held to are ``REVIEWED``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.mined.handwritten import test_line

BAILING = "tests/config/test_bailing_mtp_config.py"
STEP5 = "tests/config/test_step5_mtp_config.py"
ARCH = "tests/config/test_model_arch_config.py"
OVERRIDES = "tests/config/test_speculative_draft_hf_overrides.py"
PARSE = "tests/models/multimodal/generation/test_nemotron_parse_35_mtp.py"
QWEN4 = "tests/models/qwen4_exp/test_config.py"
ALICE = "tests/models/test_alice_ai_config.py"
QWEN35 = "tests/models/test_qwen3_5_mtp_config.py"
CONFIG = "tests/test_config.py"

ARCH_PLACEHOLDER = "the test's placeholder architecture replaced by the family's"
SIZED = "sizes the test leaves to the config class written out (CLASS_SIZES)"
SIZE_KEYS = ("hidden_size", "num_hidden_layers", "vocab_size")
CLASS_SIZES: dict[str, tuple[int, int, int]] = {
    # model_type: hidden_size, num_hidden_layers, vocab_size as the release's config class fills
    # them in (vLLM 0.34.0's environment: transformers 5.22.2, vLLM's own Step5Config) where a
    # test leaves them out. A checkpoint states them; the tool reads them from config.json, vLLM
    # from the class. None of them enters the MTP derivation.
    "deepseek_v3": (7168, 61, 129280),
    "deepseek_v32": (7168, 61, 129280),
    "deepseek_v4": (4096, 43, 129280),
    "glm_moe_dsa": (6144, 78, 154880),
    "glm4_moe": (4096, 46, 151552),
    "glm5_next": (4096, 45, 154880),
    "inkling_model": (6144, 66, 201024),  # InklingConfig's text model
    "mimo": (4096, 36, 151680),  # no class here (the checkpoint's own code): MiMo-7B's sizes
    "qwen3_5": (4096, 32, 248320),
    "qwen3_5_text": (4096, 32, 248320),
    "qwen3_5_moe": (2048, 40, 248320),
    "qwen3_5_moe_text": (2048, 40, 248320),
    "step5": (5120, 48, 65536),
}


def _row(
    test: str,
    case_id: str,
    target: dict[str, Any],
    k: int,
    architecture: str | None,
    n_predict: int | None,
    *,
    refused: str | None = None,
    completed: str | None = None,
) -> dict[str, Any]:
    """One case before its source line is read (``test``: ``path::name[param]``)."""
    target, sized = _sized(target)
    completed = "; ".join(c for c in (completed, SIZED if sized else None) if c) or None
    row: dict[str, Any] = {
        "id": f"mtp-{case_id}",
        "test": test,
        "method": "mtp",
        "num_speculative_tokens": k,
        "target": target,
        "draft": None,
        "expect": "refused" if refused else "accepted",
        "expect_stage": "config" if refused else None,
        "expect_match": refused,
        "expect_mtp": None
        if refused
        else {"architectures": [architecture], "n_predict": n_predict},
    }
    if completed:
        row["completed"] = completed
    return row


def _sized(target: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The target with the sizes its config class fills in written out (in ``text_config``
    where it has one), and whether any was missing."""
    text = target.get("text_config", target)
    sizes = CLASS_SIZES.get(text.get("model_type") or target.get("model_type", ""))
    missing = [key for key in SIZE_KEYS if key not in text]
    if sizes is None or not missing:
        return target, False
    filled = {**text, **{key: sizes[SIZE_KEYS.index(key)] for key in missing}}
    if "text_config" in target:
        return {**target, "text_config": filled}, True
    return filled, True


def _bailing() -> list[dict[str, Any]]:
    target = {
        "architectures": ["BailingMoeV2_5ForCausalLM"],
        "model_type": "bailing_hybrid",
        "hidden_size": 4096,
        "kv_lora_rank": 512,
        "num_attention_heads": 32,
        "num_experts": 256,
        "num_hidden_layers": 32,
        "num_key_value_heads": 32,
        "num_nextn_predict_layers": 1,
        "qk_rope_head_dim": 64,
        "vocab_size": 157184,
    }
    name = f"{BAILING}::test_bailing_hybrid_mtp_hf_config_override"
    return [_row(name, "bailing-hybrid", target, 1, "BailingMoeV25MTPModel", 1)]


def _step5() -> list[dict[str, Any]]:
    text = {
        "architectures": ["Step5ForCausalLM"],
        "model_type": "step5",
        "num_hidden_layers": 92,
        "num_nextn_predict_layers": 3,
    }
    wrapper = ("Step5ForConditionalGeneration", "step5_vl")
    name = f"{STEP5}::test_step5_mtp_hf_config_override"
    return _text_and_wrapped(name, ("step5", "step5-vl"), text, wrapper, 3, "Step5MTP")


def _text_and_wrapped(
    test: str,
    ids: tuple[str, str],
    text: dict[str, Any],
    wrapper: tuple[str, str],
    n: int,
    arch: str,
) -> list[dict[str, Any]]:
    """A test's two rows (case ids ``ids``): [0] the text config alone, [1] it under a
    multimodal wrapper's ``text_config`` (``wrapper``: its architecture and model type)."""
    wrapped = {"architectures": [wrapper[0]], "model_type": wrapper[1], "text_config": dict(text)}
    return [
        _row(f"{test}[0]", ids[0], text, n, arch, n),
        _row(f"{test}[1]", ids[1], wrapped, n, arch, n),
    ]


def _overrides(release: str) -> list[dict[str, Any]]:
    def make(**kwargs: Any) -> dict[str, Any]:  # the test's _make_hf_config
        return {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "num_hidden_layers": 64,
            **kwargs,
        }

    v4 = make(
        architectures=["DeepseekV4ForCausalLM"],
        model_type="deepseek_v4",
        num_nextn_predict_layers=3,
        dspark_block_size=5,
    )
    stages = f"{OVERRIDES}::test_mtp_stages_are_independent_of_dspark_width"
    rows = [
        _row(stages, "deepseek-v4-k6", v4, 6, "DeepSeekV4MTPModel", 3, completed=ARCH_PLACEHOLDER),
        _row(
            stages,
            "deepseek-v4-k5",
            v4,
            5,
            None,
            None,
            refused="must be divisible by n_predict=3",
            completed=ARCH_PLACEHOLDER,
        ),
        _row(
            f"{OVERRIDES}::test_arch_mapping_applies_before_callable_override",
            "mimo",
            make(architectures=["MiMoForCausalLM"], model_type="mimo", num_nextn_predict_layers=1),
            1,
            "MiMoMTPModel",
            1,
        ),
        _row(
            f"{OVERRIDES}::test_inkling_override_exposes_all_mtp_depths",
            "inkling",
            dict(  # the test's make() without num_hidden_layers: vLLM's InklingMMConfig
                # reads it from text_config (a read-only property; a top-level value stops the
                # loader), where the test's text config states it
                architectures=["InklingForConditionalGeneration"],
                model_type="inkling_mm_model",
                text_config=make(
                    architectures=["InklingForCausalLM"],
                    model_type="inkling_model",
                    local_layer_ids=[1, 3],
                ),
                mtp_config={"num_nextn_predict_layers": 8, "local_layer_ids": [0, 2, 4]},
            ),
            8,
            "InklingMTPModel",
            8,
        ),
        _row(
            f"{OVERRIDES}::test_glm5_next_mtp_override_promotes_index_share",
            "glm5-next",
            {
                "architectures": ["Glm5NextForConditionalGeneration"],
                "model_type": "glm5_next",
                "text_config": {
                    "num_nextn_predict_layers": 1,
                    "index_share_for_mtp_iteration": True,
                },
            },
            1,
            "Glm5NextMTPModel",
            1,
        ),
    ]
    if release != "0.32.0":  # 0.32.0 asserts only that the composed override is the function
        rows.append(
            _row(
                f"{OVERRIDES}::test_none_overrides_fall_back_to_arch_mapping",
                "deepseek-v3-no-key",
                make(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3"),
                1,
                "DeepSeekMTPModel",
                None,
                completed=ARCH_PLACEHOLDER,
            )
        )
        # Row [1] of its table (model_impl "auto"); rows [0] and [2] take model_impl=transformers.
        rows.append(
            _row(
                f"{OVERRIDES}::test_mtp_draft_architecture_follows_target_model_impl[1]",
                "glm4-moe",
                {
                    "architectures": ["Glm4MoeForCausalLM"],
                    "model_type": "glm4_moe",
                    "num_nextn_predict_layers": 1,
                },
                1,
                "Glm4MoeMTPModel",
                1,
            )
        )
    return rows


def _qwen4_exp() -> list[dict[str, Any]]:
    text = {
        "architectures": ["Qwen4ExpForCausalLM"],
        "model_type": "qwen4_exp_text",
        "vocab_size": 64,
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 8,
        "layer_types": ["linear_attention", "full_attention"],
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 2,
        "linear_key_head_dim": 8,
        "linear_value_head_dim": 8,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "eos_token_id": 1,
        "hc_count": 2,
        "hc_lowrank": 4,
        "ple_layer_ids": [1],
        "mtp_num_hidden_layers": 1,
        "mtp": {"hybrid": True},
        "index_share_for_mtp_iteration": True,
    }
    wrapper = ("Qwen4ExpForConditionalGeneration", "qwen4_exp")
    name = f"{QWEN4}::test_qwen4_exp_mtp_override_sets_draft_config"
    return _text_and_wrapped(name, ("qwen4-exp-text", "qwen4-exp"), text, wrapper, 1, "Qwen4ExpMTP")


_QWEN35_ARCH = {
    "qwen3_5": ("Qwen3_5ForConditionalGeneration", "Qwen3_5MTP"),
    "qwen3_5_moe": ("Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeMTP"),
    "qwen3_5_text": ("Qwen3_5ForCausalLM", "Qwen3_5MTP"),
    "qwen3_5_moe_text": ("Qwen3_5MoeForCausalLM", "Qwen3_5MoeMTP"),
}


def _qwen3_5(release: str) -> list[dict[str, Any]]:
    name = f"{QWEN35}::test_mtp_override_recognizes_text_only_types"
    rows = [
        _row(
            f"{name}[{i}]",
            f"qwen3.5-type-{model_type}",
            {"model_type": model_type, "architectures": [arch], "mtp_num_hidden_layers": 1},
            1,
            mtp,
            1,
            completed=ARCH_PLACEHOLDER,
        )
        for i, (model_type, (arch, mtp)) in enumerate(_QWEN35_ARCH.items())
    ]
    if release in ("0.32.0", "0.33.0"):
        return rows
    multi = f"{QWEN35}::test_mtp_num_hidden_layers_selects_multi_module_mtp"
    # The rows of its table without a user's index_share_for_mtp_iteration (row [3] sets it).
    for i, (layers, k) in enumerate(((1, 2), (2, 1), (2, 2))):
        text = {
            "model_type": "qwen3_5_text",
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "vocab_size": 128,
            "mtp_num_hidden_layers": layers,
        }
        rows.append(
            _row(
                f"{multi}[text,{i}]",
                f"qwen3.5-text-{layers}-layers-k{k}",
                {**text, "architectures": ["Qwen3_5ForCausalLM"]},
                k,
                "Qwen3_5MTP",
                layers,
            )
        )
        wrapper = {
            "model_type": "qwen3_5",
            "architectures": ["Qwen3_5ForConditionalGeneration"],
            "text_config": text,
        }
        rows.append(
            _row(
                f"{multi}[multimodal,{i}]",
                f"qwen3.5-{layers}-layers-k{k}",
                wrapper,
                k,
                "Qwen3_5MTP",
                layers,
            )
        )
    return rows


def _dsa() -> list[dict[str, Any]]:
    name = f"{CONFIG}::test_dsa_models_select_matching_mtp"
    table = (
        ("deepseek_v32", "DeepseekV32MTPModel"),
        ("glm_moe_dsa", "DeepseekV32MTPModel"),
        ("deepseek_v3", "DeepSeekMTPModel"),
    )
    return [
        _row(
            f"{name}[{i}]",
            f"dsa-{model_type}",
            {
                "architectures": ["DeepseekV32ForCausalLM"],
                "model_type": model_type,
                "num_nextn_predict_layers": 1,
            },
            1,
            arch,
            None,
        )
        for i, (model_type, arch) in enumerate(table)
    ]


def _parse() -> list[dict[str, Any]]:
    target = {
        "architectures": ["RadioMBartPrefixForCausalLM"],
        "decoder": {"causal_vision_prefix": True, "vocab_size": 8, "d_model": 4},
    }
    name = f"{PARSE}::test_parse_mtp_config_routes_only_causal_prefix_architecture"
    return [_row(name, "nemotron-parse", target, 1, "ParseAuxMTPModel", 1)]


def cases_for(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The MTP cases of one release, each citing its test's line there (a test the release
    does not have gives none)."""
    if engine != "vllm":
        return []
    rows = [*_bailing(), *_step5(), *_overrides(release), *_qwen4_exp(), *_qwen3_5(release),
            *_dsa(), *_parse()]  # fmt: skip
    cases = []
    for row in rows:
        path, name = row["test"].split("::")
        line = test_line(src, path, name.split("[")[0])
        if line is None:
            continue
        cases.append({**row, "source": f"{engine}=={release}:{path}:{line}"})
    return cases


def engine_tests(src: Path) -> tuple[str, ...]:
    """The pytest node ids of the tests the MTP cases come from, those the release at ``src``
    has (``python -m conformance.oracle vllm REL --engine-tests SRC`` runs them)."""
    release = src.name.removeprefix("vllm-")
    tests = {case["test"].split("[")[0] for case in cases_for("vllm", release, src)}
    return tuple(sorted(tests))


_USER_OVERRIDE = (
    "a user's serving option applied to the MTP draft config (hf_overrides given to the "
    "engine, a callable or a dict, or index_share_for_mtp_iteration set by the user); the "
    "tool takes no such option. The architecture mapping the test also asserts is the case of "
    "test_none_overrides_fall_back_to_arch_mapping and "
    "test_arch_mapping_applies_before_callable_override"
)
_HUB = (
    "builds its target config from a Hugging Face Hub download the test itself makes "
    "(AutoConfig.from_pretrained of Qwen/Qwen3.8-27B, Qwen/Qwen3.6-35B-A3B), which the "
    "release's tests run offline cannot reproduce; the text_config nesting it relies on is "
    "the case of test_mtp_num_hidden_layers_selects_multi_module_mtp (multimodal rows, "
    "0.34.0) and the tool's reading of text_config.mtp_num_hidden_layers"
)
REVIEWED: dict[str, str] = {
    f"{OVERRIDES}::test_dict_overrides_are_not_forwarded_to_draft": _USER_OVERRIDE,
    f"{OVERRIDES}::test_callable_overrides_reach_the_draft_config": _USER_OVERRIDE,
    f"{OVERRIDES}::test_mtp_index_share_override": _USER_OVERRIDE,
    f"{OVERRIDES}::test_composed_override_is_picklable": (
        "that the composed draft override is a picklable functools.partial (it is sent to "
        "spawned engine processes): a property of vLLM's code, not of a target's config"
    ),
    f"{ARCH}::test_draft_model_arch_config": (
        "the architecture summary (head size, KV heads, experts, dtype) vLLM derives for "
        "separate draft checkpoints the test downloads from the Hub (vllm-project/*), against "
        "a ground-truth file; no MTP derivation from a target and no refusal"
    ),
    f"{ARCH}::test_deepseek_v4_convertor_splits_vision_architecture": (
        "the arch-config convertor's routing of a DeepSeek-V4 config with a vision tower to "
        "the VL class, and that a config already naming a draft class (DSpark, MTP) keeps it; "
        "it builds no draft from a target (hf_config_override is not called)"
    ),
    f"{ALICE}::test_model_config_warns_when_mtp_is_ignored": (
        "the warning logged when an AliceAI target is served (its MTP layers ignored), from "
        "the target's model-config check on a stand-in namespace; no speculative config is "
        "built"
    ),
    f"{QWEN35}::test_mtp_override_extracts_n_predict_from_multimodal_wrapper": _HUB,
    f"{QWEN35}::test_mtp_override_top_level_precedence_over_nested_text_config": _HUB,
    f"{QWEN35}::test_mtp_override_downloads_real_hf_hub_configs": _HUB,
}
"""The MTP tests read and found not applicable, by test id (without parameters)."""
_IDENTITY_032 = (
    "at 0.32.0 it asserts only that the composed override is hf_config_override itself (no "
    "callable given): vLLM's code, not a target's config"
)


def reviewed_for(release: str) -> dict[str, str]:
    """The not-applicable MTP tests of one release."""
    if release == "0.32.0":
        return {
            **REVIEWED,
            f"{OVERRIDES}::test_none_overrides_fall_back_to_arch_mapping": _IDENTITY_032,
        }
    return dict(REVIEWED)
