"""What ``target_layer_ids`` mean in each serving runtime, as one data table.

A DFlash id ``t`` means "the output of target decoder layer ``t``" in the reference, but each
runtime captures hidden states at its own index (``t + shift``) and supports its own range of ids.
Everything the tool knows about a runtime lives in its method's rows: ``dflash.py`` (DFlash,
DFlash 2, DSpark), ``eagle3.py``, ``mtp.py``, of the types in ``rows.py``; rules, reports and
``docs/runtimes.md`` are all derived from them. What a runtime does on a target family is the
merged view of ``cells.py`` (derived from each release's extracted facts, plus reviewed
exceptions). This module looks rows up: by method and family, at a release (``release_for``),
and the ids a row reads from a draft. A ``--runtime`` selection picks its rows in
``knowledge/selection.py``, which imports this package, never the other way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from dflash_check.knowledge.citations import own_citations
from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.runtimes.cells import (
    REVIEWED_CELLS,
    cells_at,
    engines_with_cells,
    family_cell,
)
from dflash_check.knowledge.runtimes.dflash import PROFILES
from dflash_check.knowledge.runtimes.dflash_cells import DFLASH_HAND_CELLS
from dflash_check.knowledge.runtimes.eagle3 import EAGLE3_PROFILES, NUMBERINGS
from dflash_check.knowledge.runtimes.mtp import MTP_PROFILES
from dflash_check.knowledge.runtimes.rows import (
    AUX_READING,
    DEFAULT_IDS,
    SGLANG_DEFAULT_MASK_TOKEN,
    IdReading,
    RuntimeProfile,
)

if TYPE_CHECKING:
    from dflash_check.knowledge.engines import Release
    from dflash_check.views import DraftView

# The names other rooms import from the table as a whole (each is defined once, where named).
__all__ = [
    "AUX_READING",
    "DFLASH_HAND_CELLS",
    "EAGLE3_PROFILES",
    "METHOD_PROFILES",
    "METHOD_ROWS_TITLE",
    "NUMBERINGS",
    "PROFILES",
    "PROFILES_BY_NAME",
    "SGLANG_DEFAULT_MASK_TOKEN",
    "IdReading",
    "ResolvedIds",
    "RunnerRemoved",
    "RuntimeProfile",
    "SelectionError",
    "at_release",
    "cells_at",
    "engines_with_cells",
    "family_cell",
    "method_rows",
    "method_rows_title",
    "on_family",
    "portable_max_id_from_end",
    "read_id_keys",
    "release_for",
    "resolve_ids",
    "top_level_only_keys",
]


class SelectionError(ValueError):
    """A runtime selection that names no known runtime, release or runner (a usage error).

    Defined with the table rather than in ``knowledge/selection.py``, which raises it too:
    ``release_for`` raises it (``RunnerRemoved``), and the selection imports this package."""


class RunnerRemoved(SelectionError):
    """A runner the named release no longer has (``vllm-v1==0.34.0``)."""


def release_for(profile: RuntimeProfile, version: str | None) -> Release:
    """Return the release of ``profile``'s engine that ``version`` names: None is the newest
    release that has the profile's runner (``vllm-v1`` alone is the last release with V1).

    Its citations are its own (``citations.own_citations``): a text it inherits from a
    reviewed range cites its facts, or says which release was read. Raise ``UnknownRelease``
    (the message lists the known ones) or ``RunnerRemoved``.
    """
    eng = ENGINES_BY_NAME[profile.engine_name]
    if version is None:
        having = [r for r in eng.releases if r.has_runner(profile.runner)]
        return own_citations(having[-1] if having else eng.newest, eng)
    rel = own_citations(eng.release(version), eng)
    if not rel.has_runner(profile.runner):
        removed = rel.removed_runners.get(profile.runner or "", "it has no such runner")
        with_runner = [r.spec for r in eng.releases if r.has_runner(profile.runner)]
        raise RunnerRemoved(
            f"{profile.name} (Model Runner {profile.runner}) does not exist in {rel.spec}: "
            f"{removed}; it exists in {', '.join(with_runner)}"
        )
    return rel


def on_family(profile: RuntimeProfile, family: str | None) -> RuntimeProfile:
    """Return ``profile`` as it behaves on a target of ``family`` (None: unknown family), from
    the merged view of its release (``cells.family_cell``)."""
    if profile.family_independent:
        return replace(profile, family=family, cell_citation=profile.citation)
    # No release pinned: the newest that has the profile's runner, as a check of it judges
    # (vllm-v1 alone is the last release with Model Runner V1), so the docs say what it does.
    release = profile.release or release_for(profile, None)
    key = (profile.method, family)
    own = next((v for k, v in release.family_overrides.items() if (k.method, k.family) == key), {})
    cell = (
        None
        if family is None
        else family_cell(profile.engine_name, release, profile.method, family, profile.runner)
    )
    if cell is None:
        # A release may still differ on this family (llama.cpp 0c1e57098's layer-N input).
        return replace(profile, family=family, **own)
    overrides = {
        key: value
        for key in (*CELL_FIELDS, "min_id", "numbering")
        if (value := getattr(cell, key)) is not None
    }
    overrides.update(own)
    # A capture the facts show but whose range they do not keeps the convention, unverified.
    citation = cell.citation if cell.verified else None
    return replace(profile, family=family, cell_citation=citation, **overrides)


CELL_FIELDS = ("index_name", "shift", "max_id_from_end", "id_readings", "cannot_capture")
"""The ``RuntimeProfile`` fields a family cell may set (with ``min_id`` and ``numbering``)."""


METHOD_PROFILES: dict[str, tuple[RuntimeProfile, ...]] = {
    "dflash": PROFILES,
    "eagle3": EAGLE3_PROFILES,
    "mtp": MTP_PROFILES,
}
"""Each drafting method's rows of the runtime table (DFlash's rows cover DFlash 2 and DSpark):
the one table every selection, name list and check reads at call time, so that a runtime is
added by its row alone."""
METHOD_ROWS_TITLE: dict[str, str] = {
    "dflash": "DFlash drafts",
    "eagle3": "EAGLE-3 heads",
    "mtp": "NextN checkpoints",
}
"""What each method's rows read, in messages (a runtime asked for a method it has no row of)."""
PROFILES_BY_NAME: dict[str, RuntimeProfile] = {p.name: p for p in PROFILES}


@cache
def read_id_keys() -> tuple[str, ...]:
    """Return every key some runtime reads layer ids from: what a normaliser records (the
    tables are constant, so it is computed once per process)."""
    cells = (*DFLASH_HAND_CELLS, *(c for table in REVIEWED_CELLS.values() for c in table))
    readings = [r for rows in METHOD_PROFILES.values() for p in rows for r in p.id_readings]
    readings += [r for c in cells for r in c.id_readings or ()]
    return tuple(dict.fromkeys(r.key for r in readings))


def top_level_only_keys() -> tuple[str, ...]:
    """Return every key some runtime requires at the top level of a draft's config.json."""
    return tuple(
        dict.fromkeys(
            k for rows in METHOD_PROFILES.values() for p in rows for k in p.top_level_only
        )
    )


def method_rows(method: str) -> tuple[RuntimeProfile, ...]:
    """Return the runtime rows of a draft method (DFlash 2 and DSpark use DFlash's rows)."""
    return METHOD_PROFILES.get(method, METHOD_PROFILES["dflash"])


def method_rows_title(method: str) -> str:
    """Return what a method's rows read (``DFlash drafts`` for DFlash 2 and DSpark too)."""
    return METHOD_ROWS_TITLE.get(method, METHOD_ROWS_TITLE["dflash"])


def at_release(profile: RuntimeProfile, version: str | None = None) -> RuntimeProfile:
    """Return ``profile`` as the named release of its engine behaves (None: the newest release
    that has its runner): the release's own differences applied, the release recorded."""
    rel = release_for(profile, version)
    key = (profile.method, profile.name)
    fields = dict(next((v for k, v in rel.overrides.items() if (k.method, k.profile) == key), {}))
    if "id_keys" in fields:  # an engine module names plain keys (it cannot build IdReadings)
        fields["id_readings"] = tuple(IdReading(k) for k in fields.pop("id_keys"))
    return replace(profile, release=rel, **fields)


def portable_max_id_from_end() -> int:
    """Return the strictest ``N - k`` bound over the portable profiles: the portable rule."""
    return max(p.max_id_from_end for p in METHOD_PROFILES["dflash"] if p.portable)


@dataclass(frozen=True)
class ResolvedIds:
    """The ids one runtime feeds the draft, read the way that runtime reads them."""

    key: str | None
    """The key it read them from (None: it guessed, see ``guessed``)."""
    raw: tuple[int, ...]
    """The list as written under ``key`` (the guess, for a guess)."""
    ids: tuple[int, ...]
    """The same in layer-output numbering (``t``: the output of target layer t)."""
    guessed: bool = False
    """Whether the runtime found no ids and used its default."""


def resolve_ids(profile: RuntimeProfile, draft: DraftView, num_layers: int) -> ResolvedIds | None:
    """Return the ids ``profile`` reads from ``draft`` on a target of ``num_layers`` layers.

    None when the runtime ends up with no usable list: it fails without ids (the rules say
    how), or the list it reads is empty or negative (DF002 reports those).
    """
    # Keys as the engine names them once it reads the draft's root (text_config) as its top.
    sources = {draft.rootless(s.key): s.ids for s in draft.id_sources}
    # A key read one way for some drafts (vLLM: DeepSeek-V4.1 DSpark ids are aux indices;
    # SGLang: +1 on a Muse target for the drafts it remaps) is read that way instead of the
    # general way.
    readings = profile.id_readings
    # A reading exclusive to some drafts is all the runtime reads for them, with no default.
    only = next((r for r in readings if r.exclusive and r.applies(draft)), None)
    if only is not None:
        readings = (only,)
    specific = {r.key for r in readings if r.conditional and r.applies(draft)}
    for reading in readings:
        if reading.key not in sources or not reading.applies(draft):
            continue
        if not reading.conditional and reading.key in specific:
            continue
        raw = sources[reading.key]
        if raw is None or not raw:
            if profile.first_present:
                # dict.get readers take a null (or an empty list) as the value: the
                # references fail on it, SGLang falls back to its formula.
                if profile.null_ids_fail or raw is not None:
                    return None
                break
            continue  # vLLM: the first non-empty list wins
        if any(t < 0 for t in raw):
            return None
        shift = reading.to_output
        if profile.numbering is not None:
            shift = NUMBERINGS[profile.numbering].to_output(shift, raw, num_layers)
        return ResolvedIds(draft.key(reading.key), raw, tuple(t + shift for t in raw))
    guess = DEFAULT_IDS[profile.default_ids](num_layers, draft) if profile.default_ids else None
    if guess is None or only is not None:
        return None
    return ResolvedIds(None, guess, guess, guessed=True)
