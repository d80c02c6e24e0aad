"""The facts cached per (repo, commit) beside the HF cache, and the HF cache's own folders.

A manifest lets ``--offline`` re-check a pair from the cache alone; it is written with the one
atomic writer of ``sources.output`` (concurrent registry workers may race on it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflash_check.errors import ConfigError
from dflash_check.sources.interface import CONFIG_FILE
from dflash_check.sources.local import read_capped
from dflash_check.sources.names import BadName, check_repo_file
from dflash_check.sources.output import write_atomic
from dflash_check.sources.safetensors_header import parse_header

MANIFEST_VERSION = 2


def is_commit(revision: str | None) -> bool:
    """Return whether ``revision`` is a full 40-hex commit id (immutable, safe to cache)."""
    return revision is not None and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


@dataclass(frozen=True)
class Weights:
    """What a draft's safetensors header says, as cached: which file, its ETag, the header."""

    file: str | None
    """The file holding ``fc.weight`` (the index when no shard holds it); None: no safetensors."""
    etag: str | None
    """The file's ETag (content hash) when it came from the Hub."""
    header: str | None
    """The JSON header text; ``"{}"`` when the index names no ``fc.weight``."""


@dataclass(frozen=True)
class Manifest:
    """Facts about one repo at one commit, the same whichever role the model is checked in.

    Stored as ``$HF_HOME/dflash-check/models--ORG--NAME/<commit>.json``. It names the repo,
    the commit and the sha256 of the ``config.json`` it was built with, and is used only when
    all three match what is read now; ``weights`` stays None until a run reads the header (a
    run that checked the model as a target never does), so a target's run can never stand in
    for a draft's facts.
    """

    repo_id: str
    commit: str
    config_sha256: str
    base_model: tuple[str, ...]
    tokenizer_etag: str | None
    weights: Weights | None

    def to_json(self) -> str:
        """Return the manifest as JSON text."""
        weights = None
        if self.weights is not None:
            w = self.weights
            weights = {"file": w.file, "etag": w.etag, "header": w.header}
        return json.dumps(
            {
                "version": MANIFEST_VERSION,
                "repo_id": self.repo_id,
                "commit": self.commit,
                "config_sha256": self.config_sha256,
                "base_model": list(self.base_model),
                "tokenizer_etag": self.tokenizer_etag,
                "weights": weights,
            }
        )


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def parse_manifest(text: str, repo_id: str, commit: str, config_sha256: str) -> Manifest | None:
    """Return the manifest in ``text`` if it is well formed and about exactly this repo,
    commit and config; None otherwise (the caller then rebuilds it)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        return None
    if (data.get("repo_id"), data.get("commit"), data.get("config_sha256")) != (
        repo_id,
        commit,
        config_sha256,
    ):
        return None
    base = data.get("base_model")
    if not isinstance(base, list) or not all(isinstance(b, str) for b in base):
        return None
    if not _optional_str(data.get("tokenizer_etag")):
        return None
    raw_weights = data.get("weights")
    weights: Weights | None = None
    if raw_weights is not None:
        if not isinstance(raw_weights, dict) or not all(
            _optional_str(raw_weights.get(k)) for k in ("file", "etag", "header")
        ):
            return None
        weights = Weights(
            raw_weights.get("file"), raw_weights.get("etag"), raw_weights.get("header")
        )
        if (weights.file is None) != (weights.header is None):
            return None
        if weights.header is not None:
            try:
                parse_header(weights.header.encode("utf-8"), "manifest", "header")
            except ConfigError:
                return None
    return Manifest(
        repo_id, commit, config_sha256, tuple(base), data.get("tokenizer_etag"), weights
    )


def repo_files(info: Any, subfolder: str | None = None) -> set[str]:
    """Return the repo's file names from model info, keeping only names inside the repo,
    relative to ``subfolder`` (and only the files under it) when one is given."""
    names = set()
    for sibling in getattr(info, "siblings", None) or []:
        name = getattr(sibling, "rfilename", None)
        if isinstance(name, str):
            try:
                names.add(check_repo_file(name))
            except BadName:
                continue  # a name that would leave the repo is never fetched
    if not subfolder:
        return names
    prefix = subfolder + "/"
    return {n[len(prefix) :] for n in names if n.startswith(prefix)}


def base_models(card_data: Any) -> tuple[str, ...]:
    """Return the ``base_model`` entries of a model card's metadata."""
    if card_data is None:
        return ()
    value = card_data.get("base_model") if hasattr(card_data, "get") else None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def repo_cache(repo_id: str) -> Path:
    """Return the repo's folder in the HF cache (``repo_id`` is validated by ``fetch``)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--"))


def cached_ref(repo_id: str, revision: str) -> str | None:
    """Return the commit a cached ``refs/<revision>`` file points at, if it is a commit id."""
    try:
        text = read_capped(repo_cache(repo_id) / "refs" / revision, CONFIG_FILE, "cache")
    except ConfigError:
        return None
    commit = text.decode("ascii", errors="replace").strip()
    return commit if is_commit(commit) else None  # anything else could name a path


def update_ref(repo_id: str, revision: str, commit: str) -> None:
    """Point ``refs/<revision>`` of the HF cache at ``commit``, as hf_hub_download would."""
    if is_commit(revision) or cached_ref(repo_id, revision) == commit:
        return
    ref_file = repo_cache(repo_id) / "refs" / revision
    try:
        ref_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(ref_file, commit)
    except OSError:
        pass  # a read-only cache only costs the offline re-run


def _manifest_path(repo_id: str, commit: str, subfolder: str | None = None) -> Path:
    """Return where the manifest of ``repo_id`` at ``commit`` (and subfolder) is cached."""
    from huggingface_hub import constants

    folder = "models--" + repo_id.replace("/", "--")
    # A subfolder is another model of the same commit: its own manifest.
    name = commit + (f"@{subfolder.replace('/', '--')}" if subfolder else "")
    return Path(constants.HF_HOME) / "dflash-check" / folder / f"{name}.json"


def load_manifest(
    repo_id: str, commit: str, config_raw: bytes, subfolder: str | None = None
) -> Manifest | None:
    """Read a cached manifest; a missing, foreign, stale or corrupt one counts as absent."""
    try:
        text = read_capped(_manifest_path(repo_id, commit, subfolder), "model info", "cache")
    except ConfigError:
        return None
    digest = hashlib.sha256(config_raw).hexdigest()
    return parse_manifest(text.decode("utf-8", errors="replace"), repo_id, commit, digest)


def store_manifest(manifest: Manifest, subfolder: str | None = None) -> None:
    """Write a manifest atomically (concurrent registry workers may race on it)."""
    path = _manifest_path(manifest.repo_id, manifest.commit, subfolder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, manifest.to_json())
    except OSError:
        # A read-only cache only costs the offline re-run; the check itself still works.
        pass


def drop_incomplete(repo_id: str) -> None:
    """Remove partial downloads of a repo that a cut-off transfer left in the HF cache."""
    with contextlib.suppress(OSError):
        for partial in (repo_cache(repo_id) / "blobs").glob("*.incomplete"):
            with contextlib.suppress(OSError):
                partial.unlink()
