"""``HubSource``: the ``ModelSource`` for models on the Hugging Face Hub, kilobytes at a time
(see the package docstring for what is fetched)."""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from dflash_check.check.tokenizers import vocab_from_tokenizer_json
from dflash_check.errors import ConfigError, FileNotFoundOnHubError, HubError
from dflash_check.fields import parse_json_object
from dflash_check.sources.hub.client import (
    HubOptions,
    install_client,
    measure,
    offline_mode,
)
from dflash_check.sources.hub.errors import not_cached, retryable, translate
from dflash_check.sources.hub.manifest import (
    Manifest,
    Weights,
    base_models,
    cached_ref,
    drop_incomplete,
    is_commit,
    load_manifest,
    repo_cache,
    repo_files,
    store_manifest,
    update_ref,
)
from dflash_check.sources.interface import (
    CONFIG_FILE,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    TOKENIZER_FILE,
    ModelRef,
    Role,
)
from dflash_check.sources.limits import DEADLINE_FACTOR, limit_for
from dflash_check.sources.local import read_capped, read_header_bytes, shard_for_fc
from dflash_check.sources.names import BadName, check_repo_id, check_revision
from dflash_check.sources.safetensors_header import header_length, parse_header
from dflash_check.sources.transport import LIMITS, bounded
from dflash_check.views import ModelFiles, TensorInfo

T = TypeVar("T")

# First ranged read of a safetensors file. A DFlash draft's header is a few KB (tens of
# tensors); 64 KB covers it in one request, and a second request fetches the rest if not.
FIRST_RANGE_BYTES = 65_536


class HubSource:
    """Models on the Hugging Face Hub, through huggingface_hub and its cache."""

    def __init__(self, options: HubOptions | None = None) -> None:
        """Keep the options; nothing is imported or contacted until ``fetch``."""
        self.options = options or HubOptions()

    # -- plumbing -------------------------------------------------------------------------

    def _call(self, fn: Callable[[], T], who: str, repo_id: str, what: str, cap: int | None) -> T:
        """Run one Hub call with bounded retries, translating any failure to a ``HubError``.

        ``cap`` bounds the response body; the deadline set by ``fetch`` bounds the retries.
        """
        offline = offline_mode(self.options)
        attempt = 0
        while True:
            try:
                with bounded(timeout=self.options.timeout, max_bytes=cap):
                    return fn()
            except (HubError, ConfigError):
                raise
            except Exception as err:  # translated below and chained, never swallowed
                hub_err = translate(err, who, repo_id, what, offline, self.options)
                wait = self.options.backoff * 2**attempt
                left = LIMITS.deadline - time.monotonic() if LIMITS.deadline else math.inf
                if (
                    offline
                    or not retryable(hub_err)
                    or attempt >= self.options.retries
                    or left <= wait
                ):
                    if attempt:
                        hub_err = type(hub_err)(
                            f"{hub_err} (after {attempt + 1} attempts)", hint=hub_err.hint
                        )
                    # Chained, so that DFLASH_CHECK_DEBUG=1 shows the transport's own error.
                    raise hub_err from err
                if self.options.on_retry is not None:
                    total = self.options.retries + 1
                    self.options.on_retry(f"{hub_err}; retrying ({attempt + 2}/{total})")
            time.sleep(wait)
            attempt += 1

    def _model_info(self, repo_id: str, revision: str | None, who: str) -> Any:
        """Return the Hub's model info (file list, commit, card data) for a revision."""
        from huggingface_hub import HfApi

        api = HfApi(token=self.options.token)
        return self._call(
            lambda: api.model_info(repo_id, revision=revision, timeout=self.options.timeout),
            who,
            repo_id,
            "model info",
            limit_for("model info"),
        )

    def _download(
        self, ref: ModelRef, filename: str, who: str, cap: int | None = None, force: bool = False
    ) -> Path:
        """Download (or find in the cache) one file of the repo; ``cap`` bounds its size."""
        from huggingface_hub import hf_hub_download

        assert ref.repo_id is not None
        repo_id = ref.repo_id
        offline = offline_mode(self.options)
        try:
            path = self._call(
                lambda: hf_hub_download(
                    repo_id,
                    filename,
                    subfolder=ref.subfolder,
                    revision=ref.revision,
                    token=self.options.token,
                    etag_timeout=self.options.timeout,
                    local_files_only=offline,
                    force_download=force and not offline,
                ),
                who,
                repo_id,
                ref.in_repo(filename),
                cap if cap is not None else limit_for(CONFIG_FILE),
            )
        except HubError:
            drop_incomplete(repo_id)  # what a cut-off download left behind
            raise
        return Path(str(path))

    def _read_header(
        self, ref: ModelRef, commit: str, filename: str, who: str
    ) -> tuple[bytes, str | None]:
        """Fetch the JSON header of a remote safetensors file with ranged reads; return it
        and the file's ETag. A Hub that ignores the range is read only as far as needed."""
        from huggingface_hub import constants, get_session
        from huggingface_hub.file_download import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

        assert ref.repo_id is not None
        filename = ref.in_repo(filename)
        url = hf_hub_url(ref.repo_id, filename, revision=commit, endpoint=constants.ENDPOINT)
        headers = build_hf_headers(token=self.options.token)
        where = f"{ref.repo_id}@{commit[:8]}:{filename}"
        etag: list[str | None] = [None]

        def get(start: int, end: int) -> bytes:
            wanted = {**headers, "range": f"bytes={start}-{end}"}
            stream = get_session().stream
            with stream("GET", url, headers=wanted, timeout=self.options.timeout) as r:
                hf_raise_for_status(r)
                etag[0] = r.headers.get("x-linked-etag") or r.headers.get("etag")
                # 200 instead of 206: the whole file is coming from byte 0; read what is needed.
                skip = start if r.status_code == 200 else 0
                need = skip + end - start + 1
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) >= need:
                        break
                return bytes(body[skip:need])

        # No body cap: ``get`` stops reading at the header's end (at most the header limit,
        # checked by header_length) even when the Hub ignores the range and sends it all.
        cap = None
        first = self._call(lambda: get(0, FIRST_RANGE_BYTES - 1), who, ref.repo_id, filename, cap)
        length = header_length(first[:8], who, where)
        if len(first) >= 8 + length:
            return first[8 : 8 + length], etag[0]
        rest = self._call(lambda: get(len(first), 8 + length - 1), who, ref.repo_id, filename, cap)
        header = first[8:] + rest
        if len(header) < length:
            raise ConfigError(
                f"{who}: {where}: safetensors header truncated ({len(header)} of {length} bytes)"
            )
        return header[:length], etag[0]

    # -- the source ---------------------------------------------------------------------

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Return config, header shapes and provenance of a Hub model."""
        assert ref.repo_id is not None
        who = f"{role} {ref.spec}"
        try:  # callers parse names with parse_model_ref; this guards any other way in
            check_repo_id(ref.repo_id)
        except BadName as err:
            raise ConfigError(f"{who}: not a valid Hub repo id ({err})") from None
        try:
            if ref.revision is not None:
                check_revision(ref.revision)
        except BadName as err:
            raise ConfigError(f"{who}: {err}") from None
        offline = offline_mode(self.options)
        # A commit id is immutable and offline mode asks for the cache: when everything is
        # cached, answer without importing the HTTP stack at all (as fast as a local dir).
        if offline or is_commit(ref.revision):
            cached = self._fetch_cached(ref, role, who)
            if cached is not None:
                return cached
        install_client()
        with measure() as fetched, bounded(seconds=DEADLINE_FACTOR * self.options.timeout):
            if offline:
                files = self._fetch_offline(ref, role, who)
            else:
                files = self._fetch_online(ref, role, who)
        return replace(files, fetched_bytes=fetched[0])

    def _fetch_cached(self, ref: ModelRef, role: Role, who: str) -> ModelFiles | None:
        """Return the model from the HF cache and its manifest, or None if anything is missing
        or does not match (the caller then asks the Hub, or fails offline)."""
        assert ref.repo_id is not None
        revision = ref.revision or "main"
        commit = revision if is_commit(revision) else cached_ref(ref.repo_id, revision)
        if commit is None:
            return None
        config_path = repo_cache(ref.repo_id) / "snapshots" / commit / ref.in_repo(CONFIG_FILE)
        try:
            raw = read_capped(config_path, CONFIG_FILE, who)
        except ConfigError:
            return None
        manifest = load_manifest(ref.repo_id, commit, raw, ref.subfolder)
        if manifest is None or (role == "draft" and manifest.weights is None):
            return None
        location = f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(CONFIG_FILE)}"
        try:
            config = parse_json_object(raw, who, location)
        except ConfigError:
            return None  # a cached file gone bad: fetched again online, named offline
        return self._files(ref, role, who, config, location, commit, manifest)

    def _config(self, ref: ModelRef, who: str) -> tuple[dict[str, Any], bytes, str, str]:
        """Return (config, raw bytes, location, commit) from the cache or the Hub.

        A cached config that no longer parses (a truncated download, a disk fault) is fetched
        again once when online, so a bad cache heals instead of failing every later run."""
        path = self._download(ref, CONFIG_FILE, who)
        # snapshots/<commit>/[<subfolder>/]config.json
        depth = len(ref.subfolder.split("/")) if ref.subfolder else 0
        commit = path.parents[depth].name
        location = f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(CONFIG_FILE)}"
        raw = read_capped(path, CONFIG_FILE, who, location)
        try:
            return parse_json_object(raw, who, location), raw, location, commit
        except ConfigError as err:
            if offline_mode(self.options):
                err.hint = "the cached file is damaged: run once online to fetch it again"
                raise
        path = self._download(ref, CONFIG_FILE, who, force=True)
        raw = read_capped(path, CONFIG_FILE, who, location)
        return parse_json_object(raw, who, location), raw, location, commit

    def _fetch_online(self, ref: ModelRef, role: Role, who: str) -> ModelFiles:
        """Ask the Hub, then cache what offline runs will need."""
        from huggingface_hub import constants, get_hf_file_metadata
        from huggingface_hub.file_download import hf_hub_url

        assert ref.repo_id is not None
        repo_id = ref.repo_id
        # One HEAD tells which commit the revision is at (and whether the repo is reachable,
        # gated or missing). If that commit is cached with its manifest, nothing else is
        # fetched: commits never change.
        url = hf_hub_url(
            repo_id, ref.in_repo(CONFIG_FILE), revision=ref.revision, endpoint=constants.ENDPOINT
        )
        head = self._call(
            lambda: get_hf_file_metadata(
                url, token=self.options.token, timeout=self.options.timeout
            ),
            who,
            repo_id,
            CONFIG_FILE,
            0,
        )
        if head.commit_hash and is_commit(head.commit_hash):
            pinned = replace(ref, revision=head.commit_hash)
            cached = self._fetch_cached(pinned, role, who)
            if cached is not None:
                update_ref(repo_id, ref.revision or "main", head.commit_hash)
                return cached
        info = self._model_info(repo_id, head.commit_hash or ref.revision, who)
        config, raw, location, commit = self._config(ref, who)
        manifest = load_manifest(repo_id, commit, raw, ref.subfolder)
        siblings = repo_files(info, ref.subfolder)
        if manifest is None:
            manifest = Manifest(
                repo_id=repo_id,
                commit=commit,
                config_sha256=hashlib.sha256(raw).hexdigest(),
                base_model=base_models(getattr(info, "card_data", None)),
                tokenizer_etag=self._tokenizer_etag(ref, commit, siblings, who),
                weights=None,
            )
        if role == "draft" and manifest.weights is None:
            # Also when a run that checked this model as a target wrote the manifest.
            manifest = replace(manifest, weights=self._remote_header(ref, commit, siblings, who))
        store_manifest(manifest, ref.subfolder)
        return self._files(ref, role, who, config, location, commit, manifest)

    def _remote_header(self, ref: ModelRef, commit: str, siblings: set[str], who: str) -> Weights:
        """Pick the safetensors file holding ``fc.weight`` and fetch its header text."""
        pinned = replace(ref, revision=commit)
        if SAFETENSORS_FILE in siblings:
            filename: str | None = SAFETENSORS_FILE
        elif SAFETENSORS_INDEX in siblings:
            cap = limit_for(SAFETENSORS_INDEX)
            index_path = self._download(pinned, SAFETENSORS_INDEX, who, cap=cap)
            raw = read_capped(index_path, SAFETENSORS_INDEX, who)
            index = parse_json_object(raw, who, SAFETENSORS_INDEX)
            filename = shard_for_fc(index, who, SAFETENSORS_INDEX)
            if filename is None:
                return Weights(SAFETENSORS_INDEX, None, "{}")
        else:
            others = sorted(s for s in siblings if s.endswith(".safetensors") and "/" not in s)
            filename = others[0] if others else None
        if filename is None:
            return Weights(None, None, None)
        header, etag = self._read_header(ref, commit, filename, who)
        # Validate now, so that a bad header fails this run and is never cached.
        parse_header(header, who, f"{ref.repo_id}:{filename}")
        return Weights(filename, etag, header.decode("utf-8"))

    def _fetch_offline(self, ref: ModelRef, role: Role, who: str) -> ModelFiles:
        """Re-check from the HF cache and the manifest alone."""
        assert ref.repo_id is not None
        config, raw, location, commit = self._config(ref, who)
        manifest = load_manifest(ref.repo_id, commit, raw, ref.subfolder)
        unavailable = None
        if manifest is None or (role == "draft" and manifest.weights is None):
            weights = self._snapshot_header(ref, commit, who) if role == "draft" else None
            if role == "draft" and weights is None:
                # The configs alone still decide the layer, size and vocabulary rules: check
                # them, and list the fc width as not checked (as for a local folder).
                unavailable = (
                    "has no safetensors header in the offline cache (one online run caches it)"
                )
            manifest = Manifest(
                repo_id=ref.repo_id,
                commit=commit,
                config_sha256=hashlib.sha256(raw).hexdigest(),
                base_model=manifest.base_model if manifest else (),
                tokenizer_etag=manifest.tokenizer_etag if manifest else None,
                weights=weights,
            )
        files = self._files(ref, role, who, config, location, commit, manifest)
        if unavailable is None:
            return files
        return replace(files, extras={**files.extras, "tensors_unavailable": unavailable})

    def _snapshot_header(self, ref: ModelRef, commit: str, who: str) -> Weights | None:
        """Read the header from full weights already in the HF cache, if someone fetched them."""
        assert ref.repo_id is not None
        path = repo_cache(ref.repo_id) / "snapshots" / commit / ref.in_repo(SAFETENSORS_FILE)
        if not path.exists():
            return None
        display = f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(SAFETENSORS_FILE)}"
        header = read_header_bytes(path, who, display)
        parse_header(header, who, display)
        return Weights(SAFETENSORS_FILE, None, header.decode("utf-8"))

    def _files(
        self,
        ref: ModelRef,
        role: Role,
        who: str,
        config: dict[str, Any],
        location: str,
        commit: str,
        manifest: Manifest,
    ) -> ModelFiles:
        """Assemble ``ModelFiles`` from a config and a manifest."""
        tensors: dict[str, TensorInfo] | None = None
        weights = manifest.weights
        tensors_file = weights.file if weights else None
        if role == "draft" and weights is not None and weights.header is not None:
            tensors = parse_header(
                weights.header.encode("utf-8"), who, f"{ref.repo_id}:{tensors_file}"
            )
        return ModelFiles(
            role=role,
            name=ref.spec,
            config=config,
            config_location=location,
            tensors=tensors,
            tensors_location=f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(tensors_file)}"
            if tensors_file and role == "draft"
            else None,
            revision=commit,
            extras={
                "base_model": manifest.base_model,
                "tokenizer": manifest.tokenizer_etag,
                "repo_id": ref.repo_id,
                "commit": commit,
                "subfolder": ref.subfolder,
            },
        )

    def _tokenizer_etag(
        self, ref: ModelRef, commit: str, siblings: set[str], who: str
    ) -> str | None:
        """Return the ETag (content hash) of ``tokenizer.json`` from a HEAD request."""
        from huggingface_hub import constants, get_hf_file_metadata
        from huggingface_hub.file_download import hf_hub_url

        if TOKENIZER_FILE not in siblings:
            return None
        assert ref.repo_id is not None
        url = hf_hub_url(
            ref.repo_id, ref.in_repo(TOKENIZER_FILE), revision=commit, endpoint=constants.ENDPOINT
        )
        meta = self._call(
            lambda: get_hf_file_metadata(
                url, token=self.options.token, timeout=self.options.timeout
            ),
            who,
            ref.repo_id,
            TOKENIZER_FILE,
            0,
        )
        return meta.etag

    def download_files(self, ref: ModelRef, patterns: list[str], who: str) -> Path:
        """Download the repo files matching ``patterns`` (the smoke run's weights); return the
        snapshot folder. Offline, the cached snapshot must already hold them."""
        import fnmatch

        assert ref.repo_id is not None
        repo_id = ref.repo_id
        if offline_mode(self.options):
            folder = self._download(ref, CONFIG_FILE, who).parent
            if not any(folder.glob("*.safetensors")):
                raise not_cached(
                    who,
                    "the safetensors weights",
                    f'{repo_id} --include "*.safetensors"',
                    self.options,
                    are=True,
                )
            return folder
        install_client()
        info = self._model_info(repo_id, ref.revision, who)
        names = sorted(
            s
            for s in repo_files(info, ref.subfolder)
            if any(fnmatch.fnmatch(s, p) for p in patterns)
        )
        pinned = replace(ref, revision=info.sha or ref.revision)
        snapshot: Path | None = None
        for name in names:
            # Real weights: no body cap here (the smoke run asked for them).
            snapshot = self._download(pinned, name, who, cap=1 << 62).parent
        if snapshot is None:
            raise FileNotFoundOnHubError(f"{who}: no files matching {', '.join(patterns)}")
        return snapshot

    def tokenizer_fingerprint(self, files: ModelFiles) -> str:
        """Return the tokenizer's ETag recorded when the model was fetched."""
        return str(files.extras["tokenizer"])

    def tokenizer_vocab(self, files: ModelFiles) -> dict[int, str]:
        """Download ``tokenizer.json`` (only when fingerprints differ) and return its vocab."""
        ref = ModelRef(
            spec=files.name,
            repo_id=files.extras["repo_id"],
            revision=files.extras["commit"],
            subfolder=files.extras.get("subfolder"),
        )
        cap = limit_for(TOKENIZER_FILE)
        install_client()
        with bounded(seconds=DEADLINE_FACTOR * self.options.timeout):
            path = self._download(ref, TOKENIZER_FILE, files.who, cap=cap)
        raw = read_capped(path, TOKENIZER_FILE, files.who, f"{ref.repo_id}:{TOKENIZER_FILE}")
        return vocab_from_tokenizer_json(raw, files.who, TOKENIZER_FILE)
