"""The values a check produces: findings, per-runtime layer resolutions, and the report."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Protocol

from dflash_check.knowledge.outcomes import Stage, earliest, stage_of
from dflash_check.knowledge.runtimes import RuntimeProfile
from dflash_check.knowledge.selection import Selection
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings
from dflash_check.views import DraftView, TargetView


class SmokeResult(Protocol):
    """What the check reads of a smoke run attached to its report: whether it passed.

    The run itself is measured above the check (``smoke/``, ``engines/``) and its values are
    ``smoke.report.SmokeReport``, which the renderers read in full; the check room names only
    this much of it, so that it imports nothing from the rooms above it.
    """

    @property
    def passed(self) -> bool:
        """Whether the run met its bar (lossless where greedy, acceptance at least the
        minimum, no engine failure)."""
        ...


class Severity(str, Enum):
    """How bad a finding is. Errors make a pair incompatible; warnings fail only ``--strict``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Verdict(str, Enum):
    """The answer for a pair, or for one runtime."""

    COMPATIBLE = "compatible"
    INCOMPATIBLE = "incompatible"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Finding:
    """One rule's observation about the pair."""

    rule: str
    """Stable rule id, e.g. ``DF004``."""
    severity: Severity
    """Error, warning or info."""
    runtime: str | None
    """The runtime this concerns, or None when it concerns every runtime."""
    message: str
    """What is wrong, naming the model, the field and the numbers."""
    hint: str
    """How to fix it."""
    field: str | None = None
    """The config field the finding is about (dotted path), for locations in reports."""
    model: str | None = None
    """``draft`` or ``target``: whose file holds ``field``."""
    stage: Stage | None = None
    """For an error: when the engine shows it (at load, at the first decode, or silently);
    for a finding about every runtime, the rule's default (``stage_for`` is per runtime)."""

    stage_fixed: bool = False
    """Whether the rule decided ``stage`` for this pair (it then holds for every runtime)."""

    def stage_for(self, runtime: str) -> Stage | None:
        """Return when ``runtime`` shows this finding (its own stage for a finding about one
        runtime, the runtime's entry of the outcome table for one about every runtime)."""
        if self.severity is not Severity.ERROR:
            return None
        if self.runtime is not None or self.stage_fixed:
            return self.stage
        return stage_of(self.rule, runtime) or self.stage


@dataclass(frozen=True)
class LayerResolution:
    """How one runtime resolves the draft's layer ids on this target."""

    runtime: RuntimeProfile
    """The runtime."""
    layer_ids: tuple[int, ...]
    """The draft's ids (DFlash numbering)."""
    capture_indices: tuple[int, ...]
    """The runtime's own index for each id (``t + shift``)."""
    max_valid_id: int
    """Largest id the runtime accepts on this target."""
    layers_needed: int
    """Smallest target layer count on which every id is valid."""
    layers_present: int
    """The target's layer count."""
    key: str | None = None
    """The config key this runtime read the ids from (None: it guessed them)."""
    raw_ids: tuple[int, ...] = ()
    """The ids as written under ``key`` (in the key's own numbering)."""
    guessed: bool = False
    """Whether the runtime found no ids it reads and used its default."""

    @property
    def converted(self) -> bool:
        """Whether the key numbers ids otherwise than layer outputs (e.g. vLLM aux indices)."""
        return self.raw_ids != self.layer_ids

    @property
    def out_of_range(self) -> tuple[int, ...]:
        """Return the ids this runtime cannot serve on this target."""
        low = self.runtime.min_id
        return tuple(t for t in self.layer_ids if t > self.max_valid_id or t < low)

    @property
    def hidden_states(self) -> tuple[int, ...]:
        """Return the HF ``hidden_states`` indices fed (``t + 1`` for canonical id t)."""
        return tuple(t + 1 for t in self.layer_ids)

    @property
    def missing_layers(self) -> tuple[int, ...]:
        """Return tapped layers that the target does not have at all (``t >= N``)."""
        return tuple(t for t in self.layer_ids if t >= self.layers_present)


@dataclass(frozen=True)
class NotChecked:
    """A rule that could not be applied, and why (the verdict holds without it)."""

    rule: str
    """The rule id, e.g. ``DF005``."""
    reason: str
    """Why it could not be applied."""


@dataclass(frozen=True)
class Evidence:
    """One fact about which target the draft was built for, next to what the target has."""

    fact: str
    """``num_target_layers``, ``base_model``, ``verifier`` or ``tokenizer``."""
    draft: str | None
    """What the draft says (None when it says nothing)."""
    target: str
    """What the given target has."""
    agrees: bool | None
    """True, False, or None when there is nothing to compare."""


@dataclass(frozen=True)
class CheckReport:
    """Everything a renderer needs; it knows nothing about how it is printed."""

    draft: DraftView
    """Normalised draft."""
    target: TargetView
    """Normalised target."""
    selection: Selection
    """The runtimes judged (``--runtime``, pinned to a server's release where one decodes)."""
    profiles: tuple[RuntimeProfile, ...]
    """The runtimes checked."""
    findings: tuple[Finding, ...]
    """All findings, in rule order."""
    resolutions: tuple[LayerResolution, ...]
    """Per-runtime resolution of the layer ids (empty when the draft has no usable ids)."""
    draft_revision: str | None = None
    """Resolved commit of the draft, for Hub models."""
    target_revision: str | None = None
    """Resolved commit of the target, for Hub models."""
    draft_location: str | None = None
    """Where the draft's config.json was read."""
    target_location: str | None = None
    """Where the target's config.json was read."""
    draft_fetched_bytes: int = 0
    """Bytes the draft cost on the network."""
    target_fetched_bytes: int = 0
    """Bytes the target cost on the network."""
    smoke: SmokeResult | None = None
    """The smoke run's measurements (a ``smoke.report.SmokeReport``), when ``--smoke-run``
    ran."""
    not_checked: tuple[NotChecked, ...] = ()
    """Rules that could not be applied (no safetensors header, …)."""
    identity: tuple[Evidence, ...] = ()
    """The target-identity evidence, shown together."""
    strict: bool = False
    """``--strict``: warnings and rules not checked make the pair incompatible too."""
    num_speculative_tokens: int | None = None
    """The engine's draft tokens per step the pair was checked for (``--num-speculative-tokens``);
    the engine command uses it too."""
    speculative_method: str | None = None
    """The speculative method the engine is asked for, as stated (``--speculative-method``,
    pairs.yaml ``method``, a vLLM test entry); None: the draft's own, nothing requested."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The engine settings the pair was judged with (``--engine-arg``, pairs.yaml
    ``engine_args``); each engine's defaults where none were given."""
    ignored: tuple[str, ...] = ()
    """The rule ids asked to be ignored (``--ignore``, a pair's ``ignore`` in pairs.yaml),
    sorted; the verdict text names them, so that a clean verdict never hides them."""
    suppressed: tuple[Finding, ...] = ()
    """What the ignored rules found: not counted in any verdict, shown as suppressed."""

    def applies(self, finding: Finding, runtime: str) -> bool:
        """Return whether ``finding`` counts against ``runtime``."""
        return finding.runtime is None or finding.runtime == runtime

    def runtime_verdict(self, runtime: str) -> Verdict:
        """Return the verdict for one runtime (with ``strict``, warnings count as errors)."""
        failing = {Severity.ERROR, Severity.WARNING} if self.strict else {Severity.ERROR}
        errors = [f for f in self.findings if f.severity in failing and self.applies(f, runtime)]
        if errors or (self.strict and self.not_checked):
            return Verdict.INCOMPATIBLE
        return Verdict.COMPATIBLE

    def runtime_stage(self, runtime: str) -> Stage | None:
        """Return when ``runtime`` first shows the pair's errors (None: no error, or none
        whose stage is known)."""
        return earliest(f.stage_for(runtime) for f in self.findings if self.applies(f, runtime))

    @cached_property
    def runtime_stages(self) -> dict[str, Stage | None]:
        """Return name -> the stage each checked runtime fails at (None: it does not fail)."""
        return {p.name: self.runtime_stage(p.name) for p in self.profiles}

    @cached_property
    def runtime_verdicts(self) -> dict[str, Verdict]:
        """Return name -> verdict for every checked runtime."""
        return {p.name: self.runtime_verdict(p.name) for p in self.profiles}

    @property
    def verdict(self) -> Verdict:
        """Return the overall verdict: compatible only if every checked runtime is."""
        verdicts = self.runtime_verdicts.values()
        return Verdict.INCOMPATIBLE if Verdict.INCOMPATIBLE in verdicts else Verdict.COMPATIBLE

    def count(self, severity: Severity) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def strict_reasons(self) -> tuple[str, ...]:
        """Return what only ``--strict`` counts against the pair ("2 warnings", …)."""
        if not self.strict:
            return ()
        warnings = len(
            {(f.rule, f.message) for f in self.findings if f.severity is Severity.WARNING}
        )
        reasons = []
        if warnings:
            reasons.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        if self.not_checked:
            reasons.append(f"{len(self.not_checked)} not checked")
        return tuple(reasons)

    @property
    def verdict_text(self) -> str:
        """Return the verdict as printed: ``incompatible (strict: 2 warnings)`` when only
        ``--strict`` makes it so, so that the text agrees with the exit code; the rules ignored
        follow (``compatible (3 rules ignored: DF004, DF007, DF011)``)."""
        v = self.verdict.value
        if self.verdict is Verdict.INCOMPATIBLE and self.strict:
            lenient = not any(
                f.severity is Severity.ERROR and self.applies(f, p.name)
                for f in self.findings
                for p in self.profiles
            )
            if lenient:
                ignored = f"; {self.ignored_summary}" if self.ignored else ""
                return f"{v} (strict: {', '.join(self.strict_reasons)}{ignored})"
        return f"{v} ({self.ignored_summary})" if self.ignored else v

    @property
    def ignored_summary(self) -> str:
        """Return ``3 rules ignored: DF004, DF007, DF011`` (empty when none was)."""
        if not self.ignored:
            return ""
        n = len(self.ignored)
        return f"{n} rule{'' if n == 1 else 's'} ignored: {', '.join(self.ignored)}"
