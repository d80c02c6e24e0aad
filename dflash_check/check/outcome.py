"""Outcomes of a run of one or many pairs, as the CI renderers (SARIF, JUnit, GitHub) see it.

``pair`` produces one outcome that is expected to be compatible; ``registry`` produces one per
``pairs.yaml`` entry, each with its own expectation and line. Renderers work on ``RunResult``
alone, so both commands share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from dflash_check.check.report import CheckReport, Verdict
from dflash_check.errors import FileProblem, SharedCause
from dflash_check.knowledge.selection import DEFAULT, Selection

if TYPE_CHECKING:
    from dflash_check.check.target_alone import MtpReport

Status = Literal["ok", "mismatch", "error"]


@dataclass(frozen=True)
class PairSpec:
    """One entry of ``pairs.yaml``."""

    draft: str
    """Draft repo id or directory (relative to the file)."""
    target: str
    """Target repo id or directory (relative to the file)."""
    expect: Verdict
    """``compatible`` or ``incompatible``."""
    line: int
    """1-based line of the entry in the file."""
    index: int
    """0-based position in the file's list."""
    selection: Selection = DEFAULT
    """Runtimes the pairing is meant for (``runtimes:``, parsed)."""
    draft_revision: str | None = None
    """Pinned draft revision."""
    target_revision: str | None = None
    """Pinned target revision."""
    draft_subfolder: str | None = None
    """Folder inside the draft's repo that holds the draft."""
    target_subfolder: str | None = None
    """Folder inside the target's repo that holds the target."""
    reason: str | None = None
    """Why the pair is expected to be (in)compatible."""
    source: str | None = None
    """Where the pairing is documented."""
    num_speculative_tokens: int | None = None
    """The engine's draft tokens per step the pairing is served with (DF019), if stated."""
    method: str | None = None
    """The ``method`` the engine is asked for (vLLM's ``speculative_config.method``), if stated."""
    strict: bool = False
    """Warnings and rules not checked make the pair incompatible (``registry --strict``)."""
    ignore: tuple[str, ...] = ()
    """Rule ids this pair does not count (``ignore:``); reported as suppressed, like
    ``--ignore``."""

    @property
    def runtimes(self) -> tuple[str, ...]:
        """The runtimes as the entry names them (``portable``, ``vllm==0.34.0``), for display."""
        return self.selection.texts

    @property
    def label(self) -> str:
        """Return ``draft -> target`` (with revisions) for messages and test names."""
        draft = (
            self.draft
            + (f":{self.draft_subfolder}" if self.draft_subfolder else "")
            + (f"@{self.draft_revision}" if self.draft_revision else "")
        )
        target = (
            self.target
            + (f":{self.target_subfolder}" if self.target_subfolder else "")
            + (f"@{self.target_revision}" if self.target_revision else "")
        )
        return f"{draft} -> {target}"


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
class SkippedEntry:
    """An entry of an engine's test registry that is listed, not checked, and why."""

    line: int
    """1-based line of the entry."""
    key: str
    """The entry's name in the file (vLLM architecture key, SGLang constant suffix)."""
    label: str
    """``draft -> target`` as far as the entry names them."""
    reason: str
    """Why it is not checked (``method medusa``, ``commented out``, …)."""


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
