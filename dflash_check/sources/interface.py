"""How a model is named on the command line, and what every model source provides."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from dflash_check.sources.names import BadName, check_repo_id, check_revision
from dflash_check.views import ModelFiles

Role = Literal["draft", "target"]

# A subfolder inside a repo: relative path segments of the same characters (a string that re
# compiles on first use: most checks name no subfolder, and pair pays for compiles at start-up).
_SUBFOLDER = r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$"

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
TOKENIZER_FILE = "tokenizer.json"


class BadModelSpec(ValueError):
    """A DRAFT or TARGET argument that is neither a directory nor a repo id (usage error)."""


@dataclass(frozen=True)
class ModelRef:
    """A model as the user named it: a local directory, or a Hub repo at a revision."""

    spec: str
    """The text as given, for messages."""
    path: Path | None = None
    """The local directory, when the model is local."""
    repo_id: str | None = None
    """The Hub repo id, when the model is on the Hub."""
    revision: str | None = None
    """Branch, tag or commit; None means the default branch."""
    subfolder: str | None = None
    """The folder inside the repo (or directory) that holds the model, as huggingface_hub's
    ``subfolder``: a draft shipped inside its target's repo (``XiaomiMiMo/…:dflash``)."""

    def in_repo(self, filename: str) -> str:
        """Return ``filename``'s path inside the repo (under the subfolder, if any)."""
        return f"{self.subfolder}/{filename}" if self.subfolder else filename

    @property
    def is_local(self) -> bool:
        """Return whether this names a local directory."""
        return self.path is not None


def _exists(text: str) -> bool:
    """Return whether ``text`` names an existing file system entry (False for any odd name:
    too long for the file system, a NUL byte, no permission to look)."""
    try:
        return Path(text).expanduser().exists()
    except (OSError, ValueError):
        return False


HUB_PREFIX = "hf://"
"""Forces a Hub repo id (``hf://Qwen/Qwen3-4B``) where a local folder has its organisation's
name: the escape from "a first component that exists here is local"."""


MAX_SCANNED = 1000
"""Entries of one folder compared with a mistyped name (a huge folder is not read whole)."""


def closest_name(name: str, folder: Path, cutoff: float, folders_only: bool = False) -> str | None:
    """Return the entry of ``folder`` whose name is closest to ``name`` (difflib's ratio at
    least ``cutoff``), or None: the one way a mistyped local path is matched to what exists."""
    import difflib
    from itertools import islice

    try:
        with os.scandir(folder) as entries:
            names = [
                e.name
                for e in islice(entries, MAX_SCANNED)
                if not folders_only or (e.is_dir() and not e.name.startswith("."))
            ]
    except OSError:  # unreadable, or a name the file system refuses: no suggestion
        return None
    close = difflib.get_close_matches(name, names, n=1, cutoff=cutoff)
    return close[0] if close else None


def _misspelt_folder(first: str) -> bool:
    """Return whether ``first`` is a near miss of a folder here (``exmaples`` for
    ``examples``): a typo is named at once as a local path, not looked up on the Hub for
    seconds (``hf://`` reaches a Hub organisation of that name)."""
    return closest_name(first, Path("."), cutoff=0.8, folders_only=True) is not None


def _looks_like_path(text: str) -> bool:
    """Return whether ``text`` is meant as a filesystem path rather than a repo id."""
    if _exists(text):
        return True
    if text.startswith((".", "/", "~")) or (os.sep != "/" and os.sep in text):
        return True
    # "examples/Qwen3-4B-DFlash": a first component that exists here makes a local path (a
    # mistyped folder is then named at once, not looked up on the Hub with retries).
    first = text.replace(os.sep, "/").partition("/")[0]
    if "/" in text and first and (_exists(first) or _misspelt_folder(first)):
        return True
    # "org/name@refs/pr/1": a Hub PR revision holds slashes, the repo part does not.
    return text.partition("@")[0].count("/") > 1


def check_subfolder(text: str) -> str:
    """Return a validated subfolder (relative, no '..'), or raise ``BadModelSpec``."""
    sub = text.strip("/")
    dots = any(part in (".", "..") for part in sub.split("/"))
    if not sub or not re.match(_SUBFOLDER, sub) or dots:
        raise BadModelSpec(f"{text!r} is not a subfolder (expected a relative path like 'dflash')")
    return sub


def _pick_subfolder(text: str, given: str | None, flag: str | None) -> str | None:
    """Return the subfolder from ``REPO:SUB`` or the flag, refusing two that disagree."""
    if given is not None and flag is not None and check_subfolder(flag) != check_subfolder(given):
        raise BadModelSpec(
            f"{text} names subfolder {given!r} but a subfolder flag asks for {flag!r}; "
            "use one of them"
        )
    chosen = given if given is not None else flag
    return check_subfolder(chosen) if chosen is not None else None


def parse_model_ref(
    text: str, revision: str | None = None, subfolder: str | None = None
) -> ModelRef:
    """Parse ``DIR[:SUB]``, ``REPO[:SUB][@REVISION]``; flags must not conflict with the text."""
    if not text.strip():
        raise BadModelSpec("model name is empty")
    hub_only = text.startswith(HUB_PREFIX)
    if hub_only:
        text = text[len(HUB_PREFIX) :]
    if "\x00" in text:
        raise BadModelSpec(f"{text!r}: a model name cannot contain a NUL byte")
    # DIR:SUB or REPO:SUB: what comes before the first ':' decides (unless the whole text
    # is an existing path with a ':' in its name).
    whole = ":" not in text or Path(text).exists()
    head, _, rest = (text, "", "") if whole else text.partition(":")
    if not hub_only and _looks_like_path(head):
        path_text, sub = head, (None if whole else rest)
        if revision is not None:
            raise BadModelSpec(f"{text} is a local directory; a revision applies to Hub repos only")
        chosen = _pick_subfolder(text, sub, subfolder)
        path = Path(path_text).expanduser()
        return ModelRef(spec=text, path=path / chosen if chosen else path, subfolder=chosen)
    name, at, rev = text.partition("@")
    if at and not rev:
        raise BadModelSpec(f"{text}: empty revision after '@'")
    if at and revision is not None and revision != rev:
        raise BadModelSpec(
            f"{text} pins revision {rev!r} but a revision flag asks for {revision!r}; "
            "use one of them"
        )
    repo_id, colon, sub = name.partition(":")
    if colon and not sub:
        raise BadModelSpec(f"{text}: empty subfolder after ':'")
    shown = repr(text if len(text) <= 120 else text[:117] + "...")
    try:
        check_repo_id(repo_id)
    except BadName as err:
        raise BadModelSpec(f"{shown} is not a local directory nor a Hub repo id ({err})") from None
    chosen_rev = rev or revision
    try:
        if chosen_rev is not None:
            check_revision(chosen_rev)
    except BadName as err:
        raise BadModelSpec(f"{shown}: {err}") from None
    chosen = _pick_subfolder(text, sub if colon else None, subfolder)
    return ModelRef(spec=text, repo_id=repo_id, revision=chosen_rev, subfolder=chosen)


class ModelSource(Protocol):
    """Anything that can turn a ``ModelRef`` into the files a check needs."""

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Return the model's parsed config and, for drafts, its safetensors tensor shapes."""
        ...

    def tokenizer_fingerprint(self, files: ModelFiles) -> str:
        """Return a content hash of the model's ``tokenizer.json`` (present in ``extras``)."""
        ...

    def tokenizer_vocab(self, files: ModelFiles) -> dict[int, str]:
        """Return the id -> token map of the model's ``tokenizer.json``."""
        ...
