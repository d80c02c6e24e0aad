"""The smoke run's block of the human report: speed-up, acceptance, each prompt's outcome, the
engine that served it and its cache rollback (``--smoke-run``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflash_check.render.diagnostics import plural, wrap
from dflash_check.render.lines import Line, lines

if TYPE_CHECKING:  # types only: a report without a smoke run never loads their module
    from dflash_check.smoke.report import EngineRun, SmokeReport


def smoke_lines(smoke: SmokeReport, width: int) -> list[Line]:
    """Return the smoke run: verdict line, tau, speed, histogram and per-position acceptance."""
    if smoke.failure is not None:
        return failure_lines(smoke, width)
    ok = smoke.passed
    lossless = {True: "lossless", False: "NOT lossless", None: "sampling (not compared)"}
    if smoke.engine is not None and smoke.lossless is None and smoke.temperature <= 0:
        lossless[None] = "lossless not checked: no --baseline-endpoint"
    where = f"{smoke.device}, {smoke.dtype}"
    if smoke.engine is not None:
        where = engine_line(smoke.engine)
    status = "passed" if ok else "FAILED"
    head_text = (
        f"smoke run {status}: {where}, block {smoke.block_size}, "
        f"{plural(len(smoke.cases), 'prompt')}; {lossless[smoke.lossless]}"
    )
    out = lines(wrap(head_text, width, "", "  "))
    out[0] = (
        out[0]
        .stylize("bold", 0, 10)
        .stylize("bold green" if ok else "bold red", 10, 10 + len(status))
    )
    tau = (
        f"tau = {smoke.mean_acceptance_length:.2f} tokens per target step "
        f"(minimum {smoke.min_acceptance:g}"
        + (f": {smoke.min_acceptance_reason})." if smoke.min_acceptance_reason else ").")
    )
    runs = smoke.speedups
    spread = f", range {min(runs):.2f}–{max(runs):.2f}x" if len(runs) > 1 else ""
    speed = (
        f"Measured speedup {smoke.speedup:.2f}x: {smoke.tokens_per_second:.1f} tok/s "
        f"speculative vs {smoke.baseline_tokens_per_second:.1f} tok/s plain (median of "
        f"{plural(smoke.repeats, 'timed run')} after a warm-up{spread}). Wall-clock speed "
        "is noisy (shared machines, small models, the CPU); tau is the stable figure."
    )
    if smoke.engine is not None and smoke.engine.baseline_endpoint is None:
        speed = f"{smoke.tokens_per_second:.1f} tok/s (one request at a time, client clock)."
    out += lines(wrap(tau, width, "  ", "  "))
    if smoke.bundled is not None:
        out += lines(wrap(bundled_line(smoke), width, "  ", "  "))
    out += lines(wrap(speed, width, "  ", "  "))
    if smoke.engine is not None:
        out += lines(wrap(draft_line(smoke.engine), width, "  ", "    "))
    if smoke.prompts_note:
        out += lines(wrap(f"Prompts: {smoke.prompts_note}.", width, "  ", "  "), "dim")
    hist = smoke.histogram()
    most = max(hist.values()) if hist else 1
    if hist or smoke.counts is None:
        out.append(Line("  acceptance lengths:"))
        bar_width = max(5, min(20, width - 20))
        for length in range(1, smoke.block_size + 1):
            count = hist.get(length, 0)
            bar = "█" * round(bar_width * count / most) if count else ""
            out.append(Line(f"    {length:>2} │{bar} {count}"))
    else:
        out.append(Line(f"  acceptance lengths: not exposed by {smoke.device}"))
    rates = "  ".join(
        f"{j}:{r:.0%}" for j, r in enumerate(smoke.acceptance_rate_per_position, start=1)
    )
    out += lines(wrap(f"accepted per draft position: {rates}", width, "  ", "    "))
    if smoke.rollbacks:
        rollback = f"target cache rollback: {rollback_summary(smoke)}"
        out += lines(wrap(rollback, width, "  ", "    "))
    return out


def failure_lines(smoke: SmokeReport, width: int) -> list[Line]:
    """Return a launched engine's failure: the stage, the log's root cause, the log."""
    failure = smoke.failure
    assert failure is not None
    head = f"smoke run FAILED: {smoke.device} failed at the {failure.stage}"
    if smoke.engine is not None:
        head += f" ({engine_line(smoke.engine)})"
    out = lines(wrap(head, width, "", "  "))
    out[0] = out[0].stylize("bold", 0, 10).stylize("bold red", 10, 16)
    why = f"engine log: {failure.root_cause}" if failure.root_cause else failure.message
    out += lines(wrap(why, width, "  ", "    "))
    out += lines(wrap(f"log: {failure.log}", width, "  ", "    "), "dim")
    return out


def bundled_line(smoke: SmokeReport) -> str:
    """Return ``--compare-bundled``'s tau next to the engine's, or why there is none."""
    b = smoke.bundled
    assert b is not None
    if b.tau is None:
        return f"Bundled runtime: not compared ({b.why_not})."
    return (
        f"Bundled runtime: tau = {b.tau:.2f} on the same {plural(b.prompts, 'prompt')} at "
        f"block {b.block_size}; {smoke.device}: {smoke.mean_acceptance_length:.2f}."
    )


def draft_line(run: EngineRun) -> str:
    """Return which draft the engine served, and how that is known (or that it is not)."""
    if run.draft_evidence == "server":
        matched = f"; matched by {run.draft_match}" if run.draft_match else ""
        return f"served draft: {run.draft_model} (reported by the server{matched})"
    if run.draft_evidence == "launch":
        return f"served draft: {run.draft_model} (dflash-check started the engine with it)"
    return (
        f"served draft not verified: {run.engine} does not report its draft (vLLM names it "
        "only in /server_info, with VLLM_SERVER_DEV_MODE=1); taken on trust "
        "(--trust-served-draft): the counters are those of whatever draft the server loaded"
    )


def engine_line(run: EngineRun) -> str:
    """Return where an engine smoke run ran: engine, version, mode, endpoint, parallelism."""
    parts = [f"{run.engine} {run.version}" if run.version else run.engine]
    parts.append(f"{run.mode} {run.endpoint}")
    if run.tensor_parallel or run.pipeline_parallel:
        parts.append(f"TP {run.tensor_parallel or 1} x PP {run.pipeline_parallel or 1}")
    return ", ".join(parts)


def rollback_summary(smoke: SmokeReport) -> str:
    """Return how each layer kind was rolled back, and how many replays that took."""
    parts = [f"{r.layers}: {r.method}" for r in smoke.rollbacks]
    if smoke.replays:
        parts.append(f"{smoke.replays} replays of {smoke.replayed_tokens} accepted tokens")
    return "; ".join(parts)
