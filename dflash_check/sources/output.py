"""Write files so that a reader never sees half of one: ``--output`` and the Hub cache.

The text goes to a temporary file beside the target, which is then renamed over it: a write
that fails half way (a full disk, a killed run) leaves the old file intact, and the rename
replaces a path, never writing through a link. ``write_atomic`` is that one writer (the Hub
manifest cache uses it too, since concurrent registry workers may race on a manifest);
``write_report`` adds what ``--output`` needs: an ``--output`` that already is a symbolic link
is refused, since the user may not expect its target to be replaced; so is one that is a
directory, FIFO or device; and a failure becomes one ``CheckError`` line naming the path.
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


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file beside it and a rename.

    ``mode`` is the new file's permission bits; None gives the umask default. Raises
    ``OSError``; the temporary file never outlives a failure.
    """
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            # mkstemp makes the file 0600; give it the caller's mode or the umask default.
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(fd, mode)
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
    try:
        # A replaced report keeps the old file's mode.
        write_atomic(path, text, stat.S_IMODE(info.st_mode) if info is not None else None)
    except OSError as err:
        raise CheckError(f"cannot write {path}: {err.strerror or err}") from None
