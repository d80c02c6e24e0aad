"""The smaller conventions users of hf, ruff and pip-audit expect (issue 31, item 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dflash_check.cli.completion import complete_rule, complete_runtime
from tests.support.helpers import REPO, invoke_cli

SEED = ("examples/Qwen3-4B-DFlash-b16", "examples/Qwen3.5-4B")


def test_dash_h_is_help_everywhere() -> None:
    """-h as --help, for the app and each command."""
    for args in ((), ("pair",), ("registry",), ("rules",)):
        proc = invoke_cli(*args, "-h")
        assert proc.returncode == 0 and "Usage:" in proc.stdout, args


def test_format_is_case_insensitive() -> None:
    """-f JSON is -f json (as -r VLLM is -r vllm); rules -f JSON too."""
    proc = invoke_cli("pair", *SEED, "-f", "JSON", cwd=REPO)
    assert proc.returncode == 1 and json.loads(proc.stdout)["verdict"] == "incompatible"
    assert json.loads(invoke_cli("rules", "-f", "JSON").stdout)["rules"]


def test_output_dash_is_stdout(tmp_path: Path) -> None:
    """-o - writes the report to stdout, never a file named '-'."""
    pairs = REPO / "tests" / "fixtures" / "registry" / "pairs.yaml"
    proc = invoke_cli("registry", str(pairs), "-f", "json", "-o", "-", cwd=tmp_path)
    assert json.loads(proc.stdout)["summary"]["pairs"] == 5
    assert not (tmp_path / "-").exists()


def test_rules_and_explain_print_full_text_in_a_pipe() -> None:
    """In a pipe (no terminal, no COLUMNS) nothing is cut to 80 columns: `rules | grep`."""
    from dflash_check.check.rules import RULES_BY_ID

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = [sys.executable, "-m", "dflash_check"]
    out = subprocess.run([*run, "rules"], env=env, capture_output=True, text=True).stdout
    (line,) = [x for x in out.splitlines() if x.startswith("DF004")]
    assert line.endswith(RULES_BY_ID["DF004"].title) and "…" not in line
    explain = subprocess.run([*run, "explain", "DF004"], env=env, capture_output=True, text=True)
    assert f"why: {RULES_BY_ID['DF004'].why}" in explain.stdout


def test_quiet_drops_the_summary(tmp_path: Path) -> None:
    """registry -q: no summary line on stderr; the report and the exit code are unchanged."""
    pairs = str(REPO / "tests" / "fixtures" / "registry" / "pairs.yaml")
    loud = invoke_cli("registry", pairs, "-f", "json")
    quiet = invoke_cli("registry", pairs, "-f", "json", "-q")
    assert "dflash-check: registry:" in loud.stderr
    assert "dflash-check: registry:" not in quiet.stderr
    assert quiet.stdout == loud.stdout and quiet.returncode == loud.returncode == 1


@pytest.mark.parametrize("args", [("-f", "json"), ("-o", "report.txt"), ("-f", "sarif")])
def test_pair_quiet_drops_the_summary(tmp_path: Path, args: tuple[str, ...]) -> None:
    """pair -q, as registry -q: stderr stays empty; the report and the exit code do not move."""
    pair = ["pair", *(str(REPO / p) for p in SEED), *args]
    loud = invoke_cli(*pair, cwd=tmp_path)
    loud_file = (tmp_path / "report.txt").read_text() if "-o" in args else None
    quiet = invoke_cli(*pair, "--quiet", cwd=tmp_path)
    assert loud.stderr.startswith("dflash-check: incompatible")
    assert quiet.stderr == ""
    assert quiet.returncode == loud.returncode == 1
    assert quiet.stdout == loud.stdout
    if loud_file is not None:
        assert (tmp_path / "report.txt").read_text() == loud_file
    # Errors are not quieted: a target that does not exist still says why, exit 3.
    missing = invoke_cli("pair", str(REPO / SEED[0]), str(tmp_path / "nothing"), "-q")
    assert missing.returncode == 3 and "directory not found" in missing.stderr


def test_completion_of_runtimes_and_rule_ids() -> None:
    """-r completes runtime names (after a comma too); --ignore and explain complete ids."""
    assert "sglang" in complete_runtime("sg")
    assert complete_runtime("vllm,sg") == ["vllm,sglang"]
    assert "DF004" in complete_rule("df00") and all(
        r.startswith("DF00") for r in complete_rule("DF00")
    )


def test_junit_names_are_unique(tmp_path: Path) -> None:
    """The same pair listed for two runtimes: two test cases with different names."""
    draft, target = (REPO / "examples" / "Qwen3-4B-DFlash-b16", REPO / "examples" / "Qwen3-4B")
    entry = f"  - draft: {draft}\n    target: {target}\n    expect: compatible\n"
    (tmp_path / "pairs.yaml").write_text(
        f"version: 1\npairs:\n{entry}    runtimes: [vllm]\n{entry}    runtimes: [sglang]\n"
    )
    out = invoke_cli("registry", "pairs.yaml", "-f", "junit", cwd=tmp_path).stdout
    names = [c.get("name") for c in ET.fromstring(out).iter("testcase")]
    assert len(names) == len(set(names)) == 2
    assert names[0].endswith("[vllm] (line 3)") and names[1].endswith("[sglang] (line 7)")


def test_pair_sarif_results_have_a_region() -> None:
    """`pair` SARIF results point at the field's line in the local config.json."""
    log = json.loads(invoke_cli("pair", *SEED, "-f", "sarif", cwd=REPO).stdout)
    config = (REPO / SEED[0] / "config.json").read_text().splitlines()
    for result in log["runs"][0]["results"]:
        physical = result["locations"][0]["physicalLocation"]
        line = physical["region"]["startLine"]
        if result["ruleId"] == "DF004":
            assert '"target_layer_ids"' in config[line - 1]


def test_typo_in_the_first_folder_is_local_and_named(tmp_path: Path) -> None:
    """exmaples/...: a near miss of a folder here is a local path, named with its fix at once
    (no Hub lookup: offline would otherwise say 'not in the cache')."""
    proc = invoke_cli(
        "pair",
        "exmaples/Qwen3-4B-DFlash-b16",
        "examples/Qwen3-4B",
        cwd=REPO,
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 3
    assert "draft exmaples/Qwen3-4B-DFlash-b16: directory not found" in proc.stderr
    assert "did you mean examples/Qwen3-4B-DFlash-b16?" in proc.stderr
    assert "cache" not in proc.stderr


def test_hf_prefix_forces_the_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hf://ORG/NAME is a Hub repo id even where a local ORG/ folder exists."""
    from dflash_check.sources.interface import parse_model_ref

    (tmp_path / "Qwen" / "Qwen3-4B").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert parse_model_ref("Qwen/Qwen3-4B").path is not None  # the local folder wins
    forced = parse_model_ref("hf://Qwen/Qwen3-4B@main")
    assert (forced.path, forced.repo_id, forced.revision) == (None, "Qwen/Qwen3-4B", "main")
