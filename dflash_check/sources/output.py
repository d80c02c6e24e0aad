"""Write a report file (``--output``) so that a reader never sees half of one.

The text goes to a temporary file beside the target, which is then renamed over it: a write
that fails half way (a full disk, a killed run) leaves the old report intact, and the rename
replaces a path, never writing through a link. An ``--output`` that already is a symbolic
link is refused, since the user may not expect its target to be replaced; so is one that is
a directory, FIFO or device.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from dflash_check.errors import CheckError


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_report(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically; raise ``CheckError`` naming the path."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise CheckError(f"cannot write {path}: {err.strerror}") from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise CheckError(
            f"cannot write {path}: it is a symbolic link; refused",
            hint="remove the link, or pass the path of the file it points to",
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise CheckError(f"cannot write {path}: it exists and is not a regular file")
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as err:
        raise CheckError(f"cannot write {path}: {err.strerror}") from None
    try:
        try:
            # mkstemp makes the file 0600; give it the old file's mode or the umask default.
            if info is not None:
                mode = stat.S_IMODE(info.st_mode)
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(fd, mode)
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise CheckError(f"cannot write {path}: {err.strerror or err}") from None
