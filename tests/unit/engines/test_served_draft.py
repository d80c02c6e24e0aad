"""Whether the draft a server reports is the pair's (``engines.client.served_draft_match``):
a repo id matches only the same repo id, a local path the same folder or, for a server
elsewhere, the folder's name (said so); a revision the server does not report is not verified,
and said so, rather than the draft refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash_check.engines.client import served_draft_is, served_draft_match
from dflash_check.sources.interface import parse_model_ref

DRAFT = "z-lab/Qwen3-8B-DFlash-b16"
BY_NAME = "the folder name only (the server reports a local path)"


@pytest.mark.parametrize(
    ("served", "spec", "by"),
    [
        (DRAFT, DRAFT, "the repo id"),
        # The Hub resolves a repo id whatever its case.
        ("Z-Lab/qwen3-8b-dflash-b16", DRAFT, "the repo id"),
        # Another organisation's repo of the same name is another draft.
        ("evil-org/Qwen3-8B-DFlash-b16", DRAFT, None),
        ("z-lab/Qwen3-8B-DFlash-b16-v2", DRAFT, None),
        # A server elsewhere started on a local copy: its folder's name, and the match says so.
        ("/models/Qwen3-8B-DFlash-b16/", DRAFT, BY_NAME),
        ("/models/Qwen3-8B-DFlash", DRAFT, None),
        ("", DRAFT, None),
    ],
)
def test_a_hub_draft_matches_its_own_repo_id(served: str, spec: str, by: str | None) -> None:
    match = served_draft_match(served, parse_model_ref(spec))
    assert (match.by if match is not None else None) == by
    assert served_draft_is(served, parse_model_ref(spec)) is (by is not None)


def test_a_revision_the_server_does_not_report_is_not_verified() -> None:
    """``z-lab/…@abc123`` against a server reporting ``z-lab/…``: the draft, its revision not
    verified (neither engine's server info reports one)."""
    match = served_draft_match(DRAFT, parse_model_ref(f"{DRAFT}@abc123"))
    assert match is not None and match.by == "the repo id"
    assert match.text == "the repo id; revision abc123 not verified (the server reports none)"
    assert served_draft_match(DRAFT, parse_model_ref(DRAFT)).unverified is None  # type: ignore[union-attr]


def test_a_local_draft_matches_the_same_folder_or_a_path_elsewhere_by_name(
    tmp_path: Path,
) -> None:
    """Here, the same folder (by any path to it), never a twin elsewhere; a path not on this
    machine by the folder's name; a repo id never (the pair names a folder, not a repo)."""
    draft = tmp_path / "base" / "draft"
    twin = tmp_path / "elsewhere" / "draft"
    draft.mkdir(parents=True)
    twin.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(draft.parent)
    ref = parse_model_ref(str(draft))
    assert served_draft_match(str(link / "draft"), ref).by == "the same folder"  # type: ignore[union-attr]
    assert served_draft_match(str(twin), ref) is None
    assert served_draft_match("/nonexistent-models/draft", ref).by == BY_NAME  # type: ignore[union-attr]
    assert served_draft_match("/nonexistent-models/other", ref) is None
    assert served_draft_match("z-lab/draft", ref) is None
