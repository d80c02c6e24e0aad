"""The ``--launch`` flow: start the engine, wait for ``/health``, stop its process group, and
tell a failed start or first decode (the pair's fault) from a machine problem (a tool error)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dflash_check.engines.client import EngineClient
from dflash_check.engines.errors import (
    EngineError,
    EngineResponseError,
    EngineRunFailedError,
    EngineStartError,
    EngineUnreachableError,
)
from dflash_check.smoke.report import EngineFailure


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port nothing listens on now (for an engine dflash-check starts itself)."""
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 20) -> list[str]:
    """Return the last non-empty lines of an engine log."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def _why(tail: list[str]) -> str:
    """Return the most telling line of a failed start (an OOM, else the last line)."""
    for line in reversed(tail):
        if "out of memory" in line.lower():
            return f"out of GPU memory: {line.strip()[:200]}"
    return tail[-1].strip()[:200] if tail else "no output"


@contextmanager
def launched(
    argv: Sequence[str],
    engine: str,
    url: str,
    timeout: float,
    log_path: Path,
    on_progress: Callable[[str], None] | None = None,
    poll: float = 0.5,
    ready: threading.Event | None = None,
) -> Iterator[None]:
    """Start the engine, wait until ``/health`` answers 200, and stop it when the block ends.

    The engine's output goes to ``log_path``, which is kept: every error names it. The engine
    runs in its own process group, because both engines start worker processes (one per GPU)
    that must stop with it.
    """
    say = on_progress or (lambda _text: None)
    client = EngineClient(engine, url, timeout=5.0)
    with log_path.open("wb") as log:
        try:
            proc = subprocess.Popen(
                list(argv), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as err:
            raise EngineStartError(
                f"cannot start {engine}: {argv[0]}: {err.strerror or err}",
                hint=f"install {engine} on this machine, or name its executable with "
                "--engine-binary; --print-command shows the command to run elsewhere",
            ) from None
        try:
            start = time.monotonic()
            while True:
                code = proc.poll()
                if code is not None:
                    raise EngineStartError(
                        f"{engine} exited with code {code} before it was ready "
                        f"({_why(log_tail(log_path))}); its log is {log_path}"
                    )
                try:
                    status, _ = client.fetch("/health")
                    if status == 200:
                        if ready is not None:
                            ready.set()
                        break
                except EngineUnreachableError:
                    pass  # not listening yet
                waited = time.monotonic() - start
                if waited > timeout:
                    raise EngineStartError(
                        f"{engine} was not ready after {timeout:g} s; its log is {log_path}",
                        hint="raise --launch-timeout (loading a 400B target takes minutes)",
                    )
                say(f"starting {engine} ({waited:.0f} s; log {log_path})")
                time.sleep(poll)
            yield
        finally:
            stop_process(proc)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Stop an engine we started: SIGTERM to its process group, SIGKILL after ``grace`` s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(grace)
    except ProcessLookupError:
        pass


# A raised exception's last traceback line, bare or after vLLM's prefixes: the process,
# then for logged tracebacks the ERROR level, date, time and source ("(Worker pid=3176) ERROR
# 12-03 15:34:46 [multiproc_executor.py:1063] ValueError: …"); not an exception named inside
# a message ("WARNING … `OSError: …`").
_EXCEPTION_LINE = re.compile(
    r"^(?:\([^)]*\)\s*)?(?:(?:ERROR|CRITICAL)\s+\S+\s+\S+\s+\[[^\]]*\]\s*)?"
    r"((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)): (\S.*)$"
)
# Lines that only point elsewhere: vLLM's front end re-raises the engine core's failure with
# "See root cause above" / "See stack trace (above) for the root cause".
_WRAPPER = re.compile(r"above|EngineDeadError|EngineGenerateError", re.IGNORECASE)


def root_cause(log_path: Path, limit: int = 300) -> str | None:
    """Return the engine log's first exception line that is not a wrapper pointing above it:
    the engine re-raises the root cause through its workers and front end ("Worker failed
    with error '…'", "EngineDeadError … See stack trace (above)"), each logged after it."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    found = None
    for line in text.splitlines():
        match = _EXCEPTION_LINE.match(line.strip())
        if match and not _WRAPPER.search(line):
            found = f"{match.group(1)}: {match.group(2)}".strip()
            break
    if found is None:
        return None
    return found if len(found) <= limit else found[: limit - 1] + "…"


def launch_failure(
    err: EngineError, engine: str, log_path: Path, ready: bool, url: str
) -> EngineError:
    """Return the error to raise when the engine dflash-check started failed.

    Before /health answered, an exit is a failed start; after it, a failed request (an HTTP
    500, a dropped connection) is a failure at the first decode. Both are smoke-run failures
    with the engine log's root cause quoted. A timeout, a missing executable or an
    out-of-memory exit stays a tool error (exit 3): it says nothing about the pair.
    """
    exited = isinstance(err, EngineStartError) and "exited with code" in str(err)
    if not ready and (not exited or "out of GPU memory" in str(err)):
        return err  # the machine, not the pair: too little memory, no engine, too slow
    # Only an error of the launched server counts (not one of the --baseline-endpoint server).
    crashed = f"server at {url} " in str(err) and (
        isinstance(err, EngineUnreachableError)
        or (isinstance(err, EngineResponseError) and " HTTP 5" in str(err))
    )
    if ready and not crashed:
        return err  # a wrong model, missing metrics…: the server ran; the error says why
    failure = EngineFailure(
        stage="first decode" if ready else "start",
        message=str(err).split("; its log is")[0],
        root_cause=root_cause(log_path),
        log=str(log_path),
    )
    return EngineRunFailedError(failure)
