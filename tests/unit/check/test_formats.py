"""Published drafts in every format get the right verdict against their documented targets.

The configs are public files nobody here wrote (sources in tests/fixtures/drafts/README.md);
those the shipped pairs.yaml names are under tests/fixtures/hub/, the others under drafts/ and
targets/. Each fact has a passing and a failing
case: the documented pairing, and a mutation or another target that must fail.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dflash_check.check.formats import format_named, normalise_draft
from dflash_check.check.report import CheckReport, Severity
from dflash_check.check.target import normalise_target
from dflash_check.check.tokenizers import TokenizerComparison
from dflash_check.cli import app
from dflash_check.errors import ConfigError, NotADraftError
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import VLLM, Release
from dflash_check.render.table import render_text
from dflash_check.views import TensorInfo
from tests.support.helpers import FIXTURES, check_files, files, write_model

# Models that the shipped pairs.yaml also names live once, under the loopback Hub's fixtures.
HUB = FIXTURES / "hub"
TARGETS = FIXTURES / "targets"
SPECULATORS = HUB / "huaxuan250" / "dflash_zlab_full_atten_speculators"
ZLAB_QWEN36 = HUB / "z-lab" / "Qwen3.6-35B-A3B-DFlash"
MIMO = HUB / "XiaomiMiMo" / "MiMo-V2.5-Pro-FP4-DFlash" / "dflash"
DFLASH2 = FIXTURES / "drafts" / "z-lab--Qwen3.8-27B-DFlash2"
QWEN36_NVFP4 = HUB / "nvidia" / "Qwen3.6-35B-A3B-NVFP4"
MIMO_TARGET = HUB / "XiaomiMiMo" / "MiMo-V2.5-Pro"
QWEN36_27B = TARGETS / "Qwen--Qwen3.6-27B"
QWEN35_27B = TARGETS / "Qwen--Qwen3.5-27B"
GPT_OSS_20B_DRAFT = HUB / "z-lab" / "gpt-oss-20b-DFlash"
GPT_OSS_20B = HUB / "openai" / "gpt-oss-20b"
GPT_OSS_120B = HUB / "openai" / "gpt-oss-120b"

runner = CliRunner()


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json."""
    return json.loads((folder / "config.json").read_text())


def check(
    draft: dict[str, Any] | Path,
    target: dict[str, Any] | Path,
    runtime: str = "portable",
    name: str | None = None,
    tensors: dict[str, TensorInfo] | None = None,
    tokenizers: TokenizerComparison | None = None,
    strict: bool = False,
) -> CheckReport:
    """Check a pair of configs (or fixture folders) in process."""
    d = config(draft) if isinstance(draft, Path) else draft
    t = config(target) if isinstance(target, Path) else target
    target_files = files("target", t)
    if name is not None:
        target_files = replace(target_files, name=name)
    return check_files(
        files("draft", d, tensors), target_files, runtime, tokenizers=tokenizers, strict=strict
    )


def rules(report: CheckReport, severity: Severity = Severity.ERROR) -> set[str]:
    """Return the rule ids with findings of ``severity``."""
    return {f.rule for f in report.findings if f.severity is severity}


def invoke(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    result = runner.invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


# -- speculators format --------------------------------------------------------------------


def test_speculators_draft_is_read_from_its_own_keys() -> None:
    """Dimensions from transformer_layer_config; aux ids converted once to DFlash ids."""
    view = normalise_draft(files("draft", config(SPECULATORS)))
    assert view.format == "speculators"
    assert (view.hidden_size, view.num_hidden_layers, view.vocab_size) == (2048, 8, 248320)
    assert view.target_layer_ids == (1, 10, 19, 28, 37)  # aux [2, 11, 20, 29, 38] - 1
    assert view.layer_ids_key == "aux_hidden_state_layer_ids"
    assert view.dflash is not None
    assert view.dflash.mask_token_id == 248070 and view.dflash.mask_token_key == "mask_token_id"
    assert view.verifier == "RedHatAI/Qwen3.6-35B-A3B-NVFP4"
    assert view.target_hidden_size is None
    # The same draft in z-lab layout reads to the same ids: one common numbering.
    assert normalise_draft(files("draft", config(ZLAB_QWEN36))).target_layer_ids == (
        view.target_layer_ids
    )


def test_speculators_draft_compatible_with_its_verifier_model() -> None:
    """vs nvidia's NVFP4 copy of its verifier: compatible, the name difference a note, the id
    conversion shown in the report."""
    report = check(SPECULATORS, QWEN36_NVFP4, name="nvidia/Qwen3.6-35B-A3B-NVFP4")
    assert report.verdict.value == "compatible", report.findings
    assert [p.name for p in report.profiles] == ["vllm"]  # the runtime that loads the format
    (named,) = [f for f in report.findings if f.rule == "DF014"]
    assert named.severity is Severity.INFO and "RedHatAI/Qwen3.6-35B-A3B-NVFP4" in named.message
    text = " ".join(render_text(report, width=400).split())
    assert "aux_hidden_state_layer_ids [2, 11, 20, 29, 38] are vLLM aux indices" in text
    assert "as DFlash layer ids: [1, 10, 19, 28, 37]" in text
    assert "speculators format" in text
    assert "DF009" not in rules(report)  # top-level mask is where vLLM's loader reads it


def test_speculators_draft_incompatible_with_another_size() -> None:
    """vs Qwen3.5-27B (hidden 5120, 64 layers): incompatible, and the verifier disagrees."""
    report = check(SPECULATORS, QWEN35_27B, name="Qwen/Qwen3.5-27B")
    assert report.verdict.value == "incompatible"
    assert "DF006" in rules(report)
    assert "DF014" in rules(report, Severity.WARNING)
    verifier = next(e for e in report.identity if e.fact == "verifier")
    assert verifier.agrees is False


def test_speculators_draft_on_a_runtime_that_does_not_load_it() -> None:
    """Naming the reference runtime for a speculators draft fails DF016, not a false pass."""
    report = check(SPECULATORS, QWEN36_NVFP4, runtime="reference")
    assert "DF016" in rules(report)
    assert check(SPECULATORS, QWEN36_NVFP4, runtime="vllm").verdict.value == "compatible"


def _typeless(kind: str | None) -> dict[str, Any]:
    """The speculators fixture with its speculators_model_type set to ``kind`` (None: absent,
    named by its speculators architecture, as a converter that writes no type leaves it)."""
    cfg = copy.deepcopy(config(SPECULATORS))
    cfg.pop("speculators_model_type")
    cfg["architectures"] = ["DFlashSpeculator"]
    if kind is not None:
        cfg["speculators_model_type"] = kind
    return cfg


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_speculators_draft_without_a_type_is_refused_at_load(release: Release) -> None:
    """vLLM's get_config reads a config with speculators_config and no model_type as
    SpeculatorsConfig, which looks the loader up by speculators_model_type alone and raises
    'Expected one of: ...' without one (speculators/base.py): DF016 quotes the release's own
    message at its own line, though the tool still reads the DFlashSpeculator as DFlash."""
    view = normalise_draft(files("draft", _typeless(None)))
    assert (view.format, view.method, view.speculators_model_type) == (
        "speculators",
        "dflash",
        None,
    )
    report = check(_typeless(None), QWEN36_NVFP4, runtime=release.spec)
    assert report.verdict.value == "incompatible"
    (finding,) = [f for f in report.findings if f.rule == "DF016"]
    cited = facts.for_release(release).message("speculators_type_refused")
    assert cited is not None and "Please ensure you're loading a speculators-format model" in cited
    assert "states no speculators_model_type" in finding.message
    assert f"{release.spec} refuses it at load: {cited}" in finding.message
    assert "speculators/base.py:" in cited and cited.count(release.version) == 1


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_speculators_draft_with_an_unknown_type_finds_no_loader(release: Release) -> None:
    """A type no loader is registered under is refused by the same message; the tool itself
    does not read such a config as a DFlash draft at all."""
    with pytest.raises(NotADraftError, match='speculators_model_type is string "dflash9"'):
        normalise_draft(files("draft", _typeless("dflash9")))
    view = replace(
        normalise_draft(files("draft", config(SPECULATORS))), speculators_model_type="dflash9"
    )
    found = format_named("speculators").registration(VLLM.name, view, release)
    assert found is not None and not found.registered
    assert "holds no dflash9" in found.citation
    assert "Please ensure you're loading a speculators-format model" in found.citation


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_speculators_draft_with_a_known_type_is_loaded(release: Release) -> None:
    """The fixture states dflash: every release has that loader (algos.py), no DF016."""
    view = normalise_draft(files("draft", config(SPECULATORS)))
    assert view.speculators_model_type == "dflash"
    found = format_named("speculators").registration(VLLM.name, view, release)
    assert found is not None and found.registered and "speculators/algos.py" in found.citation
    assert "DF016" not in rules(check(SPECULATORS, QWEN36_NVFP4, runtime=release.spec))


def test_speculators_without_transformer_layer_config() -> None:
    """A speculators config without its dimensions is malformed input naming the field."""
    cfg = config(SPECULATORS)
    del cfg["transformer_layer_config"]
    with pytest.raises(ConfigError, match="'transformer_layer_config' is missing"):
        normalise_draft(files("draft", cfg))


# -- MiMo: subfolder draft, padded vocabulary, id N-1 --------------------------------------


def test_mimo_draft_compatible_under_vllm() -> None:
    """Xiaomi's draft with MiMo-V2.5-Pro under vLLM: compatible, the padding a note."""
    report = check(MIMO, MIMO_TARGET, runtime="vllm")
    assert report.verdict.value == "compatible", report.findings
    (vocab,) = [f for f in report.findings if f.rule == "DF007"]
    assert vocab.severity is Severity.INFO
    assert "152064" in vocab.message and "152576" in vocab.message
    assert "dflash_config.mask_token_id = 151669" in vocab.message  # the deciding fact


def test_mimo_draft_portable_uses_the_family_cells_for_the_last_layer() -> None:
    """Portable: id 69 = N-1 passes every runtime on MiMo-V2 (SGLang's mimo_v2 also captures
    after the last layer), and SGLang's resolution cites that cell; on a Qwen3-family target of
    the same depth SGLang and llama.cpp 0c1e57098 (no input of layer N on Qwen3) fail them."""
    report = check(MIMO, MIMO_TARGET)
    assert {v.value for v in report.runtime_verdicts.values()} == {"compatible"}
    sglang = next(r for r in report.resolutions if r.runtime.name == "sglang")
    assert sglang.max_valid_id == 69 and "mimo_v2.py" in (sglang.runtime.cell_citation or "")
    qwen_like = {
        **config(MIMO_TARGET),
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
    }
    report = check(MIMO, qwen_like)
    hits = [f for f in report.findings if f.rule == "DF004"]
    assert {f.runtime for f in hits} == {"sglang", "llamacpp"}
    assert "taps [69]" in hits[0].message and "N-2 = 68" in hits[0].message
    assert "no capture runs after the last layer" in hits[0].hint


def test_padding_is_not_assumed_when_the_draft_ships_a_head() -> None:
    """The same sizes are an error when the header shows the draft's own LM head."""
    tensors = {
        "fc.weight": TensorInfo("BF16", (6144, 5 * 6144)),
        "lm_head.weight": TensorInfo("BF16", (152064, 6144)),
    }
    report = check(MIMO, MIMO_TARGET, runtime="vllm", tensors=tensors)
    (vocab,) = [f for f in report.findings if f.rule == "DF007"]
    assert vocab.severity is Severity.ERROR and "lm_head.weight (152064 rows)" in vocab.message


@pytest.mark.parametrize(
    ("tokens", "severity"), [(151680, Severity.INFO), (152100, Severity.ERROR)]
)
def test_padding_decided_by_the_tokenizer_when_read(tokens: int, severity: Severity) -> None:
    """A tokenizer count decides: below both sizes is padding, above the draft's is not."""
    tk = TokenizerComparison(same_file=False, compared_ids=tokens, target_tokens=tokens)
    report = check(MIMO, MIMO_TARGET, runtime="vllm", tokenizers=tk)
    (vocab,) = [f for f in report.findings if f.rule == "DF007"]
    assert vocab.severity is severity and f"tokenizer has {tokens} tokens" in vocab.message


def test_a_real_token_above_the_draft_vocabulary_is_a_different_tokenizer() -> None:
    """A token id the target names that the draft's rows cannot hold: DF007 error."""
    target = config(MIMO_TARGET)
    target["eos_token_id"] = 152300
    report = check(MIMO, target, runtime="vllm")
    (vocab,) = [f for f in report.findings if f.rule == "DF007"]
    assert vocab.severity is Severity.ERROR and "target eos_token_id = 152300" in vocab.message


def test_mimo_subfolder_on_a_local_directory(tmp_path: Path) -> None:
    """DIR:SUBFOLDER and --draft-subfolder name the draft inside its target's folder."""
    repo = tmp_path / "MiMo-V2.5-Pro-FP4-DFlash"
    write_model(repo / "dflash", config(MIMO))
    for args in ((f"{repo}:dflash",), (str(repo), "--draft-subfolder", "dflash")):
        code, out, _ = invoke("pair", *args, str(MIMO_TARGET), "-r", "vllm", "-f", "json")
        assert code == 0, out
        assert json.loads(out)["draft"]["config"].endswith("dflash/config.json")
    code, _, err = invoke("pair", str(repo), str(MIMO_TARGET))  # the repo root has no config
    assert code == 3 and "config.json not found" in err
    code, _, err = invoke("pair", f"{repo}:dflash", str(MIMO_TARGET), "--draft-subfolder", "x")
    assert code == 2 and "use one of them" in err


# -- DFlash 2, SpecForge, unknown formats ---------------------------------------------------


def test_dflash2_draft_with_its_target_family() -> None:
    """The DFlash 2 draft fits Qwen3.6-27B's dimensions (64 layers, 5120, 248320)."""
    report = check(DFLASH2, QWEN36_27B)
    assert report.verdict.value == "compatible", report.findings
    assert report.draft.method == "dflash2"
    assert check(DFLASH2, QWEN35_27B.parent / "Qwen--Qwen3-8B").verdict.value == "incompatible"


def test_dflash2_padding_like_difference_is_still_an_error() -> None:
    """DFlash 2's selector owns vocabulary rows: a size difference is never only padding."""
    target = config(QWEN36_27B)
    target["text_config"]["vocab_size"] = 248576
    (vocab,) = [f for f in check(DFLASH2, target).findings if f.rule == "DF007"]
    assert vocab.severity is Severity.ERROR and "candidate selector" in vocab.message


def test_specforge_mla_draft_is_a_dflash_draft() -> None:
    """SpecForge's DeepseekDFlashDraftModel is read with the z-lab keys."""
    cfg = config(ZLAB_QWEN36)
    cfg["architectures"] = ["DeepseekDFlashDraftModel"]
    view = normalise_draft(files("draft", cfg))
    assert (view.format, view.method, view.target_layer_ids) == (
        "specforge",
        "dflash",
        (1, 10, 19, 28, 37),
    )
    assert check(cfg, QWEN36_NVFP4).verdict.value == "compatible"


@pytest.mark.parametrize(
    ("cfg", "needle"),
    [
        ({"architectures": ["PEagleDraftModel"], "draft_vocab_size": 32000}, "P-EAGLE"),
        ({"speculators_model_type": "peagle"}, "P-EAGLE"),
        ({"architectures": ["DeepSeekMTPModel"]}, "MTP (multi-token"),
        ({"architectures": ["EagleLlamaForCausalLM"]}, "EAGLE-1/2"),
        (
            {"architectures": ["Llama"], "eagle_config": {"use_aux_hidden_state": False}},
            "EAGLE-1/2",
        ),
        ({"speculators_model_type": "medusa"}, 'speculators_model_type is string "medusa"'),
        ({"architectures": ["MysteryDraft"]}, "not a DFlash draft or EAGLE-3 head"),
    ],
)
def test_unknown_formats_name_what_was_found(cfg: dict[str, Any], needle: str) -> None:
    """No format matches: the message says what was found and lists what is supported."""
    with pytest.raises(NotADraftError) as info:
        normalise_draft(files("draft", cfg))
    assert needle in str(info.value)
    assert info.value.hint is not None and "swap" not in info.value.hint
    assert "speculators-format DFlash" in info.value.hint


def test_a_target_given_as_draft_still_suggests_the_swap() -> None:
    """A plain target config as the draft: the swap hint stays."""
    with pytest.raises(NotADraftError) as info:
        normalise_draft(files("draft", config(QWEN36_NVFP4) | {"num_hidden_layers": 40}))
    assert info.value.hint is not None and "swap" in info.value.hint


def test_a_speculators_draft_given_as_target_is_named() -> None:
    """Drafts of every format are recognised on the target side."""
    with pytest.raises(ConfigError, match="speculators-format DFlash"):
        normalise_target(files("target", config(SPECULATORS)))


# -- num_target_layers and the target identity ----------------------------------------------


def gpt_oss_draft(**changes: Any) -> dict[str, Any]:
    """Return z-lab's gpt-oss-20b draft config with top-level keys changed (None deletes)."""
    cfg = copy.deepcopy(config(GPT_OSS_20B_DRAFT))
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    return cfg


def test_missing_num_target_layers_fails_the_reference() -> None:
    """gpt-oss-20b's draft without num_target_layers on gpt-oss-120b (same width and vocab):
    incompatible for the reference, which reads it on every load; a warning elsewhere."""
    draft = gpt_oss_draft(num_target_layers=None)
    reference = check(draft, GPT_OSS_120B, runtime="reference")
    assert reference.verdict.value == "incompatible"
    assert rules(reference) == {"DF011"}
    vllm = check(draft, GPT_OSS_120B, runtime="vllm")
    assert vllm.verdict.value == "compatible"
    assert "DF011" in rules(vllm, Severity.WARNING)
    assert check(gpt_oss_draft(), GPT_OSS_20B, runtime="reference").verdict.value == "compatible"


def test_num_target_layers_only_in_dflash_config_fails_the_reference() -> None:
    """The reference and MLX read the top level only."""
    draft = gpt_oss_draft(num_target_layers=None)
    draft["dflash_config"]["num_target_layers"] = 24
    report = check(draft, GPT_OSS_20B)
    assert {f.runtime for f in report.findings if f.rule == "DF011"} == {"reference", "mlx"}
    assert report.runtime_verdicts["vllm"].value == "compatible"


def test_same_shape_wrong_target_is_flagged_by_its_evidence() -> None:
    """With num_target_layers 24, gpt-oss-120b is incompatible everywhere; the identity
    evidence shows the disagreement next to the facts that agree."""
    report = check(gpt_oss_draft(), GPT_OSS_120B)
    assert report.verdict.value == "incompatible" and "DF011" in rules(report)
    facts = {e.fact: e.agrees for e in report.identity}
    assert facts == {
        "num_target_layers": False,
        "base_model": None,
        "verifier": None,
        "tokenizer": None,
    }
    assert "num_target_layers 24 vs 36 layers ✗" in render_text(report, width=400, verbose=True)


# -- explicit nulls ---------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["dflash_config", "top"])
def test_null_ids_fail_the_runtimes_that_take_the_null(where: str) -> None:
    """target_layer_ids: null is not missing: the reference and MLX fail on the null itself,
    the other runtimes on having no ids (DF001 is an error everywhere)."""
    draft = gpt_oss_draft()
    del draft["dflash_config"]["target_layer_ids"]
    (draft["dflash_config"] if where == "dflash_config" else draft)["target_layer_ids"] = None
    report = check(draft, GPT_OSS_20B)
    failing = {name for name, v in report.runtime_verdicts.items() if v.value == "incompatible"}
    assert failing == set(report.runtime_verdicts)
    null = {f.runtime for f in report.findings if f.rule == "DF001" and "as the value" in f.message}
    assert null == {"reference", "mlx"}
    # Absent (not null): every runtime guesses or refuses, so it fails as well.
    missing = gpt_oss_draft()
    del missing["dflash_config"]["target_layer_ids"]
    assert check(missing, GPT_OSS_20B).verdict.value == "incompatible"


def test_null_dflash_config_ids_shadow_top_level_ids_for_the_reference() -> None:
    """dflash_config.target_layer_ids null with top-level ids: vLLM falls back, the
    reference takes the null."""
    draft = gpt_oss_draft(target_layer_ids=[1, 6, 11, 16, 21])
    draft["dflash_config"]["target_layer_ids"] = None
    report = check(draft, GPT_OSS_20B)
    assert report.runtime_verdicts["reference"].value == "incompatible"
    assert report.runtime_verdicts["vllm"].value == "compatible"


def test_null_mask_is_named_as_null() -> None:
    """mask_token_id: null fails every runtime but SGLang, which resolves the mask from the
    tokenizer (a note); every message says null, not missing."""
    draft = gpt_oss_draft()
    draft["dflash_config"]["mask_token_id"] = None
    masks = {f.runtime: f for f in check(draft, GPT_OSS_20B).findings if f.rule == "DF008"}
    assert set(masks) == {"reference", "vllm", "sglang", "trtllm", "llamacpp", "mlx"}
    assert all("dflash_config.mask_token_id is null" in f.message for f in masks.values())
    assert masks["sglang"].severity is Severity.INFO and "<|MASK|>" in masks["sglang"].message
    assert masks["vllm"].severity is Severity.ERROR
    assert "vocab_size, one past the embedding" in masks["trtllm"].message


# -- --strict and not-checked rules -----------------------------------------------------------


def test_strict_verdict_agrees_with_the_exit_code(tmp_path: Path) -> None:
    """--strict: the table, the JSON and the GitHub annotations all say incompatible."""
    draft = write_model(tmp_path / "draft", gpt_oss_draft(vocab_size=201088))
    target = str(GPT_OSS_20B)
    code, out, _ = invoke("pair", str(draft), target, "-f", "json")
    assert code == 0 and json.loads(out)["verdict"] == "compatible"
    assert json.loads(out)["not_checked"] == [
        {"rule": "DF005", "reason": "fc width: no safetensors header"}
    ]
    code, out, _ = invoke("pair", str(draft), target, "-f", "json", "--strict")
    data = json.loads(out)
    assert code == 1
    assert data["verdict"] == "incompatible" and data["strict"] is True
    assert data["verdict_text"] == "incompatible (strict: 1 warning, 1 not checked)"
    code, out, _ = invoke("pair", str(draft), target, "--strict")
    assert code == 1 and out.startswith(
        "incompatible on all 6 runtimes (strict: 1 warning, 1 not checked):"
    )
    code, out, err = invoke("pair", str(draft), target, "--strict", "-f", "github")
    assert code == 1 and "::error" in out and "::warning" not in out
    assert "dflash-check: incompatible (strict: 1 warning, 1 not checked)" in err
    code, out, _ = invoke("pair", str(draft), target, "--strict", "-f", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert code == 1 and results
    assert {r["properties"]["verdict"] for r in results} == {
        "incompatible (strict: 1 warning, 1 not checked)"
    }


def test_strict_never_contradicts_a_real_incompatibility() -> None:
    """An error makes the verdict plain incompatible, with or without --strict."""
    report = check(gpt_oss_draft(), GPT_OSS_120B, strict=True)
    assert report.verdict_text == "incompatible"


# -- reduced draft vocabularies (speculators draft_vocab_size) ------------------------------


def reduced_speculators(draft_vocab: int) -> dict[str, Any]:
    """Return the speculators draft with a reduced draft vocabulary."""
    cfg = config(SPECULATORS)
    cfg["draft_vocab_size"] = draft_vocab
    return cfg


@pytest.mark.parametrize(("d2t", "severity"), [(True, None), (False, Severity.ERROR)])
def test_reduced_draft_vocabulary_needs_a_d2t_map(d2t: bool, severity: Severity | None) -> None:
    """draft_vocab_size below vocab_size: fine with a d2t map in the header, an error without."""
    tensors = {"fc.weight": TensorInfo("BF16", (2048, 5 * 2048))}
    if d2t:
        tensors["d2t"] = TensorInfo("I64", (32000,))
    report = check(reduced_speculators(32000), QWEN36_NVFP4, tensors=tensors)
    hits = [f for f in report.findings if f.rule == "DF007"]
    assert [f.severity for f in hits] == ([severity] if severity else [])
    if hits:
        assert "no d2t map" in hits[0].message


def test_draft_vocabulary_larger_than_the_target_is_an_error() -> None:
    """A draft vocabulary the target does not have rows for: DF007 error."""
    report = check(reduced_speculators(250000), QWEN36_NVFP4)
    assert any(
        f.rule == "DF007" and "250000 > target" in f.message and f.severity is Severity.ERROR
        for f in report.findings
    )


def test_dflash2_keys_are_checked_per_engine() -> None:
    """The published DFlash 2 draft passes; conv_group_size 24 on hidden 2560 fails the engines
    that check the division, and a draft without selector keys fails every engine that reads
    them at load."""
    assert [f for f in check(DFLASH2, QWEN36_27B).findings if f.rule == "DF018"] == []
    cfg = config(DFLASH2)
    narrow = {**cfg, "hidden_size": 2560, "dflash_config": {**cfg["dflash_config"]}}
    narrow["dflash_config"]["conv_group_size"] = 24
    target = {**config(QWEN36_27B)}
    target["text_config"] = {**target["text_config"], "hidden_size": 2560}
    hits = [f for f in check(narrow, target).findings if f.rule == "DF018"]
    assert {f.runtime for f in hits} == {"vllm", "sglang", "llamacpp"}
    assert all("24 does not divide hidden_size 2560" in f.message for f in hits)
    bare = {**cfg, "dflash_config": {**cfg["dflash_config"]}}
    del bare["dflash_config"]["selector_rank"], bare["dflash_config"]["selector_top_k"]
    report = check(bare, QWEN36_27B)
    failing = {f.runtime for f in report.findings if f.rule == "DF018"}
    assert failing == {"reference", "vllm", "sglang", "trtllm", "llamacpp"}
    assert report.runtime_verdicts["sglang"].value == "incompatible"
