"""The serving-engine error tree: every way an engine run can fail, one class each."""

from __future__ import annotations

from dflash_check.errors import CheckError
from dflash_check.smoke.report import EngineFailure, EngineRun


class EngineError(CheckError):
    """A serving engine could not give a smoke verdict (exit 3)."""


class EngineUnreachableError(EngineError):
    """The server did not answer: refused, timed out, or not HTTP."""


class EngineResponseError(EngineError):
    """The server answered with an error status or with something that is not what it should be."""


class WrongModelError(EngineError):
    """The server serves another target (or another draft) than the pair's."""


class DraftNotVerifiedError(EngineError):
    """The server does not say which draft it serves: its counters cannot be vouched for as the
    pair's draft's (exit 3 unless ``--trust-served-draft``)."""


class MissingMetricsError(EngineError):
    """``/metrics`` lacks the engine's speculative-decoding counters."""


class CountersNotMovingError(EngineError):
    """The speculative counters did not move while the prompts decoded (no speculation ran)."""


class ImplausibleAnswerError(EngineResponseError):
    """The server's numbers cannot be true (out of range, non-finite, or contradicting each
    other): no verdict is given from them (exit 3)."""


class SharedServerError(EngineError):
    """Other requests ran on the server during the smoke run: the counters are not ours alone."""


class EngineStartError(EngineError):
    """The engine dflash-check started exited, or was not ready in time."""

    def __init__(self, message: str, hint: str | None = None, exit_status: int | None = None):
        super().__init__(message, hint)
        self.exit_status = exit_status
        """The engine's exit code when it exited (None: it was not ready in time)."""


class EngineLimitError(EngineError):
    """The launched engine failed on something its release cannot run whatever the pair
    (``knowledge.engine_limits``): exit 3, no verdict on the pair."""


class EngineRunFailedError(EngineError):
    """The engine dflash-check launched failed at start or at the first decode: a failed smoke
    run (exit 1, the static verdict kept), not a tool error."""

    def __init__(self, failure: EngineFailure, run: EngineRun | None = None) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.run = run
        """The engine as launched (its release, parallelism, endpoint), for the report."""
