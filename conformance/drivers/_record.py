"""The record every driver writes, whatever stopped the engine (shared by the drivers).

The drivers run as scripts with an engine's own Python (``python vllm_driver.py SPEC OUT``), so
their folder is first on ``sys.path`` and they import this module as ``_record``; the project's
tests import it as ``conformance.drivers._record``. Standard library only: it runs in every
engine's environment.

``with Recording(out_path, "config") as record:`` yields the record (``stage``, ``error``,
``outputs``, ``counters``) for the driver to fill in; when the block ends, normally, by a
``return`` or by any exception, the record is written to ``out_path``. An exception is the
case's outcome, not the driver's failure: its type, message and traceback go into the record
and it stops there.
"""

from __future__ import annotations

import json
import traceback
from types import TracebackType
from typing import Any

MESSAGE_CHARS = 2000
"""How much of the exception's message a record keeps (classify reads its first lines)."""
TRACEBACK_CHARS = 4000
"""How much of the traceback a record keeps (its end: where the engine stopped)."""


class Recording:
    """A context manager around one case's run: fills and writes its record."""

    def __init__(self, out_path: str, stage: str) -> None:
        self.out_path = out_path
        self.record: dict[str, Any] = {"stage": stage, "error": None, "outputs": [], "counters": {}}

    def __enter__(self) -> dict[str, Any]:
        return self.record

    def __exit__(
        self,
        kind: type[BaseException] | None,
        err: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if kind is not None and err is not None:
            self.record["error"] = {"type": kind.__name__, "message": str(err)[:MESSAGE_CHARS]}
            text = "".join(traceback.format_exception(kind, err, tb))
            self.record["traceback"] = text[-TRACEBACK_CHARS:]
        with open(self.out_path, "w") as out:
            json.dump(self.record, out, indent=1)
        return True  # every failure, KeyboardInterrupt included, is the case's outcome
