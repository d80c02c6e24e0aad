"""The family cells of the runtime docs page: the runtime x family matrix, each cell's source,
and what changed in them between releases, all read from the merged view
(``knowledge/runtimes/cells.py``) the verdict uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflash_check.knowledge.runtimes import method_rows

if TYPE_CHECKING:
    from dflash_check.knowledge.engines import Release
    from dflash_check.knowledge.runtimes.rows import FamilyCell


def _cell_key(c: FamilyCell | None) -> str:
    """Return what a family cell decides, without its citations or quoted messages."""
    if c is None:
        return "no cell (general convention)"
    if c.cannot_capture is not None:
        return "no capture"
    what = [
        f"ids up to N-{c.max_id_from_end}" if c.max_id_from_end is not None else "",
        f"smallest id {c.min_id}" if c.min_id is not None else "",
        f"numbering `{c.numbering}`" if c.numbering else "",
    ]
    return "captures" + "".join(f", {w}" for w in what if w)


def cell_changes(engine: str, old: Release, new: Release) -> list[str]:
    """Return the families whose cell (the merged view) differs between two releases."""
    from dflash_check.knowledge.families import FAMILIES
    from dflash_check.knowledge.runtimes import engines_with_cells, family_cell

    changes = []
    for method in ("dflash", "eagle3"):
        if engine not in engines_with_cells(method):
            continue
        for fam in FAMILIES:
            was = _cell_key(family_cell(engine, old, method, fam.name))
            now = _cell_key(family_cell(engine, new, method, fam.name))
            if was != now:
                changes.append(f"on `{fam.name}` ({method}): {now} (was {was})")
    return changes


def cell_text(c: FamilyCell) -> str:
    """Return what a family cell says, in a few words (``general convention verified``)."""
    what = [
        f"no capture: {c.cannot_capture}" if c.cannot_capture else "",
        f"ids up to N-{c.max_id_from_end}" if c.max_id_from_end is not None else "",
        f"smallest id {c.min_id}" if c.min_id is not None else "",
        f"numbering `{c.numbering}`" if c.numbering else "",
    ]
    text = "; ".join(w for w in what if w) or (
        "general convention verified" if c.verified else "captures; range not read (general)"
    )
    if c.releases:
        text += f" (reviewed for `{c.releases}`: {c.reason})"
    return text


def cell_sources(method: str) -> list[str]:
    """Return one line per engine and family with a cell on ``method``'s rows, from the merged
    view at the engine's newest release (derived from its facts, reviewed exceptions applied)."""
    from dflash_check.knowledge.engines import registered
    from dflash_check.knowledge.runtimes import cells_at, engines_with_cells

    lines = []
    for e in registered():
        if e.name not in engines_with_cells(method):
            continue
        for c in cells_at(e.name, e.newest, method):
            fams = ", ".join(f"`{f}`" for f in c.families)
            lines.append(f"- `{e.newest.spec}` on {fams}: {cell_text(c)} ({c.citation})")
    return lines


def family_matrix_markdown() -> list[str]:
    """Return the runtime x target-family matrix (the merged view of ``cells.py``, each runtime
    at its newest release) as Markdown lines."""
    from dflash_check.knowledge.families import FAMILIES
    from dflash_check.knowledge.runtimes import on_family

    lines = [
        "",
        "## Per target family",
        "",
        "Engines capture hidden states in each target family's own model code, so the range "
        "and whether capture exists at all depend on the family (read from the target's "
        "`architectures`, then its model types). Each cell gives the valid ids and the source "
        "it was read from; `general` marks a family whose code was not read for that runtime "
        "(its general convention above is assumed). The Python references capture through "
        "transformers' generic hidden states, the same for every family.",
        "",
        "| family | architectures | "
        + " | ".join(f"`{p.name}`" for p in method_rows("dflash"))
        + " |",
        "|---|---|" + "---|" * len(method_rows("dflash")),
    ]
    for fam in FAMILIES:
        cells = []
        for p in method_rows("dflash"):
            q = on_family(p, fam.name)
            if q.cannot_capture is not None:
                text = "**no capture**"
            else:
                text = f"`0..N-{q.max_id_from_end}`"
            if p.family_independent:
                text += " (generic)"
            elif q.cell_citation is None:
                text += " (general)"
            cells.append(text)
        archs = ", ".join(f"`{a}`" for a in fam.architectures)
        lines.append(f"| {fam.title} (`{fam.name}`) | {archs} | " + " | ".join(cells) + " |")
    lines += ["", "Sources of the family cells (at each engine's newest release):", ""]
    lines += cell_sources("dflash")
    return lines
