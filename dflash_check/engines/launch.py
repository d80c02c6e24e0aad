"""The ``--launch`` flow: start the engine, wait for ``/health``, stop its process group, and
tell a failed start or first decode (the pair's fault) from a machine problem (a tool error)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from dflash_check.engines.client import EngineClient
from dflash_check.engines.errors import (
    EngineError,
    EngineResponseError,
    EngineRunFailedError,
    EngineStartError,
    EngineUnreachableError,
)
from dflash_check.sanitize import clip
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
    with open_log(log_path) as log:
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
                        f"({_why(log_tail(log_path))}); its log is {log_path}",
                        exit_status=code,
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


def private_log(engine: str) -> Path:
    """Return a new log path for ``engine`` in a fresh private directory (mode 0700, a random
    name under the temp dir): no other user can plant a file or a symlink at it."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=f"dflash-check-{engine}-"))
    return folder / f"{engine}.log"


def open_log(path: Path) -> BinaryIO:
    """Create the engine log exclusively (``O_CREAT|O_EXCL``, mode 0600, never through a
    symlink): an existing file or link at ``path`` is an error, never overwritten."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as err:
        raise EngineStartError(
            f"cannot create the engine log {path}: {err.strerror or err}",
            hint="set TMPDIR to a directory only you can write to",
        ) from None
    return os.fdopen(fd, "wb")


def _descendants(pid: int) -> list[int]:
    """Return the processes descended from ``pid`` (Linux ``/proc``; empty elsewhere), found
    by parent links, so that a worker that left the engine's session is found too."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _signal_all(proc: subprocess.Popen[bytes], pids: list[int], sig: int) -> None:
    """Send ``sig`` to the engine's process group and to each of ``pids`` (and its group)."""
    for target in (proc.pid, *pids):
        send = os.killpg if target == proc.pid else os.kill
        with contextlib.suppress(ProcessLookupError, PermissionError):
            send(target, sig)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Stop an engine we started: SIGTERM to its session (its process group and every process
    descended from it, a worker that called ``setsid`` included), SIGKILL after ``grace`` s."""
    pids = _descendants(proc.pid)
    if proc.poll() is not None and not pids:
        return
    _signal_all(proc, pids, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)
    # Whatever is left of the engine (a worker ignoring SIGTERM, one in its own session).
    survivors = [p for p in pids if Path(f"/proc/{p}").exists()]
    if proc.poll() is None or survivors:
        _signal_all(proc, survivors, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)


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
    return clip(found, limit)


# What an engine's load error says when the pair is its cause: the weights or config of the
# draft or target do not fit (vLLM's and SGLang's load errors: size mismatches, missing
# layers or keys, the speculative config), as opposed to the machine's (libraries, drivers).
_PAIR_CAUSE = re.compile(
    r"size mismatch|shape|fc\.weight|hidden|vocab|draft|speculat|eagle|dflash|mtp|"
    r"num_hidden_layers|target_layer|aux|architecture|block_size|mask_token|model_type|"
    r"config\.json|checkpoint|state_dict|missing key|unexpected key",
    re.IGNORECASE,
)


def pair_cause(cause: str | None, names: tuple[str, ...] = ()) -> bool:
    """Whether an engine log's root cause is about the pair (its models or their configs)."""
    if cause is None:
        return False
    return bool(_PAIR_CAUSE.search(cause)) or any(n and n in cause for n in names)


def launch_failure(
    err: EngineError,
    engine: str,
    log_path: Path,
    ready: bool,
    url: str,
    names: tuple[str, ...] = (),
) -> EngineError:
    """Return the error to raise when the engine dflash-check started failed.

    Before /health answered, an exit is a failed start; after it, a failed request (an HTTP
    500, a dropped connection) is a failure at the first decode. Both are smoke-run failures
    with the engine log's root cause quoted. A timeout, a missing executable or an
    out-of-memory exit stays a tool error (exit 3): it says nothing about the pair.
    """
    exited = isinstance(err, EngineStartError) and err.exit_status is not None
    if not ready and (not exited or "out of GPU memory" in str(err)):
        return err  # the machine, not the pair: too little memory, no engine, too slow
    # Only an error of the launched server counts (not one of the --baseline-endpoint server).
    crashed = f"server at {url} " in str(err) and (
        isinstance(err, EngineUnreachableError)
        or (isinstance(err, EngineResponseError) and " HTTP 5" in str(err))
    )
    if ready and not crashed:
        return err  # a wrong model, missing metrics…: the server ran; the error says why
    cause = root_cause(log_path)  # the whole log, read once
    if not ready and not pair_cause(cause, names):
        # An exit with nothing in its log about the models (`--engine-binary /bin/false`, a
        # missing library): the environment, not a verdict on the pair. The error already
        # quotes the log's tail and names the log.
        return err
    message = str(err).split("; its log is")[0]
    if exited:
        # The start error quotes the log's last line, often a warning printed while the engine
        # shut down; the cause is root_cause, so the message keeps only the exit.
        message = f"{engine} exited with code {err.exit_status} before it was ready"
    failure = EngineFailure(
        stage="first decode" if ready else "start",
        message=message,
        root_cause=cause,
        log=str(log_path),
    )
    return EngineRunFailedError(failure)
