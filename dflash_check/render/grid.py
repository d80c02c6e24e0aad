"""The ``--verbose`` grids of the human report: both models side by side, each runtime's layer
resolution (the index it captures for each id) and the picture of the target's layers.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dflash_check.check.report import CheckReport
from dflash_check.check.rules import fmt_ids
from dflash_check.render.diagnostics import VERDICT_STYLE, strictest, wrap
from dflash_check.sanitize import visible
from dflash_check.views import DFlashFacts, DraftView


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
            f"{_opt(d.num_hidden_layers)}{_rooted(d, 'num_hidden_layers')} (trained on "
            f"{_opt(d.num_target_layers)}-layer target)",
            f"{t.num_hidden_layers} ({t.layers_key})",
        ),
        ("hidden size", str(d.hidden_size) + _rooted(d, "hidden_size"), str(t.hidden_size)),
        ("vocab size", _opt(d.vocab_size) + _rooted(d, "vocab_size"), str(t.vocab_size)),
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


def _rooted(d: DraftView, name: str) -> str:
    """Name where a draft read at a nested root (``text_config``) stated ``name``; nothing for
    the usual top-level draft, whose rows stay as they were."""
    return f" ({d.key(name)})" if d.config_root else ""


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


def picture_cells(
    n: int, tapped: list[int], max_valid: int, max_cells: int = MAX_PICTURE_CELLS
) -> list[tuple[str, str]]:
    """Return the picture's cells: one per layer (with '│' at both ends of the N present
    ones), eliding untapped stretches as '…' when they do not fit in ``max_cells``, so its
    width stays bounded whatever N or the ids are (a target of 2^31-1 layers, an id of
    2^31-1)."""
    last = max(n - 1, tapped[-1] if tapped else 0)
    wanted = set(tapped[: max_cells // 2])
    cells: list[tuple[str, str]] = [("│", "")]

    def cell(layer: int) -> tuple[str, str]:
        if layer >= n:
            return ("✗", "bold red") if layer in wanted else ("░", "bold red")
        if layer in wanted:
            return ("✗", "bold red") if layer > max_valid else ("●", "bold green")
        return ("·", "dim")

    # Draw every layer when it fits; else the tapped ones, the ends, and '…' between.
    if last + 1 <= max_cells - 2:
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
    # One cell per layer while that fits the line; longer targets are drawn elided.
    cells = min(MAX_PICTURE_CELLS, max(width - len(prefix), 24))
    for char, style in picture_cells(n, sorted(tapped), res.max_valid_id, cells):
        line.append(char, style=style)
    beyond = [t for t in sorted(tapped) if t >= n]
    rule = (
        f"the portable rule (t ≤ N-{res.runtime.max_id_from_end})"
        if report.selection.portable_only
        else report.selection.spec
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
