"""huggingface_hub's HTTP client, bounded: a body cap, an overall deadline, a byte count.

huggingface_hub reads a model-info body whole and streams a download until the server stops;
its read timeout is per socket read, so a Hub that trickles a byte a second is never given up
on. Every request the check makes goes through ``BoundedTransport``, which

* clamps each request's timeouts to ``--timeout`` and to what is left of the deadline,
* refuses a body whose ``Content-Length`` is over the cap before reading it, and cuts off a
  body that grows past the cap (or past the deadline) while it streams,
* counts the body bytes really received, for the report's ``fetched_bytes``.

The limits are per thread (registry workers fetch in parallel) and set by the Hub source
around each operation with ``bounded``; outside such a block nothing is capped (the smoke run
downloads real weights through the same client).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class BodyTooLarge(Exception):
    """The Hub sent (or announced) more bytes than the cap of what is being fetched."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"body larger than {limit} bytes")
        self.limit = limit


class DeadlineExceeded(Exception):
    """The operation's overall deadline passed (a stalled or trickling Hub)."""


class _Limits(threading.local):
    """The current thread's limits and received-byte count."""

    deadline: float | None = None
    """``time.monotonic()`` value after which no request starts and no body keeps streaming."""
    timeout: float | None = None
    """Longest wait for one connect, read or write."""
    max_bytes: int | None = None
    """Largest response body accepted."""
    received: int = 0
    """Body bytes received by this thread, ever."""


LIMITS = _Limits()


@contextmanager
def bounded(
    *, seconds: float | None = None, timeout: float | None = None, max_bytes: int | None = None
) -> Iterator[None]:
    """Apply limits to this thread's requests inside the block (nested blocks only tighten)."""
    saved = (LIMITS.deadline, LIMITS.timeout, LIMITS.max_bytes)
    if seconds is not None:
        end = time.monotonic() + seconds
        LIMITS.deadline = end if LIMITS.deadline is None else min(LIMITS.deadline, end)
    if timeout is not None:
        LIMITS.timeout = timeout if LIMITS.timeout is None else min(LIMITS.timeout, timeout)
    if max_bytes is not None:
        LIMITS.max_bytes = max_bytes
    try:
        yield
    finally:
        LIMITS.deadline, LIMITS.timeout, LIMITS.max_bytes = saved


def remaining() -> float | None:
    """Return the seconds left before the deadline (None: no deadline); raise once passed."""
    if LIMITS.deadline is None:
        return None
    left = LIMITS.deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded()
    return left


def _bounded_stream(inner: Any, max_bytes: int | None, deadline: float | None) -> Any:
    """Return a response body that stops at the cap and at the deadline, counting bytes."""
    import httpx2

    class BoundedStream(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in inner:
                seen += len(chunk)
                LIMITS.received += len(chunk)
                if max_bytes is not None and seen > max_bytes:
                    raise BodyTooLarge(max_bytes)
                if deadline is not None and time.monotonic() > deadline:
                    raise DeadlineExceeded()
                yield chunk

        def close(self) -> None:
            inner.close()

    return BoundedStream()


def make_transport() -> Any:
    """Return an httpx2 transport that applies the current thread's limits."""
    import httpx2

    class BoundedTransport(httpx2.BaseTransport):
        """Wrap the default transport with the limits above."""

        def __init__(self) -> None:
            self._inner = httpx2.HTTPTransport()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            left = remaining()
            caps = [c for c in (left, LIMITS.timeout) if c is not None]
            if caps:
                cap = min(caps)
                given = request.extensions.get("timeout") or {}
                request.extensions["timeout"] = {
                    key: min(cap, given.get(key) or math.inf)
                    for key in ("connect", "read", "write", "pool")
                }
            response = self._inner.handle_request(request)
            limit = LIMITS.max_bytes
            if request.method != "HEAD":
                announced = response.headers.get("content-length", "")
                if limit is not None and announced.isdigit() and int(announced) > limit:
                    response.close()
                    raise BodyTooLarge(limit)
                response.stream = _bounded_stream(response.stream, limit, LIMITS.deadline)
            return response

        def close(self) -> None:
            self._inner.close()

    return BoundedTransport()
