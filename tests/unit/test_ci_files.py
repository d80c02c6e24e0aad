"""What CI users plug in: the composite action, the pre-commit hook, the licence, Markdown."""

from __future__ import annotations

import re

import yaml

from tests.support.helpers import REPO, invoke_cli

SEED = (str(REPO / "examples" / "Qwen3-4B-DFlash-b16"), str(REPO / "examples" / "Qwen3-4B"))
BAD_TARGET = str(REPO / "examples" / "Qwen3.5-4B")
PYPROJECT = (REPO / "pyproject.toml").read_text()  # tomllib is 3.11+; the keys are one line


def test_action_installs_locked_in_a_private_venv_and_pins_by_commit() -> None:
    """action.yml: a composite action; the tool from $GITHUB_ACTION_PATH with the lock's
    versions in a venv of its own (no setup-python: the job's Python stays); every
    third-party action pinned by a 40-hex commit with its tag in a comment; no input written
    into a script (each reaches the shell through env)."""
    text = (REPO / "action.yml").read_text()
    action = yaml.safe_load(text)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = steps[0]["run"]
    assert '"$PYTHON" -m venv "$venv"' in install and 'venv="$RUNNER_TEMP/' in install
    assert '--constraint "$GITHUB_ACTION_PATH/requirements/lock.txt" "$GITHUB_ACTION_PATH"' in (
        " ".join(install.replace("\\\n", " ").split())
    )
    assert "GITHUB_ENV" not in text and "GITHUB_PATH" not in text  # the caller's job unchanged
    uses = [s["uses"] for s in steps if "uses" in s]
    assert uses and not any(u.startswith("actions/setup-python") for u in uses)
    for use in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", use), use
        tag = re.search(rf"# ([\w/.-]+) v\d+\.\d+\.\d+\n\s+- uses: {re.escape(use)}", text)
        assert tag is not None, f"{use}: no '# OWNER/NAME vX.Y.Z' comment above it"
    for step in steps:
        assert "${{" not in step.get("run", ""), step.get("name")
    for name in action["inputs"]:
        assert f"inputs.{name}" in text, f"input {name} unused"
    for name in ("verdict", "exit-code", "pairs", "as-expected", "not-as-expected", "not-checked"):
        assert name in action["outputs"], name
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/"))
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif }}"


def test_pre_commit_hook_checks_the_files_it_is_passed() -> None:
    """The hook's entry is the console script pyproject installs; pre-commit passes it the
    staged pairs files (pass_filenames), which it checks where they are."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "dflash-check-registry"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is True
    (command,) = hook["entry"].split()
    assert re.search(rf'^{command} = "dflash_check.cli.hook:main"', PYPROJECT, re.M)
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
    assert f"**incompatible on all 6 runtimes** ({counts.group(1)})" in md.stdout
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


def test_the_hook_never_takes_an_options_value_for_a_file(tmp_path) -> None:
    """pre-commit appends files after ``args:``; a value in ``args:`` that happens to be a file
    on disk (``-o out.sarif`` from an earlier run) stays the option's value."""
    from dflash_check.cli.hook import split_args, value_options

    out, pairs = tmp_path / "out.sarif", tmp_path / "pairs.yaml"
    out.touch()
    pairs.touch()
    takes_value = value_options()
    assert {"-o", "--output", "-f", "--format"} <= takes_value
    assert "--strict" not in takes_value
    argv = ["--format", "sarif", "-o", str(out), str(pairs)]
    assert split_args(argv, takes_value) == (argv[:4], [str(pairs)])
    assert split_args(["--strict", str(out), str(pairs)], takes_value) == (
        ["--strict"],
        [str(out), str(pairs)],
    )
