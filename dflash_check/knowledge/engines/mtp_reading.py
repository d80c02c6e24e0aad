"""What an engine builds from a target's own MTP layers: an ``EngineMtp`` row (one of
``Engine.mtp``), and the parts of one that say how it reads a draft length, what it reruns,
refuses or adjusts. A module of its own, imported only when an engine's ``mtp_rows`` is
called (a target asked about alone, the listings): a pair check defines none of these
classes at start-up (``benchmarks/bench_pair.py``).
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


@dataclass(frozen=True)
class EngineMtp:
    """What one engine builds from a target's own MTP (NextN) layers, for the targets ``match``
    names (one row of ``Engine.mtp``; ``knowledge/mtp_layers.py`` reads them)."""

    engine: str
    """The engine's name (``vllm``): the module that builds the row names its engine."""
    match: tuple[str, ...]
    """Target ``architectures[0]`` or ``model_type`` values this row covers (empty: any)."""
    draft: str
    """The engine's MTP model class built from the target, or what is known of it."""
    request: str
    """How to ask for it ({k} is the MTP layer count)."""
    tokens: str
    """How many draft tokens per step it accepts against k."""
    on_missing: str
    """What it does when the checkpoint lacks the MTP weights."""
    citation: str
    """repo@commit:path:line the row was read from."""
    verified: bool = True
    """False when the row records what could not be read (its text says what)."""
    reruns: MtpReruns | None = None
    """How it reads more draft tokens than k (DF044, DF045); None: not read, nothing said."""
    step_limit: MtpStepLimit | None = None
    """The most draft tokens its draft takes when it has fixed trained steps (DF059); None:
    no such limit read."""
    steps: MtpSteps | None = None
    """How it reads its own draft-step flags (DF045, DF060, DF061); None: it has none, or
    they were not read."""
    builds: bool = True
    """Whether the engine builds an MTP draft from the target's own layers at all (DF041-DF043
    are about the engines with such a row); False where that was not read (llama.cpp)."""
    drafts: tuple[str, ...] = ()
    """The draft architectures the row builds, as the engine's model registry names them
    (``DeepSeekMTPModel``): for an extracted engine, a release whose facts register none of
    them builds none (``knowledge/mtp_layers.py``, ``engine_rows``); empty: not looked up."""
    releases: str | None = None
    """The engine's releases the row holds for, as ``Reviewed.releases`` writes a range
    (``==0.34.0``): a row read in one release says what that release does, with its lines;
    None: every release (``engine_rows`` takes the first row that matches and holds)."""
    refusal: MtpRefusal | None = None
    """Where the engine refuses the MTP method for the row's targets at start-up (DF041);
    None: it does not, or that was not read."""
