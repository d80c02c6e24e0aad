"""Semantics reviewed in an engine's code once that hold for a range of its releases.

A release row says only what is its own (version, date, commit, where its code was read). What
was reviewed by reading one release's code and holds until the engine changes it (vLLM: one
runner since 0.34, the load-time method check, the classes' declared methods) is written once
as a ``Reviewed`` entry over a range of releases (``>=0.34``) and merged into every release in
it; the citations stay those of the release that was read, so a new release inherits what was
reviewed without copying, under its own name, lines nobody read in it. When a release is judged,
``citations.own_citations`` cites each inherited text in that release's own facts where they
show the same code, else says which release it was read at.

This module imports nothing from the rest of the tool: ``knowledge/engines/`` builds its
engines with it at import time.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar


class _Versioned(Protocol):
    version: str

    def matches(self, name: str) -> bool: ...


R = TypeVar("R", bound=_Versioned)


@dataclass(frozen=True)
class Read:
    """An engine function (or class) a reviewed field was read from, and the versions of it
    that were reviewed: the extractor (``tools/extract_engine_facts.py``) fingerprints it in
    every release the field's range covers and fails, naming the field, where it differs."""

    path: str
    """Its file inside the release's package root (``vllm/config/vllm.py``)."""
    function: str
    """``function``, ``Class.method`` or ``Class``."""
    fingerprints: tuple[str, ...]
    """The fingerprints of the versions reviewed (one per release read where it changed)."""


@dataclass(frozen=True)
class Reviewed:
    """Release fields that hold for every release in ``releases``."""

    releases: str
    """The range, pip-style: comma-separated ``>=``, ``>``, ``<=``, ``<``, ``==`` bounds
    (``>=0.33,<0.35``). A bound is a version (compared number by number) or a release the
    engine knows (a commit: compared by its place among the engine's releases)."""
    fields: Mapping[str, Any]
    """``Release`` field -> value for those releases (a row's own value wins)."""
    read: Mapping[str, tuple[Read, ...]]
    """Field -> the engine functions its meaning was read from (an extracted engine's semantic
    fields name at least one: ``test_engine_contract``); the fields not read from code
    (``UNREAD_FIELDS``) name none."""

    def __init__(
        self, releases: str, read: Mapping[str, tuple[Read, ...]] | None = None, **fields: Any
    ) -> None:
        unknown = sorted(set(read or {}) - set(fields))
        if unknown:  # a reading of a field the row does not set: a typo in the module
            raise ValueError(f"Reviewed({releases!r}): read names no field {', '.join(unknown)}")
        object.__setattr__(self, "releases", releases)
        object.__setattr__(self, "fields", MappingProxyType(fields))
        object.__setattr__(self, "read", MappingProxyType(dict(read or {})))


UNREAD_FIELDS = frozenset({"repository", "pypi", "distributions", "notes", "aliases"})
"""Release fields that say where an engine is published or add prose, not what its code does:
no engine function to fingerprint."""


# Two-character operators first: ">=0.34" must not read as ">" and "=0.34".
_OPS: dict[str, Callable[[int, int], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
}


def _number(version: str) -> tuple[int, ...] | None:
    parts = version.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def _compare(version: str, bound: str, order: Sequence[_Versioned]) -> int:
    """Return -1, 0 or 1 as ``version`` is before, at or after ``bound``."""
    a, b = _number(version), _number(bound)
    if a is not None and b is not None:
        width = max(len(a), len(b))
        a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
        return (a > b) - (a < b)
    places = [i for i, r in enumerate(order) if r.matches(bound)]
    mine = [i for i, r in enumerate(order) if r.version == version]
    if len(places) != 1 or len(mine) != 1:
        raise ValueError(f"release range bound {bound!r} names no single known release")
    return (mine[0] > places[0]) - (mine[0] < places[0])


def in_range(version: str, releases: str, order: Sequence[_Versioned]) -> bool:
    """Whether ``version`` lies in the range ``releases`` (see ``Reviewed.releases``)."""
    for part in releases.split(","):
        part = part.strip()
        op = next((o for o in _OPS if part.startswith(o)), None)
        if op is None:
            raise ValueError(f"release range {releases!r}: {part!r} has no comparison")
        c = _compare(version, part[len(op) :].strip(), order)
        if not _OPS[op](c, 0):
            return False
    return True


def inherit(releases: Sequence[R], reviewed: Sequence[Reviewed]) -> tuple[R, ...]:
    """Return ``releases`` with each ``Reviewed`` entry's fields merged into the releases in its
    range (later entries over earlier ones; a field the row sets itself is kept)."""
    out = []
    for release in releases:
        defaults = {f.name: f for f in dataclasses.fields(release)}  # type: ignore[arg-type]
        merged: dict[str, Any] = {}
        for entry in reviewed:
            if in_range(release.version, entry.releases, releases):
                merged.update(entry.fields)
        own = {k: v for k, v in merged.items() if _is_default(release, defaults[k])}
        out.append(dataclasses.replace(release, **own))  # type: ignore[type-var]
    return tuple(out)


def _is_default(release: Any, f: dataclasses.Field[Any]) -> bool:
    value = getattr(release, f.name)
    if f.default is not dataclasses.MISSING:
        return bool(value == f.default)
    if f.default_factory is not dataclasses.MISSING:
        return bool(value == f.default_factory())
    return False
