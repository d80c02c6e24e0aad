"""What ``target_layer_ids`` mean in each serving runtime, as one data table.

A DFlash id ``t`` means "the output of target decoder layer ``t``" in the reference, but each
runtime captures hidden states at its own index (``t + shift``) and supports its own range of ids.
Everything the tool knows about a runtime lives in its method's rows: ``dflash.py`` (DFlash,
DFlash 2, DSpark), ``eagle3.py``, ``mtp.py``, of the types in ``rows.py``; rules, reports and
``docs/runtimes.md`` are all derived from them. This module looks rows up: by method and
family, by a ``--runtime`` selection and release, and the ids a row reads from a draft.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines import ENGINES_BY_NAME, INSTALLED, Release
from dflash_check.knowledge.runtimes.dflash import FAMILY_CELLS, PROFILES
from dflash_check.knowledge.runtimes.eagle3 import EAGLE3_CELLS, EAGLE3_PROFILES, NUMBERINGS
from dflash_check.knowledge.runtimes.mtp import MTP_PROFILES
from dflash_check.knowledge.runtimes.rows import (
    AUX_READING,
    DEFAULT_IDS,
    SGLANG_DEFAULT_MASK_TOKEN,
    FamilyCell,
    IdReading,
    RuntimeProfile,
)

if TYPE_CHECKING:
    from dflash_check.views import DraftView

# The names other rooms import from the table as a whole (each is defined once, where named).
__all__ = [
    "AUX_READING",
    "CELLS_BY_METHOD",
    "EAGLE3_CELLS",
    "EAGLE3_PROFILES",
    "FAMILY_CELLS",
    "METHOD_PROFILES",
    "METHOD_ROWS_TITLE",
    "NUMBERINGS",
    "PORTABLE",
    "PROFILES",
    "PROFILES_BY_NAME",
    "RELEASE_SEP",
    "SGLANG_DEFAULT_MASK_TOKEN",
    "IdReading",
    "ResolvedIds",
    "RunnerRemoved",
    "RuntimeProfile",
    "SelectionError",
    "at_release",
    "cell_for",
    "join_selection",
    "method_rows",
    "method_rows_title",
    "on_family",
    "parse_part",
    "portable_max_id_from_end",
    "read_id_keys",
    "release_for",
    "resolve_ids",
    "runtime_names",
    "select_profiles",
    "selection_names",
    "split_spec",
    "top_level_only_keys",
]

PORTABLE = "portable"
"""The pseudo-runtime that must satisfy every profile (the default of ``--runtime``)."""


def cell_for(runtime: str, family: str | None, method: str = "dflash") -> FamilyCell | None:
    """Return the cell of engine ``runtime`` on ``family`` for ``method``, if there is one
    (each method has its own table: SGLang's EAGLE-3 hooks are not its DFlash hooks)."""
    if family is None:
        return None
    cells = CELLS_BY_METHOD.get(method, FAMILY_CELLS)
    return next((c for c in cells if c.runtime == runtime and family in c.families), None)


def on_family(profile: RuntimeProfile, family: str | None) -> RuntimeProfile:
    """Return ``profile`` as it behaves on a target of ``family`` (None: unknown family)."""
    if profile.family_independent:
        return replace(profile, family=family, cell_citation=profile.citation)
    cell = cell_for(profile.engine_name, family, profile.method)
    release = profile.release or ENGINES_BY_NAME[profile.engine_name].newest
    if cell is None:
        # A release may still differ on this family (llama.cpp 0c1e57098's layer-N input).
        return replace(
            profile, family=family, **release.family_overrides.get(f"{profile.method}/{family}", {})
        )
    keys = ("index_name", "shift", "max_id_from_end", "id_readings", "cannot_capture")
    overrides = {
        key: value
        for key in (*keys, "min_id", "numbering")
        if (value := getattr(cell, key)) is not None
    }
    said = release.no_capture_text(profile.runner)
    if cell.cannot_capture is not None and said is not None:
        # The engine's words differ by release and runner (vLLM V1 vs V2).
        overrides["cannot_capture"] = f"{cell.cannot_capture}: {said} in {release.spec}"
    overrides.update(release.family_overrides.get(f"{profile.method}/{family}", {}))
    return replace(profile, family=family, cell_citation=cell.citation, **overrides)


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
CELLS_BY_METHOD: dict[str, tuple[FamilyCell, ...]] = {"eagle3": EAGLE3_CELLS}
"""Each method's family cells, where they differ from DFlash's ``FAMILY_CELLS``."""
PROFILES_BY_NAME: dict[str, RuntimeProfile] = {p.name: p for p in PROFILES}


def runtime_names() -> tuple[str, ...]:
    """Return every name a runtime selection accepts: ``portable``, then each row's name."""
    return (
        PORTABLE,
        *dict.fromkeys(p.name for rows in METHOD_PROFILES.values() for p in rows),
    )


@cache
def read_id_keys() -> tuple[str, ...]:
    """Return every key some runtime reads layer ids from: what a normaliser records (the
    tables are constant, so it is computed once per process)."""
    cells = (*FAMILY_CELLS, *(c for table in CELLS_BY_METHOD.values() for c in table))
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


RELEASE_SEP = "=="
"""Between a runtime and its release in a selection: ``vllm==0.34.0`` (pip's spelling)."""


class RunnerRemoved(ValueError):
    """A runner the named release no longer has (``vllm-v1==0.34.0``)."""


def split_spec(part: str) -> tuple[str, str | None]:
    """Return ``(runtime, release or None)`` of one selection part (``vllm==0.34.0``)."""
    name, _, version = part.strip().partition(RELEASE_SEP)
    return name.strip().lower(), version.strip() or None


def release_for(profile: RuntimeProfile, version: str | None) -> Release:
    """Return the release of ``profile``'s engine that ``version`` names: None is the newest
    release that has the profile's runner (``vllm-v1`` alone is the last release with V1).

    Raise ``UnknownRelease`` (the message lists the known ones) or ``RunnerRemoved``.
    """
    eng = ENGINES_BY_NAME[profile.engine_name]
    if version is None:
        having = [r for r in eng.releases if r.has_runner(profile.runner)]
        return having[-1] if having else eng.newest
    rel = eng.release(version)
    if not rel.has_runner(profile.runner):
        removed = rel.removed_runners.get(profile.runner or "", "it has no such runner")
        with_runner = [r.spec for r in eng.releases if r.has_runner(profile.runner)]
        raise RunnerRemoved(
            f"{profile.name} (Model Runner {profile.runner}) does not exist in {rel.spec}: "
            f"{removed}; it exists in {', '.join(with_runner)}"
        )
    return rel


def at_release(profile: RuntimeProfile, version: str | None = None) -> RuntimeProfile:
    """Return ``profile`` as the named release of its engine behaves (None: the newest release
    that has its runner): the release's own differences applied, the release recorded."""
    rel = release_for(profile, version)
    fields = dict(rel.overrides.get(f"{profile.method}/{profile.name}", {}))
    if "id_keys" in fields:  # engines.py names plain keys (it cannot build IdReadings)
        fields["id_readings"] = tuple(IdReading(k) for k in fields.pop("id_keys"))
    return replace(profile, release=rel, **fields)


def select_profiles(runtime: str, method: str = "dflash") -> tuple[RuntimeProfile, ...]:
    """Return the profiles a runtime selection stands for, each at its release.

    ``portable`` is every profile a default install serves with (not opt-in runners such as
    ``vllm-v1``), each at its newest release; otherwise a comma-separated list of profile names,
    each optionally pinned to a release (``vllm==0.33.0,sglang``), from ``--runtime`` or a
    ``pairs.yaml`` entry.
    """
    rows = method_rows(method)
    wanted = dict(split_spec(part) for part in runtime.split(","))
    if PORTABLE in wanted:
        chosen = tuple(p for p in rows if p.portable or p.name in wanted)
    else:
        chosen = tuple(p for p in rows if p.name in wanted)
    return tuple(at_release(p, wanted.get(p.name)) for p in chosen)


class SelectionError(ValueError):
    """A runtime selection that names no known runtime, release or runner (a usage error)."""


def parse_part(part: str) -> tuple[str, str | None]:
    """Return ``(runtime, release version or None)`` of one selection part, validated.

    ``vllm`` (the newest release known), ``vllm==0.34.0`` (pip's spelling; a commit prefix for
    engines read at commits), ``vllm=installed`` (the version installed here, read from package
    metadata). Raise ``SelectionError`` naming what is known instead.
    """
    import difflib

    from dflash_check.knowledge.engines import UnknownRelease

    text = part.strip()
    if "=" in text and RELEASE_SEP not in text:
        name, _, asked = text.partition("=")
        name = name.strip().lower()
        if asked.strip().lower() != INSTALLED:
            raise SelectionError(
                f"{text!r}: name a release as {name}{RELEASE_SEP}VERSION or {name}={INSTALLED}"
            )
        version: str | None = INSTALLED
    else:
        name, version = split_spec(text)
        if version is None and RELEASE_SEP in text:  # `vllm==`: not the newest, a typo
            raise SelectionError(
                f"{text!r} names no release after {RELEASE_SEP}: write {name}{RELEASE_SEP}VERSION, "
                f"or {name} alone for the newest release"
            )
    names = runtime_names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        suggestion = f" (did you mean {close[0]!r}?)" if close else ""
        raise SelectionError(
            f"unknown runtime {text!r}{suggestion}; choose from {', '.join(names)}"
        )
    if name == PORTABLE:
        if version is not None:
            raise SelectionError(
                "portable checks each runtime at its newest release; name a runtime to pin a "
                f"release (vllm{RELEASE_SEP}0.33.0)"
            )
        return name, None
    row = next(p for rows in METHOD_PROFILES.values() for p in rows if p.name == name)
    try:
        if version == INSTALLED:
            # importlib.metadata is imported only when asked: most runs never need it.
            from dflash_check.knowledge.installed import installed_version

            version = installed_version(row.engine_name)
        return name, None if version is None else release_for(row, version).version
    except (UnknownRelease, RunnerRemoved, ValueError) as err:
        raise SelectionError(str(err)) from None


def join_selection(chosen: Mapping[str, str | None]) -> str:
    """Return the core's selection string of parsed parts (``portable``, ``vllm==0.34.0,sglang``).

    ``portable`` stands for every default runtime at its newest release; an opt-in runner
    (``vllm-v1``) or a pinned release stays named. Rows of every method count (``specforge``
    exists for EAGLE-3 only).
    """

    def spec(name: str) -> str:
        version = chosen[name]
        return name if version is None else f"{name}{RELEASE_SEP}{version}"

    if PORTABLE in chosen:
        portable = {p.name for rows in METHOD_PROFILES.values() for p in rows if p.portable}
        kept = (n for n in chosen if n != PORTABLE and (n not in portable or chosen[n]))
        return ",".join([PORTABLE, *(spec(n) for n in kept)])
    return ",".join(spec(n) for n in chosen)


def selection_names(runtime: str) -> tuple[str, ...]:
    """Return the runtime names of a selection, without their releases."""
    return tuple(split_spec(part)[0] for part in runtime.split(","))


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
    sources = {s.key: s.ids for s in draft.id_sources}
    # A key read one way for some drafts (vLLM: DeepSeek-V4.1 DSpark ids are aux indices;
    # SGLang: +1 on a Muse target for the drafts it remaps) is read that way instead of the
    # general way.
    specific = {r.key for r in profile.id_readings if r.conditional and r.applies(draft)}
    for reading in profile.id_readings:
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
        return ResolvedIds(reading.key, raw, tuple(t + shift for t in raw))
    guess = DEFAULT_IDS[profile.default_ids](num_layers, draft) if profile.default_ids else None
    if guess is None:
        return None
    return ResolvedIds(None, guess, guess, guessed=True)
