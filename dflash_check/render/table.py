"""The human report: the answer first, then one block per diagnostic (as rustc and ruff print).

``--verbose`` adds the full tables (both models side by side, each runtime's layer resolution).
Every line is wrapped here at spaces, so no name, id, path or number is split across lines.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dflash_check.check.report import CheckReport, Severity, Verdict
from dflash_check.check.rules import ALL_RULES, fmt_ids
from dflash_check.knowledge.runtimes import PORTABLE
from dflash_check.render.diagnostics import (
    Diagnostic,
    answer,
    count_text,
    diagnostics,
    plural,
    runtime_text,
    strictest,
    wrap,
)
from dflash_check.sanitize import safe_console, visible
from dflash_check.views import DFlashFacts

if TYPE_CHECKING:  # types only: a report without a smoke run never loads their module
    from dflash_check.smoke.report import EngineRun, SmokeReport

RULES_TITLE = {r.id: r.title for r in ALL_RULES}

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


def model_rows(report: CheckReport) -> list[tuple[str, str, str]]:
    """Return (fact, draft value, target value) for every compared fact."""
    d, t = report.draft, report.target
    f = d.dflash or DFlashFacts()  # the block and mask rows read "–" for other methods
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
        ("block_size", f"{_opt(f.block_size)} ({_opt(f.block_size_key)})", ""),
        ("mask_token_id", f"{_opt(f.mask_token_id)} ({_opt(f.mask_token_key)})", ""),
        ("fc.weight", fc, ""),
    ]
    if d.method == "eagle3":
        # No block or mask; the raw lists under each key and the reduced vocabulary instead.
        sources = "; ".join(f"{src.key} {_opt(src.ids)}" for src in d.id_sources) or "none"
        rows[5:8] = [
            ("layer id keys", sources, ""),
            ("draft vocab", _opt(d.draft_vocab_size), ""),
            ("target hidden", _opt(d.target_hidden_size), str(t.hidden_size)),
        ]
        rows[1] = ("layers", _opt(d.num_hidden_layers), f"{t.num_hidden_layers} ({t.layers_key})")
    if report.draft_revision or report.target_revision:
        rows.append(("revision", _opt(report.draft_revision), _opt(report.target_revision)))
    return rows


def models_table(report: CheckReport, width: int = 120) -> RenderableType:
    """Return the two models side by side, one row per compared fact.

    Side by side needs room for the longest value of each model; narrower terminals get the
    two models one under the other, so that no name or key is folded mid-word.
    """
    rows = model_rows(report)
    fact_width = max(len(r[0]) for r in rows) + 2
    widest = [max(len(r[i]) for r in rows) for i in (1, 2)]
    if fact_width + sum(widest) + 4 <= width:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column("", style="bold", no_wrap=True)
        table.add_column(Text(visible(f"draft  {report.draft.name}")))
        table.add_column(Text(visible(f"target  {report.target.name}")))
        for row in rows:
            table.add_row(*(Text(visible(cell)) for cell in row))
        return table
    lines: list[Text] = []
    for i, (role, name) in enumerate(
        (("draft", report.draft.name), ("target", report.target.name)), start=1
    ):
        lines.append(Text(visible(f"{role} {name}"), style="bold"))
        for row in rows:
            if row[i]:
                first = f"  {row[0]:<{fact_width}}"
                lines += [Text(s) for s in wrap(row[i], width, first, " " * len(first))]
    return Group(*lines)


INDEX_COLUMN = "index of id t"
"""The resolution table's column of capture indices: each cell names its numbering."""

INDEX_LEGEND = (
    f"{INDEX_COLUMN}: each runtime's own numbering of the draft's layer id t (layer output t "
    "is hidden_states[t+1], hidden_states[0] being the embeddings)"
)


def numbered(shift: int, indices: list[int] | tuple[int, ...]) -> str:
    """Return capture indices labelled with their numbering (``t+1 [2, 10]``): runtimes count
    from different origins, so a bare list would read as the draft's own ids."""
    return f"{f't+{shift}' if shift else 't'} {fmt_ids(indices)}"


def resolution_table(report: CheckReport, width: int = 120) -> Table:
    """Return how each runtime resolves the ids: capture indices, need, verdict.

    Below 100 columns the prose column (what each runtime's index means) is left out rather
    than squeezed; ``dflash-check runtimes`` has it, and the index column's cells still
    name their numbering (``t`` or ``t+1``), as the legend under the table says. The target's
    layer count is left out there too: it is the same on every row, and the valid-id range
    (``0–35 (N-1)``) and the models table above already give it.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    columns = ["runtime", "captures as", INDEX_COLUMN, "valid ids", "needs", "has", "verdict"]
    prose = width >= 100
    if not prose:
        columns.remove("captures as")
        columns.remove("has")
    for name in columns:
        # Only the prose column may wrap; ids, ranges and verdicts stay whole.
        table.add_column(name, no_wrap=name != "captures as")
    resolved = {res.runtime.name: res for res in report.resolutions}
    for p in report.profiles:
        verdict = report.runtime_verdict(p.name)
        res = resolved.get(p.name)
        if res is None:
            # No list reaches this runtime (it fails without ids, or the ids are malformed):
            # the findings say why; the row keeps the runtime visible.
            cells = [
                Text(visible(p.name)),
                Text(visible(p.index_name)),
                *(Text("—") for _ in range(3)),
            ]
        else:
            cells = [
                Text(visible(p.name)),
                Text(visible(p.index_name)),
                Text(
                    numbered(p.shift, res.capture_indices) + (" (default)" if res.guessed else "")
                ),
                Text(f"0–{res.max_valid_id} (N-{p.max_id_from_end})"),
                Text(f"≥ {res.layers_needed} layers"),
            ]
        cells += [
            Text(str(report.target.num_hidden_layers)),
            Text(verdict.value, style=VERDICT_STYLE[verdict]),
        ]
        table.add_row(*(cells if prose else cells[:1] + cells[2:5] + cells[6:]))
    return table


MAX_PICTURE_CELLS = 100
"""Widest layer picture drawn; longer stretches without a tapped layer are elided as '…'."""


def picture_cells(n: int, tapped: list[int], max_valid: int) -> list[tuple[str, str]]:
    """Return the picture's cells: one per layer (with '│' at both ends of the N present
    ones), eliding untapped stretches as '…' so its width stays bounded whatever N or the
    ids are (a target of 2^31-1 layers, an id of 2^31-1)."""
    last = max(n - 1, tapped[-1] if tapped else 0)
    wanted = set(tapped[: MAX_PICTURE_CELLS // 2])
    cells: list[tuple[str, str]] = [("│", "")]

    def cell(layer: int) -> tuple[str, str]:
        if layer >= n:
            return ("✗", "bold red") if layer in wanted else ("░", "bold red")
        if layer in wanted:
            return ("✗", "bold red") if layer > max_valid else ("●", "bold green")
        return ("·", "dim")

    # Draw every layer when it fits; else the tapped ones, the ends, and '…' between.
    if last + 1 <= MAX_PICTURE_CELLS - 2:
        marks = list(range(last + 1))
    else:
        marks = sorted(wanted | {0, n - 1, n, last} - {-1})
    previous = -1
    for layer in marks:
        if layer > last:
            continue
        if layer == n:
            cells.append(("│", ""))
        if layer - previous > 1:
            cells.append(("…", "dim" if layer <= n else "bold red"))
        cells.append(cell(layer))
        previous = layer
    if last < n:
        cells.append(("│", ""))
    if len(tapped) > len(wanted):
        cells.append((f" (+{len(tapped) - len(wanted)} more)", "dim"))
    return cells


def layer_picture(report: CheckReport, width: int) -> list[Text]:
    """Return a line picturing the target's layers (tapped and missing ones marked) and a
    legend wrapped under it."""
    res = strictest(report)
    if res is None:
        return []
    n = res.layers_present
    tapped = set(res.layer_ids)
    prefix = f"target layers 0–{n - 1} "
    line = Text(prefix)
    for char, style in picture_cells(n, sorted(tapped), res.max_valid_id):
        line.append(char, style=style)
    beyond = [t for t in sorted(tapped) if t >= n]
    rule = (
        f"the portable rule (t ≤ N-{res.runtime.max_id_from_end})"
        if report.runtime == PORTABLE
        else report.runtime
    )
    legend = "● tapped"
    if "░" in line.plain:
        legend += "  ░ past the target's last layer"
    if beyond:
        legend += (
            f"  ✗ missing: {fmt_ids(beyond)}; {rule} needs ≥ {res.layers_needed} layers, "
            f"{n} present"
        )
    present_bad = [t for t in sorted(tapped) if res.max_valid_id < t < n]
    if present_bad:
        legend += f"  ✗ not capturable by {res.runtime.name}: {fmt_ids(present_bad)}"
    indent = " " * min(len(prefix), width // 3)
    return [line, *(Text(s, style="dim") for s in wrap(legend, width, indent, indent))]


def smoke_lines(smoke: SmokeReport, width: int) -> list[Text]:
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
    out = [Text(s) for s in wrap(head_text, width, "", "  ")]
    out[0].stylize("bold", 0, 10)
    out[0].stylize("bold green" if ok else "bold red", 10, 10 + len(status))
    tau = (
        f"tau = {smoke.mean_acceptance_length:.2f} tokens per target step "
        f"(minimum {smoke.min_acceptance:g})."
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
    out += [Text(s) for s in wrap(tau, width, "  ", "  ")]
    out += [Text(s) for s in wrap(speed, width, "  ", "  ")]
    if smoke.engine is not None:
        out += [Text(s) for s in wrap(draft_line(smoke.engine), width, "  ", "    ")]
    if smoke.prompts_note:
        out += [
            Text(s, style="dim") for s in wrap(f"Prompts: {smoke.prompts_note}.", width, "  ", "  ")
        ]
    hist = smoke.histogram()
    most = max(hist.values()) if hist else 1
    if hist or smoke.counts is None:
        out.append(Text("  acceptance lengths:"))
        bar_width = max(5, min(20, width - 20))
        for length in range(1, smoke.block_size + 1):
            count = hist.get(length, 0)
            bar = "█" * round(bar_width * count / most) if count else ""
            out.append(Text(f"    {length:>2} │{bar} {count}"))
    else:
        out.append(Text(f"  acceptance lengths: not exposed by {smoke.device}"))
    rates = "  ".join(
        f"{j}:{r:.0%}" for j, r in enumerate(smoke.acceptance_rate_per_position, start=1)
    )
    out += [Text(s) for s in wrap(f"accepted per draft position: {rates}", width, "  ", "    ")]
    if smoke.rollbacks:
        rollback = f"target cache rollback: {rollback_summary(smoke)}"
        out += [Text(s) for s in wrap(rollback, width, "  ", "    ")]
    return out


def failure_lines(smoke: SmokeReport, width: int) -> list[Text]:
    """Return a launched engine's failure: the stage, the log's root cause, the log."""
    failure = smoke.failure
    assert failure is not None
    head = f"smoke run FAILED: {smoke.device} failed at the {failure.stage}"
    out = [Text(s) for s in wrap(head, width, "", "  ")]
    out[0].stylize("bold", 0, 10)
    out[0].stylize("bold red", 10, 16)
    why = f"engine log: {failure.root_cause}" if failure.root_cause else failure.message
    out += [Text(s) for s in wrap(why, width, "  ", "    ")]
    out += [Text(s, style="dim") for s in wrap(f"log: {failure.log}", width, "  ", "    ")]
    return out


def draft_line(run: EngineRun) -> str:
    """Return which draft the engine served, and how that is known (or that it is not)."""
    if run.draft_evidence == "server":
        return f"served draft: {run.draft_model} (reported by the server)"
    if run.draft_evidence == "launch":
        return f"served draft: {run.draft_model} (dflash-check started the engine with it)"
    return (
        f"served draft not verified: {run.engine} does not report its draft (vLLM names it "
        "only in /server_info, with VLLM_SERVER_DEV_MODE=1); the counters are those of "
        "whatever draft the server loaded"
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


def identity_lines(report: CheckReport, width: int) -> list[Text]:
    """Return the target-identity evidence when some of it disagrees (known facts only)."""
    if not any(e.agrees is False for e in report.identity):
        return []
    marks = {True: "✓", False: "✗", None: "?"}
    facts = [
        f"{e.fact} {e.draft} vs {e.target} {marks[e.agrees]}"
        for e in report.identity
        if e.draft is not None
    ]
    text = "target identity: " + "; ".join(facts)
    return [Text(s, style="dim") for s in wrap(text, width, "", "  ")]


def not_checked_lines(report: CheckReport, width: int) -> list[Text]:
    """Return the rules that could not be applied, if any."""
    # A finding that already says so ("fc width not verified (DF005 not checked)") is the one
    # line for that rule: the list below names only the others.
    said = " ".join(f.message for f in report.findings)
    left = [n for n in report.not_checked if f"{n.rule} not checked" not in said]
    if not left:
        return []
    text = "not checked: " + "; ".join(f"{n.rule} ({n.reason})" for n in left)
    return [Text(s, style="yellow") for s in wrap(text, width, "", "  ")]


def _location(report: CheckReport, diag: Diagnostic) -> str:
    """Return where a diagnostic's field lives: the file (path or Hub repo@commit) and field."""
    target = diag.model == "target"
    view_name = report.target.name if target else report.draft.name
    location = (report.target_location if target else report.draft_location) or view_name
    field = diag.field
    if field is None:
        return location
    if field.endswith(".json") and location.endswith("config.json"):
        return location[: -len("config.json")] + field
    if not target and field == report.draft.fc_weight_name:
        return f"{view_name} safetensors header: {field}"
    if field == "base_model":
        return f"{view_name} model card: {field}"
    return f"{location}: {field}"


def diagnostic_block(report: CheckReport, diag: Diagnostic, width: int) -> list[Text]:
    """Return one diagnostic as rustc does: headline, location, per-runtime notes, help."""
    label = f"{diag.severity.value}[{diag.rule}]"
    headline = diag.headline or RULES_TITLE.get(diag.rule, diag.rule)
    lines = [Text(line) for line in wrap(f"{label}: {headline}", width, "", "  ")]
    lines[0].stylize(SEVERITY_STYLE[diag.severity], 0, len(label))
    lines[0].stylize("bold", len(label))
    for line in lines[1:]:
        line.stylize("bold")
    out = lines
    location = _location(report, diag)
    if diag.model in ("draft", "target") and len(location.split(": ")[0]) > width - 6:
        # A path longer than the line (the headline already names the folder) would take two
        # lines in every block: name the file as the draft's or the target's instead.
        file, _, field = location.rpartition("/")[2].partition(": ")
        location = f"the {diag.model}'s {file}" + (f": {field}" if field else "")
    out += [Text(s, style="dim") for s in wrap(location, width, "  --> ", "      ")]
    if diag.per_runtime:
        for names, tail in diag.per_runtime:
            text = tail if tail.startswith(", ".join(names)) else f"{', '.join(names)}: {tail}"
            out += [Text(s) for s in wrap(text, width, "   = ", "     ")]
    elif diag.runtimes:
        out += [
            Text(s) for s in wrap(f"runtimes: {', '.join(diag.runtimes)}", width, "   = ", "     ")
        ]
    help_lines = [Text(s) for s in wrap(f"help: {diag.hint}", width, "   = ", "     ")]
    help_lines[0].stylize("bold cyan", 5, 10)
    return out + help_lines


def answer_lines(report: CheckReport, diags: tuple[Diagnostic, ...], width: int) -> list[Text]:
    """Return the report's first lines: the verdict, the deciding numbers, the counts."""
    verdict, sentences = answer(report)
    head = [Text(s) for s in wrap(f"{verdict}: {sentences[0]}", width, "", "  ")]
    head[0].stylize(VERDICT_STYLE[report.verdict], 0, len(verdict))
    counts = count_text(diags) if diags else "no findings"
    # The counts come right after the verdict: with long paths the why can take lines, and
    # the answer must stay on the first screen.
    out = head + [
        Text(s, style="dim")
        for s in wrap(
            f"{counts}; "
            + (
                "portable check (every runtime)."
                if report.runtime == PORTABLE
                else f"checked for {runtime_text(report)}."
            ),
            width,
            "  ",
            "  ",
        )
    ]
    for sentence in sentences[1:]:
        out += [Text(s) for s in wrap(sentence, width, "  ", "  ")]
    return out


def feeds_lines(report: CheckReport, width: int) -> list[Text]:
    """Return, for an EAGLE-3 head, the tensors each runtime feeds it: the key it reads and
    the raw list (or its default), the numbering, and the HF ``hidden_states`` indices."""
    if report.draft.method != "eagle3":
        return []
    out = [Text("tensors each runtime feeds the head (HF hidden_states[k]):", style="bold")]
    name_width = max((len(p.name) for p in report.profiles), default=0)
    by_name = {r.runtime.name: r for r in report.resolutions}
    for p in report.profiles:
        res = by_name.get(p.name)
        verdict = report.runtime_verdict(p.name)
        if res is None:
            text = f"{p.name:<{name_width}}  no key it reads is present, and {p.without_ids}"
        else:
            fed = res.hidden_states
            if res.guessed:
                how = f"default {fmt_ids(res.capture_indices)}"
            else:
                step = fed[0] - res.raw_ids[0] if res.raw_ids else 0
                how = f"{res.key} {fmt_ids(res.raw_ids)} " + ("raw" if step == 0 else f"{step:+d}")
            text = f"{p.name:<{name_width}}  {how} → hidden_states{fmt_ids(list(fed))}"
        lines = [Text(line) for line in wrap(f"{text}  {verdict.value}", width, "  ", "    ")]
        lines[-1].stylize(VERDICT_STYLE[verdict], len(lines[-1]) - len(verdict.value))
        out += lines
    return out


def verbose_parts(report: CheckReport, width: int) -> list[RenderableType]:
    """Return the full tables of ``--verbose``: models side by side, per-runtime resolution."""
    if report.draft.method == "eagle3":
        # The per-runtime feeds block (always printed) is the EAGLE-3 layer picture.
        return [models_table(report, width)]
    parts: list[RenderableType] = [
        models_table(report, width),
        Text(""),
        resolution_table(report, width),
    ]
    parts += [Text(s, style="dim") for s in wrap(INDEX_LEGEND, width, "", "  ")]
    picture = layer_picture(report, width)
    if picture:
        parts += picture
    return parts


def render_table(report: CheckReport, width: int = 80, verbose: bool = False) -> RenderableType:
    """Return the human report: the answer first, then one block per diagnostic.

    Every line is wrapped here, at spaces only, to ``width``; print it with ``crop=False`` so
    that a token wider than the terminal stays whole.
    """
    diags = diagnostics(report)
    parts: list[RenderableType] = []
    if verbose:
        parts += [*verbose_parts(report, width), Text("")]
    parts += answer_lines(report, diags, width)
    feeds = feeds_lines(report, width)
    if feeds:
        parts += [Text(""), *feeds]
    for diag in diags:
        parts += [Text(""), *diagnostic_block(report, diag, width)]
    # The identity evidence is in --verbose: its disagreements are findings already.
    extra = [*(identity_lines(report, width) if verbose else []), *not_checked_lines(report, width)]
    if extra:
        parts += [Text(""), *extra]
    if report.smoke is not None:
        parts += [Text(""), *smoke_lines(report.smoke, width)]
    for part in parts:
        if isinstance(part, Text):
            part.no_wrap = True
            part.overflow = "ignore"
    return Group(*parts)


def export_text(renderable: RenderableType, width: int = 120) -> str:
    """Render any report to plain text (for ``--output`` files and tests)."""
    console = safe_console(width=width, record=True, no_color=True, file=io.StringIO())
    console.print(renderable, crop=False)
    return "\n".join(line.rstrip() for line in console.export_text().split("\n"))


def render_text(report: CheckReport, width: int = 80, verbose: bool = False) -> str:
    """Render the human report to plain text at ``width`` columns."""
    return export_text(render_table(report, width, verbose), width)
