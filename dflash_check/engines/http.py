"""HTTP to a serving engine, bounded and discreet: the transport under ``runtime/engine.py``.

An engine endpoint is a server the user named, but what answers there is not trusted:

* **Redirects.** A redirect to the same origin (scheme, host and port) is followed, at most
  ``MAX_REDIRECTS`` times. A redirect to any other origin is *refused* (one error line): the
  engine key (``Authorization: Bearer``) is only ever sent to the origin the user named.
* **Credentials in the URL.** ``http://user:pass@host:8000`` is sent as HTTP Basic
  authentication (unless an engine key is given) and never shown: messages and reports use
  ``display``, the URL without them.
* **Size.** Every body is read streaming and cut off past ``ENGINE_ANSWER_BYTES`` (a
  ``Content-Length`` over it is refused before reading).
* **Time.** One deadline per request covers connect, headers and the whole body: a server
  that trickles a byte a second is given up on at ``--engine-timeout``. A watchdog shuts the
  socket when the deadline passes, so no single blocking read outlives it: every request
  ends within ``--engine-timeout`` plus the watchdog's wake-up (well under a second).
* **Parsing.** JSON is parsed with non-finite numbers (``NaN``, ``Infinity``, ``1e999``) and
  nesting beyond the parser's depth turned into one ``AnswerFormatError`` naming the path.

Standard library only (``http.client``): the check path has no HTTP dependency of its own.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import math
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from dflash_check.sanitize import one_line
from dflash_check.sources.limits import limit_for

ENGINE_ANSWER_BYTES = limit_for("engine answer")
MAX_REDIRECTS = 5
_CHUNK = 64 * 1024


class EndpointError(ValueError):
    """An endpoint URL that cannot be used (bad scheme, port or IPv6 literal)."""


@dataclass(frozen=True)
class Endpoint:
    """A parsed engine base URL: where to connect, how to show it, what credentials it held."""

    scheme: str
    host: str
    port: int
    path: str
    """Base path without the trailing slash (``""`` for the root)."""
    display: str
    """The URL as messages show it: no user, no password, controls made visible."""
    userinfo: tuple[str, str] | None = field(default=None, repr=False)

    @property
    def origin(self) -> tuple[str, str, int]:
        """Scheme, host and port: what a redirect must keep to be followed with credentials."""
        return (self.scheme, self.host.lower(), self.port)


def parse_endpoint(url: str) -> Endpoint:
    """Return ``url`` parsed, or raise ``EndpointError`` with a reason fit for a usage error."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as err:  # "Invalid IPv6 URL", "Port out of range 0-65535", …
        raise EndpointError(f"not a valid URL ({err})") from None
    if parts.scheme not in ("http", "https"):
        raise EndpointError("give a URL such as http://host:8000")
    if not host:
        raise EndpointError("the URL names no host")
    if any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in url):
        raise EndpointError("the URL holds spaces or control characters")
    userinfo = None
    if parts.username is not None or parts.password is not None:
        userinfo = (unquote(parts.username or ""), unquote(parts.password or ""))
    netloc = parts.netloc.rpartition("@")[2]
    display = f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"
    return Endpoint(
        scheme=parts.scheme,
        host=host,
        port=port if port is not None else (443 if parts.scheme == "https" else 80),
        path=parts.path.rstrip("/"),
        display=one_line(display),
        userinfo=userinfo,
    )


class TransportError(Exception):
    """The request failed before a complete answer arrived; ``str`` is the reason."""


class DeadlinePassed(TransportError):
    """The answer did not arrive in full within the request's deadline."""


class AnswerTooLarge(TransportError):
    """The body is larger than ``ENGINE_ANSWER_BYTES``."""


class RedirectRefused(TransportError):
    """A redirect to another origin (not followed, so that no credential goes there)."""


class AnswerFormatError(ValueError):
    """A body that is not the JSON (or text) it should be; ``str`` names what is wrong."""


@dataclass(frozen=True)
class Answer:
    """One complete answer."""

    status: int
    body: bytes


class _Watchdog:
    """Shut a connection's socket when the deadline passes, so a blocked read returns."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float) -> None:
        self.fired = False
        self._conn = conn
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.cancel()


def _connection(endpoint: Endpoint, timeout: float) -> http.client.HTTPConnection:
    if endpoint.scheme == "https":
        return http.client.HTTPSConnection(
            endpoint.host, endpoint.port, timeout=timeout, context=ssl.create_default_context()
        )
    return http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=timeout)


def _read_body(response: http.client.HTTPResponse, deadline: float, cap: int) -> bytes:
    """Read the body in chunks (one socket read each), refusing it past ``cap`` bytes."""
    length = response.getheader("Content-Length")
    if length is not None and length.strip().isdigit() and int(length) > cap:
        raise AnswerTooLarge(f"the answer announces {int(length)} bytes, over {cap}")
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise DeadlinePassed("the answer did not arrive in time")
        chunk = response.read1(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            raise AnswerTooLarge(f"the answer is larger than {cap} bytes")
        chunks.append(chunk)


def request(
    endpoint: Endpoint,
    path: str,
    *,
    timeout: float,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    api_key: str | None = None,
    cap: int = ENGINE_ANSWER_BYTES,
) -> Answer:
    """Send one request to ``endpoint`` + ``path``; return the complete answer of any status.

    Raises ``TransportError`` (or a subclass) for a refused connection, a timeout, a body
    over ``cap``, a cross-origin redirect; the message never holds a credential.
    """
    deadline = time.monotonic() + timeout
    sent = {"Accept": "application/json, text/plain", **(headers or {})}
    if api_key:
        sent["Authorization"] = f"Bearer {api_key}"
    elif endpoint.userinfo is not None:
        token = base64.b64encode(":".join(endpoint.userinfo).encode()).decode()
        sent["Authorization"] = f"Basic {token}"
    target = endpoint.path + path
    method = "POST" if body is not None else "GET"
    for _ in range(MAX_REDIRECTS + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed("the answer did not arrive in time")
        conn = _connection(endpoint, left)
        try:
            with _Watchdog(conn, left) as dog:
                try:
                    conn.request(method, target, body=body, headers=sent)
                    response = conn.getresponse()
                    try:
                        data = _read_body(response, deadline, cap)
                    finally:
                        response.close()  # an unread or empty body keeps the socket open
                except (OSError, http.client.HTTPException) as err:
                    if dog.fired or isinstance(err, TimeoutError):
                        raise DeadlinePassed("the answer did not arrive in time") from None
                    raise TransportError(_reason(err)) from None
                if dog.fired:
                    raise DeadlinePassed("the answer did not arrive in time")
        finally:
            conn.close()
        if response.status in (301, 302, 303, 307, 308):
            location = response.getheader("Location") or ""
            target = _same_origin_target(endpoint, target, location)
            if response.status == 303:
                method, body = "GET", None
            continue
        return Answer(response.status, data)
    raise TransportError(f"more than {MAX_REDIRECTS} redirects")


def _same_origin_target(endpoint: Endpoint, current: str, location: str) -> str:
    """Return the path to follow a redirect to, or refuse one that leaves the origin."""
    here = f"{endpoint.scheme}://{endpoint.host}:{endpoint.port}"
    absolute = urljoin(here + current, location.strip())
    try:
        parts = urlsplit(absolute)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        origin = (parts.scheme, (parts.hostname or "").lower(), port)
    except ValueError:
        origin = ("", "", 0)
    if origin != endpoint.origin:
        shown = one_line(absolute.split("@")[-1])[:120]
        raise RedirectRefused(
            f"it redirected to another origin ({shown}); not followed, so that the key and "
            "credentials stay with the server named"
        )
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _reason(err: BaseException) -> str:
    """Return a short reason for a transport failure (no URL, so no credential)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    if isinstance(err, ssl.SSLError):
        return f"TLS: {err.reason or err}"
    return type(err).__name__


def _no_constant(name: str) -> Any:
    raise AnswerFormatError(f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise AnswerFormatError(f"non-finite number {text[:20]}")
    return value


def parse_json(raw: bytes) -> Any:
    """Parse a JSON answer strictly: no NaN/Infinity, no out-of-range numbers, bounded depth.

    Raises ``AnswerFormatError`` with the reason (the caller names the endpoint and path).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AnswerFormatError("not UTF-8") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise AnswerFormatError("nested too deeply") from None
    except AnswerFormatError:
        raise
    except ValueError as err:  # JSONDecodeError, and ints over Python's digit limit
        raise AnswerFormatError(one_line(str(err))[:120]) from None
