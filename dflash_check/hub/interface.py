"""How a model is named on the command line, and what every model source provides."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from dflash_check.core.model import ModelFiles
from dflash_check.hub.names import BadName, check_repo_id, check_revision

Role = Literal["draft", "target"]

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"


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


def _looks_like_path(text: str) -> bool:
    """Return whether ``text`` is meant as a filesystem path rather than a repo id."""
    if _exists(text):
        return True
    if text.startswith((".", "/", "~")) or (os.sep != "/" and os.sep in text):
        return True
    # "org/name@refs/pr/1": a Hub PR revision holds slashes, the repo part does not.
    return text.partition("@")[0].count("/") > 1


def parse_model_ref(text: str, revision: str | None = None) -> ModelRef:
    """Parse ``DIR``, ``REPO`` or ``REPO@REVISION``; ``revision`` (a flag) must not conflict.

    Repo ids and revisions are validated here (``names``), before anything uses them to build
    a cache path or a URL.
    """
    if not text.strip():
        raise BadModelSpec("model name is empty")
    if "\x00" in text:
        raise BadModelSpec(f"{text!r}: a model name cannot contain a NUL byte")
    if _looks_like_path(text):
        if revision is not None:
            raise BadModelSpec(f"{text} is a local directory; a revision applies to Hub repos only")
        return ModelRef(spec=text, path=Path(text).expanduser())
    repo_id, at, rev = text.partition("@")
    if at and not rev:
        raise BadModelSpec(f"{text}: empty revision after '@'")
    if at and revision is not None and revision != rev:
        raise BadModelSpec(
            f"{text} pins revision {rev!r} but a revision flag asks for {revision!r}; "
            "use one of them"
        )
    shown = repr(text if len(text) <= 120 else text[:117] + "...")
    try:
        check_repo_id(repo_id)
    except BadName as err:
        raise BadModelSpec(f"{shown} is not a local directory nor a Hub repo id ({err})") from None
    chosen = rev or revision
    try:
        if chosen is not None:
            check_revision(chosen)
    except BadName as err:
        raise BadModelSpec(f"{shown}: {err}") from None
    return ModelRef(spec=text, repo_id=repo_id, revision=chosen)


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
