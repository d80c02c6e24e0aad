"""The GitHub Action and the pre-commit hook, run locally.

The Action's check step is run as the runner runs a composite step (``bash --noprofile
--norc -eo pipefail``), its ``env:`` filled from the inputs as the runner fills it, with
hostile inputs: shell payloads and values that look like options must stay data. The
install step is left out (it needs the package index); the tool is this test environment's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dflash_check.cli.hook import main as hook_main
from dflash_check.cli.hook import split_args
from dflash_check.cli.output import most_severe
from tests.support.helpers import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEP = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "check")
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def run_check_step(tmp_path: Path, **given: str) -> tuple[int, dict[str, str], str]:
    """Run the check step with ``given`` inputs (the rest at their defaults); return its exit
    code, its outputs and its stdout and stderr."""
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    values = {f"inputs.{k}": v for k, v in inputs.items()}
    values["steps.install.outputs.python"] = sys.executable

    def fill(text: str) -> str:
        # The runner substitutes env: values as plain strings: never parsed by a shell.
        return EXPRESSION.sub(lambda m: values[m.group(1)], text)

    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    output.write_text("")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        **{k: fill(str(v)) for k, v in STEP["env"].items()},
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "HF_HUB_OFFLINE": "1",
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", STEP["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return proc.returncode, outputs, proc.stdout + proc.stderr


def test_outputs_give_the_verdict_and_counts(tmp_path: Path) -> None:
    """The golden registry (one pair not as expected, one not checked): exit 1, its counts."""
    shutil.copytree(REPO / "tests" / "fixtures", tmp_path / "tests" / "fixtures")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    code, outputs, log = run_check_step(tmp_path, pairs="tests/fixtures/registry/pairs.yaml")
    assert code == 1, log
    assert outputs["verdict"] == "not-as-expected" and outputs["exit-code"] == "1"
    assert (outputs["pairs"], outputs["as-expected"]) == ("5", "3")
    assert (outputs["not-as-expected"], outputs["not-checked"], outputs["errors"]) == (
        "1",
        "1",
        "0",
    )
    assert Path(outputs["sarif"]).is_file()
    assert "::error file=tests/fixtures/registry/pairs.yaml,line=15,title=DF090::" in log
    assert "| ❌ | 15 |" in (tmp_path / "summary.md").read_text()


HOSTILE = {
    "command substitution": {"pairs": "$(touch PWNED).yaml"},
    "quote breaking": {"pairs": '"; touch PWNED; echo "', "only": "`touch PWNED`"},
    "option-looking path": {"pairs": "--help"},
    "option-looking values": {"overrides": "--format=json", "only": "-o PWNED"},
    "runtime payload": {"runtimes": "vllm;touch${IFS}PWNED $(touch PWNED) *", "kind": "vllm"},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_inputs_stay_data(tmp_path: Path, case: str) -> None:
    """No payload runs, no value becomes an option: the tool reads each as the data it is
    (a file that is not there, an unknown runtime) and the step ends with its exit code."""
    (tmp_path / "pairs.yaml").write_text("version: 1\npairs: []\n")
    code, outputs, log = run_check_step(tmp_path, **HOSTILE[case])
    assert not list(tmp_path.rglob("PWNED")), log
    assert "Show this message and exit" not in log  # no value was read as --help
    assert code in (2, 3), log
    assert outputs["verdict"] in ("not-checked", "usage-error")
    assert outputs["exit-code"] == str(code)


def test_strict_input_is_true_or_false(tmp_path: Path) -> None:
    """Anything but true/false is refused before the tool runs (exit 2), not passed on."""
    code, _, log = run_check_step(tmp_path, strict="yes; touch PWNED")
    assert code == 2 and "input strict must be true or false" in log
    assert not list(tmp_path.rglob("PWNED"))


def test_hook_checks_each_file_passed(tmp_path: Path) -> None:
    """The hook checks sub/pairs.yaml and pairs.yml where they are (not ./pairs.yaml), options
    first; its exit code is the most severe of theirs."""
    sub = tmp_path / "sub"
    sub.mkdir()
    example = (REPO / "examples" / "Qwen3-4B-DFlash-b16").as_posix()
    target = (REPO / "examples" / "Qwen3-4B").as_posix()
    good = (
        f"version: 1\npairs:\n  - draft: {example}\n    target: {target}\n    expect: compatible\n"
    )
    (sub / "pairs.yaml").write_text(good)
    (tmp_path / "pairs.yml").write_text(good.replace("expect: compatible", "expect: incompatible"))
    files = [str(sub / "pairs.yaml"), str(tmp_path / "pairs.yml")]
    assert split_args(["--offline", *files]) == (["--offline"], files)
    assert hook_main(["--offline", files[0]]) == 0
    assert hook_main(["--offline", *files]) == 1
    assert hook_main([]) == 0


def test_most_severe_is_the_registry_rule() -> None:
    """1 beats 3 beats 2 beats 0; a crash's code is never hidden."""
    assert most_severe([0, 3, 1, 2]) == 1
    assert most_severe([0, 2, 3]) == 3
    assert most_severe([2, 0]) == 2
    assert most_severe([0, 0]) == 0 and most_severe([]) == 0
    assert most_severe([1, 120]) == 120
