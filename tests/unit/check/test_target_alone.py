"""MTP: a NextN draft checkpoint checked against its target (DF040); other MTP drafts named."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dflash_check.check.formats import normalise_draft
from dflash_check.check.report import CheckReport, Verdict
from dflash_check.check.rules import ALL_RULES, RULES_BY_ID
from dflash_check.check.target_alone import MtpReport, check_target_mtp
from dflash_check.cli import app
from dflash_check.errors import ConfigError, NotADraftError
from dflash_check.knowledge.engines import SGLANG, VLLM, EngineMtp
from dflash_check.knowledge.mtp_layers import mtp_engine_rows, mtp_engines
from dflash_check.knowledge.settings import parse_engine_args
from dflash_check.method_facets import NextNFacts
from dflash_check.render.json import SCHEMA_VERSION
from dflash_check.render.target_alone import summary_line
from dflash_check.views import ModelFiles, TensorInfo
from tests.support.helpers import check_files, files, write_model
from tests.support.paths import FIXTURES
from tests.support.rule_cases import RuleCases

# deepseek-ai/DeepSeek-V3 (model-facts.md): 61 layers, hidden 7168, vocabulary 129280, one MTP
# layer; its NextN export keeps the config and names the MTP layer model.layers.61.
DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
    "max_position_embeddings": 163840,
}
NEXTN = DEEPSEEK_V3 | {"architectures": ["DeepseekV3ForCausalLMNextN"]}
# A target that states no MTP key and whose config class fills in none (DeepSeek-V3's would:
# tests/unit/check/test_mtp_counts.py).
NO_MTP = DEEPSEEK_V3 | {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_nextn_predict_layers": None,
}


def header(layer: int) -> dict[str, TensorInfo]:
    return {
        f"model.layers.{layer}.eh_proj.weight": TensorInfo("BF16", (7168, 2 * 7168)),
        f"model.layers.{layer}.enorm.weight": TensorInfo("BF16", (7168,)),
        f"model.layers.{layer}.hnorm.weight": TensorInfo("BF16", (7168,)),
    }


def check(target: dict[str, Any], layer: int = 61) -> CheckReport:
    return check_files(files("draft", NEXTN, header(layer)), files("target", target))


@dataclass(frozen=True)
class Case:
    """A DeepSeek-V3-like target, checked with its NextN draft or alone."""

    target: dict[str, Any] = field(default_factory=lambda: DEEPSEEK_V3)
    nextn_layer: int | None = None
    """A NextN draft checkpoint with its MTP layer under this index; None: the target alone."""
    tensors: frozenset[str] | None = None
    """The target's tensor names (from its index); None: not read."""
    spec_tokens: int | None = None
    """``--num-speculative-tokens``."""
    engine_args: tuple[str, ...] = ()
    """``--engine-arg`` (SGLang's draft steps)."""
    releases: tuple[tuple[str, str], ...] | None = None
    """(engine, release) selected; None: every engine at its newest."""


def run_case(case: Case) -> CheckReport | MtpReport:
    """Check the pair (DF040) or the target alone (DF041-DF045)."""
    if case.nextn_layer is not None:
        return check(case.target, case.nextn_layer)
    names = None if case.tensors is None else set(case.tensors)
    return check_target_mtp(
        files("target", case.target),
        names,
        "index" if names is not None else "",
        num_speculative_tokens=case.spec_tokens,
        engine_settings=parse_engine_args(case.engine_args),
        releases=dict(case.releases) if case.releases is not None else None,
    )


# Nemotron Parse 3.5 as vLLM's test_parse_mtp_config_routes_only_causal_prefix_architecture
# builds it: its MTP draft is keyed on the architecture and has one step.
PARSE: dict[str, Any] = {
    "architectures": ["RadioMBartPrefixForCausalLM"],
    "decoder": {"causal_vision_prefix": True, "vocab_size": 8, "d_model": 4},
}


def k(layers: int) -> dict[str, Any]:
    """DeepSeek-V3 stating ``layers`` MTP layers."""
    return DEEPSEEK_V3 | {"num_nextn_predict_layers": layers}


STEPS_3 = ("--speculative-num-steps", "3")
TOPK_1 = ("--speculative-eagle-topk=1",)

# The oldest vLLM release read, which refuses method mtp on kimi_k2 (DF063).
CHECKS_METHOD_REFUSING_KIMI = VLLM.releases[0].version

CASES: dict[str, tuple[Case, Case]] = {
    "DF040": (
        Case(nextn_layer=61),
        Case(DEEPSEEK_V3 | {"hidden_size": 4096}, nextn_layer=61),
    ),
    "DF041": (Case(), Case(NO_MTP)),
    # Kimi K2 (no MTP draft mapped) at a vLLM release that refuses method mtp on it.
    "DF063": (
        Case(releases=(("vllm", CHECKS_METHOD_REFUSING_KIMI),)),
        Case(
            {
                "architectures": ["DeepseekV3ForCausalLM"],
                "model_type": "kimi_k2",
                "hidden_size": 7168,
                "num_hidden_layers": 61,
                "vocab_size": 163840,
                "num_nextn_predict_layers": 1,
            },
            releases=(("vllm", CHECKS_METHOD_REFUSING_KIMI),),
        ),
    ),
    "DF042": (
        Case(
            tensors=frozenset({"model.layers.60.mlp.gate.weight", "model.layers.61.eh_proj.weight"})
        ),
        Case(tensors=frozenset({"model.layers.60.mlp.gate.weight", "lm_head.weight"})),
    ),
    "DF043": (
        Case(),
        Case(DEEPSEEK_V3 | {"architectures": ["SomeNewForCausalLM"], "model_type": "some_new"}),
    ),
    # k = 2 MTP layers: 4 draft tokens reuse them (DF045), 3 do not divide evenly (DF044).
    "DF044": (Case(k(2), spec_tokens=4), Case(k(2), spec_tokens=3)),
    "DF045": (Case(k(1), spec_tokens=1), Case(k(1), spec_tokens=3)),
    # Nemotron Parse 3.5: one trained step, so two draft tokens are refused (vLLM).
    "DF059": (Case(PARSE, spec_tokens=1), Case(PARSE, spec_tokens=2)),
    # SGLang's steps need their topk (speculative_hook.py:1273-1276).
    "DF060": (Case(engine_args=(*STEPS_3, *TOPK_1)), Case(engine_args=STEPS_3)),
    # At topk 1 SGLang makes the draft tokens steps + 1 (speculative_hook.py:1255-1266).
    "DF061": (
        Case(engine_args=(*STEPS_3, *TOPK_1, "--speculative-num-draft-tokens=4")),
        Case(engine_args=(*STEPS_3, *TOPK_1, "--speculative-num-draft-tokens=8")),
    ),
}

# The shared pass/fail harness (DFlash's and EAGLE-3's cases: test_rules.py, test_eagle3.py).
(
    test_every_rule_has_cases,
    test_rule_passes,
    test_rule_fails,
    test_rule_errors_have_stages,
) = RuleCases(
    # DF060 speaks for an EAGLE-3 head's pair too (test_eagle3.py): its MTP cases are here.
    owned={r.id for r in ALL_RULES if r.methods == ("mtp",)} | {"DF060"},
    cases=CASES,
    run=run_case,
).tests()


def test_nextn_checkpoint_is_read_as_mtp() -> None:
    view = normalise_draft(files("draft", NEXTN, header(61)))
    assert (view.method, view.format, view.nextn) == ("mtp", "nextn", NextNFacts((61,)))
    assert RULES_BY_ID["DF040"].methods == ("mtp",)


def test_nextn_with_its_target_passes() -> None:
    report = check(DEEPSEEK_V3)
    assert [f for f in report.findings if f.rule == "DF040"] == []
    assert report.verdict is Verdict.COMPATIBLE


@pytest.mark.parametrize(
    ("args", "refused"),
    [((), False), (("--speculative-num-draft-tokens=2",), True), ((*STEPS_3, *TOPK_1), False)],
)
def test_a_nextn_checkpoints_step_flags_are_judged_as_the_targets_own(
    args: tuple[str, ...], refused: bool
) -> None:
    """A NextN checkpoint runs as EAGLE, whose step flags SGLang resolves as for the target's
    own MTP layers (DF060 of a pair: speculative_hook.py:1159-1163)."""
    report = check_files(
        files("draft", NEXTN, header(61)), files("target", DEEPSEEK_V3), engine_args=args
    )
    found = [f.runtime for f in report.findings if f.rule == "DF060"]
    assert found == (["sglang"] if refused else [])


@pytest.mark.parametrize("runtime", ["sglang", "portable"])
def test_a_nextn_class_sglang_does_not_register_is_refused_at_load(runtime: str) -> None:
    """SGLang builds a NextN checkpoint from the class its model registry holds for the
    checkpoint's own architecture (each release's facts): Qwen3ForCausalLMNextN is none of
    them, so it is refused at load (DF016), and the portable check, with no runtime that loads
    it, judges every NextN runtime rather than passing on none."""
    qwen3 = NEXTN | {"architectures": ["Qwen3ForCausalLMNextN"]}
    report = check_files(files("draft", qwen3, header(61)), files("target", DEEPSEEK_V3), runtime)
    (hit,) = [f for f in report.findings if f.rule == "DF016"]
    assert hit.runtime == "sglang"
    assert "model registry holds no Qwen3ForCausalLMNextN" in hit.message
    assert f"{SGLANG.newest.spec}:sglang/srt/models/deepseek_nextn.py:" in hit.message
    assert report.verdict is Verdict.INCOMPATIBLE


def test_a_runtime_without_a_nextn_row_is_named_as_such() -> None:
    """A runtime with no row for NextN checkpoints is refused in their terms, not DFlash's."""
    with pytest.raises(ConfigError) as caught:
        check_files(files("draft", NEXTN, header(61)), files("target", DEEPSEEK_V3), "reference")
    assert "has no reading of NextN checkpoints" in str(caught.value)
    assert "runtimes for NextN checkpoints" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("target", "layer", "needle"),
    [
        (DEEPSEEK_V3 | {"hidden_size": 4096}, 61, "hidden_size 7168 != target"),
        (DEEPSEEK_V3 | {"vocab_size": 151936}, 61, "vocab_size 129280 != target"),
        (DEEPSEEK_V3 | {"num_hidden_layers": 60}, 61, "61-layer target"),
        (DEEPSEEK_V3, 60, "weights sit under layer [60]"),
    ],
)
def test_nextn_against_another_target_fails(
    target: dict[str, Any], layer: int, needle: str
) -> None:
    report = check(target, layer)
    hits = [f for f in report.findings if f.rule == "DF040"]
    assert hits and any(needle in f.message for f in hits), hits
    assert report.verdict is Verdict.INCOMPATIBLE


def test_other_mtp_drafts_are_named() -> None:
    with pytest.raises(NotADraftError, match="MTP"):
        normalise_draft(files("draft", {"architectures": ["DeepSeekMTPModel"]}))


# --- a target asked about alone: `dflash-check pair TARGET` -----------------------------------

TARGETS = FIXTURES / "targets"
DEEPSEEK_V3_DIR = TARGETS / "deepseek-ai--DeepSeek-V3"
QWEN35_27B_DIR = TARGETS / "Qwen--Qwen3.5-27B"
KIMI_K25_DIR = TARGETS / "moonshotai--Kimi-K2.5"
runner = CliRunner()


def target_files(folder: Path) -> ModelFiles:
    return files("target", json.loads((folder / "config.json").read_text()))


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def engine(report: MtpReport, name: str) -> EngineMtp:
    return next(r for r in report.engines if r.engine == name)


def test_deepseek_v3_alone_names_each_engines_mtp_draft() -> None:
    report = check_target_mtp(target_files(DEEPSEEK_V3_DIR), None, "not read")
    assert (report.stated.layers, report.stated.key) == (1, "num_nextn_predict_layers")
    assert report.layer_names == "model.layers.61"
    vllm = engine(report, "vllm")
    assert "DeepSeekMTPModel" in vllm.draft and '"method": "mtp"' in vllm.request
    # The DeepSeek branch of hf_config_override, at the release judged (the newest).
    assert vllm.citation.startswith(f"{VLLM.newest.spec}:vllm/config/speculative.py:")
    assert "DeepseekV3ForCausalLMNextN" in engine(report, "sglang").draft
    assert "MTPDecodingConfig" in engine(report, "trtllm").request
    assert not engine(report, "llamacpp").verified  # said so, not guessed
    assert report.findings == () and report.verdict is Verdict.COMPATIBLE


def test_qwen35_wrapper_reads_text_config_key() -> None:
    report = check_target_mtp(target_files(QWEN35_27B_DIR), None, "not read")
    assert (report.stated.layers, report.stated.key) == (1, "text_config.mtp_num_hidden_layers")
    assert report.layer_names == "mtp.*"
    assert "Qwen3_5MTP" in engine(report, "vllm").draft
    assert "Qwen3_5ForCausalLMMTP" in engine(report, "sglang").draft


def test_kimi_k25_has_no_mtp_layers() -> None:
    report = check_target_mtp(target_files(KIMI_K25_DIR), None, "not read")
    assert report.stated.layers == 0 and report.stated.key == "text_config.num_nextn_predict_layers"
    assert [f.rule for f in report.findings] == ["DF041"] and report.engines == ()
    assert report.verdict is Verdict.INCOMPATIBLE


def test_config_without_any_mtp_key_has_none() -> None:
    report = check_target_mtp(files("target", NO_MTP), None, "")
    assert report.stated.key is None and [f.rule for f in report.findings] == ["DF041"]


def test_minimax_m3_takes_num_mtp_modules_first() -> None:
    config = DEEPSEEK_V3 | {
        "architectures": ["MiniMaxM3ForCausalLM"],
        "model_type": "minimax_m3",
        "num_mtp_modules": 7,
    }
    stated = check_target_mtp(files("target", config), None, "").stated
    assert (stated.layers, stated.key) == (7, "num_mtp_modules")
    assert dict(stated.all_keys) == {"num_mtp_modules": 7, "num_nextn_predict_layers": 1}


@pytest.mark.parametrize(
    ("names", "missing"),
    [
        ({"model.layers.60.mlp.gate.weight", "model.layers.61.eh_proj.weight"}, ()),
        ({"model.layers.60.mlp.gate.weight", "lm_head.weight"}, (0,)),
    ],
)
def test_deepseek_mtp_tensors_found_or_missing(names: set[str], missing: tuple[int, ...]) -> None:
    report = check_target_mtp(files("target", DEEPSEEK_V3), names, "index")
    assert report.tensors is not None and report.tensors.missing == missing
    assert ("DF042" in [f.rule for f in report.findings]) == bool(missing)


def test_qwen35_mtp_tensors_under_mtp_prefix() -> None:
    config = json.loads((QWEN35_27B_DIR / "config.json").read_text())
    present = {
        "model.language_model.layers.63.mlp.up_proj.weight",
        "mtp.layers.0.mlp.up_proj.weight",
    }
    ok = check_target_mtp(files("target", config), present, "index")
    assert ok.tensors is not None and ok.tensors.found == (0,) and ok.findings == ()
    dropped = check_target_mtp(files("target", config), {"model.language_model.layers.63.x"}, "i")
    assert [f.rule for f in dropped.findings] == ["DF042"]


def test_unknown_architecture_is_said_not_guessed() -> None:
    config = DEEPSEEK_V3 | {"architectures": ["SomeNewForCausalLM"], "model_type": "some_new"}
    report = check_target_mtp(files("target", config), None, "")
    assert engine(report, "vllm").request == "not available"
    assert [f.rule for f in report.findings] == ["DF043"]
    assert report.verdict is Verdict.COMPATIBLE  # a warning: only --strict fails it
    assert replace(report, strict=True).verdict is Verdict.INCOMPATIBLE
    line = summary_line(report)
    assert "their place not known for this family" in line and " at not known" not in line


def test_every_engine_row_cites_its_source() -> None:
    for row in mtp_engine_rows():
        cited = "@" in row.citation or "==" in row.citation  # a commit or a release
        assert row.citation and (cited or "not read" in row.citation), row
    for engine in mtp_engines():  # its own rows, ending with one that answers for any target
        assert {r.engine for r in engine.mtp} == {engine.name}
        assert engine.mtp[-1].match == ()


def test_cli_target_alone_json(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "ds", json.loads((DEEPSEEK_V3_DIR / "config.json").read_text()))
    index = {"weight_map": {"model.layers.61.eh_proj.weight": "a.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    code, out, _ = invoke("pair", str(folder), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["schema_version"] == SCHEMA_VERSION and data["kind"] == "mtp"
    assert data["mtp"] == {
        "layers": 1,
        "key": "num_nextn_predict_layers",
        "stated": {"num_nextn_predict_layers": 1},
        "class_defaults": [],
        "family": "DeepSeek-V3/R1/V3.2, GLM-5",
        "layer_names": "model.layers.61",
    }
    assert data["tensors"]["found"] == [0]
    assert [e["engine"] for e in data["engines"]] == ["vllm", "sglang", "trtllm", "llamacpp"]


@pytest.mark.parametrize(
    ("runtime", "shown"),
    [
        ("portable,-vllm", ["sglang", "trtllm", "llamacpp"]),  # an engine left out
        ("vllm-v1", ["vllm"]),  # a runner names its engine
        ("portable,sglang==0.5.23", ["vllm", "sglang", "trtllm", "llamacpp"]),
    ],
)
def test_cli_target_alone_shows_the_engines_the_selection_judges(
    tmp_path: Path, runtime: str, shown: list[str]
) -> None:
    folder = write_model(tmp_path / "ds", json.loads((DEEPSEEK_V3_DIR / "config.json").read_text()))
    _, out, _ = invoke("pair", str(folder), "-r", runtime, "--format", "json")
    assert [e["engine"] for e in json.loads(out)["engines"]] == shown


def test_cli_target_alone_weights_missing(tmp_path: Path) -> None:
    config = json.loads((DEEPSEEK_V3_DIR / "config.json").read_text())
    folder = write_model(
        tmp_path / "fp4", config, {"model.layers.60.mlp.gate.weight": TensorInfo("BF16", (8, 8))}
    )
    code, out, _ = invoke("pair", str(folder), "--runtime", "vllm")
    assert code == 1
    assert "DF042" in out and "model.layers.61" in out and "SGLang" not in out


def test_cli_target_without_mtp_one_line(tmp_path: Path) -> None:
    code, out, _ = invoke("pair", str(KIMI_K25_DIR))
    assert code == 1
    assert out.splitlines()[0].endswith("has no MTP layers: nothing to draft with (exit 1)")


def test_cli_malformed_mtp_value_exit_3(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "bad", DEEPSEEK_V3 | {"num_nextn_predict_layers": "one"})
    code, out, err = invoke("pair", str(folder))
    assert code == 3 and out == ""
    assert "num_nextn_predict_layers' must be an integer" in err and "Traceback" not in err


def test_cli_draft_alone_is_a_usage_error(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "nextn", NEXTN, header(61))
    code, _, err = invoke("pair", str(folder))
    assert code == 2 and "is a draft; name its target" in err


def test_cli_target_alone_refuses_pair_only_options() -> None:
    code, _, err = invoke("pair", str(DEEPSEEK_V3_DIR), "--smoke-run")
    assert code == 2 and "--smoke-run needs a DRAFT and a TARGET" in err


@pytest.mark.parametrize(
    ("config", "held", "dropped"),
    [
        # MiMo keeps its MTP layers as model.mtp_layers.{i} (vLLM mimo_mtp.py).
        (
            {"architectures": ["MiMoForCausalLM"], "model_type": "mimo"},
            "model.mtp_layers.0.input_proj.weight",
            "model.layers.61.mlp.up_proj.weight",
        ),
        # Nemotron-H keeps them under mtp.* (vLLM nemotron_h_mtp.py).
        (
            {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h"},
            "mtp.layers.0.mixer.weight",
            "backbone.layers.60.mixer.weight",
        ),
    ],
)
def test_mtp_weights_by_family(config: dict[str, Any], held: str, dropped: str) -> None:
    target = DEEPSEEK_V3 | config
    ok = check_target_mtp(files("target", target), {held, dropped}, "index")
    assert ok.tensors is not None and ok.tensors.missing == () and ok.findings == ()
    bad = check_target_mtp(files("target", target), {dropped}, "index")
    assert [f.rule for f in bad.findings] == ["DF042"]


def test_missing_weights_name_vllms_refusal() -> None:
    """Each release says what its own DeepSeek MTP loader does without the layer's weights:
    refuses, cited there, or (0.34.0 dropped the check) that none was found."""
    said = []
    for release in VLLM.releases:
        report = check_target_mtp(
            files("target", DEEPSEEK_V3), {"lm_head.weight"}, "index",
            releases={"vllm": release.version},
        )  # fmt: skip
        (finding,) = report.findings
        refuses = (
            "vllm: refuses to load: 'MTP speculative decoding layer 61 weights missing from "
            f"checkpoint' ({release.spec}:vllm/model_executor/models/deepseek_mtp.py:"
        )
        assert refuses in finding.message or (
            "vllm: no completeness check found in its loader" in finding.message
        ), finding.message
        said.append(refuses in finding.message)
    assert any(said)


@pytest.mark.parametrize(
    ("k", "tokens", "rules"),
    [(1, 1, []), (1, 3, ["DF045"]), (2, 4, ["DF045"]), (2, 3, ["DF044"]), (3, 2, [])],
)
def test_num_speculative_tokens_against_k(k: int, tokens: int, rules: list[str]) -> None:
    config = DEEPSEEK_V3 | {"num_nextn_predict_layers": k}
    report = check_target_mtp(files("target", config), None, "", num_speculative_tokens=tokens)
    assert [f.rule for f in report.findings] == rules
    assert report.verdict is (Verdict.INCOMPATIBLE if "DF044" in rules else Verdict.COMPATIBLE)


def sglang_steps(target: dict[str, Any], *args: str) -> list[tuple[str, str | None, str]]:
    """(rule, engine, severity) of each finding for ``target`` served with SGLang's ``args``."""
    report = check_target_mtp(
        files("target", target), None, "", engine_settings=parse_engine_args(args)
    )
    return [(f.rule, f.runtime, f.severity.value) for f in report.findings]


@pytest.mark.parametrize(
    ("args", "found"),
    [
        # No step flags: SGLang picks them per architecture (speculative_hook.py:1159-1174).
        ((), []),
        ((*STEPS_3, *TOPK_1), [("DF045", "sglang", "info")]),
        (("--speculative-num-steps=1", *TOPK_1), []),
        # A tree (topk 4) keeps the draft tokens given, and still reruns the one layer.
        ((*STEPS_3, "--speculative-eagle-topk=4", "--speculative-num-draft-tokens=8"),
         [("DF045", "sglang", "info")]),
        ((*STEPS_3, *TOPK_1, "--speculative-num-draft-tokens=4"), [("DF045", "sglang", "info")]),
        ((*STEPS_3, *TOPK_1, "--speculative-num-draft-tokens=2"),
         [("DF061", "sglang", "warning"), ("DF045", "sglang", "info")]),
        ((*STEPS_3,), [("DF060", "sglang", "error")]),
        ((*TOPK_1,), [("DF060", "sglang", "error")]),
        (("--speculative-num-draft-tokens=4",), [("DF060", "sglang", "error")]),
        # Flags SGLang reads for other drafts say nothing about its MTP draft.
        (("--speculative-dflash-block-size=16", "--attn-dp-size=2"), []),
    ],
    ids=["none", "steps-over-k", "steps-k", "tree", "tokens-fit", "tokens-adjusted",
         "steps-no-topk", "topk-no-steps", "tokens-no-steps", "other-flags"],
)  # fmt: skip
def test_sglang_reads_its_own_step_flags(
    args: tuple[str, ...], found: list[tuple[str, str | None, str]]
) -> None:
    """SGLang's MTP draft steps from its own flags (DeepSeek-V3, k = 1): an error only where it
    fails at start-up (DF060), a warning where it replaces the draft tokens (DF061), a note
    where it reruns its one MTP layer (DF045); vLLM reads none of these flags."""
    assert sglang_steps(DEEPSEEK_V3, *args) == found


def test_sglang_steps_over_k_rerun_nothing_where_not_read() -> None:
    """Step3p5's multi-layer EAGLE builds one runner per step (no rerun), and what a step past
    k loads was not read: no note, but its flags are still refused without a topk."""
    step = {
        "architectures": ["Step3p5ForCausalLM"],
        "model_type": "step3p5",
        "hidden_size": 4096,
        "num_hidden_layers": 45,
        "vocab_size": 128896,
        "num_nextn_predict_layers": 1,
    }
    assert sglang_steps(step, *STEPS_3, *TOPK_1) == []
    assert sglang_steps(step, *STEPS_3) == [("DF060", "sglang", "error")]
    # Above topk 1 its multi-layer worker asserts draft tokens == steps + 1
    # (multi_layer_eagle_worker_v2.py:150-153), which the hook sets only at topk 1.
    tree = (*STEPS_3, "--speculative-eagle-topk=4")
    assert sglang_steps(step, *tree, "--speculative-num-draft-tokens=4") == []
    for tokens in (("--speculative-num-draft-tokens=8",), ()):
        assert sglang_steps(step, *tree, *tokens) == [("DF060", "sglang", "error")]
        report = check_target_mtp(
            files("target", step), None, "", engine_settings=parse_engine_args((*tree, *tokens))
        )
        assert "multi_layer_eagle_worker_v2.py:150-153" in report.findings[0].message
    # A single-layer target keeps the tokens given at topk 4 (DeepSeek-V3: the rerun note).
    assert sglang_steps(DEEPSEEK_V3, *tree, "--speculative-num-draft-tokens=8") == [
        ("DF045", "sglang", "info")
    ]


def test_num_speculative_tokens_keeps_its_vllm_meaning_beside_sglang_steps() -> None:
    """--num-speculative-tokens is vLLM's draft length (DF044/DF045 on vLLM's line); SGLang's
    steps come from its own flags only."""
    report = check_target_mtp(
        files("target", k(2)),
        None,
        "",
        num_speculative_tokens=3,
        engine_settings=parse_engine_args((*STEPS_3, *TOPK_1)),
    )
    assert [(f.rule, f.runtime) for f in report.findings] == [
        ("DF044", "vllm"),
        ("DF045", "sglang"),
    ]


def test_cli_sglang_steps_with_one_model() -> None:
    """pair TARGET -r sglang --engine-arg=--speculative-num-steps=N: what SGLang does."""
    base = ("pair", str(DEEPSEEK_V3_DIR), "-r", "sglang", "--format", "json")
    code, out, _ = invoke(*base, "--engine-arg=--speculative-num-steps=3")
    assert code == 1
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["severity"]) == ("DF060", "error")
    assert "speculative_hook.py:1273-1276" in finding["message"]
    code, out, _ = invoke(
        *base, "--engine-arg=--speculative-num-steps=3", "--engine-arg=--speculative-eagle-topk=1"
    )
    assert code == 0
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["DF045"]
    code, _, err = invoke(*base, "--engine-arg=--speculative-num-steps=x")
    assert code == 2 and "--speculative-num-steps needs a positive integer" in err


def test_cli_num_speculative_tokens_with_one_model() -> None:
    code, out, _ = invoke(
        "pair", str(DEEPSEEK_V3_DIR), "--num-speculative-tokens", "3", "--format", "json"
    )
    assert code == 0 and json.loads(out)["num_speculative_tokens"] == 3
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["DF045"]


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit"])
def test_a_target_alone_renders_like_a_pair(fmt: str) -> None:
    """The MTP report has a pair report's interface (no runtime profiles, no stages), so the
    CI renderers take it as they take a pair's: its finding is annotated, no release named."""
    from dflash_check.check.entries import PairSpec
    from dflash_check.check.outcome import PairOutcome, RunResult
    from dflash_check.render import OUTPUT_FORMATS, Page

    report = run_case(CASES["DF043"][1])
    assert isinstance(report, MtpReport)
    assert (report.profiles, report.runtime_stages) == ((), {})
    # As an engine's test registry lists a target alone (app/engine_tests): an entry's line.
    spec = PairSpec("", "deepseek", Verdict.COMPATIBLE, line=3, index=0)
    outcome = PairOutcome("-> deepseek", Verdict.COMPATIBLE, report, spec=spec)
    result = RunResult((outcome,), file="registry.py")
    text = str(OUTPUT_FORMATS[fmt].render(result, Page(width=100)))
    assert "DF043" in text
    if fmt == "sarif":
        (result,) = json.loads(text)["runs"][0]["results"]
        assert "releases" not in result["properties"]


@pytest.mark.parametrize("fmt", ["sarif", "junit"])
def test_a_target_alone_names_its_engine_settings(fmt: str) -> None:
    """A target served with SGLang's step flags is judged by them (DF060 here), so the CI
    renderers name them as they do a pair's: a SARIF result's and a JUnit case's properties."""
    import xml.etree.ElementTree as ET

    from dflash_check.check.entries import PairSpec
    from dflash_check.check.outcome import PairOutcome, RunResult
    from dflash_check.render import OUTPUT_FORMATS, Page

    settings = parse_engine_args(STEPS_3)
    report = check_target_mtp(files("target", DEEPSEEK_V3), None, "", engine_settings=settings)
    assert [f.rule for f in report.findings] == ["DF060"]
    spec = PairSpec("", "deepseek", Verdict.COMPATIBLE, line=3, index=0)
    outcome = PairOutcome("-> deepseek", Verdict.COMPATIBLE, report, spec=spec)
    assert outcome.engine_settings == settings
    text = str(OUTPUT_FORMATS[fmt].render(RunResult((outcome,), file="registry.py"), Page(100)))
    if fmt == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        assert "DF060" in [r["ruleId"] for r in results]
        stated = {"sglang": {"speculative_num_steps": 3}}
        assert all(r["properties"]["engine_settings"] == stated for r in results)
    else:
        (prop,) = ET.fromstring(text).iter("property")
        assert prop.attrib == {
            "name": "engine_settings",
            "value": "sglang --speculative-num-steps 3",
        }


def test_inkling_reads_its_mtp_config_depths() -> None:
    """Inkling states its MTP depths only under mtp_config, where vLLM reads them."""
    config = {
        "architectures": ["InklingForConditionalGeneration"],
        "model_type": "inkling_mm_model",
        "text_config": DEEPSEEK_V3
        | {"model_type": "inkling_model", "num_nextn_predict_layers": None},
        "mtp_config": {"num_nextn_predict_layers": 8},
    }
    report = check_target_mtp(files("target", config), None, "")
    assert (report.stated.layers, report.stated.key) == (8, "mtp_config.num_nextn_predict_layers")
    assert "InklingMTPModel" in engine(report, "vllm").draft
    other = check_target_mtp(files("target", config | {"mtp_config": [8]}), None, "")
    assert other.stated.layers == 0  # another family's mtp_config that is no object: not read


@pytest.mark.parametrize(
    ("model_type", "mtp", "not_mtp"),
    [
        ("deepseek_v32", "DeepseekV32MTPModel", "DeepSeekMTPModel"),
        ("glm_moe_dsa", "DeepseekV32MTPModel", "DeepSeekMTPModel"),
        ("deepseek_v3", "DeepSeekMTPModel", "DeepseekV32MTPModel"),
    ],
)
def test_dsa_models_get_the_v32_mtp_class(model_type: str, mtp: str, not_mtp: str) -> None:
    """vLLM picks the MTP class by model_type alone (vllm 0.34.0's
    test_dsa_models_select_matching_mtp: a V3.2 architecture beside deepseek_v3 gets V3's)."""
    config = DEEPSEEK_V3 | {"architectures": ["DeepseekV32ForCausalLM"], "model_type": model_type}
    draft = engine(check_target_mtp(files("target", config), None, ""), "vllm").draft
    assert mtp in draft and not_mtp not in draft


@pytest.mark.parametrize(
    ("runtime", "code", "rules"),
    [
        ("vllm", 1, ["DF044"]),
        ("sglang", 0, []),
        ("portable,-vllm", 0, []),
        ("portable", 1, ["DF044"]),
    ],
)
def test_an_engine_the_selection_leaves_out_says_nothing(
    tmp_path: Path, runtime: str, code: int, rules: list[str]
) -> None:
    """vLLM refuses 3 draft tokens over 2 MTP layers (DF044); asked about SGLang alone, or with
    vLLM left out, the report neither lists vLLM nor keeps its finding and exit code."""
    folder = write_model(tmp_path / "ds", DEEPSEEK_V3 | {"num_nextn_predict_layers": 2})
    got, out, _ = invoke(
        "pair", str(folder), "-r", runtime, "--num-speculative-tokens", "3", "--format", "json"
    )
    data = json.loads(out)
    assert [f["rule"] for f in data["findings"]] == rules
    assert ("vllm" in [e["engine"] for e in data["engines"]]) is bool(rules)
    assert got == code


DEEPSEEK_V4 = {
    "architectures": ["DeepseekV4ForCausalLM"],
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_nextn_predict_layers": 1,
    "vocab_size": 129280,
}


@pytest.mark.parametrize(
    ("args", "found"),
    [
        ((*STEPS_3, *TOPK_1), [("DF045", "sglang", "info")]),
        ((*STEPS_3, "--speculative-eagle-topk=4"), [("DF058", "sglang", "error")]),
        (("--speculative-eagle-topk=2",), [("DF058", "sglang", "error")]),
    ],
    ids=["topk-1", "topk-4", "topk-alone"],
)
def test_sglang_refuses_a_tree_on_a_deepseek_v4_target_asked_about_alone(
    args: tuple[str, ...], found: list[tuple[str, str | None, str]]
) -> None:
    """SGLang runs the MTP layers as EAGLE (NEXTN) and its DeepSeek V4 hook asserts topk 1
    while the server arguments resolve (deepseek_v4_hook.py:156-158): DF058 before any step
    flag finding, which a server that does not start makes moot."""
    assert sglang_steps(DEEPSEEK_V4, *args) == found
    if found[0][0] == "DF058":
        report = check_target_mtp(
            files("target", DEEPSEEK_V4), None, "", engine_settings=parse_engine_args(args)
        )
        (f,) = report.findings
        assert "'Only EAGLE speculative algorithm with topk == 1" in f.message
        assert "deepseek_v4_hook.py:156-158" in f.message
        assert f.field == "--speculative-eagle-topk"
    # The same flags on a DeepSeek-V3 target: no gate.
    assert "DF058" not in {rule for rule, _, _ in sglang_steps(DEEPSEEK_V3, *args)}
