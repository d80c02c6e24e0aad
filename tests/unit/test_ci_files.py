"""What CI users plug in: the composite action, the pre-commit hook, the licence, Markdown."""

from __future__ import annotations

import re

import yaml

from tests.support.helpers import REPO, invoke_cli

SEED = (str(REPO / "examples" / "Qwen3-4B-DFlash-b16"), str(REPO / "examples" / "Qwen3-4B"))
BAD_TARGET = str(REPO / "examples" / "Qwen3.5-4B")
PYPROJECT = (REPO / "pyproject.toml").read_text()  # tomllib is 3.11+; the keys are one line


def test_action_installs_from_its_checkout_and_uploads_sarif() -> None:
    """action.yml: a composite action, the tool from $GITHUB_ACTION_PATH, registry, SARIF."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    scripts = "\n".join(s.get("run", "") for s in steps)
    assert 'pip install --disable-pip-version-check "$GITHUB_ACTION_PATH"' in scripts
    assert re.search(r"dflash-check registry \"\$PAIRS\" --format sarif --output", scripts)
    assert '--format markdown >> "$GITHUB_STEP_SUMMARY"' in scripts
    uploads = [
        s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif")
    ]
    assert uploads and uploads[0]["with"]["sarif_file"] == "${{ steps.check.outputs.sarif }}"
    for name in action["inputs"]:
        assert f"inputs.{name}" in (REPO / "action.yml").read_text(), f"input {name} unused"


def test_pre_commit_hook_runs_the_installed_command() -> None:
    """The hook's entry is the console script pyproject installs, on pairs.yaml files."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "dflash-check-registry"
    assert hook["language"] == "python"
    command, *args = hook["entry"].split()
    assert args == ["registry"]
    assert re.search(rf'^{command} = "dflash_check.cli:main"$', PYPROJECT, re.M)
    assert re.search(hook["files"], "models/pairs.yaml") and re.search(hook["files"], "pairs.yml")
    assert not re.search(hook["files"], "pairs.yaml.bak")


def test_license_file_matches_pyproject() -> None:
    """pyproject says Apache-2.0; the LICENSE file is its full text."""
    assert re.search(r'^license = \{ text = "Apache-2.0" \}$', PYPROJECT, re.M)
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_nothing_points_at_a_package_index_page() -> None:
    """dflash-check is not on a package index: no doc, schema or output says it is."""
    paths = [*REPO.glob("docs/*.md"), *REPO.glob("docs/*.json"), REPO / "README.md"]
    paths += [*REPO.glob("dflash_check/**/*.py"), REPO / "action.yml"]
    for path in paths:
        text = path.read_text()
        assert "pypi.org" not in text, path
        assert "pip install dflash-check" not in text, path
        assert "<org>" not in text, path


def test_markdown_pair_report_states_the_table_counts() -> None:
    """--format markdown: the verdict with the table's counts, one row per problem."""
    table = invoke_cli("pair", SEED[0], BAD_TARGET)
    md = invoke_cli("pair", SEED[0], BAD_TARGET, "--format", "markdown")
    assert md.returncode == table.returncode == 1
    counts = re.search(r"(\d+ errors?, \d+ warnings?)", table.stdout)
    assert counts is not None
    assert f"**incompatible** ({counts.group(1)})" in md.stdout
    rows = [line for line in md.stdout.splitlines() if re.match(r"\| DF\d{3} \|", line)]
    n_errors, n_warnings = (int(n) for n in re.findall(r"\d+", counts.group(1)))
    assert len(rows) == n_errors + n_warnings
    assert len({row.split("|")[1] for row in rows}) == len(rows)  # one row per problem


def test_github_summary_of_one_pair_says_its_verdict() -> None:
    """`pair --format github` ends with the pair's verdict, not a count of pairs."""
    proc = invoke_cli("pair", *SEED, "--format", "github")
    assert proc.returncode == 0
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("::notice title=dflash-check::") and last.endswith(": compatible")
    assert "1 pair" not in proc.stdout
