"""How a model is named on the command line, and what every model source provides."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from dflash_check.core.model import ModelFiles

Role = Literal["draft", "target"]

# Hub repo ids: "name" or "org/name", letters, digits, '-', '_', '.' (huggingface_hub's rule).
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?$")

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


def _looks_like_path(text: str) -> bool:
    """Return whether ``text`` is meant as a filesystem path rather than a repo id."""
    return (
        text.startswith((".", "/", "~"))
        or text.count("/") > 1
        or (os.sep != "/" and os.sep in text)
        or Path(text).exists()
    )


def parse_model_ref(text: str, revision: str | None = None) -> ModelRef:
    """Parse ``DIR``, ``REPO`` or ``REPO@REVISION``; ``revision`` (a flag) must not conflict."""
    if not text.strip():
        raise BadModelSpec("model name is empty")
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
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise BadModelSpec(
            f"{text!r} is not a local directory nor a Hub repo id (expected ORG/NAME[@REVISION])"
        )
    return ModelRef(spec=text, repo_id=repo_id, revision=rev or revision)


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
