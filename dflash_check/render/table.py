"""The human report: both models side by side, the layer resolution, the findings, the verdict."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from dflash_check.core.report import CheckReport, Severity, Verdict
from dflash_check.core.rules import fmt_ids
from dflash_check.core.runtimes import PORTABLE
from dflash_check.core.smoke_report import EngineRun, SmokeReport

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
VERDICT_STYLE = {
    Verdict.COMPATIBLE: "bold green",
    Verdict.INCOMPATIBLE: "bold red",
    Verdict.UNKNOWN: "bold yellow",
}


def _opt(value: object) -> str:
    """Format an optional value, showing absence as a dash."""
    if value is None:
        return "—"
    if isinstance(value, tuple):
        return (
            fmt_ids(list(value))
            if all(isinstance(v, int) for v in value)
            else ", ".join(str(v) for v in value)
        )
    return str(value)


def models_table(report: CheckReport) -> Table:
    """Return the two models side by side, one row per compared fact."""
    d, t = report.draft, report.target
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("", style="bold")
    table.add_column(f"draft  {d.name}", overflow="fold")
    table.add_column(f"target  {t.name}", overflow="fold")
    fc = (
        f"{d.fc_weight_name} {list(d.fc_weight_shape)}"
        if d.fc_weight_shape is not None
        else "not found"
        if d.has_safetensors
        else "no safetensors"
    )
    rows = [
        ("architecture", f"{_opt(d.architectures)} ({d.method})", _opt(t.architectures)),
        (
            "layers",
            f"{_opt(d.num_hidden_layers)} (trained on {_opt(d.num_target_layers)}-layer target)",
            f"{t.num_hidden_layers} ({t.layers_key})",
        ),
        ("hidden size", str(d.hidden_size), str(t.hidden_size)),
        ("vocab size", _opt(d.vocab_size), str(t.vocab_size)),
        ("max positions", _opt(d.max_position_embeddings), _opt(t.max_position_embeddings)),
        ("target_layer_ids", f"{_opt(d.target_layer_ids)} ({_opt(d.layer_ids_key)})", ""),
        ("block_size", f"{_opt(d.block_size)} ({_opt(d.block_size_key)})", ""),
        ("mask_token_id", f"{_opt(d.mask_token_id)} ({_opt(d.mask_token_key)})", ""),
        ("fc.weight", fc, ""),
    ]
    if report.draft_revision or report.target_revision:
        rows.append(("revision", _opt(report.draft_revision), _opt(report.target_revision)))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def resolution_table(report: CheckReport) -> Table:
    """Return how each runtime resolves the ids: capture indices, need, verdict."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name in ("runtime", "captures", "valid ids", "needs", "has", "verdict"):
        table.add_column(name)
    for res in report.resolutions:
        p = res.runtime
        verdict = report.runtime_verdict(p.name)
        table.add_row(
            Text(p.name),
            Text(f"{p.index_name} {fmt_ids(res.capture_indices)}"),
            Text(f"0–{res.max_valid_id} (N-{p.max_id_from_end})"),
            Text(f"≥ {res.layers_needed} layers"),
            Text(str(res.layers_present)),
            Text(verdict.value, style=VERDICT_STYLE[verdict]),
        )
    if not report.resolutions:
        for p in report.profiles:
            verdict = report.runtime_verdict(p.name)
            table.add_row(
                p.name,
                "—",
                "—",
                "—",
                str(report.target.num_hidden_layers),
                Text(verdict.value, style=VERDICT_STYLE[verdict]),
            )
    return table


def layer_picture(report: CheckReport) -> Text | None:
    """Return one line picturing the target's layers with tapped and missing ones marked."""
    if not report.resolutions:
        return None
    strictest = min(report.resolutions, key=lambda r: r.max_valid_id)
    n = strictest.layers_present
    tapped = set(strictest.layer_ids)
    line = Text(f"target layers 0–{n - 1} ")
    line.append("│")
    for layer in range(n):
        if layer in tapped and layer > strictest.max_valid_id:
            line.append("✗", style="bold red")
        elif layer in tapped:
            line.append("●", style="bold green")
        else:
            line.append("·", style="dim")
    line.append("│")
    beyond = [t for t in sorted(tapped) if t >= n]
    if beyond:
        for layer in range(n, max(beyond) + 1):
            line.append("✗" if layer in tapped else "░", style="bold red")
    legend = "\n" + " " * len(f"target layers 0–{n - 1} ") + "● tapped"
    rule = (
        f"the portable rule (t ≤ N-{strictest.runtime.max_id_from_end})"
        if report.runtime == PORTABLE
        else report.runtime
    )
    if beyond:
        legend += (
            f"  ✗ missing: {fmt_ids(beyond)}; {rule} needs ≥ {strictest.layers_needed} layers, "
            f"{n} present"
        )
    present_bad = [t for t in sorted(tapped) if strictest.max_valid_id < t < n]
    if present_bad:
        legend += f"  ✗ not capturable by {strictest.runtime.name}: {fmt_ids(present_bad)}"
    line.append(legend, style="dim")
    return line


def findings_table(report: CheckReport) -> Table | Text:
    """Return the findings, most severe first."""
    if not report.findings:
        return Text("No findings.", style="green")
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("rule", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("runtime", no_wrap=True)
    table.add_column("finding", overflow="fold")
    # Runtimes that share a range get the same message: show it once, listing the runtimes.
    merged: dict[tuple[str, str, str, str], list[str]] = {}
    for f in sorted(report.findings, key=lambda f: (order[f.severity], f.rule)):
        merged.setdefault((f.rule, f.severity.value, f.message, f.hint), []).append(
            f.runtime or "all"
        )
    for (rule_id, severity, message, hint), names in merged.items():
        body = Text(message)
        body.append(f"\nfix: {hint}", style="dim")
        table.add_row(
            Text(rule_id),
            Text(severity, style=SEVERITY_STYLE[Severity(severity)]),
            Text(", ".join(names)),
            body,
        )
    return table


def verdict_line(report: CheckReport) -> Text:
    """Return the closing verdict line with counts."""
    v = report.verdict
    line = Text("verdict: ")
    line.append(v.value, style=VERDICT_STYLE[v])
    # Runtimes that share a range share a message: count each distinct finding once.
    distinct = {(f.rule, f.severity, f.message) for f in report.findings}
    errors = sum(1 for _, sev, _ in distinct if sev is Severity.ERROR)
    warnings = sum(1 for _, sev, _ in distinct if sev is Severity.WARNING)
    line.append(f"  ({errors} errors, {warnings} warnings; runtime {report.runtime})")
    return line


def smoke_section(smoke: SmokeReport) -> RenderableType:
    """Return the smoke run: verdict line, tau, speed, histogram and per-position acceptance."""
    ok = smoke.passed
    head = Text("smoke run: ", style="bold")
    head.append("passed" if ok else "FAILED", style="bold green" if ok else "bold red")
    lossless = {True: "lossless", False: "NOT lossless", None: "sampling (not compared)"}
    if smoke.engine is not None and smoke.lossless is None and smoke.temperature <= 0:
        lossless[None] = "lossless not checked: no --baseline-endpoint"
    where = f"{smoke.device}, {smoke.dtype}"
    if smoke.engine is not None:
        where = engine_line(smoke.engine)
    head.append(
        f"  ({where}, block {smoke.block_size}, "
        f"{len(smoke.cases)} prompts; {lossless[smoke.lossless]})"
    )
    speed = (
        f"{smoke.tokens_per_second:.1f} tok/s vs "
        f"{smoke.baseline_tokens_per_second:.1f} tok/s plain = {smoke.speedup:.2f}x"
    )
    if smoke.engine is not None and smoke.engine.baseline_endpoint is None:
        speed = f"{smoke.tokens_per_second:.1f} tok/s (one request at a time, client clock)"
    tau = Text(
        f"tau = {smoke.mean_acceptance_length:.2f} tokens per target step "
        f"(minimum {smoke.min_acceptance:g}); {speed}"
    )
    hist = smoke.histogram()
    most = max(hist.values()) if hist else 1
    lines: list[RenderableType] = [head, tau]
    if hist or smoke.counts is None:
        lines.append(Text("acceptance lengths:"))
        for length in range(1, smoke.block_size + 1):
            count = hist.get(length, 0)
            bar = "█" * round(20 * count / most) if count else ""
            lines.append(Text(f"  {length:>2} │{bar} {count}"))
    else:
        lines.append(Text(f"acceptance lengths: not exposed by {smoke.device}"))
    rates = "  ".join(
        f"{j}:{r:.0%}" for j, r in enumerate(smoke.acceptance_rate_per_position, start=1)
    )
    lines.append(Text(f"accepted per draft position: {rates}"))
    return Group(*lines)


def engine_line(run: EngineRun) -> str:
    """Return where an engine smoke run ran: engine, version, mode, endpoint, parallelism."""
    parts = [f"{run.engine} {run.version}" if run.version else run.engine]
    parts.append(f"{run.mode} {run.endpoint}")
    if run.tensor_parallel or run.pipeline_parallel:
        parts.append(f"TP {run.tensor_parallel or 1} x PP {run.pipeline_parallel or 1}")
    return ", ".join(parts)


def render_table(report: CheckReport) -> RenderableType:
    """Return the full human report as one rich renderable."""
    parts: list[RenderableType] = [
        models_table(report),
        Text(""),
        resolution_table(report),
    ]
    picture = layer_picture(report)
    if picture is not None:
        parts.append(picture)
    parts += [Text(""), findings_table(report)]
    if report.smoke is not None:
        parts += [Text(""), smoke_section(report.smoke)]
    parts += [Text(""), verdict_line(report)]
    return Group(*parts)


def export_text(renderable: RenderableType, width: int = 120) -> str:
    """Render any report to plain text (for ``--output`` files and tests)."""
    console = Console(width=width, record=True, no_color=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def render_text(report: CheckReport, width: int = 120) -> str:
    """Render the human report to plain text."""
    return export_text(render_table(report), width)
