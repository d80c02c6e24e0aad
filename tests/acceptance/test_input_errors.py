"""Every error is a result: a broken pairs.yaml, overrides file or engine test file gives, in
every format, each of its mistakes at file:line in one run, exit 3, and ``-o`` never leaves the
report of an earlier run behind."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from tests.acceptance.test_engine_tests import MAIN, checkout
from tests.acceptance.test_registry import sarif_schema
from tests.support.helpers import invoke_cli

# Three mistakes, at lines 2, 5 and 9.
BROKEN = (
    "pairs:\n"
    "  - draft: a\n"
    "  - draft: b/c\n"
    "    target: d/e\n"
    "    expect: maybe\n"
    "  - draft: x/y\n"
    "    target: z/w\n"
    "    expect: compatible\n"
    "    runtimes: [vlm]\n"
)
LINES = [2, 5, 9]


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A pairs.yaml with three mistakes."""
    (tmp_path / "bad.yaml").write_text(BROKEN)
    return tmp_path


def run(cwd: Path, *args: str):
    """Run `registry bad.yaml` (no network: nothing is checked)."""
    return invoke_cli("registry", "bad.yaml", *args, cwd=cwd)


def test_every_mistake_on_stderr_in_one_run(broken: Path) -> None:
    """All three, each an Error line at its line; exit 3; no traceback."""
    proc = run(broken)
    assert proc.returncode == 3
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert [int(e.split(":")[2]) for e in errors] == LINES, proc.stderr
    assert "missing key 'target'" in errors[0] and "'maybe'" in errors[1]
    assert "unknown runtime 'vlm' (did you mean 'vllm'?)" in errors[2]
    assert "Traceback" not in proc.stderr


def test_sarif_has_each_mistake_as_a_notification(broken: Path) -> None:
    """SARIF: a valid log, an unsuccessful invocation, one error notification per line."""
    proc = run(broken, "-f", "sarif")
    assert proc.returncode == 3
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["error"] * 3
    where = [n["locations"][0]["physicalLocation"] for n in notes]
    assert [w["artifactLocation"]["uri"] for w in where] == ["bad.yaml"] * 3
    assert [w["region"]["startLine"] for w in where] == LINES


def test_github_junit_markdown_json_name_each_line(broken: Path) -> None:
    """GitHub ::error file=,line=; a JUnit error per mistake; a Markdown row each; JSON errors."""
    gh = run(broken, "-f", "github").stdout.splitlines()
    assert [g.split("::")[1] for g in gh[:3]] == [
        f"error file=bad.yaml,line={n},title=invalid input" for n in LINES
    ]
    suite = ET.fromstring(run(broken, "-f", "junit").stdout).find("testsuite")
    assert suite is not None and suite.get("errors") == "3"
    assert [c.get("line") for c in suite.findall("testcase")] == [str(n) for n in LINES]
    assert len(suite.findall("testcase/error")) == 3
    md = run(broken, "-f", "markdown").stdout
    assert "3 mistakes in the input, nothing checked." in md
    assert all(f"| `bad.yaml` | {n} |" in md for n in LINES)
    data = json.loads(run(broken, "-f", "json").stdout)
    assert [(e["file"], e["line"]) for e in data["errors"]] == [("bad.yaml", n) for n in LINES]
    assert data["pairs"] == []


@pytest.mark.parametrize("fmt", ["table", "json", "sarif", "junit", "github", "markdown"])
def test_output_file_never_stale(broken: Path, fmt: str) -> None:
    """-o is rewritten with the mistakes, whatever the format: a CI never uploads the
    report of an earlier run."""
    out = broken / "report.out"
    out.write_text("STALE REPORT OF AN EARLIER RUN\n")
    proc = run(broken, "-f", fmt, "-o", str(out))
    assert proc.returncode == 3 and proc.stdout == ""
    text = out.read_text()
    assert "STALE" not in text and "bad.yaml" in text and "vlm" in text


def test_missing_file_is_a_result_too(tmp_path: Path) -> None:
    """A file that is not there: the error in the SARIF log, the stale file replaced."""
    out = tmp_path / "x.sarif"
    out.write_text("stale")
    proc = invoke_cli("registry", "nope.yaml", "-f", "sarif", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 3
    (note,) = json.loads(out.read_text())["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"] == "file not found"


def test_overrides_file_mistakes_all_reported(tmp_path: Path) -> None:
    """An overrides file with two broken entries: both, at their lines, in one run."""
    checkout(tmp_path, MAIN)
    cwd = tmp_path / "vllm"
    (cwd / "overrides.yaml").write_text(
        "version: 1\nentries:\n  DFlashDraftModle:\n    skip: x\n"
        "  Eagle3LlamaForCausalLM:\n    expect: maybe\n"
    )
    args = ("tests/models/registry.py", "--overrides", "overrides.yaml", "-f", "github")
    proc = invoke_cli("registry", *args, cwd=cwd)
    assert proc.returncode == 3
    assert (
        "::error file=overrides.yaml,line=3,title=invalid input::no entry 'DFlashDraftModle'"
        in (proc.stdout)
    )
    assert "::error file=overrides.yaml,line=5,title=invalid input::'Eagle3LlamaForCausalLM': " in (
        proc.stdout
    )


def test_engine_file_syntax_error_at_its_line(tmp_path: Path) -> None:
    """An engine test file that is not Python: the error at its line in the SARIF log."""
    checkout(tmp_path, MAIN.replace('"MedusaModel": _HfExamplesInfo(', '"MedusaModel" _HfEx('))
    proc = invoke_cli("registry", "tests/models/registry.py", "-f", "sarif", cwd=tmp_path / "vllm")
    assert proc.returncode == 3
    (note,) = json.loads(proc.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    physical = note["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "tests/models/registry.py"
    assert physical["region"]["startLine"] > 1 and "not valid Python" in note["message"]["text"]
