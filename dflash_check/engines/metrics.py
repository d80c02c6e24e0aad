"""The engine's speculative-decoding counters: scraped from ``/metrics`` (vLLM) or read from
each answer's ``meta_info`` (SGLang), differenced, and checked for plausibility."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from dflash_check.engines.client import (
    MAX_DRAFT_POSITIONS,
    EngineClient,
    int_or_none,
)
from dflash_check.engines.errors import (
    EngineResponseError,
    ImplausibleAnswerError,
    MissingMetricsError,
)
from dflash_check.engines.profiles import EngineProfile, profile
from dflash_check.engines.prometheus import (
    MetricsFormatError,
    Sample,
    by_label,
    parse_metrics,
    total,
)
from dflash_check.knowledge.engines import sglang
from dflash_check.sanitize import one_line
from dflash_check.smoke.report import SpecCounts


def scrape(client: EngineClient) -> tuple[Sample, ...]:
    """Return the samples of ``/metrics``."""
    status, raw = client.fetch("/metrics")
    if status == 404:
        raise MissingMetricsError(
            f"{client.engine} server at {client.base} has no /metrics endpoint",
            hint=profile(client.engine).metrics_hint,
        )
    if not 200 <= status < 300:
        raise EngineResponseError(
            f"{client.engine} server at {client.base} answered /metrics with HTTP {status}"
        )
    http = profile(client.engine)
    # Only the series the run reads are kept: a server's thousands of others cost nothing.
    wanted = {
        n
        for n in (
            http.metric_drafts,
            http.metric_draft_tokens,
            http.metric_accepted,
            http.metric_accepted_per_pos,
            http.metric_generated,
            http.metric_required,
        )
        if n
    }
    try:
        samples = parse_metrics(raw.decode("utf-8", "replace"), names=wanted)
    except MetricsFormatError as err:
        raise EngineResponseError(
            f"{client.engine} server at {client.base}: /metrics is not Prometheus text "
            f"({one_line(str(err))})"
        ) from None
    for sample in samples:
        if not math.isfinite(sample.value) or sample.value < 0:
            raise ImplausibleAnswerError(
                f"{client.engine} server at {client.base}: /metrics: {sample.name} = "
                f"{sample.value:g} is not a count"
            )
    return samples


def settled(
    client: EngineClient,
    profile: EngineProfile,
    before: Sequence[Sample],
    generated: int,
    wait: float = 0.25,
    limit: float = 10.0,
) -> tuple[Sample, ...]:
    """Scrape ``/metrics`` until the run's counts are all in (at most ``limit`` s).

    vLLM records a step's statistics after it has handed the step's tokens to the API server,
    so the last answer can arrive before its counts do. The counts are in once the
    generated-tokens counter has grown by the tokens the run received (it is recorded with the
    speculative counters) and two scrapes in a row agree. SGLang's counts come with each answer.
    """
    after = scrape(client)
    if profile.metric_drafts is None:
        return after
    names = [profile.metric_drafts, profile.metric_accepted, profile.metric_generated]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        grown = delta(before, after, profile.metric_generated)
        time.sleep(wait)
        again = scrape(client)
        stable = all(total(again, n) == total(after, n) for n in names if n)
        if stable and (grown is None or grown >= generated):
            return again
        after = again
    return after


def require_metrics(
    client: EngineClient, profile: EngineProfile, samples: Sequence[Sample]
) -> None:
    """Refuse a ``/metrics`` without the speculative series (speculation off, or stats off)."""
    if total(samples, profile.metric_required) is None:
        raise MissingMetricsError(
            f"{profile.name} server at {client.base}: /metrics has no {profile.metric_required} "
            "(speculative decoding is off, or its statistics are not exported)",
            hint=profile.metrics_hint,
        )


def delta(before: Sequence[Sample], after: Sequence[Sample], name: str | None) -> float | None:
    """Return how much a counter grew (None when absent; a restart shows as negative)."""
    if name is None:
        return None
    a, b = total(before, name), total(after, name)
    return None if a is None or b is None else b - a


def vllm_counts(
    client: EngineClient, before: Sequence[Sample], after: Sequence[Sample]
) -> tuple[SpecCounts, int]:
    """Return the run's vLLM counter deltas and the number of positions vLLM drafts (K)."""
    p = profile(client.engine)
    drafts = delta(before, after, p.metric_drafts)
    drafted = delta(before, after, p.metric_draft_tokens)
    accepted = delta(before, after, p.metric_accepted)
    missing = [
        n
        for n, v in (
            (p.metric_drafts, drafts),
            (p.metric_draft_tokens, drafted),
            (p.metric_accepted, accepted),
        )
        if v is None
    ]
    if missing:
        raise MissingMetricsError(
            f"vllm server at {client.base}: /metrics lacks {', '.join(str(m) for m in missing)}",
            hint=p.metrics_hint,
        )
    assert drafts is not None and drafted is not None and accepted is not None  # narrowed above
    if drafts < 0 or drafted < 0 or accepted < 0:
        raise EngineResponseError(
            f"vllm server at {client.base}: the speculative counters went down during the run "
            "(the server restarted)"
        )
    pos_name = str(p.metric_accepted_per_pos)
    pos_before = by_label(before, pos_name, "position")
    pos_after = by_label(after, pos_name, "position")
    # vLLM numbers positions from 0 and creates one series per speculative token up front.
    where = f"vllm server at {client.base}: /metrics"
    for label in pos_after.keys() | pos_before.keys():
        # Plain ASCII decimals only: "²".isdigit() is true, and int() refuses it.
        if not (label.isascii() and label.isdigit() and int(label) < MAX_DRAFT_POSITIONS):
            raise ImplausibleAnswerError(
                f"{where}: {pos_name} has position={one_line(label)[:40]!r}, not a draft "
                f"position 0..{MAX_DRAFT_POSITIONS - 1}"
            )
    positions = sorted(int(k) for k in pos_after)
    per_pos = tuple(
        round(pos_after.get(str(j), 0.0) - pos_before.get(str(j), 0.0)) for j in positions
    )
    if any(n < 0 for n in per_pos):
        raise EngineResponseError(
            f"{where}: {pos_name} went down during the run (the server restarted)"
        )
    counts = SpecCounts(
        steps=round(drafts),
        drafted_tokens=round(drafted),
        accepted_tokens=round(accepted),
        accepted_per_position=per_pos,
    )
    return counts, len(positions)


def check_counts(counts: SpecCounts, block_size: int, where: str) -> None:
    """Refuse counters that cannot be true, naming the first impossibility (exit 3).

    Each holds for any engine: counts are not negative; a step cannot accept more tokens than
    were drafted; a step commits at most its block (``block_size`` drafts and the bonus token),
    so tau <= block size + 1 leaves room for an engine that drafts a whole block; a position is
    accepted at most once per step, and the histogram has one entry per step.
    """
    problems = []
    for name, value in (
        ("verify steps", counts.steps),
        ("drafted tokens", counts.drafted_tokens),
        ("accepted tokens", counts.accepted_tokens),
    ):
        if value < 0:
            problems.append(f"{name} counted negative ({value})")
    if counts.accepted_tokens > counts.drafted_tokens:
        problems.append(
            f"{counts.accepted_tokens} accepted draft tokens but only "
            f"{counts.drafted_tokens} drafted"
        )
    if counts.steps > 0 and (counts.accepted_tokens + counts.steps) > counts.steps * (
        block_size + 1
    ):
        tau = (counts.accepted_tokens + counts.steps) / counts.steps
        problems.append(f"tau {tau:.4g} above the block size + 1 ({block_size + 1})")
    if any(n < 0 or n > max(counts.steps, 0) for n in counts.accepted_per_position):
        problems.append(f"a per-position count outside 0..{counts.steps} steps")
    if counts.accepted_histogram and (
        any(n < 0 for n in counts.accepted_histogram)
        or sum(counts.accepted_histogram) > max(counts.steps, 0)
    ):
        problems.append(f"an acceptance histogram that does not add up to {counts.steps} steps")
    if problems:
        raise ImplausibleAnswerError(
            f"{where}: the speculative counters cannot be true: {problems[0]}",
            hint="check the server's metrics (and that it is the engine it claims to be)",
        )


def sglang_counts(
    metas: Sequence[Mapping[str, Any]], block_size: int, where: str = "sglang server"
) -> SpecCounts:
    """Add up SGLang's per-request ``meta_info`` counters over the run.

    Field names changed across releases, so each value is read from the names SGLang has used
    (``spec_num_correct_drafts`` / ``spec_accepted_drafts`` / ``spec_accept_token_num``, and
    ``spec_correct_drafts_histogram`` / ``spec_accept_histogram``). Without them, accepted
    tokens follow from ``completion_tokens``: the first token comes from the prefill and each
    verify step commits its accepted drafts plus one.
    """

    def first(meta: Mapping[str, Any], *names: str) -> Any:
        for n in names:
            if meta.get(n) is not None:
                return meta[n]
        return None

    steps = drafted = accepted = 0
    histogram: list[int] = []
    have_hist = True
    for meta in metas:
        verify = int_or_none(meta.get("spec_verify_ct"))
        completion = int_or_none(meta.get("completion_tokens"))
        if verify is None or completion is None:
            raise MissingMetricsError(
                "sglang /generate answered without spec_verify_ct (speculative decoding is off)",
                hint=sglang.http().metrics_hint,
            )
        steps += verify
        acc = int_or_none(
            first(meta, "spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num")
        )
        accepted += acc if acc is not None else max(completion - 1 - verify, 0)
        proposed = int_or_none(
            first(meta, "spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num")
        )
        drafted += proposed if proposed is not None else verify * (block_size - 1)
        hist = first(meta, "spec_correct_drafts_histogram", "spec_accept_histogram")
        if isinstance(hist, list) and len(hist) > MAX_DRAFT_POSITIONS + 1:
            raise ImplausibleAnswerError(
                f"{where}: /generate meta_info: an acceptance histogram of {len(hist)} entries "
                f"(at most {MAX_DRAFT_POSITIONS + 1} believed)"
            )
        if isinstance(hist, list) and all(
            isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in hist
        ):
            if len(histogram) < len(hist):
                histogram += [0] * (len(hist) - len(histogram))
            for i, h in enumerate(hist):
                histogram[i] += h
        elif verify:
            have_hist = False
    return SpecCounts(
        steps=steps,
        drafted_tokens=drafted,
        accepted_tokens=accepted,
        accepted_histogram=tuple(histogram) if have_hist and histogram else (),
    )
