"""A Hugging Face Hub on 127.0.0.1, serving what huggingface_hub really asks for.

Endpoints: ``/api/models/{repo}[/revision/{rev}]`` (model info), ``HEAD``/``GET``
``/{repo}/resolve/{rev}/{file}`` with the ``ETag`` / ``X-Repo-Commit`` / ``Content-Length``
headers the client reads, ranged ``GET`` (206 + ``Content-Range``), and the ``X-Error-Code``
answers the client classifies (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo).
Faults are injected per repo. Used by the tests and the benchmarks; it never leaves loopback.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tests.support.paths import REPO

GOOD_TOKEN = "hf_loopbackTESTtoken0123456789"


@dataclass
class FakeRepo:
    """One repository: revisions (name -> files) and its behaviour."""

    revisions: dict[str, dict[str, bytes]]
    """Revision name (branch or tag) -> file name -> content."""
    gated: bool = False
    """Files need GOOD_TOKEN; model info stays public (as on the Hub)."""
    private: bool = False
    """Everything needs GOOD_TOKEN; without it the repo looks missing (401)."""
    card_data: dict[str, Any] | None = None
    """Model card metadata (``base_model`` …)."""
    fault: str | None = None
    """``500`` always, ``500-once`` then fine, ``slow`` (5 s per answer), ``short-body``
    (announces more bytes than it sends), ``403`` (forbidden files), ``stall`` (never
    answers), ``trickle`` (one body byte per ``HubState.trickle_seconds``), ``ignore-range``
    (answers a ranged GET with the whole file, 200), ``drop-once`` (closes the connection
    without an answer once, as a server does to a keep-alive connection it has timed out)."""
    fault_files: frozenset[str] | None = None
    """Apply ``fault`` only to these files (GETs of ``/resolve/``); None: every request."""
    huge: dict[str, int] = field(default_factory=dict)
    """File name (or ``model info``) -> size of a generated body sent instead of the real one;
    the content is never held in memory."""
    announce_huge: bool = True
    """Send Content-Length with a huge body (False: no length, the server closes at the end)."""
    failures: int = 0
    """Requests answered with a fault so far."""

    _commits: dict[str, str] = field(default_factory=dict)
    """Revision name -> commit, computed once (hashing a large fixture per request is slow)."""

    def _commit_of(self, name: str) -> str:
        if name not in self._commits:
            self._commits[name] = commit_of(self.revisions[name])
        return self._commits[name]

    def commit(self, revision: str) -> str | None:
        """Return the commit sha of a revision name or of a full commit id."""
        for name in self.revisions:
            sha = self._commit_of(name)
            if revision in (name, sha):
                return sha
        return None

    def files_at(self, commit: str) -> dict[str, bytes]:
        """Return the files of a commit."""
        for name, files in self.revisions.items():
            if self._commit_of(name) == commit:
                return files
        raise KeyError(commit)


def commit_of(files: dict[str, bytes]) -> str:
    """Return a stable 40-hex commit id for a set of files."""
    digest = hashlib.sha1()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha1(files[name]).digest())
    return digest.hexdigest()


_ETAGS: dict[int, tuple[bytes, str]] = {}


def _etag(data: bytes) -> str:
    """Return the sha256 of a file's content, remembered for large files."""
    if len(data) < 1 << 20:
        return hashlib.sha256(data).hexdigest()
    cached = _ETAGS.get(id(data))
    if cached is None or cached[0] is not data:
        cached = (data, hashlib.sha256(data).hexdigest())
        _ETAGS[id(data)] = cached
    return cached[1]


def read_folder(folder: Path) -> dict[str, bytes]:
    """Return every file of a fixture folder as name -> bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@dataclass
class Request:
    """What the server saw."""

    method: str
    path: str
    range: str | None
    authorization: str | None
    sent: int


@dataclass
class HubState:
    """The server's repos and its request log."""

    repos: dict[str, FakeRepo] = field(default_factory=dict)
    log: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    slow_seconds: float = 5.0
    trickle_seconds: float = 0.2
    stop: threading.Event = field(default_factory=threading.Event)
    """Set when the server shuts down, so stalled answers end with it."""
    latency: float = 0.0
    """Seconds added to every answer, to stand in for a real network in benchmarks."""


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+|[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+|[^/]+?)(?:/revision/(?P<rev>.+))?$")


class _Handler(BaseHTTPRequestHandler):
    """Answer one request from ``self.server.state``."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm the body waits for the
    # client's delayed ACK of the headers (~40 ms a request on Linux loopback), which made a
    # pair check against this server ~10x slower in wall time than its CPU time.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    # -- helpers ------------------------------------------------------------------------

    def _authorised(self) -> bool:
        return self.headers.get("authorization") == f"Bearer {GOOD_TOKEN}"

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        head: bool = False,
        announce: int | None = None,
    ) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(announce if announce is not None else len(body)))
        self.end_headers()
        sent = 0
        if not head and body:
            try:
                self.wfile.write(body)
                sent = len(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
        state = self.server.state
        with state.lock:
            state.log.append(
                Request(
                    self.command,
                    self.path,
                    self.headers.get("range"),
                    self.headers.get("authorization"),
                    sent,
                )
            )
        if announce is not None and announce != len(body) and not head:
            # A short body: the connection cannot carry another answer. (A HEAD has no body,
            # so its announced length is honest and the connection stays open, as on the Hub.)
            self.close_connection = True

    def _error(self, status: int, code: str | None, message: str, head: bool) -> None:
        headers = {"Content-Type": "application/json"}
        if code:
            headers["X-Error-Code"] = code
            headers["X-Error-Message"] = message
        self._send(status, json.dumps({"error": message}).encode(), headers, head)

    def _fault(self, repo: FakeRepo, head: bool) -> bool:
        """Apply the repo's injected fault; return True when the request was answered."""
        if repo.fault_files is not None:
            resolve = _RESOLVE.match(self.path.split("?", 1)[0])
            if head or not resolve or unquote(resolve["file"]) not in repo.fault_files:
                return False
        if repo.fault == "500" or (repo.fault == "500-once" and repo.failures < 1):
            repo.failures += 1
            self._error(500, None, "Internal Error", head)
            return True
        if repo.fault == "drop-once" and repo.failures < 1:
            repo.failures += 1
            self.close_connection = True
            return True
        if repo.fault == "slow":
            time.sleep(self.server.state.slow_seconds)
        if repo.fault == "stall":
            repo.failures += 1
            self.server.state.stop.wait(120)  # until the test's server shuts down
            self.close_connection = True
            return True
        return False

    def _huge(self, size: int, headers: dict[str, str], announce: bool, head: bool) -> None:
        """Send a generated body of ``size`` bytes (a JSON string), chunk by chunk."""
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        if announce:
            self.send_header("Content-Length", str(size))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        sent = 0
        if not head:
            chunk = b" " * 65536
            try:
                self.wfile.write(b'{"x": "')
                sent = 7
                while sent < size - 2:
                    piece = chunk[: min(len(chunk), size - 2 - sent)]
                    self.wfile.write(piece)
                    sent += len(piece)
                self.wfile.write(b'"}')
                sent += 2
            except (BrokenPipeError, ConnectionResetError):
                pass
        with self.server.state.lock:
            self.server.state.log.append(Request(self.command, self.path, None, None, sent))

    def _trickle(self, body: bytes, headers: dict[str, str]) -> None:
        """Send ``body`` one byte at a time, ``trickle_seconds`` apart."""
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent = 0
        try:
            for i in range(len(body)):
                if self.server.state.stop.wait(self.server.state.trickle_seconds):
                    break
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                sent += 1
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True
        with self.server.state.lock:
            self.server.state.log.append(Request(self.command, self.path, None, None, sent))

    # -- endpoints ------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_GET(self) -> None:
        self._dispatch(head=False)

    def _dispatch(self, head: bool) -> None:
        if self.server.state.latency:
            time.sleep(self.server.state.latency)
        path = self.path.split("?", 1)[0]
        info = _INFO.match(path)
        if info:
            return self._model_info(unquote(info["repo"]), unquote(info["rev"] or "main"), head)
        resolve = _RESOLVE.match(path)
        if resolve:
            return self._resolve(
                unquote(resolve["repo"]), unquote(resolve["rev"]), unquote(resolve["file"]), head
            )
        return self._error(404, None, "Not Found", head)

    def _repo(self, repo_id: str, head: bool) -> FakeRepo | None:
        repo = self.server.state.repos.get(repo_id)
        if repo is None or (repo.private and not self._authorised()):
            # The Hub answers 401 for a missing repo and for a private one alike.
            self._error(401, "RepoNotFound", "Repository not found", head)
            return None
        return repo

    def _at_revision(self, repo_id: str, revision: str, head: bool) -> tuple[FakeRepo, str] | None:
        """Return (repo, commit), or answer the error (missing, faulty, no such revision)."""
        repo = self._repo(repo_id, head)
        if repo is None or self._fault(repo, head):
            return None
        commit = repo.commit(revision)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head)
            return None
        return repo, commit

    def _model_info(self, repo_id: str, revision: str, head: bool) -> None:
        found = self._at_revision(repo_id, revision, head)
        if found is None:
            return
        repo, commit = found
        files = repo.files_at(commit)
        if "model info" in repo.huge:
            headers = {"Content-Type": "application/json"}
            return self._huge(repo.huge["model info"], headers, repo.announce_huge, head)
        body = {
            "_id": commit[:24],
            "id": repo_id,
            "modelId": repo_id,
            "sha": commit,
            "private": repo.private,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "tags": [],
            "siblings": [{"rfilename": name} for name in sorted(files)],
            "cardData": repo.card_data or {},
        }
        self._send(200, json.dumps(body).encode(), {"Content-Type": "application/json"}, head)

    def _resolve(self, repo_id: str, revision: str, filename: str, head: bool) -> None:
        found = self._at_revision(repo_id, revision, head)
        if found is None:
            return None
        repo, commit = found
        if repo.gated and not self._authorised():
            return self._error(401, "GatedRepo", "Access to this repo is restricted", head)
        if repo.fault == "403":
            return self._error(403, None, "Forbidden", head)
        files = repo.files_at(commit)
        if filename not in files:
            return self._error(404, "EntryNotFound", f"{filename} does not exist", head)
        data = files[filename]
        etag = _etag(data)
        headers = {
            "ETag": f'"{etag}"',
            "X-Repo-Commit": commit,
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if filename in repo.huge:
            size = repo.huge[filename]
            if head:
                headers["ETag"] = f'"huge-{size}"'
                return self._send(200, b"", headers, head=True, announce=size)
            return self._huge(size, headers, repo.announce_huge, head)
        if repo.fault == "trickle" and not head and self._faulty_file(repo, filename):
            return self._trickle(data, headers)
        wanted = self.headers.get("range")
        if repo.fault == "ignore-range" and self._faulty_file(repo, filename):
            wanted = None
        if wanted and not head:
            match = re.match(r"bytes=(\d+)-(\d*)", wanted)
            if match:
                start = int(match[1])
                end = min(int(match[2]) if match[2] else len(data) - 1, len(data) - 1)
                chunk = data[start : end + 1]
                headers["Content-Range"] = f"bytes {start}-{start + len(chunk) - 1}/{len(data)}"
                return self._send(206, chunk, headers)
        if repo.fault == "short-body" and not head:
            return self._send(200, data[: len(data) // 2], headers, announce=len(data))
        self._send(200, data, headers, head, announce=len(data) if head else None)

    def _faulty_file(self, repo: FakeRepo, filename: str) -> bool:
        return repo.fault_files is None or filename in repo.fault_files


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: HubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@dataclass
class LoopbackHub:
    """A running loopback Hub: its URL, repos and request log."""

    url: str
    state: HubState

    def add(self, repo_id: str, files: dict[str, bytes] | Path, **kwargs: Any) -> FakeRepo:
        """Serve ``files`` (or a folder) as ``repo_id`` at ``main``; kwargs go to FakeRepo."""
        content = read_folder(files) if isinstance(files, Path) else files
        revisions = kwargs.pop("revisions", None) or {"main": content}
        repo = FakeRepo(revisions=revisions, **kwargs)
        self.state.repos[repo_id] = repo
        return repo

    def env(self, hf_home: Path) -> dict[str, str]:
        """Return the environment that points huggingface_hub at this server."""
        return {
            "HF_ENDPOINT": self.url,
            "HF_HOME": str(hf_home),
            "HF_HUB_CACHE": str(hf_home / "hub"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        }

    def bytes_sent(self) -> int:
        """Return the body bytes the server sent so far."""
        return sum(r.sent for r in self.state.log)


@contextmanager
def serve() -> Iterator[LoopbackHub]:
    """Run a loopback Hub in a background thread for the duration of the block."""
    state = HubState()
    server = _Server(state)
    # shutdown() waits for the loop's next poll: the default 0.5 s would be paid by every test.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield LoopbackHub(url=f"http://127.0.0.1:{server.server_address[1]}", state=state)
    finally:
        state.stop.set()
        server.shutdown()
        server.server_close()


ROOT = REPO
SEED_REPOS = {
    "z-lab/Qwen3-4B-DFlash-b16": ROOT / "examples" / "Qwen3-4B-DFlash-b16",
    "Qwen/Qwen3-4B": ROOT / "examples" / "Qwen3-4B",
    "Qwen/Qwen3.5-4B": ROOT / "examples" / "Qwen3.5-4B",
}


def fixture_repos() -> dict[str, Path]:
    """Return repo id -> folder for every model pairs.yaml names (examples and fixtures)."""
    repos = dict(SEED_REPOS)
    hub_root = ROOT / "tests" / "fixtures" / "hub"
    for config in sorted(hub_root.glob("*/*/config.json")):
        repos[str(config.parent.relative_to(hub_root))] = config.parent
    # A repo that holds its model only in a subfolder (XiaomiMiMo's dflash/ draft).
    for config in sorted(hub_root.glob("*/*/*/config.json")):
        repo = config.parent.parent
        repos.setdefault(str(repo.relative_to(hub_root)), repo)
    return repos


def add_fixture_repos(hub: LoopbackHub) -> None:
    """Serve every fixture model under its repo id."""
    for repo_id, folder in fixture_repos().items():
        hub.add(repo_id, folder)
