"""What a smoke run measured: plain values, so reports and renderers need no torch."""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.knowledge.acceptance import BundledTau, FloorSource


@dataclass(frozen=True)
class SmokeCase:
    """One prompt's speculative decode, next to the plain decode of the same prompt."""

    prompt: str
    """The prompt text as given (before any chat template)."""
    prompt_token_ids: tuple[int, ...]
    """The token ids fed to the models (chat template applied when there is one)."""
    output_token_ids: tuple[int, ...]
    """Tokens the speculative decode generated."""
    baseline_token_ids: tuple[int, ...]
    """Tokens the plain target-only decode generated."""
    acceptance_lengths: tuple[int, ...]
    """Tokens committed per target verify step (accepted draft tokens + the bonus token)."""
    drafted: tuple[int, ...]
    """Draft tokens proposed per verify step."""
    lossless: bool | None
    """Greedy: the two outputs are identical. None when sampling (outputs may differ)."""
    seconds: float
    """Wall time of the speculative decode (the median of ``timings``)."""
    baseline_seconds: float
    """Wall time of the plain decode (the median of ``baseline_timings``)."""
    timings: tuple[float, ...] = ()
    """Wall time of each timed speculative decode, after the warm-up."""
    baseline_timings: tuple[float, ...] = ()
    """Wall time of each timed plain decode, interleaved with ``timings``."""


@dataclass(frozen=True)
class LayerRollback:
    """How the target's cache layers of one kind were rolled back after partial acceptance."""

    layers: str
    """The layer kind, e.g. ``sliding-window attention (past recorded)``."""
    method: str
    """``crop``, ``crop (recorded states)`` (the cache recorded the recurrent state after each
    block position: transformers 5.25+), ``restore+replay`` (recurrent state snapshotted,
    accepted tokens re-run) or ``shared`` (the layer reads another layer's keys and values)."""


@dataclass(frozen=True)
class SpecCounts:
    """Speculative-decoding totals a serving engine counted over the run (counter deltas).

    An engine does not say which verify step accepted what, only totals; these are enough for
    tau, per-position acceptance and (where the engine keeps one) the histogram.
    """

    steps: int
    """Target verify steps that checked a draft (vLLM ``num_drafts``, SGLang ``spec_verify_ct``)."""
    drafted_tokens: int
    """Draft tokens proposed over those steps."""
    accepted_tokens: int
    """Draft tokens the target accepted (the bonus token not included)."""
    accepted_per_position: tuple[int, ...] = ()
    """Position j (1-based, index j-1): steps whose j-th draft token was accepted; () if unknown."""
    accepted_histogram: tuple[int, ...] = ()
    """Index n: steps that accepted exactly n draft tokens; () when the engine keeps none."""


@dataclass(frozen=True)
class EngineRun:
    """Where an engine smoke run ran: which engine, how it was reached, what it served."""

    engine: str
    """``vllm`` or ``sglang``."""
    mode: str
    """``attach`` (a server the user started) or ``launch`` (started by dflash-check)."""
    endpoint: str
    """Base URL of the speculative server."""
    served_model: str
    """The model id the server answered /v1/models with (matched against the target)."""
    version: str | None = None
    """The engine's version, when it reports one."""
    draft_model: str | None = None
    """The draft the engine serves, when known (see ``draft_evidence``)."""
    draft_evidence: str | None = None
    """How ``draft_model`` is known: ``server`` (the engine reported it: SGLang server info,
    vLLM ``/server_info`` in dev mode), ``launch`` (dflash-check started the engine with it), or
    None: the served draft is not verified (vLLM's ``/version`` names no draft)."""
    draft_match: str | None = None
    """With ``server`` evidence, how the reported draft matched the pair's, in words (``the repo
    id``, ``the same folder``, ``the folder name only …``), with what it cannot show (``revision
    abc123 not verified …``); None otherwise."""
    tensor_parallel: int | None = None
    """Tensor-parallel size, when reported or passed."""
    pipeline_parallel: int | None = None
    """Pipeline-parallel size, when reported or passed."""
    baseline_endpoint: str | None = None
    """Base URL of the same target served without speculation (None: lossless not checked)."""


@dataclass(frozen=True)
class EngineFailure:
    """An engine dflash-check launched that failed instead of decoding (the smoke run failed)."""

    stage: str
    """``start`` (exited or refused before /health answered) or ``first decode`` (healthy,
    then the first request failed)."""
    message: str
    """What dflash-check saw (the exit, or the failed request)."""
    root_cause: str | None
    """The engine log's own error line (e.g. vLLM's ``ValueError …``), when it has one."""
    log: str
    """Path of the engine's log (kept)."""


@dataclass(frozen=True)
class SmokeReport:
    """The whole smoke run."""

    device: str
    dtype: str
    block_size: int
    temperature: float
    min_acceptance: float
    cases: tuple[SmokeCase, ...]
    draft_architecture: str = "DFlashDraftModel"
    rollbacks: tuple[LayerRollback, ...] = ()
    """One entry per kind of cache layer the target has."""
    replays: int = 0
    """Extra target forwards that rebuilt recurrent states after partly accepted blocks."""
    replayed_tokens: int = 0
    peak_memory_bytes: int | None = None
    """Peak device memory allocated during the decodes (CUDA only; None elsewhere)."""
    repeats: int = 1
    """Timed runs of each decode (after one untimed warm-up); speeds use their median."""
    prompts_note: str | None = None
    """Why the built-in prompts were replaced, when they did not suit the tokenizer."""
    engine: EngineRun | None = None
    """Set when a serving engine ran the decode instead of the bundled runtime."""
    counts: SpecCounts | None = None
    """The engine's counter totals; when set, tau and acceptance come from them, not from cases."""
    failure: EngineFailure | None = None
    """Set when the launched engine failed instead of decoding (no cases then)."""
    min_acceptance_reason: str | None = None
    """Where ``min_acceptance`` comes from when no ``--min-acceptance`` was given to an engine
    run (``knowledge.acceptance``: the bundled tau of the pair, or measured collapses at the
    block size); None otherwise."""
    min_acceptance_source: FloorSource | None = None
    """Where an engine run's floor comes from: ``given``, ``bundled`` or ``block size``; None
    for the bundled runtime's own run."""
    bundled: BundledTau | None = None
    """``--compare-bundled``: the bundled runtime's tau of the same pair, or why there is none."""

    @property
    def has_baseline(self) -> bool:
        """Return whether a plain decode ran next to the speculative one (speeds comparable)."""
        return any(c.baseline_token_ids for c in self.cases)

    @property
    def lossless(self) -> bool | None:
        """Return whether every greedy case matched the plain decode (None when sampling)."""
        flags = [c.lossless for c in self.cases if c.lossless is not None]
        return all(flags) if flags else None

    @property
    def steps(self) -> tuple[int, ...]:
        """Return the acceptance length of every verify step of every case."""
        return tuple(a for c in self.cases for a in c.acceptance_lengths)

    @property
    def mean_acceptance_length(self) -> float:
        """Return tau: tokens committed per target verify step, over all cases."""
        if self.counts is not None:
            n = self.counts.steps
            return (n + self.counts.accepted_tokens) / n if n else 0.0
        steps = self.steps
        return sum(steps) / len(steps) if steps else 0.0

    @property
    def acceptance_rate_per_position(self) -> tuple[float, ...]:
        """Return, for block position j = 1..block_size-1, how often draft token j was accepted.

        A step that accepted k draft tokens accepted positions 1..k; a position counts only
        in the steps that drafted it. From an engine's counters the denominator is every verify
        step, as vLLM's own per-position rate (``vllm/v1/spec_decode/metrics.py``) divides by
        ``num_drafts``: the counters do not say how many tokens each step drafted.
        """
        if self.counts is not None:
            return engine_rates(self.counts, self.block_size)
        rates = []
        pairs = [
            (a - 1, d)
            for c in self.cases
            for a, d in zip(c.acceptance_lengths, c.drafted, strict=True)
        ]
        for j in range(1, self.block_size):
            drafted = [acc for acc, d in pairs if d >= j]
            rates.append(sum(1 for acc in drafted if acc >= j) / len(drafted) if drafted else 0.0)
        return tuple(rates)

    @property
    def tokens_per_second(self) -> float:
        """Return generated tokens per second of the speculative decode."""
        seconds = sum(c.seconds for c in self.cases)
        return sum(len(c.output_token_ids) for c in self.cases) / seconds if seconds else 0.0

    @property
    def baseline_tokens_per_second(self) -> float:
        """Return generated tokens per second of the plain decode."""
        seconds = sum(c.baseline_seconds for c in self.cases)
        return sum(len(c.baseline_token_ids) for c in self.cases) / seconds if seconds else 0.0

    @property
    def speedups(self) -> tuple[float, ...]:
        """Return the measured speedup of each timed repeat (all prompts together)."""
        spec_tokens = sum(len(c.output_token_ids) for c in self.cases)
        base_tokens = sum(len(c.baseline_token_ids) for c in self.cases)
        runs = min((len(c.timings) for c in self.cases), default=0)
        runs = min(runs, *(len(c.baseline_timings) for c in self.cases)) if runs else 0
        out = []
        for r in range(runs):
            spec = sum(c.timings[r] for c in self.cases)
            base = sum(c.baseline_timings[r] for c in self.cases)
            if spec > 0 and base > 0 and base_tokens:
                out.append((spec_tokens / spec) / (base_tokens / base))
        return tuple(out)

    @property
    def speedup(self) -> float:
        """Return the measured speedup: the median over repeats (tokens per second ratio)."""
        runs = self.speedups
        if runs:
            from statistics import median  # here: a plain check never pays for statistics

            return median(runs)
        base = self.baseline_tokens_per_second
        return self.tokens_per_second / base if base else 0.0

    @property
    def passed(self) -> bool:
        """Return whether the run proves the pair: lossless and tau >= --min-acceptance."""
        if self.failure is not None:
            return False
        return self.lossless is not False and self.mean_acceptance_length >= self.min_acceptance

    def histogram(self) -> dict[int, int]:
        """Return acceptance length -> number of verify steps (empty if the engine keeps none)."""
        if self.counts is not None:
            hist = self.counts.accepted_histogram
            return {n + 1: c for n, c in enumerate(hist) if c}
        counts: dict[int, int] = {}
        for a in self.steps:
            counts[a] = counts.get(a, 0) + 1
        return dict(sorted(counts.items()))


def engine_rates(counts: SpecCounts, block_size: int) -> tuple[float, ...]:
    """Return per-position acceptance from engine totals (per position, else from the histogram)."""
    n = counts.steps
    if not n:
        return ()
    if counts.accepted_per_position:
        return tuple(a / n for a in counts.accepted_per_position[: block_size - 1])
    hist = counts.accepted_histogram
    if hist:
        # A step that accepted k draft tokens accepted positions 1..k.
        return tuple(sum(hist[j:]) / n for j in range(1, block_size))
    return ()
