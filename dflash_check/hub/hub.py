"""Read models from the Hugging Face Hub through huggingface_hub, kilobytes at a time.

What is fetched, and nothing else:

* ``model_info`` (the repo's file list, resolved commit, gated flag, card ``base_model``);
* ``config.json`` through ``hf_hub_download``, so it lands in the standard HF cache;
* for a draft, the safetensors *header* of the file holding ``fc.weight`` (ranged reads), and
  ``model.safetensors.index.json`` when the checkpoint is sharded.

The facts beyond ``config.json`` are kept in a small manifest per (repo, commit) under
``$HF_HOME/dflash-check/`` so that ``--offline`` / ``HF_HUB_OFFLINE=1`` can re-check a pair from
the cache alone. Every huggingface_hub exception is translated here, once, into the
``HubError`` tree; nothing above this module sees a transport exception.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from dflash_check.core.fields import parse_json_object
from dflash_check.core.model import ModelFiles
from dflash_check.core.safetensors_header import TensorInfo, header_length, parse_header
from dflash_check.core.tokenizers import TOKENIZER_FILE, vocab_from_tokenizer_json
from dflash_check.errors import (
    ConfigError,
    FileNotFoundOnHubError,
    GatedRepoError,
    HubError,
    NetworkError,
    NotCachedError,
    RepoNotFoundError,
    RevisionNotFoundError,
    UnauthorizedError,
)
from dflash_check.hub.interface import (
    CONFIG_FILE,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    ModelRef,
    Role,
)
from dflash_check.hub.local import read_header_bytes, shard_for_fc

T = TypeVar("T")

# First ranged read of a safetensors file. A DFlash draft's header is a few KB (tens of
# tensors); 64 KB covers it in one request, and a second request fetches the rest if not.
FIRST_RANGE_BYTES = 65_536
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class HubOptions:
    """How to talk to the Hub; built once from the command line."""

    token: str | None = None
    """Explicit token (``--token``); None lets huggingface_hub use ``HF_TOKEN`` or the login."""
    offline: bool = False
    """Use the cache only (``--offline``; ``HF_HUB_OFFLINE=1`` has the same effect)."""
    timeout: float = 10.0
    """Seconds to wait for each Hub response."""
    retries: int = 2
    """Extra attempts after a server error, timeout or connection failure."""
    backoff: float = 0.5
    """First wait between attempts, doubled each time."""
    on_retry: Callable[[str], None] | None = field(default=None, compare=False)
    """Told why and which attempt comes next before each retry (the CLI prints it on stderr)."""


class _ByteCounter(threading.local):
    """Bytes received by the current thread since the last ``measure``."""

    total: int = 0


_COUNTER = _ByteCounter()
_COUNTER_LOCK = threading.Lock()
_COUNTER_INSTALLED = False


def _count_response(response: Any) -> None:
    """Add a response's body size to the current thread's counter (HEAD bodies are empty)."""
    if response.request.method != "HEAD":
        _COUNTER.total += int(response.headers.get("content-length") or 0)


def _install_counter() -> None:
    """Make huggingface_hub's HTTP client report received bytes to ``_COUNTER``."""
    global _COUNTER_INSTALLED
    with _COUNTER_LOCK:
        if _COUNTER_INSTALLED:
            return
        # huggingface_hub logs its own retries to stderr; this tool reports failures itself,
        # as one line, so its messages stay quiet unless DFLASH_CHECK_DEBUG asks for them.
        if os.environ.get("DFLASH_CHECK_DEBUG", "") in ("", "0"):
            import logging

            from huggingface_hub.utils import logging as hf_logging

            hf_logging.set_verbosity(logging.CRITICAL)
        import httpx2  # huggingface_hub's own HTTP client
        from huggingface_hub import set_client_factory
        from huggingface_hub.utils._http import hf_request_event_hook

        def factory() -> httpx2.Client:
            return httpx2.Client(
                event_hooks={"request": [hf_request_event_hook], "response": [_count_response]},
                follow_redirects=True,
                timeout=None,
            )

        set_client_factory(factory)
        _COUNTER_INSTALLED = True


@contextmanager
def measure() -> Iterator[list[int]]:
    """Count the bytes this thread receives inside the block; the count is in ``box[0]``."""
    start = _COUNTER.total
    box = [0]
    try:
        yield box
    finally:
        box[0] = _COUNTER.total - start


def offline_mode(options: HubOptions) -> bool:
    """Return whether the cache must be used alone (flag or ``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants

    env = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    return options.offline or env or bool(constants.HF_HUB_OFFLINE)


def offline_switch(options: HubOptions) -> str:
    """Return what turned offline mode on, for hints: the flag, or the variable."""
    return "--offline" if options.offline else "HF_HUB_OFFLINE=1"


def offline_hint(options: HubOptions, then: str) -> str:
    """Return how to leave offline mode (naming what the user set) and what to run then."""
    if options.offline:
        return f"run the same command once without --offline to cache it, or {then}"
    return f"unset HF_HUB_OFFLINE (it is set in the environment) and run once online, or {then}"


def network_hint(kind: str, timeout: float | None = None) -> str:
    """Return what to try when the Hub cannot be reached: per kind of failure."""
    from huggingface_hub import constants

    endpoint = constants.ENDPOINT
    offline = "add --offline to use what earlier runs cached"
    if kind == "timeout":
        waited = f"within --timeout {timeout:g} s" if timeout is not None else "in time"
        return f"{endpoint} did not answer {waited}: retry later, raise --timeout, or {offline}"
    if kind == "server":
        return f"{endpoint} is failing: retry later, or {offline}"
    proxy = " (HTTPS_PROXY is set: check it)" if os.environ.get("HTTPS_PROXY") else ""
    return (
        f"check the network; behind a proxy set HTTPS_PROXY{proxy}; for a mirror set HF_ENDPOINT "
        f"(now {endpoint}); or {offline}"
    )


def _manifest_path(repo_id: str, commit: str, subfolder: str | None = None) -> Path:
    """Return where the manifest of ``repo_id`` at ``commit`` (and subfolder) is cached."""
    from huggingface_hub import constants

    folder = "models--" + repo_id.replace("/", "--")
    # A subfolder is another model of the same commit: its own manifest.
    name = commit + (f"@{subfolder.replace('/', '--')}" if subfolder else "")
    return Path(constants.HF_HOME) / "dflash-check" / folder / f"{name}.json"


def _is_commit(revision: str | None) -> bool:
    """Return whether ``revision`` is a full 40-hex commit id (immutable, safe to cache)."""
    return revision is not None and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def _status(err: BaseException) -> int | None:
    """Return the HTTP status of a huggingface_hub error, if it carries one."""
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)


def _causes(err: BaseException) -> Iterator[BaseException]:
    """Yield ``err`` and the chain of exceptions that caused it."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def translate(
    err: BaseException,
    who: str,
    repo_id: str,
    what: str,
    offline: bool,
    options: HubOptions | None = None,
) -> HubError:
    """Map a huggingface_hub / transport exception to one ``HubError`` with a clear message."""
    import httpx2
    from huggingface_hub import errors as hf

    page = f"https://huggingface.co/{repo_id}"
    # Order matters: GatedRepoError subclasses RepositoryNotFoundError, and
    # RevisionNotFoundError / RemoteEntryNotFoundError subclass HfHubHTTPError.
    for cause in _causes(err):
        if isinstance(cause, hf.GatedRepoError):
            return GatedRepoError(
                f"{who}: the repository is gated and this account has no access to it",
                hint=f"request access at {page}, then set HF_TOKEN or run 'hf auth login'",
            )
        if isinstance(cause, hf.RevisionNotFoundError):
            return RevisionNotFoundError(
                f"{who}: revision not found on the Hub",
                hint=f"list its branches and tags at {page}/tree/main",
            )
        if isinstance(cause, (hf.RemoteEntryNotFoundError, hf.EntryNotFoundError)) and not (
            isinstance(cause, hf.LocalEntryNotFoundError)
        ):
            return FileNotFoundOnHubError(f"{who}: {what} not found in the repository")
        if isinstance(cause, hf.RepositoryNotFoundError):
            return RepoNotFoundError(
                f"{who}: repository not found on the Hub (or private without access)",
                hint="check the name; for a private repo set HF_TOKEN or pass --token",
            )
        if isinstance(cause, (hf.OfflineModeIsEnabled,)) or (
            offline and isinstance(cause, hf.LocalEntryNotFoundError)
        ):
            return NotCachedError(
                f"{who}: {what} is not in the Hugging Face cache and offline mode is on",
                hint=offline_hint(options or HubOptions(), f"'hf download {repo_id} {what}'"),
            )
        timeout = options.timeout if options is not None else None
        if isinstance(cause, httpx2.TimeoutException):
            after = f" after {timeout:g} s" if timeout is not None else ""
            return NetworkError(
                f"{who}: no answer from the Hub{after} while fetching {what}",
                hint=network_hint("timeout", timeout),
            )
        if isinstance(cause, (httpx2.ConnectError, httpx2.NetworkError)):
            return NetworkError(
                f"{who}: cannot connect to the Hub to fetch {what}", hint=network_hint("connect")
            )
        if isinstance(cause, httpx2.RemoteProtocolError):
            # huggingface_hub has already resumed and retried this download itself.
            broken = NetworkError(f"{who}: the connection broke while fetching {what}")
            broken.retryable = False
            return broken
        if isinstance(cause, hf.HfHubHTTPError):
            status = _status(cause)
            if status in (401, 403):
                return UnauthorizedError(
                    f"{who}: the Hub refused access to {what} (HTTP {status})",
                    hint="check that HF_TOKEN / --token is valid and can read this repo",
                )
            return NetworkError(
                f"{who}: the Hub answered HTTP {status} for {what}",
                hint=network_hint("server") if status is not None and status >= 500 else None,
            )
    return NetworkError(f"{who}: could not fetch {what} ({type(err).__name__})")


def _retryable(err: HubError) -> bool:
    """Return whether trying again could help (server errors, timeouts, refused connections)."""
    return isinstance(err, NetworkError) and err.retryable


class HubSource:
    """Models on the Hugging Face Hub, through huggingface_hub and its cache."""

    def __init__(self, options: HubOptions | None = None) -> None:
        """Keep the options; nothing is imported or contacted until ``fetch``."""
        self.options = options or HubOptions()

    # -- plumbing -------------------------------------------------------------------------

    def _call(self, fn: Callable[[], T], who: str, repo_id: str, what: str) -> T:
        """Run one Hub call with bounded retries, translating any failure to a ``HubError``."""
        offline = offline_mode(self.options)
        attempt = 0
        while True:
            try:
                return fn()
            except (HubError, ConfigError):
                raise
            except Exception as err:  # translated below and chained, never swallowed
                hub_err = translate(err, who, repo_id, what, offline, self.options)
                if offline or not _retryable(hub_err) or attempt >= self.options.retries:
                    if attempt:
                        hub_err = type(hub_err)(
                            f"{hub_err} (after {attempt + 1} attempts)", hint=hub_err.hint
                        )
                    # Chained, so that DFLASH_CHECK_DEBUG=1 shows the transport's own error.
                    raise hub_err from err
                if self.options.on_retry is not None:
                    total = self.options.retries + 1
                    self.options.on_retry(f"{hub_err}; retrying ({attempt + 2}/{total})")
            time.sleep(self.options.backoff * 2**attempt)
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
        )

    def _download(self, ref: ModelRef, filename: str, who: str) -> Path:
        """Download (or find in the cache) one small file of the repo."""
        from huggingface_hub import hf_hub_download

        assert ref.repo_id is not None
        repo_id = ref.repo_id
        offline = offline_mode(self.options)
        path = self._call(
            lambda: hf_hub_download(
                repo_id,
                filename,
                subfolder=ref.subfolder,
                revision=ref.revision,
                token=self.options.token,
                etag_timeout=self.options.timeout,
                local_files_only=offline,
            ),
            who,
            repo_id,
            ref.in_repo(filename),
        )
        return Path(str(path))

    def _read_header(self, ref: ModelRef, commit: str, filename: str, who: str) -> bytes:
        """Fetch the JSON header of a remote safetensors file with ranged reads."""
        from huggingface_hub import constants, get_session
        from huggingface_hub.file_download import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

        assert ref.repo_id is not None
        filename = ref.in_repo(filename)
        url = hf_hub_url(ref.repo_id, filename, revision=commit, endpoint=constants.ENDPOINT)
        headers = build_hf_headers(token=self.options.token)
        where = f"{ref.repo_id}@{commit[:8]}:{filename}"

        def get(start: int, end: int) -> bytes:
            response = get_session().get(
                url,
                headers={**headers, "range": f"bytes={start}-{end}"},
                timeout=self.options.timeout,
            )
            hf_raise_for_status(response)
            return bytes(response.content)

        first = self._call(lambda: get(0, FIRST_RANGE_BYTES - 1), who, ref.repo_id, filename)
        length = header_length(first[:8], who, where)
        if len(first) >= 8 + length:
            return first[8 : 8 + length]
        rest = self._call(lambda: get(len(first), 8 + length - 1), who, ref.repo_id, filename)
        header = first[8:] + rest
        if len(header) < length:
            raise ConfigError(
                f"{who}: {where}: safetensors header truncated ({len(header)} of {length} bytes)"
            )
        return header[:length]

    # -- the source ---------------------------------------------------------------------

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Return config, header shapes and provenance of a Hub model."""
        assert ref.repo_id is not None
        who = f"{role} {ref.spec}"
        offline = offline_mode(self.options)
        # A commit id is immutable and offline mode asks for the cache: when everything is
        # cached, answer without importing the HTTP stack at all (as fast as a local dir).
        if offline or _is_commit(ref.revision):
            cached = self._fetch_cached(ref, role, who)
            if cached is not None:
                return cached
        _install_counter()
        with measure() as fetched:
            if offline:
                files = self._fetch_offline(ref, role, who)
            else:
                files = self._fetch_online(ref, role, who)
        return replace(files, fetched_bytes=fetched[0])

    def _fetch_cached(self, ref: ModelRef, role: Role, who: str) -> ModelFiles | None:
        """Return the model from the HF cache and its manifest, or None if anything is missing."""
        from huggingface_hub import constants

        assert ref.repo_id is not None
        repo_dir = Path(constants.HF_HUB_CACHE) / ("models--" + ref.repo_id.replace("/", "--"))
        revision = ref.revision or "main"
        try:
            commit = (
                revision
                if _is_commit(revision)
                else (repo_dir / "refs" / revision).read_text().strip()
            )
            raw = (repo_dir / "snapshots" / commit / ref.in_repo(CONFIG_FILE)).read_bytes()
        except (OSError, ValueError):
            return None
        manifest = _load_manifest(_manifest_path(ref.repo_id, commit, ref.subfolder))
        if manifest is None or (role == "draft" and "tensors" not in manifest):
            return None
        if role == "draft" and manifest.get("tensors") is None and manifest.get("tensors_file"):
            return None
        location = f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(CONFIG_FILE)}"
        config = parse_json_object(raw, who, location)
        return self._files(ref, role, who, config, location, commit, manifest)

    def _config(self, ref: ModelRef, who: str) -> tuple[dict[str, Any], str, str]:
        """Return (config, location, commit) from the cache or the Hub."""
        path = self._download(ref, CONFIG_FILE, who)
        # snapshots/<commit>/[<subfolder>/]config.json
        depth = len(ref.subfolder.split("/")) if ref.subfolder else 0
        commit = path.parents[depth].name
        location = f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(CONFIG_FILE)}"
        return parse_json_object(path.read_bytes(), who, location), location, commit

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
        )
        if head.commit_hash and _is_commit(head.commit_hash):
            pinned = replace(ref, revision=head.commit_hash)
            cached = self._fetch_cached(pinned, role, who)
            if cached is not None:
                _update_ref(repo_id, ref.revision or "main", head.commit_hash)
                return cached
        info = self._model_info(repo_id, head.commit_hash or ref.revision, who)
        config, location, commit = self._config(ref, who)
        manifest_file = _manifest_path(repo_id, commit, ref.subfolder)
        manifest = _load_manifest(manifest_file)
        siblings = _siblings(info, ref.subfolder)
        if manifest is None:
            manifest = {
                "version": MANIFEST_VERSION,
                "base_model": _base_models(getattr(info, "card_data", None)),
                "tensors": None,
                "tensors_file": None,
                "tokenizer_etag": self._tokenizer_etag(ref, commit, siblings, who),
            }
            if role == "draft":
                tensors_file, header = self._remote_header(ref, commit, siblings, who)
                manifest["tensors_file"] = tensors_file
                manifest["tensors"] = header
            _store_manifest(manifest_file, manifest)
        elif (
            role == "draft"
            and manifest.get("tensors_file") is None
            and manifest.get("tensors") is None
        ):
            # A manifest written while this model was checked as a target lacks the header.
            tensors_file, header = self._remote_header(ref, commit, siblings, who)
            manifest = {**manifest, "tensors_file": tensors_file, "tensors": header}
            _store_manifest(manifest_file, manifest)
        return self._files(ref, role, who, config, location, commit, manifest)

    def _remote_header(
        self, ref: ModelRef, commit: str, siblings: set[str], who: str
    ) -> tuple[str | None, str | None]:
        """Pick the safetensors file holding ``fc.weight`` and fetch its header text."""
        if SAFETENSORS_FILE in siblings:
            filename: str | None = SAFETENSORS_FILE
        elif SAFETENSORS_INDEX in siblings:
            index_path = self._download(ref, SAFETENSORS_INDEX, who)
            index = parse_json_object(index_path.read_bytes(), who, SAFETENSORS_INDEX)
            filename = shard_for_fc(index, who, SAFETENSORS_INDEX)
            if filename is None:
                return SAFETENSORS_INDEX, "{}"
        else:
            others = sorted(s for s in siblings if s.endswith(".safetensors") and "/" not in s)
            filename = others[0] if others else None
        if filename is None:
            return None, None
        header = self._read_header(ref, commit, filename, who)
        # Validate now, so that a bad header fails this run and is never cached.
        parse_header(header, who, f"{ref.repo_id}:{filename}")
        return filename, header.decode("utf-8")

    def _fetch_offline(self, ref: ModelRef, role: Role, who: str) -> ModelFiles:
        """Re-check from the HF cache and the manifest alone."""
        assert ref.repo_id is not None
        config, location, commit = self._config(ref, who)
        manifest = _load_manifest(_manifest_path(ref.repo_id, commit, ref.subfolder))
        unavailable = None
        if manifest is None or (role == "draft" and manifest.get("tensors_file") is None):
            snapshot_header = self._snapshot_header(ref, commit, who) if role == "draft" else None
            if manifest is None and role == "draft" and snapshot_header is None:
                # The configs alone still decide the layer, size and vocabulary rules: check
                # them, and list the fc width as not checked (as for a local folder).
                unavailable = "has no safetensors header in the offline cache"
            manifest = {
                "version": MANIFEST_VERSION,
                "base_model": (manifest or {}).get("base_model", []),
                "tokenizer_etag": (manifest or {}).get("tokenizer_etag"),
                "tensors_file": snapshot_header[0] if snapshot_header else None,
                "tensors": snapshot_header[1] if snapshot_header else None,
            }
        files = self._files(ref, role, who, config, location, commit, manifest)
        if unavailable is None:
            return files
        return replace(files, extras={**files.extras, "tensors_unavailable": unavailable})

    def _snapshot_header(self, ref: ModelRef, commit: str, who: str) -> tuple[str, str] | None:
        """Read the header from full weights already in the HF cache, if someone fetched them."""
        from huggingface_hub import try_to_load_from_cache

        assert ref.repo_id is not None
        cached = try_to_load_from_cache(ref.repo_id, ref.in_repo(SAFETENSORS_FILE), revision=commit)
        if not isinstance(cached, str):
            return None
        return SAFETENSORS_FILE, read_header_bytes(Path(cached), who).decode("utf-8")

    def _files(
        self,
        ref: ModelRef,
        role: Role,
        who: str,
        config: dict[str, Any],
        location: str,
        commit: str,
        manifest: dict[str, Any],
    ) -> ModelFiles:
        """Assemble ``ModelFiles`` from a config and a manifest."""
        tensors: dict[str, TensorInfo] | None = None
        tensors_file = manifest.get("tensors_file")
        header = manifest.get("tensors")
        if role == "draft" and isinstance(header, str):
            tensors = parse_header(header.encode("utf-8"), who, f"{ref.repo_id}:{tensors_file}")
        return ModelFiles(
            role=role,
            name=ref.spec,
            config=config,
            config_location=location,
            tensors=tensors,
            tensors_location=f"{ref.repo_id}@{commit[:12]}:{ref.in_repo(tensors_file)}"
            if tensors_file
            else None,
            revision=commit,
            extras={
                "base_model": tuple(manifest.get("base_model") or ()),
                "tokenizer": manifest.get("tokenizer_etag"),
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
                raise NotCachedError(
                    f"{who}: the safetensors weights are not in the Hugging Face cache and "
                    "offline mode is on",
                    hint=offline_hint(
                        self.options, f"'hf download {repo_id} --include \"*.safetensors\"'"
                    ),
                )
            return folder
        info = self._model_info(repo_id, ref.revision, who)
        names = sorted(
            name
            for name in _siblings(info, ref.subfolder)
            if any(fnmatch.fnmatch(name, p) for p in patterns)
        )
        pinned = replace(ref, revision=info.sha or ref.revision)
        snapshot: Path | None = None
        for name in names:
            snapshot = self._download(pinned, name, who).parent
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
        path = self._download(ref, TOKENIZER_FILE, files.who)
        return vocab_from_tokenizer_json(path.read_bytes(), files.who, TOKENIZER_FILE)


def _siblings(info: Any, subfolder: str | None) -> set[str]:
    """Return the repo's file names relative to ``subfolder`` (only the files under it)."""
    names = {s.rfilename for s in (info.siblings or [])}
    if not subfolder:
        return names
    prefix = subfolder + "/"
    return {n[len(prefix) :] for n in names if n.startswith(prefix)}


def _base_models(card_data: Any) -> list[str]:
    """Return the ``base_model`` entries of a model card's metadata."""
    if card_data is None:
        return []
    value = card_data.get("base_model") if hasattr(card_data, "get") else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _update_ref(repo_id: str, revision: str, commit: str) -> None:
    """Point ``refs/<revision>`` of the HF cache at ``commit``, as hf_hub_download would."""
    from huggingface_hub import constants

    if _is_commit(revision):
        return
    ref_file = (
        Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--")) / "refs" / revision
    )
    try:
        current: str | None = ref_file.read_text().strip()
    except OSError:
        current = None
    if current == commit:
        return
    try:
        ref_file.parent.mkdir(parents=True, exist_ok=True)
        ref_file.write_text(commit)
    except OSError:
        pass  # a read-only cache only costs the offline re-run


def _load_manifest(path: Path) -> dict[str, Any] | None:
    """Read a cached manifest; a missing, foreign or corrupt one counts as absent."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        return None
    return data


def _store_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a manifest atomically (concurrent registry workers may race on it)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(manifest))
        tmp.replace(path)
    except OSError:
        # A read-only cache only costs the offline re-run; the check itself still works.
        pass
