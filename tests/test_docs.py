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
