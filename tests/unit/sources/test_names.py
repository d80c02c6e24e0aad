"""Repo ids and names (``sources/names.py``): the same rule as huggingface_hub's validator."""

from __future__ import annotations


def test_repo_id_rule_matches_huggingface_hub() -> None:
    """names.check_repo_id accepts exactly what huggingface_hub's validator accepts."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from dflash_check.sources.names import BadName, check_repo_id

    alphabet = st.sampled_from([*"ab-_.1/Zé", "--", "..", ".git"])

    @settings(max_examples=500, deadline=None)
    @given(st.lists(alphabet, min_size=1, max_size=12).map("".join))
    def agree(repo_id: str) -> None:
        try:
            validate_repo_id(repo_id)
            theirs = True
        except HFValidationError:
            theirs = False
        try:
            check_repo_id(repo_id)
            ours = True
        except BadName:
            ours = False
        assert ours == theirs, repo_id

    agree()
    for long in ("a" * 96, "a" * 97, "o/" + "a" * 96, "o" * 96 + "/" + "a" * 96):
        try:
            validate_repo_id(long)
            theirs = True
        except HFValidationError:
            theirs = False
        try:
            check_repo_id(long)
            ours = True
        except BadName:
            ours = False
        assert ours == theirs, long
