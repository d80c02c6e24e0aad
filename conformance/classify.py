"""What an engine did with a case, and whether dflash-check said so: pure, no engine needed.

A driver writes a record (``conformance/drivers/*``): the stage it reached (``config``,
``load``, ``first decode``, ``done``), the exception that stopped it, the output token ids and
the engine's own speculative counters. ``classify`` turns it into one outcome:

* ``generates``: decoded, with tau = (verify steps + accepted draft tokens) / verify steps from
  the engine's counters;
* ``collapsed``: decoded, but a case that keeps the trained layers reached tau below
  ``COLLAPSED_TAU`` (the engine fed other layers, silently);
* ``refused``: stopped at config or load (the engine never served the pair);
* ``first-decode``: loaded (a server would report healthy), then failed on the first request.

``compare`` sets the tool's verdict against it: the pair works in the engine exactly when it
generates, so ``compatible`` agrees with ``generates`` and ``incompatible`` with the rest.
``compare_stage`` sets the stage the tool gives its earliest error against the stage the
engine showed it at (``engine_stage``): a refusal is ``load``, a failed first request
``first-decode``, and a pair that decodes although the tool calls it incompatible ``silent``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

COLLAPSED_TAU = 3.0
"""Below this, a case that should see the trained layers has collapsed: the trained pair
reaches 6.08 in vLLM 0.32.0 and 6.4 in the bundled runtime; wrong layers give about 1.4."""
OUTCOMES = ("generates", "collapsed", "refused", "first-decode")
STAGE_ORDER = ("load", "first-decode", "silent")
"""The tool's stages (``dflash_check.knowledge.outcomes.Stage`` values), earliest first."""


@dataclass(frozen=True)
class Outcome:
    """What the engine did with one case."""

    outcome: str
    """One of ``OUTCOMES``."""
    tau: float | None
    """Tokens per verify step from the engine's counters (None when it did not decode)."""
    error: str | None
    """``Type: message`` (first line) of the exception that stopped the engine."""


def classify(record: Mapping[str, Any], trained: bool) -> Outcome:
    """Return the outcome of one driver record (see the module docstring)."""
    error = record.get("error")
    text = None
    if isinstance(error, Mapping):
        lines = [
            x.strip()
            for x in str(error.get("message") or "").splitlines()
            if x.strip() and not x.strip().startswith("For further information")
        ]
        # pydantic's ValidationError says what failed only below its "N validation error for
        # X" headline (vLLM's config refusals): keep the lines that say why.
        keep = 2 if lines and "validation error" in lines[0] else 1
        text = f"{error.get('type')}: {' / '.join(lines[:keep])}".strip()
    stage = record.get("stage")
    if stage == "done" and error is None:
        counters = record.get("counters") or {}
        drafts, accepted = counters.get("drafts"), counters.get("accepted")
        tau = (drafts + accepted) / drafts if drafts and accepted is not None else None
        if tau is None:
            # Decoded without a single verify step: the draft never ran.
            return Outcome("collapsed" if trained else "generates", None, None)
        collapsed = trained and tau < COLLAPSED_TAU
        return Outcome("collapsed" if collapsed else "generates", round(tau, 2), None)
    if stage == "first decode":
        return Outcome("first-decode", None, text)
    if stage in ("config", "load"):
        return Outcome("refused", None, text)
    raise ValueError(f"driver record with an unknown stage {stage!r}")


def compare(outcome: str, tool_verdict: str) -> bool | None:
    """Return whether the tool's verdict agrees with what the engine did (None: no verdict)."""
    if tool_verdict not in ("compatible", "incompatible"):
        return None
    return (outcome == "generates") == (tool_verdict == "compatible")


def engine_stage(outcome: str, tool_verdict: str) -> str | None:
    """Return the stage at which the engine showed the pair's problem (None: it generated and
    the tool found no problem, so there is no stage to compare)."""
    if outcome == "refused":
        return "load"
    if outcome == "first-decode":
        return "first-decode"
    if outcome == "collapsed" or tool_verdict == "incompatible":
        # It decoded: whatever is wrong with the pair, the engine did not say so.
        return "silent"
    return None


def compare_stage(outcome: str, tool_verdict: str, tool_stage: str | None) -> bool | None:
    """Return whether the tool's stage is the engine's (None: the verdicts disagree, or
    neither side has a stage)."""
    if compare(outcome, tool_verdict) is not True:
        return None
    seen = engine_stage(outcome, tool_verdict)
    if seen is None and tool_stage is None:
        return None
    return seen == tool_stage


@dataclass(frozen=True)
class Result:
    """One row of a results file."""

    engine: str
    release: str
    runner: str
    case: str
    rule: str
    outcome: str
    tau: float | None
    lossless: bool | None
    """Same tokens as the target alone (greedy), when it decoded and a baseline ran."""
    engine_error: str | None
    tool_runtime: str
    tool_verdict: str
    tool_finding: str | None
    """The first error finding's rule and message (what the tool says will happen)."""
    agree: bool | None
    tool_stage: str | None = None
    """The earliest stage among the tool's errors for the runtime (``STAGE_ORDER``)."""
    stage_agree: bool | None = None
    """``compare_stage``: the tool's stage is the one the engine showed."""

    def as_dict(self) -> dict[str, Any]:
        """Return the row as JSON data."""
        return dict(self.__dict__)


def tool_summary(report: Mapping[str, Any], runtime: str) -> tuple[str, str | None]:
    """Return the tool's verdict for ``runtime`` and its first error finding (rule: message)."""
    name = runtime.split("==", 1)[0]  # a pinned release (vllm-v1==0.32.0) reports as its name
    verdict = str((report.get("runtimes") or {}).get(name, report.get("verdict", "unknown")))
    for finding in report.get("findings") or ():
        # JSON schema 2: one finding per problem with the runtimes it applies to (schema 1,
        # which older recorded runs hold: one finding per runtime, or none for all).
        runtimes = finding.get("runtimes") or [finding.get("runtime")]
        if finding.get("severity") == "error" and (name in runtimes or None in runtimes):
            return verdict, f"{finding.get('rule')}: {finding.get('message')}"
    return verdict, None


def tool_stage(report: Mapping[str, Any], runtime: str) -> str | None:
    """Return the earliest stage among the tool's errors for ``runtime`` (what the user meets
    first; None: no error, or none with a stage)."""
    name = runtime.split("==", 1)[0]
    stages = set()
    for finding in report.get("findings") or ():
        if finding.get("severity") == "error" and name in (finding.get("runtimes") or ()):
            stages.add((finding.get("stages") or {}).get(name, finding.get("stage")))
    known = [s for s in STAGE_ORDER if s in stages]
    return known[0] if known else None
