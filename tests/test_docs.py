"""Generated documentation matches the tables it is generated from."""

from __future__ import annotations

import pytest

from dflash_check import docs
from tests.helpers import REPO


@pytest.mark.parametrize("path", sorted(docs.DOCS))
def test_generated_docs_are_current(path: str) -> None:
    """Regenerate with `python -m dflash_check.docs` (rules, runtimes and the CLI reference)."""
    assert (REPO / path).read_text() == docs.DOCS[path](), f"{path} is stale: regenerate it"


def test_every_rule_is_documented() -> None:
    """Each rule id has its own section."""
    from dflash_check.core.rules import RULES

    text = (REPO / "docs/rules.md").read_text()
    for r in RULES:
        assert f"## {r.id}" in text


def test_cli_reference_has_no_html_entities() -> None:
    """docs/cli.md is Markdown: typer's HTML escapes (&gt;, &#x27;) are undone."""
    import re

    text = (REPO / "docs" / "cli.md").read_text()
    assert not re.search(r"&(#x?[0-9a-f]+|[a-z]+);", text)
    assert "x>=0.1" in text and "DRAFT TARGET" in text and "@REVISION" in text
    assert "Exit codes:" in text


def test_every_rule_is_in_the_terminal_listing() -> None:
    """`dflash-check rules` shows every rule, the DF09x outcome rules too, with why and fix."""
    from dflash_check.core.rules import ALL_RULES

    text = docs.rules_text(80)
    for r in ALL_RULES:
        assert f"{r.id}  {r.severity.value}  {r.name}" in text
    assert text.count("  why: ") == text.count("  fix: ") == len(ALL_RULES)


def test_every_format_is_documented() -> None:
    """Each draft format has its own section, naming where its layer ids are kept."""
    from dflash_check.core.formats import FORMATS

    text = (REPO / "docs/formats.md").read_text()
    for f in FORMATS:
        assert f"## {f.name}" in text
        assert dict(f.keys).get("layer ids", "as the z-lab format") in text


def test_readme_limits_table_is_current() -> None:
    """The README's Limits table is docs.limits_markdown() (from core.limits)."""
    assert docs.limits_markdown() in (REPO / "README.md").read_text(), (
        "README.md's Limits table is stale: paste docs.limits_markdown()"
    )


def test_runtimes_listing_shows_every_methods_rows() -> None:
    """`dflash-check runtimes` lists the DFlash, EAGLE-3 and MTP rows, each runtime with the keys
    it reads ids from."""
    from dflash_check.core.runtimes import METHOD_PROFILES

    text = docs.runtimes_text(100)
    for method, rows in METHOD_PROFILES.items():
        block = text.split(f"== {method} ==", 1)[1]
        for p in rows:
            assert f"{p.name}  ({p.title})" in block
    assert "ids read from: eagle_config.eagle_aux_hidden_state_layer_ids" in text
