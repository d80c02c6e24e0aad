"""Generated documentation matches the tables it is generated from."""

from __future__ import annotations

import pytest

from dflash_check import docs
from tests.helpers import REPO


@pytest.mark.parametrize(
    ("path", "render"),
    [("docs/rules.md", docs.rules_markdown), ("docs/runtimes.md", docs.runtimes_markdown)],
)
def test_generated_docs_are_current(path: str, render: object) -> None:
    """Regenerate with `dflash-check rules -f markdown > docs/rules.md` (or runtimes)."""
    assert callable(render)
    assert (REPO / path).read_text() == render(), f"{path} is stale: regenerate it"


def test_every_rule_is_documented() -> None:
    """Each rule id has its own section."""
    from dflash_check.core.rules import RULES

    text = (REPO / "docs/rules.md").read_text()
    for r in RULES:
        assert f"## {r.id}" in text


def test_cli_reference_is_current(tmp_path: object) -> None:
    """docs/cli.md is what `typer dflash_check.cli utils docs` generates."""
    import subprocess
    import sys
    from pathlib import Path

    out = Path(str(tmp_path)) / "cli.md"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "typer",
            "dflash_check.cli",
            "utils",
            "docs",
            "--name",
            "dflash-check",
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    assert out.read_text() == (REPO / "docs" / "cli.md").read_text(), (
        "docs/cli.md is stale: typer dflash_check.cli utils docs --name dflash-check "
        "--output docs/cli.md"
    )


def test_readme_limits_table_is_current() -> None:
    """The README's Limits table is docs.limits_markdown() (from core.limits)."""
    assert docs.limits_markdown() in (REPO / "README.md").read_text(), (
        "README.md's Limits table is stale: paste docs.limits_markdown()"
    )
