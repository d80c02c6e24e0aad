"""Every huggingface_hub / transport exception, translated here once into the ``HubError``
tree with a message and a hint; nothing above the Hub package sees a transport exception."""

from __future__ import annotations

import os
from collections.abc import Iterator

from dflash_check.errors import (
    FileNotFoundOnHubError,
    GatedRepoError,
    HubError,
    NetworkError,
    NotCachedError,
    RepoNotFoundError,
    RevisionNotFoundError,
    UnauthorizedError,
)
from dflash_check.problems import SharedCause
from dflash_check.sources.hub.client import HubOptions, offline_hint
from dflash_check.sources.limits import DEADLINE_FACTOR
from dflash_check.sources.transport import BodyTooLarge, DeadlineExceeded


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


def not_cached(
    who: str, what: str, download: str, options: HubOptions, *, are: bool = False
) -> NotCachedError:
    """Return the error for a file that offline mode cannot read from the cache.

    ``who`` is "ROLE REPO" (the role leads every message of a Hub source); ``download`` is what
    ``hf download`` needs to fetch it.
    """
    remedy = f"hf download {download}"
    return NotCachedError(
        f"{who}: {what} {'are' if are else 'is'} not in the Hugging Face cache and offline "
        "mode is on",
        hint=offline_hint(options, f"'{remedy}'"),
        shared=SharedCause(
            brief=f"{who.partition(' ')[0]} {what} not in the cache (offline)",
            hint=offline_hint(options, "download what is missing"),
            remedy=remedy,
        ),
    )


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
            return not_cached(who, what, f"{repo_id} {what}", options or HubOptions())
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
            broken = NetworkError(f"{who}: the connection broke while fetching {what}")
            # Closed before any answer: the server dropped a kept-alive connection as the
            # request went out (its idle timeout), and a GET or HEAD can be sent again.
            # Broken mid-answer: huggingface_hub has already resumed and retried a download.
            broken.retryable = "without sending a response" in str(cause)
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


def retryable(err: HubError) -> bool:
    """Return whether trying again could help (server errors, timeouts, refused connections)."""
    return isinstance(err, NetworkError) and err.retryable
