"""Outcomes of a run of one or many pairs, as the CI renderers (SARIF, JUnit, GitHub) see it.

``pair`` produces one outcome that is expected to be compatible; ``registry`` produces one per
``pairs.yaml`` entry, each with its own expectation and line. Renderers work on ``RunResult``
alone, so both commands share them. The entries themselves (``PairSpec``, ``SkippedEntry``) are
in ``entries.py``: only ``registry`` builds them, and ``pair`` loads this module on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from dflash_check.check.report import CheckReport, Verdict
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings

if TYPE_CHECKING:
    from dflash_check.check.entries import PairSpec, SkippedEntry
    from dflash_check.check.target_alone import MtpReport
    from dflash_check.problems import FileProblem, SharedCause

Status = Literal["ok", "mismatch", "error"]


@dataclass(frozen=True)
class PairOutcome:
    """What became of one pair: a report, or the reason it could not be checked."""

    label: str
    """``draft -> target``."""
    expect: Verdict
    """The expected verdict (``compatible`` for ``pair``)."""
    report: CheckReport | MtpReport | None = None
    """The report, when the pair could be checked (an ``MtpReport`` for a target's own MTP
    layers, from an engine's test registry)."""
    error: str | None = None
    """The one-line error, when it could not."""
    error_hint: str | None = None
    """How to get past the error."""
    error_shared: SharedCause | None = None
    """How the error reads when several pairs failed the same way (``CheckError.shared``)."""
    spec: PairSpec | None = None
    """The ``pairs.yaml`` entry, for ``registry``."""

    @property
    def verdict(self) -> Verdict:
        """Return the verdict, ``unknown`` when the pair could not be checked."""
        return self.report.verdict if self.report is not None else Verdict.UNKNOWN

    @property
    def engine_settings(self) -> EngineSettings:
        """Return the engine settings the pair was judged with: a pair's, or a target's asked
        about alone (SGLang's draft steps: DF045, DF060, DF061); each engine's defaults for a
        pair not checked."""
        return self.report.engine_settings if self.report is not None else NO_ENGINE_SETTINGS

    @property
    def verdict_text(self) -> str:
        """Return the verdict as printed (``incompatible (strict: 2 warnings)``)."""
        return self.report.verdict_text if self.report is not None else Verdict.UNKNOWN.value

    @property
    def status(self) -> Status:
        """Return ``ok`` (as expected), ``mismatch`` or ``error`` (not checked)."""
        if self.report is None:
            return "error"
        if self.report.smoke is not None and not self.report.smoke.passed:
            return "mismatch"
        return "ok" if self.verdict is self.expect else "mismatch"


@dataclass(frozen=True)
class RunResult:
    """All outcomes of one command run."""

    outcomes: tuple[PairOutcome, ...]
    """One per pair, in file order."""
    file: str | None = None
    """The ``pairs.yaml`` path as given, for ``registry``."""
    strict: bool = False
    """Whether warnings count as failures (``pair --strict``)."""
    skipped: tuple[SkippedEntry, ...] = ()
    """Entries of an engine's test registry listed as not checked (never a failure)."""
    about: str | None = None
    """What the file is, for an engine's test registry (``vLLM 0.34.0 test registry``)."""
    problems: tuple[FileProblem, ...] = ()
    """Mistakes in the input files (pairs.yaml, overrides, an engine's test file): nothing was
    checked, and every format reports each at its file and line."""

    def count(self, status: Status) -> int:
        """Return how many outcomes have ``status``."""
        return sum(1 for o in self.outcomes if o.status == status)
