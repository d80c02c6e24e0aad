"""A rule is added in one place: its module's ``RULES`` tuple, concatenated by ``rules/__init__``.

The fake rule below is written as a rule module writes one (``@rule`` from ``rules/base.py``);
nothing registers it on import. Putting it into the concatenated table is all the check needs to
run it and report its findings, under its id, severity and default hint.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest

from dflash_check.check import rules
from dflash_check.check.report import CheckReport, Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, rule
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


@rule(
    "DF099",
    "fake-block-size-named",
    Severity.WARNING,
    "A fake rule that names the draft's block size",
    "Exists only to show that one tuple is the one place a rule is added.",
    "Nothing to fix: this rule is a test's.",
    runtimes=("vllm",),
)
def check_fake(ctx: PairContext) -> Iterator[Issue]:
    """Report the draft's block size once, for vLLM (a DFlash-family fact: its facet)."""
    facts = ctx.draft.dflash
    if facts is None:
        return
    yield Issue(f"draft {ctx.draft.name} block_size {facts.block_size}", runtime="vllm")


FAKE_MODULE_RULES: tuple[Rule, ...] = (check_fake,)
"""What a new rule module ends with."""


def check_seed_pair() -> CheckReport:
    """Check the seed draft against its real target (a clean pair)."""
    draft = draft_config()
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", qwen3_4b_config()))


def test_defining_a_rule_registers_nothing() -> None:
    """The decorator makes a ``Rule`` and leaves the table alone."""
    assert isinstance(check_fake, Rule)
    assert "DF099" not in {r.id for r in rules.ALL_RULES}
    assert not [f for f in check_seed_pair().findings if f.rule == "DF099"]


def test_a_rule_in_the_table_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding the module's tuple to the concatenated table makes the check run the rule."""
    monkeypatch.setattr(rules, "RULES", (*rules.RULES, *FAKE_MODULE_RULES))
    hits = [f for f in check_seed_pair().findings if f.rule == "DF099"]
    assert len(hits) == 1
    assert hits[0].severity is Severity.WARNING
    assert hits[0].runtime == "vllm"
    assert hits[0].message == "draft mem/draft block_size 16"
    assert hits[0].hint == "Nothing to fix: this rule is a test's."


def test_a_rule_s_issue_about_an_engine_left_out_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rule body says what one engine does without asking whether it is selected: the check
    keeps an issue about a runtime only when that runtime is checked."""
    monkeypatch.setattr(rules, "RULES", (*rules.RULES, *FAKE_MODULE_RULES))
    draft = draft_config()
    pair = (files("draft", draft, fc_tensors(draft)), files("target", qwen3_4b_config()))
    assert [f.runtime for f in check_files(*pair, "vllm").findings if f.rule == "DF099"] == ["vllm"]
    assert not [f for f in check_files(*pair, "sglang").findings if f.rule == "DF099"]


def test_every_rule_module_is_in_the_table() -> None:
    """Each rule a module defines is in its ``RULES`` tuple, and each tuple is in the table:
    a rule written but not listed, or a module not concatenated, fails here."""
    listed: list[Rule] = []
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"{rules.__name__}.{info.name}")
        defined = {v for v in vars(module).values() if isinstance(v, Rule)}
        if info.name in ("base", "outcomes"):
            continue  # the decorator's home; the outcome rules have tables of their own
        assert defined == set(module.RULES), info.name
        listed.extend(module.RULES)
    assert sorted(r.id for r in listed) == [r.id for r in rules.RULES]
    assert {r.id: r for r in listed} == rules.RULES_BY_ID
    assert rules.RULES_BY_NAME["layer-ids-missing"] is rules.RULES_BY_ID["DF001"]
