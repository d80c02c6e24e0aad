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

import contextlib
import hashlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from dflash_check.check.tokenizers import TOKENIZER_FILE, vocab_from_tokenizer_json
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
from dflash_check.fields import parse_json_object
from dflash_check.sources.interface import (
    CONFIG_FILE,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    ModelRef,
    Role,
)
from dflash_check.sources.limits import DEADLINE_FACTOR, limit_for
from dflash_check.sources.local import read_capped, read_header_bytes, shard_for_fc
from dflash_check.sources.names import BadName, check_repo_file, check_repo_id, check_revision
from dflash_check.sources.safetensors_header import TensorInfo, header_length, parse_header
from dflash_check.sources.transport import (
    LIMITS,
    BodyTooLarge,
    DeadlineExceeded,
    bounded,
    make_transport,
)
from dflash_check.views import ModelFiles

T = TypeVar("T")

# First ranged read of a safetensors file. A DFlash draft's header is a few KB (tens of
# tensors); 64 KB covers it in one request, and a second request fetches the rest if not.
FIRST_RANGE_BYTES = 65_536
MANIFEST_VERSION = 2


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


_CLIENT_LOCK = threading.Lock()
_CLIENT_INSTALLED = False


def _install_client() -> None:
    """Give huggingface_hub an HTTP client whose transport applies ``transport.bounded``."""
    global _CLIENT_INSTALLED
    with _CLIENT_LOCK:
        if _CLIENT_INSTALLED:
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
                event_hooks={"request": [hf_request_event_hook]},
                follow_redirects=True,
                timeout=None,
                transport=make_transport(),
            )

        set_client_factory(factory)
        _CLIENT_INSTALLED = True


@contextmanager
def measure() -> Iterator[list[int]]:
    """Count the body bytes this thread receives inside the block; the count is in ``box[0]``."""
    start = LIMITS.received
    box = [0]
    try:
        yield box
    finally:
        box[0] = LIMITS.received - start


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
        if isinstance(cause, BodyTooLarge):
            too_big = NetworkError(
                f"{who}: the Hub sent more than the {cause.limit >> 20} MB limit for {what}; "
                "refused",
                hint="the limits are listed in the README (Limits)",
            )
            too_big.retryable = False
            return too_big
        if isinstance(cause, DeadlineExceeded):
            late = NetworkError(
                f"{who}: the Hub did not finish sending {what} in time "
                f"(--timeout x {DEADLINE_FACTOR} for each model)",
                hint="raise --timeout on a slow network",
            )
            late.retryable = False
            return late
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
    for cause in _causes(err):
        if isinstance(cause, (ValueError, RecursionError)):
            # A model-info body that is not JSON, nests too deeply or holds a huge integer.
            malformed = NetworkError(f"{who}: the Hub sent a malformed answer for {what}")
            malformed.retryable = False
            return malformed
    return NetworkError(f"{who}: could not fetch {what} ({type(err).__name__})")


def _retryable(err: HubError) -> bool:
    """Return whether trying again could help (server errors, timeouts, refused connections)."""
    return isinstance(err, NetworkError) and err.retryable


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
                    or not _retryable(hub_err)
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
            _drop_incomplete(repo_id)  # what a cut-off download left behind
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
        if offline or _is_commit(ref.revision):
            cached = self._fetch_cached(ref, role, who)
            if cached is not None:
                return cached
        _install_client()
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
        commit = revision if _is_commit(revision) else _cached_ref(ref.repo_id, revision)
        if commit is None:
            return None
        config_path = _repo_cache(ref.repo_id) / "snapshots" / commit / ref.in_repo(CONFIG_FILE)
        try:
            raw = read_capped(config_path, CONFIG_FILE, who)
        except ConfigError:
            return None
        manifest = _load_manifest(ref.repo_id, commit, raw, ref.subfolder)
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
        if head.commit_hash and _is_commit(head.commit_hash):
            pinned = replace(ref, revision=head.commit_hash)
            cached = self._fetch_cached(pinned, role, who)
            if cached is not None:
                _update_ref(repo_id, ref.revision or "main", head.commit_hash)
                return cached
        info = self._model_info(repo_id, head.commit_hash or ref.revision, who)
        config, raw, location, commit = self._config(ref, who)
        manifest = _load_manifest(repo_id, commit, raw, ref.subfolder)
        siblings = _siblings(info, ref.subfolder)
        if manifest is None:
            manifest = Manifest(
                repo_id=repo_id,
                commit=commit,
                config_sha256=hashlib.sha256(raw).hexdigest(),
                base_model=_base_models(getattr(info, "card_data", None)),
                tokenizer_etag=self._tokenizer_etag(ref, commit, siblings, who),
                weights=None,
            )
        if role == "draft" and manifest.weights is None:
            # Also when a run that checked this model as a target wrote the manifest.
            manifest = replace(manifest, weights=self._remote_header(ref, commit, siblings, who))
        _store_manifest(manifest, ref.subfolder)
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
        manifest = _load_manifest(ref.repo_id, commit, raw, ref.subfolder)
        unavailable = None
        if manifest is None or (role == "draft" and manifest.weights is None):
            weights = self._snapshot_header(ref, commit, who) if role == "draft" else None
            if role == "draft" and weights is None:
                # The configs alone still decide the layer, size and vocabulary rules: check
                # them, and list the fc width as not checked (as for a local folder).
                unavailable = "has no safetensors header in the offline cache"
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
        path = _repo_cache(ref.repo_id) / "snapshots" / commit / ref.in_repo(SAFETENSORS_FILE)
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
                raise NotCachedError(
                    f"{who}: the safetensors weights are not in the Hugging Face cache and "
                    "offline mode is on",
                    hint=offline_hint(
                        self.options, f"'hf download {repo_id} --include \"*.safetensors\"'"
                    ),
                )
            return folder
        _install_client()
        info = self._model_info(repo_id, ref.revision, who)
        names = sorted(
            s
            for s in _siblings(info, ref.subfolder)
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
        _install_client()
        with bounded(seconds=DEADLINE_FACTOR * self.options.timeout):
            path = self._download(ref, TOKENIZER_FILE, files.who, cap=cap)
        raw = read_capped(path, TOKENIZER_FILE, files.who, f"{ref.repo_id}:{TOKENIZER_FILE}")
        return vocab_from_tokenizer_json(raw, files.who, TOKENIZER_FILE)


def _siblings(info: Any, subfolder: str | None = None) -> set[str]:
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


def _base_models(card_data: Any) -> tuple[str, ...]:
    """Return the ``base_model`` entries of a model card's metadata."""
    if card_data is None:
        return ()
    value = card_data.get("base_model") if hasattr(card_data, "get") else None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _repo_cache(repo_id: str) -> Path:
    """Return the repo's folder in the HF cache (``repo_id`` is validated by ``fetch``)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--"))


def _cached_ref(repo_id: str, revision: str) -> str | None:
    """Return the commit a cached ``refs/<revision>`` file points at, if it is a commit id."""
    try:
        text = read_capped(_repo_cache(repo_id) / "refs" / revision, CONFIG_FILE, "cache")
    except ConfigError:
        return None
    commit = text.decode("ascii", errors="replace").strip()
    return commit if _is_commit(commit) else None  # anything else could name a path


def _update_ref(repo_id: str, revision: str, commit: str) -> None:
    """Point ``refs/<revision>`` of the HF cache at ``commit``, as hf_hub_download would."""
    if _is_commit(revision) or _cached_ref(repo_id, revision) == commit:
        return
    ref_file = _repo_cache(repo_id) / "refs" / revision
    try:
        ref_file.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(ref_file, commit)
    except OSError:
        pass  # a read-only cache only costs the offline re-run


def _manifest_path(repo_id: str, commit: str, subfolder: str | None = None) -> Path:
    """Return where the manifest of ``repo_id`` at ``commit`` (and subfolder) is cached."""
    from huggingface_hub import constants

    folder = "models--" + repo_id.replace("/", "--")
    # A subfolder is another model of the same commit: its own manifest.
    name = commit + (f"@{subfolder.replace('/', '--')}" if subfolder else "")
    return Path(constants.HF_HOME) / "dflash-check" / folder / f"{name}.json"


def _load_manifest(
    repo_id: str, commit: str, config_raw: bytes, subfolder: str | None = None
) -> Manifest | None:
    """Read a cached manifest; a missing, foreign, stale or corrupt one counts as absent."""
    try:
        text = read_capped(_manifest_path(repo_id, commit, subfolder), "model info", "cache")
    except ConfigError:
        return None
    digest = hashlib.sha256(config_raw).hexdigest()
    return parse_manifest(text.decode("utf-8", errors="replace"), repo_id, commit, digest)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file and a rename (readers never see half)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _store_manifest(manifest: Manifest, subfolder: str | None = None) -> None:
    """Write a manifest atomically (concurrent registry workers may race on it)."""
    path = _manifest_path(manifest.repo_id, manifest.commit, subfolder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, manifest.to_json())
    except OSError:
        # A read-only cache only costs the offline re-run; the check itself still works.
        pass


def _drop_incomplete(repo_id: str) -> None:
    """Remove partial downloads of a repo that a cut-off transfer left in the HF cache."""
    with contextlib.suppress(OSError):
        for partial in (_repo_cache(repo_id) / "blobs").glob("*.incomplete"):
            with contextlib.suppress(OSError):
                partial.unlink()
