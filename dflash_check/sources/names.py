"""Validate every name that becomes a cache path or a Hub URL, before it touches either.

Repo ids, revisions and file names in a repository (shard names of an index, subfolders) come
from the command line, ``pairs.yaml`` and the Hub itself. Each is checked here, once, so that
no name can point a read or a write outside the Hugging Face cache (``--draft-revision
../../x``, a shard named ``../../other/repo/model.safetensors``) or reach the Hub malformed.
"""

from __future__ import annotations

import re

# git's own ref-name rules (git check-ref-format) that matter for a path: no empty, "." or
# ".." component, no component starting with "." or ending with ".lock", none of the
# characters git forbids, no "@{" sequence. The Hub's PR revisions ("refs/pr/1") pass.
# Patterns here are strings that re compiles on first use (and caches): a check of two local
# folders names no repo id or revision, and pair pays at start-up for every compile.
_REF_FORBIDDEN = r"[\x00-\x20\x7f~^:?*\[\\]|@\{|//"
MAX_REVISION_CHARS = 255
"""Longest revision accepted (git's and most file systems' limit for one name)."""
MAX_COMPONENT_CHARS = 255
"""Longest single path component of a file name in a repository."""
MAX_REPO_FILE_CHARS = 1000
"""Longest file name (with folders) in a repository accepted from an index or model info."""


class BadName(ValueError):
    """A repo id, revision or repository file name that cannot be used safely."""


# huggingface_hub's repo id rule (huggingface_hub.utils.validate_repo_id), restated here
# because importing that module pulls in its HTTP stack (~0.1 s) on every local check; a test
# compares the two on generated ids so they cannot drift apart.
_REPO_ID = r"(\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b"


def check_repo_id(repo_id: str) -> str:
    """Return ``repo_id`` if huggingface_hub would accept it, else raise ``BadName`` (whose
    text is the rule broken)."""
    if repo_id.count("/") > 1:
        reason = "expected NAME or ORG/NAME"
    elif not re.fullmatch(_REPO_ID, repo_id, re.ASCII):
        reason = "letters, digits, '-', '_', '.'; not starting or ending with '-' or '.'; "
        reason += "at most 96 characters per part"
    elif "--" in repo_id or ".." in repo_id:
        reason = "'--' and '..' are not allowed"
    elif repo_id.endswith(".git"):
        reason = "it must not end in '.git'"
    else:
        return repo_id
    raise BadName(reason)


def check_revision(revision: str) -> str:
    """Return ``revision`` if it is a safe branch, tag, commit or ``refs/pr/N``; else raise."""
    if not revision.strip():
        raise BadName("the revision is empty")
    if len(revision) > MAX_REVISION_CHARS:
        raise BadName(f"the revision is longer than {MAX_REVISION_CHARS} characters")
    if re.search(_REF_FORBIDDEN, revision) or revision.startswith("/") or revision.endswith("/"):
        raise BadName(f"revision {revision!r} is not a valid branch, tag or commit name")
    for part in revision.split("/"):
        if part.startswith(".") or part.endswith((".lock", ".")):
            raise BadName(f"revision {revision!r} is not a valid branch, tag or commit name")
    return revision


def check_repo_file(name: str) -> str:
    """Return a file name inside a repository if it stays inside it; else raise.

    Used for shard names read from ``model.safetensors.index.json`` and file names from the
    Hub's file list: relative, forward slashes, no ``.``/``..`` components.
    """
    if not name or len(name) > MAX_REPO_FILE_CHARS:
        raise BadName(f"file name {name[:60]!r} is empty or too long")
    if "\\" in name or "\x00" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise BadName(f"file name {name!r} is not a relative path inside the repository")
    for part in name.split("/"):
        if part in ("", ".", "..") or len(part) > MAX_COMPONENT_CHARS:
            raise BadName(f"file name {name!r} points outside the repository")
    return name
