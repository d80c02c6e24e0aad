"""Reviewed semantics keyed by release range: a new release inherits them, citations and all,
without its row repeating them (and without citing its own code for lines nobody read)."""

from __future__ import annotations

import pytest

from dflash_check.knowledge.engines import LLAMACPP, VLLM, VLLM_REVIEWED, Release
from dflash_check.knowledge.reviewed import Reviewed, in_range, inherit


@pytest.mark.parametrize(
    ("version", "releases", "inside"),
    [
        ("0.34.0", ">=0.34", True),
        ("0.33.0", ">=0.34", False),
        ("0.33.0", ">=0.33,<0.35", True),
        ("0.35.0", ">=0.33,<0.35", False),
        ("0.34.1", "==0.34.1", True),
        ("0.34.10", ">0.34.9", True),  # numbers, not strings: 10 > 9
    ],
)
def test_version_ranges(version: str, releases: str, inside: bool) -> None:
    assert in_range(version, releases, VLLM.releases) is inside


def test_commit_ranges_follow_the_engine_s_order() -> None:
    old, new = LLAMACPP.releases
    assert not in_range(old.version, f">={new.version}", LLAMACPP.releases)
    assert in_range(new.version, f">={new.version[:7]}", LLAMACPP.releases)
    with pytest.raises(ValueError, match="names no single known release"):
        in_range(new.version, ">=deadbeef", LLAMACPP.releases)


def test_a_new_release_row_inherits_the_reviewed_semantics() -> None:
    """A release after the newest, written as version and date only, gets what was reviewed
    for its range, citing the release it was reviewed in."""
    newest = VLLM.newest
    major, minor, _ = newest.version.split(".")
    later = Release("vllm", f"{major}.{int(minor) + 1}.0", date="2099-01-01")
    *_, merged = inherit((*VLLM.releases, later), VLLM_REVIEWED)
    assert merged.version == later.version and merged.date == later.date
    assert merged.runners == newest.runners and merged.pypi
    assert merged.checks_method == newest.checks_method
    assert merged.declared_methods == newest.declared_methods
    assert later.spec not in (merged.runner_choice or "")  # cites the release it was read in


def test_a_row_s_own_value_wins() -> None:
    row = Release("x", "1.0", notes="its own")
    (merged,) = inherit((row,), (Reviewed(">=1", notes="reviewed", pypi=True),))
    assert (merged.notes, merged.pypi) == ("its own", True)


def test_a_bound_without_comparison_is_refused() -> None:
    with pytest.raises(ValueError, match="has no comparison"):
        in_range("0.34.0", "0.34", VLLM.releases)
