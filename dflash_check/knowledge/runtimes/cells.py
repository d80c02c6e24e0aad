"""Family cells as one merged view: derived from each release's facts, plus reviewed exceptions.

Where an engine's code is extracted (``Engine.extracted``: ``knowledge/data``), what it does on a
target family is read from that release's facts: whether the family's model class captures for
the method (``coverage.status``), where (vLLM's capture sites, SGLang's hook and its numbering),
and the engine's own refusal, each cited in that release's code. What the facts cannot show (a
hook that delegates to an inner model, a capture after the last layer inside a hook) is a
reviewed exception written by hand, over a range of releases (``reviewed.in_range``) and with its
reason. Engines whose code is not extracted keep their hand cells. The verdict (``on_family``)
and the docs read this view alone, so a new release's facts file changes both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.families import FAMILIES, TargetFamily
from dflash_check.knowledge.reviewed import in_range
from dflash_check.knowledge.runtimes.dflash_cells import DFLASH_HAND_CELLS, DFLASH_REVIEWED
from dflash_check.knowledge.runtimes.eagle3 import EAGLE3_REVIEWED, NUMBERINGS
from dflash_check.knowledge.runtimes.rows import FamilyCell

if TYPE_CHECKING:
    from dflash_check.knowledge.engines import Release
    from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts

HAND_CELLS: Mapping[str, tuple[FamilyCell, ...]] = MappingProxyType({"dflash": DFLASH_HAND_CELLS})
"""Each method's cells of engines whose code is not extracted (dflash-mlx), read by hand."""
REVIEWED_CELLS: Mapping[str, tuple[FamilyCell, ...]] = MappingProxyType(
    {"dflash": DFLASH_REVIEWED, "eagle3": EAGLE3_REVIEWED}
)
"""Each method's reviewed exceptions to the cells derived from the facts (``releases`` set)."""

# What the engine does when the family's class cannot capture, before its own words (quoted
# from the release's facts, per runner): one line per engine and method, not per family.
_NO_CAPTURE_HEAD: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        **dict.fromkeys(
            (("vllm", "dflash"), ("vllm", "eagle3")),
            "vLLM has no aux-hidden-state interface (SupportsEagle3) for this model class; the "
            "engine fails at load",
        ),
        ("sglang", "dflash"): "SGLang's model class has no DFlash capture hook; the worker "
        "fails at startup",
        ("sglang", "eagle3"): "SGLang's model class has no EAGLE-3 capture hook; the worker "
        "fails at startup",
    }
)

# The fields a reviewed exception may set over a derived cell.
_FIELDS = ("index_name", "shift", "max_id_from_end", "id_readings", "cannot_capture", "min_id")
_FIELDS += ("numbering",)


def family_named(name: str) -> TargetFamily | None:
    """Return the family called ``name`` (None: not in ``FAMILIES``)."""
    return next((f for f in FAMILIES if f.name == name), None)


def family_cell(
    engine: str, release: Release, method: str, family: str, runner: str | None = None
) -> FamilyCell | None:
    """Return what ``engine`` at ``release`` does on ``family`` for ``method``'s rows (None: no
    cell, the general convention): the cell derived from the release's facts (or the hand cell
    of an engine whose code is not extracted), with the reviewed exceptions in range applied."""
    fam = family_named(family)
    if fam is None or method not in REVIEWED_CELLS:
        return None  # an unknown family; or MTP, whose rows read no capture
    eng = ENGINES_BY_NAME[engine]
    cell: FamilyCell | None
    if eng.extracted:
        from dflash_check.knowledge import facts  # read only when a check selects the engine

        cell = derived_cell(facts.for_release(release), method, fam, runner)
    else:
        hand = HAND_CELLS.get(method, ())
        cell = next((c for c in hand if c.runtime == engine and family in c.families), None)
    for exc in REVIEWED_CELLS.get(method, ()):
        if exc.runtime != engine or family not in exc.families or exc.releases is None:
            continue
        if in_range(release.version, exc.releases, eng.releases):
            cell = _apply(cell, exc, family)
    return cell


def _apply(cell: FamilyCell | None, exc: FamilyCell, family: str) -> FamilyCell:
    """Return ``cell`` with the reviewed exception's fields over it, both citations kept."""
    if cell is None:
        return replace(exc, families=(family,))
    fields = {k: v for k in _FIELDS if (v := getattr(exc, k)) is not None}
    return replace(
        cell,
        **fields,
        citation=f"{cell.citation}; reviewed: {exc.citation}",
        releases=exc.releases,
        reason=exc.reason,
        verified=True,
    )


def derived_cell(
    found: ReleaseFacts, method: str, family: TargetFamily, runner: str | None = None
) -> FamilyCell | None:
    """Return the cell ``found``'s facts give ``family`` for ``method`` (None: the release
    registers none of its architectures, or its facts do not judge it)."""
    from dflash_check.knowledge.coverage import Capture, status

    tf = found.target(family.architectures)
    if tf is None:
        return None  # DF052 reports a target the release does not serve
    judged = status(found, (tf.architecture,), method, runner)
    if judged is None or judged.capture is Capture.NOT_SERVED:
        return None
    if judged.capture is Capture.NO_CAPTURE:
        head = _NO_CAPTURE_HEAD.get((found.engine, method), f"{found.spec} cannot capture")
        said = f": {judged.message} in {found.spec}" if judged.message else ""
        return FamilyCell(found.engine, (family.name,), judged.why, cannot_capture=head + said)
    shape = _shape(found, tf, method)
    return FamilyCell(
        found.engine,
        (family.name,),
        f"{tf.architecture}: {judged.why}{_where(found, tf, method)}",
        verified=judged.convention or bool(shape),
        **shape,  # type: ignore[arg-type]
    )


def _shape(found: ReleaseFacts, tf: TargetFacts, method: str) -> dict[str, object]:
    """Return the fields the facts give beyond "it captures": vLLM's range from where the class
    captures, SGLang's EAGLE-3 numbering from its hook's rule."""
    positions = {site.rsplit(":", 1)[1] for site in tf.sites}
    if positions and not positions & {"after-layer", "after-loop"}:
        # Captured only before each layer (DeepSeek-V3.2's CUDA path): no state after the last.
        return {"index_name": "aux layer (captured before the layer)", "max_id_from_end": 2}
    hook = tf.hooks.get(method)
    if hook is not None and hook.rule in NUMBERINGS:
        return {"numbering": hook.rule}
    return {}


def _where(found: ReleaseFacts, tf: TargetFacts, method: str) -> str:
    """Return where the class captures, as the facts give it: vLLM's capture sites (one path
    cited once), SGLang's hook rule."""
    if tf.sites:
        parts: list[str] = []
        last = None
        for site in tf.sites:
            path, line, position = site.rsplit(":", 2)
            cited = found.cite(f"{path}:{line}") if path != last else f":{line}"
            parts.append(f"{cited} ({position})")
            last = path
        return "; captures at " + ", ".join(parts)
    hook = tf.hooks.get(method)
    if hook is not None:
        inherited = f", inherited from {hook.inherited_from}" if hook.inherited_from else ""
        return f" ({hook.rule}{inherited})"
    return ""


def engines_with_cells(method: str) -> frozenset[str]:
    """Return the engines that have a cell for some family on ``method``'s rows: every engine
    whose code is extracted, and those with hand cells."""
    if method not in REVIEWED_CELLS:
        return frozenset()
    extracted = {e.name for e in ENGINES_BY_NAME.values() if e.extracted and method in e.methods}
    hand = {c.runtime for c in HAND_CELLS.get(method, ())}
    return frozenset(extracted | hand)


def cells_at(engine: str, release: Release, method: str) -> tuple[FamilyCell, ...]:
    """Return ``engine``'s cell on every family it has one for at ``release`` (the docs)."""
    found = (family_cell(engine, release, method, f.name) for f in FAMILIES)
    # A hand cell names several families: listed once.
    return tuple(dict.fromkeys(c for c in found if c is not None))
