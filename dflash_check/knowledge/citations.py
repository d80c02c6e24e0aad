"""A release's reviewed texts with their citations resolved through the release's own facts.

A ``Reviewed`` entry cites the code of the release that was read (``vllm==0.34.0:…:1481-1492``)
and every later release in its range inherits the text (``reviewed.inherit``). Printed as is, a
verdict "on vllm==0.35.0" would cite 0.34.0's lines as if they were 0.35.0's. So, when a check
or a listing takes a release (``own_citations``), each citation of another release of the same
engine becomes either the same fact in the release's own extracted facts (the message the read
release has inside the cited lines, found with the same words in this release's facts file) or,
where the release's facts do not show it, ``read at vllm==0.34.0:…``: what was read, and where.

Engines load at import without their facts (``knowledge/engines/interface.py``); this runs
when a release is judged, and reads facts only for a release that inherits another's lines.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dflash_check.knowledge import facts
from dflash_check.knowledge.engines.interface import Engine, Release

READ_AT = "read at "
"""What precedes a citation of the release that was read when the judged release's own facts
do not show the same code."""

CITATION = re.compile(
    r"(?P<source>[A-Za-z0-9_.-]+==[\w.+-]+|[\w.-]+/[\w.-]+@[0-9a-f]{7,40})"
    r":(?P<path>[\w./-]+)(?::(?P<lines>\d+(?:-\d+)?))?"
)
"""A citation as the tool writes one: ``vllm==0.34.0:path:lines`` or ``owner/name@commit:path``."""
_LINE_REF = re.compile(r":\d")


def own_citations(release: Release, engine: Engine) -> Release:
    """Return ``release`` (of ``engine``) with every citation of another release of its engine
    resolved (see the module docstring); the release itself when it cites only its own code.

    The engine is passed, not looked up: this module is imported by engine modules (their MTP
    rows), so it must not import the engine registry."""
    readers = _other_releases(release, engine)
    if not readers:
        return release
    changed: dict[str, Any] = {}
    for f in dataclasses.fields(release):
        value = getattr(release, f.name)
        resolved = _resolve_value(value, release, readers)
        if resolved is not value:
            changed[f.name] = resolved
    return dataclasses.replace(release, **changed) if changed else release


def cited_in(release: Release, engine: Engine, text: str) -> str:
    """Return ``text`` (a reviewed text of one release, read when ``release`` is judged) with
    each citation of another release of its engine resolved as ``own_citations`` resolves a
    release's fields: the same message in ``release``'s own facts, else ``read at``."""
    readers = _other_releases(release, engine)
    return _resolve_text(text, release, readers) if readers else text


def _other_releases(release: Release, engine: Engine) -> dict[str, Release]:
    """The citation prefixes of the engine's other releases -> that release."""
    own = {release.source, release.spec}
    if release.revision:
        own.add(engine.at(release.revision))
    return {
        name: r
        for r in engine.releases
        if r.version != release.version
        for name in (r.source, r.spec, engine.at(r.version), engine.at(r.revision or r.version))
        if name not in own
    }


def _resolve_value(value: Any, release: Release, readers: Mapping[str, Release]) -> Any:
    """Return ``value`` (a text, or a mapping or frozen dataclass holding texts) resolved;
    ``value`` itself when nothing in it cites another release."""
    if isinstance(value, str):
        return _resolve_text(value, release, readers)
    if isinstance(value, Mapping):
        items = {k: _resolve_value(v, release, readers) for k, v in value.items()}
        if all(items[k] is value[k] for k in value):
            return value
        return MappingProxyType(items)
    # A typed value (``draft_classes.py``: what a release's draft class does) holds its
    # citations in its text fields; an enum member or a number in it is left as it is.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {
            f.name: resolved
            for f in dataclasses.fields(value)
            if (resolved := _resolve_value(getattr(value, f.name), release, readers))
            is not getattr(value, f.name)
        }
        return dataclasses.replace(value, **changed) if changed else value
    return value


def _resolve_text(text: str, release: Release, readers: Mapping[str, Release]) -> str:
    found = [m for m in CITATION.finditer(text) if m["source"] in readers]
    if not found:
        return text
    out, end = [], 0
    for m in found:
        out.append(text[end : m.start()])
        # Another line reference in the text (``… at :1543-1547``, ``(qwen3_dflash.py:84)``)
        # is relative to the read release: the whole text then stays read there.
        rest = text[: m.start()] + text[m.end() :]
        own = None if _LINE_REF.search(rest) else _same_fact(release, readers[m["source"]], m)
        out.append(own or READ_AT + m[0])
        end = m.end()
    out.append(text[end:])
    return "".join(out)


def _same_fact(release: Release, read: Release, m: re.Match[str]) -> str | None:
    """Return the citation, in ``release``'s facts, of the message ``read``'s facts place in
    the cited lines, when ``release`` has it with the same words (None: not shown there)."""
    if m["lines"] is None:
        return None
    mine, theirs = (
        facts.load(release.engine, release.version),
        facts.load(read.engine, read.version),
    )
    if mine is None or theirs is None:
        return None
    first, _, last = m["lines"].partition("-")
    lines = range(int(first), int(last or first) + 1)
    for key, message in theirs.messages.items():
        if message is None:
            continue
        path, _, line = message["at"].rpartition(":")
        if path != m["path"] or not line.isdigit() or int(line) not in lines:
            continue
        same = mine.messages.get(key)
        if same is not None and same["text"] == message["text"]:
            return mine.cite(same["at"])
    return None
