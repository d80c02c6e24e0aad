"""Suppressions are visible: what `--ignore` (or a pair's `ignore` in pairs.yaml) keeps out of
a verdict is still reported, as suppressed, in every format."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.support.helpers import REPO, invoke_cli

PAIR = ("examples/Qwen3-4B-DFlash-b16", "examples/Qwen3.5-4B")
IGNORES = ("--ignore", "DF004", "--ignore", "DF007", "--ignore", "DF011")
SUMMARY = "3 rules ignored: DF004, DF007, DF011"


def pair(*args: str):
    """Run `pair` on the seed pairing with three rules ignored."""
    return invoke_cli("pair", *PAIR, *IGNORES, *args, cwd=REPO)


def test_table_and_summary_name_the_ignored_rules() -> None:
    """The verdict printed first and the stderr summary both say what was ignored."""
    proc = pair("--ignore", "DF005", "--ignore", "DF006")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith(
        "compatible on all 6 runtimes (5 rules ignored: DF004, DF005, DF006, DF007, DF011)"
    )
    json_run = pair("-f", "json")
    assert f"dflash-check: compatible ({SUMMARY})" in json_run.stderr


def test_json_lists_ignored_rules_and_what_they_found() -> None:
    """JSON: ``ignored_rules`` and ``suppressed`` (never counted), valid against the schema."""
    data = json.loads(pair("-f", "json").stdout)
    jsonschema.validate(data, json.loads((REPO / "docs" / "report.schema.json").read_text()))
    assert data["ignored_rules"] == ["DF004", "DF007", "DF011"]
    assert data["verdict_text"] == f"compatible ({SUMMARY})"
    assert {f["rule"] for f in data["suppressed"]} == {"DF004", "DF007", "DF011"}
    assert not {f["rule"] for f in data["findings"]} & {"DF004", "DF007", "DF011"}
    plain = json.loads(invoke_cli("pair", *PAIR, "-f", "json", cwd=REPO).stdout)
    assert plain["ignored_rules"] == [] and plain["suppressed"] == []


def test_sarif_uses_suppressions() -> None:
    """SARIF: the ignored findings are results with an external suppression; no other is."""
    log = json.loads(pair("-f", "sarif").stdout)
    results = log["runs"][0]["results"]
    suppressed = {r["ruleId"] for r in results if r.get("suppressions")}
    assert suppressed == {"DF004", "DF007", "DF011"}
    assert all(r["suppressions"][0]["kind"] == "external" for r in results if r.get("suppressions"))
    assert all(r["ruleId"] == "DF013" for r in results if not r.get("suppressions"))


def test_github_junit_markdown_say_so() -> None:
    """GitHub: a notice per ignored finding (never an error); JUnit and Markdown name them."""
    gh = pair("-f", "github").stdout
    assert "::error" not in gh
    assert "title=DF004 (ignored)::" in gh and "title=DF011 (ignored)::" in gh
    assert gh.rstrip().endswith(f"compatible ({SUMMARY})")
    junit = pair("-f", "junit").stdout
    assert "DF007 error (ignored):" in junit and "<failure" not in junit
    assert f"compatible on all 6 runtimes ({SUMMARY})" in pair("-f", "markdown").stdout


def test_pairs_yaml_ignore_is_reported(tmp_path: Path) -> None:
    """A pair's ``ignore:`` works as --ignore does, and the registry row names it; an unknown
    id is an error at its line."""
    draft, target = (REPO / p for p in PAIR)
    (tmp_path / "pairs.yaml").write_text(
        f"version: 1\npairs:\n  - draft: {draft}\n    target: {target}\n"
        "    expect: compatible\n    ignore: [DF004, df005, DF006, DF007, DF011]\n"
    )
    proc = invoke_cli("registry", "pairs.yaml", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)["pairs"]
    assert entry["report"]["ignored_rules"] == ["DF004", "DF005", "DF006", "DF007", "DF011"]
    table = invoke_cli("registry", "pairs.yaml", cwd=tmp_path, env={"COLUMNS": "300"})
    assert "compatible, as expected (5 rules ignored: DF004, DF005" in table.stdout
    (tmp_path / "pairs.yaml").write_text(
        (tmp_path / "pairs.yaml").read_text().replace("DF011]", "DF999]")
    )
    bad = invoke_cli("registry", "pairs.yaml", cwd=tmp_path)
    assert bad.returncode == 3
    assert "pairs.yaml:6: pair 1: unknown rule id 'DF999'" in bad.stderr
