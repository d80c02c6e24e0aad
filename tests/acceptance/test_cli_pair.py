"""``dflash-check pair`` end to end on local directories: verdicts, formats, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dflash_check.cli import app
from dflash_check.render.json import SCHEMA_VERSION
from tests.support.helpers import (
    FIXTURES,
    QWEN3_4B,
    QWEN35_4B,
    REPO,
    SEED_DRAFT,
    draft_config,
    invoke_cli,
    qwen3_4b_config,
    write_draft,
    write_model,
)
from tests.support.releases import BEFORE_METHOD_CHECK, CHECKS_METHOD

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    result = runner.invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_seed_case_is_incompatible() -> None:
    """The Qwen3.5-4B mistake: exit 1, and the message says what is missing and why."""
    code, out, _ = invoke("pair", str(SEED_DRAFT), str(QWEN35_4B), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["verdict"] == "incompatible"
    assert set(report["runtimes"].values()) == {"incompatible"}
    assert report["target"]["num_hidden_layers"] == 32
    assert report["target"]["nested"] is True
    assert report["layer_resolution"]["vllm"]["capture_indices"] == [2, 10, 18, 26, 34]
    (df004,) = [f for f in report["findings"] if f["rule"] == "DF004"]
    (sglang,) = [m["message"] for m in df004["messages"] if "sglang" in m["runtimes"]]
    assert "taps [33], which the target does not have" in sglang
    assert "at least 35 target layers" in sglang
    assert "has 32 layers" in sglang
    assert {f["rule"] for f in report["findings"]} >= {"DF004", "DF007", "DF011"}


def test_seed_draft_with_right_target_is_compatible() -> None:
    """The same draft with Qwen/Qwen3-4B (36 layers): exit 0, no findings."""
    code, out, _ = invoke("pair", str(SEED_DRAFT), str(QWEN3_4B), "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["verdict"] == "compatible"
    assert report["findings"] == []


def test_table_report_answers_first_and_verbose_adds_the_tables() -> None:
    """The report starts with the verdict and the need; --verbose adds the resolution and the
    layer picture, which the default report leaves out."""
    code, out, _ = invoke("pair", str(SEED_DRAFT), str(QWEN35_4B))
    assert code == 1
    assert out.startswith("incompatible on all 6 runtimes: ")
    assert "≥ 35 layers" in out and "error[DF004]" in out
    assert "aux layer" not in out and "✗ missing" not in out
    code, verbose, _ = invoke("pair", str(SEED_DRAFT), str(QWEN35_4B), "--verbose")
    assert code == 1
    assert any(
        "aux layer" in line and "[2, 10, 18, 26, 34]" in line for line in verbose.splitlines()
    )
    assert "✗ missing: [33]" in verbose
    assert verbose.index("aux layer") < verbose.index("incompatible on all 6 runtimes: ")


@pytest.mark.parametrize(
    ("runtime", "code"),
    [
        ("vllm", 0),
        ("reference", 0),
        ("trtllm", 0),
        ("mlx", 0),
        ("llamacpp==001d906a", 0),
        # llama.cpp 0c1e57098 (llama-cpp-python 0.3.36, the newest known) has no layer-N input.
        ("llamacpp", 1),
        ("sglang", 1),
        ("portable", 1),
    ],
)
def test_last_layer_id_depends_on_runtime(tmp_path: Path, runtime: str, code: int) -> None:
    """An id of N-1 is fine where the runtime captures after the last layer."""
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = [1, 9, 17, 25, 35]
    draft = write_draft(tmp_path / "draft", cfg)
    got, out, _ = invoke("pair", str(draft), str(QWEN3_4B), "--runtime", runtime, "-f", "json")
    assert got == code, out
    report = json.loads(out)
    assert list(report["runtimes"]) == (
        [runtime.split("==")[0]]
        if runtime != "portable"
        else ["reference", "vllm", "sglang", "trtllm", "llamacpp", "mlx"]
    )


def test_fc_width_mismatch_is_incompatible(tmp_path: Path) -> None:
    """fc.weight built for 4 ids: incompatible, both widths in the message."""
    draft = write_draft(tmp_path / "draft", draft_config(), fc_in=4 * 2560)
    code, out, _ = invoke("pair", str(draft), str(QWEN3_4B), "-f", "json")
    assert code == 1
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "DF005"]
    assert "10240" in finding["message"] and "12800" in finding["message"]


def test_sharded_draft_header_is_read(tmp_path: Path) -> None:
    """A sharded draft: the index names the shard holding fc.weight, only it is read."""
    from dflash_check.sources.safetensors_header import encode_header
    from dflash_check.views import TensorInfo

    folder = write_model(tmp_path / "draft", draft_config())
    (folder / "model-00001-of-00002.safetensors").write_bytes(
        encode_header({"norm.weight": TensorInfo("BF16", (2560,))})
    )
    (folder / "model-00002-of-00002.safetensors").write_bytes(
        encode_header({"fc.weight": TensorInfo("BF16", (2560, 3 * 2560))})
    )
    index = {
        "weight_map": {
            "norm.weight": "model-00001-of-00002.safetensors",
            "fc.weight": "model-00002-of-00002.safetensors",
        }
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    code, out, _ = invoke("pair", str(folder), str(QWEN3_4B), "-f", "json")
    assert code == 1
    report = json.loads(out)
    assert report["draft"]["fc_weight_shape"] == [2560, 7680]


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    """Warnings exit 0, or 1 with --strict."""
    draft = write_draft(tmp_path / "draft", draft_config(max_position_embeddings=2048))
    assert invoke("pair", str(draft), str(QWEN3_4B))[0] == 0
    assert invoke("pair", str(draft), str(QWEN3_4B), "--strict")[0] == 1
    assert invoke("pair", str(draft), str(QWEN3_4B), "--strict", "--ignore", "DF013")[0] == 0


def test_output_file_gets_the_report(tmp_path: Path) -> None:
    """--output writes the report to a file and nothing to stdout."""
    out_file = tmp_path / "report.json"
    code, out, err = invoke(
        "pair", str(SEED_DRAFT), str(QWEN3_4B), "-f", "json", "-o", str(out_file)
    )
    assert code == 0 and out == ""
    assert json.loads(out_file.read_text())["verdict"] == "compatible"
    assert "compatible" in err


def test_no_output_file_when_check_fails(tmp_path: Path) -> None:
    """A pair that cannot be checked leaves no report file behind."""
    out_file = tmp_path / "report.json"
    code, _, _ = invoke("pair", str(tmp_path / "nope"), str(QWEN3_4B), "-o", str(out_file))
    assert code == 3
    assert not out_file.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["pair"],
        ["pair", "a/b", "c/d", "--runtime", "tgi"],
        ["pair", "a/b", "c/d", "--format", "yaml"],
        ["pair", "a/b", "c/d", "--ignore", "DF999"],
        ["pair", "a/b@main", "c/d", "--draft-revision", "dev"],
        ["pair", "a/b", "c/d", "--revision", "x", "--target-revision", "y"],
        ["pair", "not a repo!", "c/d"],
        ["pair", "a/b", "c/d", "--num-speculative-tokens", "0"],
        ["pair", "a/b", "c/d", "--num-speculative-tokens", "x"],
        ["pair", "a/b", "c/d", "--num-speculative-tokens", "1025"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    """Bad command lines exit 2 before anything is fetched."""
    assert invoke(*args)[0] == 2


def test_swapped_arguments_get_a_hint(tmp_path: Path) -> None:
    """TARGET given as DRAFT: exit 3, and the hint says the arguments may be swapped."""
    code, _, err = invoke("pair", str(QWEN3_4B), str(SEED_DRAFT))
    assert code == 3
    assert "not a DFlash draft" in err and "swap" in err


def test_json_on_unreadable_input_is_unknown(tmp_path: Path) -> None:
    """With --format json, a pair that cannot be checked still prints a JSON verdict."""
    bad = write_model(tmp_path / "t", "{not json")
    code, out, err = invoke("pair", str(SEED_DRAFT), str(bad), "-f", "json")
    assert code == 3
    data = json.loads(out)
    assert data["verdict"] == "unknown" and "malformed JSON" in data["error"]["message"]
    assert "config.json" in err


def test_target_with_text_config_only(tmp_path: Path) -> None:
    """A multimodal wrapper's dimensions come from text_config (a wrapper the engines register:
    an unregistered architecture is DF052)."""
    wrapper = {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "text_config": qwen3_4b_config(),
    }
    target = write_model(tmp_path / "t", wrapper)
    code, out, _ = invoke("pair", str(SEED_DRAFT), str(target), "-f", "json")
    assert code == 0, out
    assert json.loads(out)["target"]["layers_key"] == "text_config.num_hidden_layers"


def test_version_and_help() -> None:
    """--version and --help work."""
    assert "dflash-check" in invoke("--version")[1]
    code, out, _ = invoke("pair", "--help")
    assert code == 0 and "--runtime" in out


@pytest.mark.parametrize(
    ("tokens", "code", "flagged"),
    [
        (15, 0, set()),  # block_size 16: the bonus token and 15 draft tokens
        (7, 0, {"sglang"}),  # SGLang warns on a block size mismatch; vLLM drafts fewer
        (16, 1, {"vllm", "sglang", "trtllm"}),  # TensorRT-LLM refuses it: an error
    ],
)
def test_num_speculative_tokens_against_the_block_size(
    tokens: int, code: int, flagged: set[str]
) -> None:
    """--num-speculative-tokens is the engine setting the pair is checked for (DF019)."""
    args = ["pair", str(SEED_DRAFT), str(QWEN3_4B), "-f", "json"]
    exit_code, out, _ = invoke(*args, "--num-speculative-tokens", str(tokens))
    assert exit_code == code
    findings = [f for f in json.loads(out)["findings"] if f["rule"] == "DF019"]
    assert {rt for f in findings for rt in f["runtimes"]} == flagged
    if tokens == 16:
        (trt,) = [f for f in findings if "trtllm" in f["runtimes"]]
        assert trt["severity"] == "error"
        (message,) = [m["message"] for m in trt["messages"] if "trtllm" in m["runtimes"]]
        assert "Lower max_draft_len to at most 15.Current max_draft_len=16." in message
    # Without the option the rule says nothing.
    assert not [f for f in json.loads(invoke(*args)[1])["findings"] if f["rule"] == "DF019"]


def test_speculative_method_is_checked_per_vllm_release(tmp_path: Path) -> None:
    """A DSpark draft asked for as dflash: vLLM 0.34 refuses it at load (DF054), 0.33 has no
    such check, and the method the draft declares passes; an unknown method is a usage error."""
    cfg = {
        **draft_config(),
        "architectures": ["Qwen3DSparkModel"],
        "markov_rank": 256,
        "markov_head_type": "vanilla",
    }
    draft = str(write_draft(tmp_path / "draft", cfg))

    def rules(release: str, method: str) -> tuple[int, set[str], dict]:
        code, out, _ = invoke(
            "pair",
            draft,
            str(QWEN3_4B),
            "-r",
            release,
            "--speculative-method",
            method,
            "-f",
            "json",
        )
        report = json.loads(out)
        return code, {f["rule"] for f in report["findings"]}, report

    code, found, report = rules(CHECKS_METHOD.spec, "dflash")
    assert code == 1 and "DF054" in found
    (df054,) = [f for f in report["findings"] if f["rule"] == "DF054"]
    assert "'dspark' checkpoint" in json.dumps(df054)
    assert "refuses at load" in json.dumps(report)
    code, found, _ = rules(BEFORE_METHOD_CHECK.spec, "dflash")
    assert "DF054" not in found
    code, found, _ = rules(CHECKS_METHOD.spec, "dspark")
    assert code == 0 and not found
    code, _, err = invoke("pair", draft, str(QWEN3_4B), "--speculative-method", "medusa2")
    assert code == 2 and "unknown method 'medusa2'" in err


def _mined_draft(tmp_path: Path, case: str) -> Path:
    """The draft config of an SGLang mined case (``conformance/mined/``), written to a folder."""
    mined = json.loads((REPO / "conformance" / "mined" / "sglang-0.5.23.json").read_text())
    (config,) = [c["draft"] for c in mined["cases"] if c["id"] == case]
    folder = tmp_path / case
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(
    ("case", "engine_args", "code"),
    [
        ("dflash-domino-dp-attention", ["--engine-arg=--attn-dp-size=2"], 1),
        ("dflash-domino-dp-attention", ["--engine-arg=--enable-dp-attention",
                                        "--engine-arg=--dp-size", "--engine-arg=2"], 1),
        ("dflash-domino-num-draft-tokens-1", ["--engine-arg=--speculative-num-draft-tokens",
                                              "--engine-arg=1"], 1),
        ("dflash-domino-num-draft-tokens-1", [], 0),
        ("dflash-plain-dp-attention", ["--engine-arg=--attn-dp-size=2"], 0),
        ("dflash-domino-dp-attention", ["--engine-arg=--enforce-eager"], 0),
    ],
    ids=["attn-dp-size", "deprecated-dp", "one-token", "no-settings", "plain", "unknown-arg"],
)  # fmt: skip
def test_engine_args_reach_the_check(
    tmp_path: Path, case: str, engine_args: list[str], code: int
) -> None:
    """``--engine-arg`` without ``--launch``: SGLang's DP attention and draft length decide
    whether its worker starts with a Domino draft (DF056); a plain draft and other
    arguments do not."""
    draft = _mined_draft(tmp_path, case)
    target = FIXTURES / "targets" / "Qwen--Qwen3-8B"
    args = ["pair", str(draft), str(target), "-r", "sglang", "--format", "json", *engine_args]
    proc = invoke_cli(*args)
    assert proc.returncode == code, proc.stdout + proc.stderr
    rules = {f["rule"] for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"}
    assert rules == ({"DF056"} if code else set())


@pytest.mark.parametrize(
    ("arg", "said"),
    [
        ("--engine-arg=--speculative-num-draft-tokens=two", "needs a positive integer, not 'two'"),
        ("--engine-arg=--attn-dp-size", "--attn-dp-size needs a value"),
        ("--engine-arg=--speculative-num-steps=0", "needs a positive integer up to 1024, not 0"),
        ("--engine-arg=--speculative-eagle-topk=x", "needs a positive integer, not 'x'"),
    ],
)
def test_a_malformed_engine_setting_is_a_usage_error(tmp_path: Path, arg: str, said: str) -> None:
    """A bad value of a flag the check reads: exit 2, one line naming it, before any fetch."""
    draft = _mined_draft(tmp_path, "dflash-domino-dp-attention")
    proc = invoke_cli("pair", str(draft), "nobody/nothing", arg)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert said in proc.stderr and "--engine-arg" in proc.stderr
    assert "Traceback" not in proc.stderr
