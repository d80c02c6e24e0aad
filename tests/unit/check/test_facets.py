"""The draft view's facets: each method's own facts sit in its facet, present exactly for that
method, and a rule that needs a facet says nothing (and does not fail) on a draft without it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from dflash_check.check.check import profiles_for, resolve_layers
from dflash_check.check.formats import normalise_draft
from dflash_check.check.rules import RULES
from dflash_check.check.rules.base import PairContext
from dflash_check.check.target import normalise_target
from dflash_check.knowledge.selection import DEFAULT
from dflash_check.views import FACET_METHODS, DFlashFacts, DraftView, TargetView
from tests.support.helpers import FIXTURES, fc_tensors, files, qwen3_4b_config, seed_draft_config

LLAMA_HEAD = FIXTURES / "eagle3" / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
LLAMA_31 = FIXTURES / "targets" / "meta-llama--Meta-Llama-3.1-8B"


def _config(folder: Any) -> dict[str, Any]:
    return json.loads((folder / "config.json").read_text())


def _dflash(**top: Any) -> DraftView:
    cfg = seed_draft_config() | top
    return normalise_draft(files("draft", cfg, fc_tensors(cfg)))


def _views() -> dict[str, tuple[DraftView, TargetView]]:
    """One draft of each method, with a target it is checked against."""
    qwen3 = normalise_target(files("target", qwen3_4b_config()))
    nextn = {**qwen3_4b_config(), "architectures": ["Qwen3ForCausalLMNextN"]}
    return {
        "dflash": (_dflash(), qwen3),
        "dflash2": (_dflash(architectures=["DFlash2DraftModel"]), qwen3),
        "dspark": (_dflash(architectures=["Qwen3DSparkModel"], markov_rank=256), qwen3),
        "eagle3": (
            normalise_draft(files("draft", _config(LLAMA_HEAD))),
            normalise_target(files("target", _config(LLAMA_31))),
        ),
        "mtp": (normalise_draft(files("draft", nextn)), qwen3),
    }


VIEWS = _views()

# Rules that read only a method's facet: on a draft without it they yield nothing.
FACET_RULES = {
    "DF008",
    "DF012",
    "DF018",
    "DF019",
    "DF020",
    "DF021",
    "DF022",
    "DF023",
    "DF025",
    "DF026",
    "DF027",
}


@pytest.mark.parametrize("method", sorted(VIEWS))
def test_each_method_has_exactly_its_facets(method: str) -> None:
    """A DSpark draft has the DFlash and DSpark facets, an EAGLE-3 head only its own, …"""
    draft, _ = VIEWS[method]
    assert draft.method == method
    present = {facet for facet in FACET_METHODS if getattr(draft, facet) is not None}
    assert present == {facet for facet, methods in FACET_METHODS.items() if method in methods}


def test_a_facet_of_another_method_is_refused() -> None:
    """A normaliser cannot hand a rule the facet of a method the draft does not have."""
    eagle3, _ = VIEWS["eagle3"]
    with pytest.raises(ValueError, match="facet dflash must be absent"):
        replace(eagle3, dflash=DFlashFacts(block_size=16))
    with pytest.raises(ValueError, match="facet dflash must be present"):
        replace(VIEWS["dflash"][0], dflash=None)


@pytest.mark.parametrize("method", sorted(VIEWS))
def test_every_rule_runs_on_every_method(method: str) -> None:
    """Whatever method a rule is for, a draft without the facet it reads is no error: the
    rule skips (the checker runs it only for its methods; this holds without that filter)."""
    draft, target = VIEWS[method]
    profiles = profiles_for(DEFAULT, draft, target)
    ctx = PairContext(draft, target, profiles, resolve_layers(draft, target, profiles))
    for r in RULES:
        issues = list(r.check(ctx))
        if method not in r.methods and r.id in FACET_RULES:
            assert issues == [], r.id
