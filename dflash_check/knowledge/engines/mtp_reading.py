"""How an engine reads a draft length for the MTP draft it builds from a target's own layers:
the parts of an ``EngineMtp`` row (``interface.py``) that say what it reruns, refuses or
adjusts. A module of its own so that ``interface.py`` stays under the size limit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class MtpReruns:
    """How an engine takes more draft tokens per step than the target's k MTP layers: it reruns
    the layers, refusing a count that is not a multiple of k (DF044) and warning that acceptance
    may drop on one that is (DF045). A property of the engine's code, so its MTP rows say it."""

    refusal: str
    """The engine's own words when it refuses a count ({k}: the layer count)."""
    refusal_citation: str
    """Where it refuses (``vllm==0.33.0:vllm/config/speculative.py:1604-1612``)."""
    warning_citation: str
    """Where it warns that rerun layers may lower acceptance."""


@dataclass(frozen=True)
class MtpRefusal:
    """An engine that refuses the MTP method itself for a row's targets while it resolves the
    speculative config, at start-up, whatever the target's count: it maps them to no MTP draft
    and its method check then knows no other (vLLM 0.32.0 and 0.33.0 on ``kimi_k2``; DF041)."""

    message: str
    """The engine's own words when it refuses."""
    citation: str
    """Where it refuses (``engine==version:path:lines``)."""


@dataclass(frozen=True)
class MtpStepLimit:
    """A draft with a fixed number of trained steps: the engine refuses more draft tokens per
    step while it resolves the speculative config at start-up (DF059), instead of rerunning
    the layers as ``MtpReruns`` says."""

    steps: int
    """The most draft tokens per step it accepts."""
    refusal: str
    """The engine's own words when it refuses."""
    read: tuple[tuple[str, str], ...]
    """(release, where it refuses) per release read, oldest first: the check moved between
    releases (vLLM 0.33.0's config/speculative.py, 0.34.0's MTP speculator config)."""

    def at(self, version: str) -> MtpStepLimit:
        """Return the limit as a release has it: its own citation where it was read there, else
        the newest one read, said as such (``read at``, as ``knowledge/citations.py`` says)."""
        own = dict(self.read).get(version)
        return replace(self, read=((version, own or f"read at {self.read[-1][1]}"),))

    @property
    def citation(self) -> str:
        """Where the release judged refuses (after ``at``: its own; before: the newest read)."""
        return self.read[-1][1]


@dataclass(frozen=True)
class MtpSteps:
    """How an engine reads its own draft-step flags for the MTP draft it builds from a target
    (SGLang's ``--speculative-num-steps``, ``--speculative-eagle-topk``,
    ``--speculative-num-draft-tokens``; ``knowledge/settings.py`` parses them): where it refuses
    a combination at start-up (DF060), where it adjusts the draft tokens (DF061) and whether
    it reruns one layer per step (DF045). Citations: ``engine==version:path:lines``."""

    reruns_one: str | None
    """Where it builds one MTP layer and runs it once per draft step, so steps above k rerun
    it (DF045); None: not read for the row's draft."""
    steps_without_topk: str
    """Where steps given without topk fail while the server arguments resolve."""
    topk_without_steps: str
    """Where topk or draft tokens given without steps fail there."""
    adjusts: str
    """Where, at topk 1, it sets the draft tokens to steps + 1 with a warning."""
    multi_layer: str | None = None
    """Where its multi-layer EAGLE worker, built at start-up, asserts draft tokens == steps + 1,
    which above topk 1 nothing adjusts (DF060); None: the row's draft runs single-layer."""
