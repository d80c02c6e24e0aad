"""Generated documentation matches the tables it is generated from."""

from __future__ import annotations

import re

import pytest

from dflash_check.render.listing.rules import rules_text
from dflash_check.render.listing.runtimes import runtimes_text
from tests.support.helpers import REPO
from tools import gen_docs


@pytest.mark.parametrize("path", sorted(gen_docs.DOCS))
def test_generated_docs_are_current(path: str) -> None:
    """Regenerate with `python tools/gen_docs.py` (rules, runtimes and the CLI reference)."""
    assert (REPO / path).read_text() == gen_docs.DOCS[path](), f"{path} is stale: regenerate it"


def test_every_rule_is_documented() -> None:
    """Each rule id has its own section."""
    from dflash_check.check.rules import RULES

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
    from dflash_check.check.rules import ALL_RULES

    text = rules_text(80)
    for r in ALL_RULES:
        assert f"{r.id}  {r.severity.value}  {r.name}" in text
    assert text.count("  why: ") == text.count("  fix: ") == len(ALL_RULES)


def test_every_format_is_documented() -> None:
    """Each draft format has its own section, naming where its layer ids are kept."""
    from dflash_check.check.formats import FORMATS

    text = (REPO / "docs/formats.md").read_text()
    for f in FORMATS:
        assert f"## {f.name}" in text
        assert dict(f.keys).get("layer ids", "as the z-lab format") in text


def test_limits_table_is_current() -> None:
    """docs/limits.md's table is gen_docs.limits_markdown() (from sources.limits)."""
    assert gen_docs.limits_markdown() in (REPO / "docs" / "limits.md").read_text(), (
        "docs/limits.md's Limits table is stale: paste gen_docs.limits_markdown()"
    )


def readme_samples() -> list[tuple[str, str]]:
    """Return each README sample output: (the golden file it names, the block's text)."""
    text = (REPO / "README.md").read_text()
    found = re.findall(r"<!-- golden: (\S+) -->\n```text\n(.*?)```", text, re.S)
    return [(path, block) for path, block in found]


def test_readme_samples_are_the_golden_files() -> None:
    """Every sample output in the README is a golden file, which the tests compare with the
    tool's output: the README cannot drift from the tool."""
    samples = readme_samples()
    assert samples, "the README's sample output lost its golden marker"
    for path, block in samples:
        assert block == (REPO / path).read_text(), f"README sample differs from {path}"
    text = (REPO / "README.md").read_text()
    # every ```text block is a golden sample (console blocks are commands, not output)
    assert text.count("```text") == len(samples)


def test_readme_is_a_guide() -> None:
    """The README stays short and links every docs page; one Speed table, one row per code."""
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    for page in ("rules", "runtimes", "formats", "engines", "ci", "limits", "cli", "guide"):
        assert f"(docs/{page}.md)" in text, page
    for heading in ("## Install", "## Quick start", "## Speed", "## Exit codes"):
        assert text.count(heading + "\n") == 1, heading
    codes = re.findall(r"^\| (\d) \|", text, re.M)
    assert codes == ["0", "1", "2", "3"]


def test_docs_links_resolve() -> None:
    """Every relative link of the README and docs/*.md names a file that exists."""
    for page in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_runtimes_listing_shows_every_methods_rows() -> None:
    """`dflash-check runtimes` lists the DFlash, EAGLE-3 and MTP rows, each runtime with the keys
    it reads ids from."""
    from dflash_check.knowledge.runtimes import METHOD_PROFILES

    text = runtimes_text(100)
    for method, rows in METHOD_PROFILES.items():
        block = text.split(f"== {method} ==", 1)[1]
        for p in rows:
            assert f"{p.name}  ({p.title})" in block
    assert "ids read from: eagle_config.eagle_aux_hidden_state_layer_ids" in text


def _message_strings() -> list[tuple[str, int, str]]:
    """Return every string constant of the package that is not a docstring: what users read
    (messages, rule texts, help), with its file and line."""
    import ast

    found = []
    for path in sorted((REPO / "dflash_check").rglob("*.py")):
        tree = ast.parse(path.read_text())
        # A string standing alone as a statement (a docstring, an attribute's docstring) is
        # for readers of the code; the rest can reach a user.
        docstrings = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                found.append((path.relative_to(REPO).as_posix(), node.lineno, node.value))
    return found


def test_messages_cite_pages_an_installed_package_has() -> None:
    """A message cites a page as 'dflash-check docs PAGE' (shipped in the wheel), never as a
    path in the repository, and every page it names exists."""
    from dflash_check import manual

    strings = _message_strings()
    paths = [(f, n) for f, n, s in strings if re.search(r"\bdocs/[\w./-]+", s)]
    assert not paths, f"messages citing a repository path instead of 'dflash-check docs': {paths}"
    text = " ".join(s for _, _, s in strings)
    cited = set(re.findall(r"dflash-check docs ([\w/-]+)", text))
    assert cited, "no message cites a page: the scan is wrong"
    assert cited <= set(manual.pages()), (
        f"cited pages that do not exist: {cited - set(manual.pages())}"
    )


def test_docs_lists_and_prints_every_page() -> None:
    from tests.support.helpers import invoke_cli

    listed = invoke_cli("docs")
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    on_disk = sorted(
        p.relative_to(REPO / "docs").as_posix()[:-3] for p in (REPO / "docs").rglob("*.md")
    )
    assert names == on_disk
    assert "runtimes" in names and "engine-reading/vllm" in names
    shown = invoke_cli("docs", "engine-reading/vllm")
    assert shown.returncode == 0
    assert shown.stdout == (REPO / "docs/engine-reading/vllm.md").read_text()
    assert invoke_cli("docs", "docs/limits.md").stdout == (REPO / "docs/limits.md").read_text()


@pytest.mark.parametrize("page", ["nope", "../README", "../pyproject.toml", "/etc/passwd", ""])
def test_docs_refuses_anything_but_a_listed_page(page: str) -> None:
    from tests.support.helpers import invoke_cli

    proc = invoke_cli("docs", page)
    assert proc.returncode == 2
    assert "no page" in proc.stderr and "runtimes" in proc.stderr
    assert proc.stdout == ""
