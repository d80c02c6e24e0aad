"""vLLM releases named by what a test needs of them, read from the engine model, and the next
release added for a test the way a new release is added (its facts file and one row).

A test that needs "a release that checks the requested method" or "the last release with Model
Runner V1" takes it from here instead of writing its version: adding a release (a row and its
facts file) then edits no test, and a release leaving the list fails here, by name.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dflash_check.knowledge import engines, facts
from dflash_check.knowledge.engines import VLLM, Release, vllm
from dflash_check.knowledge.reviewed import inherit
from tools.extract_engine_facts import dump


def _first(what: str, releases: list[Release]) -> Release:
    if not releases:
        raise LookupError(f"no known vLLM release {what}")
    return releases[0]


CHECKS_METHOD = _first("checks the method", [r for r in VLLM.releases if r.checks_method])
"""The oldest release that checks the requested method against the draft's class (DF054)."""
BEFORE_METHOD_CHECK = _first(
    "before the method check",
    [r for r in reversed(VLLM.releases) if r.checks_method is None],
)
"""The newest release that does not check it."""
WITHOUT_V1 = _first("without Model Runner V1", [r for r in VLLM.releases if not r.has_runner("V1")])
"""The oldest release that removed Model Runner V1 (``-r vllm-v1==`` it is refused)."""
LAST_V1 = _first("with Model Runner V1", [r for r in reversed(VLLM.releases) if r.has_runner("V1")])
"""The newest release that still has Model Runner V1 (what ``-r vllm-v1`` selects)."""


def next_version(version: str) -> str:
    """Return the release after ``version`` as a new row would name it (minor + 1), so that an
    exercise never collides with a release the engine model already has."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}.0"


def clear_facts() -> None:
    """Forget the facts read so far (a test changed the files or the folder)."""
    facts.load.cache_clear()
    facts.known_releases.cache_clear()


def copy_facts(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copy the shipped facts into ``folder`` and make the tool read them there."""
    shutil.copytree(facts.DATA_DIR, folder)
    monkeypatch.setattr(facts, "DATA_DIR", folder)
    clear_facts()
    return folder


def add_next_release(
    module: Any,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[dict[str, Any]], None] | None = None,
) -> Release:
    """Add the next release of the engine ``module`` defines (``vllm``, ``sglang``: its
    ``ENGINE`` and ``RELEASES``) the way a new release is added: one extractor run (the newest
    release's facts in ``data_dir``, ``change`` applied, under the new release's name, written
    by the extractor's own dump) and one release row inheriting the engine's reviewed ranges,
    registered in ``ENGINES`` for the test. Return the new release."""
    engine = module.ENGINE
    newest = engine.newest
    version = next_version(newest.version)
    raw = json.loads(
        (data_dir / f"{engine.name}-{newest.version}.json").read_text(encoding="utf-8")
    )
    if change is not None:
        change(raw)
    raw.update(release=version, cite_as=f"{engine.name}=={version}")
    # Written as the extractor writes it (its own dump), the file the exercise adds.
    (data_dir / f"{engine.name}-{version}.json").write_text(dump(raw), encoding="utf-8")
    clear_facts()
    row = Release(engine.name, version, date="2026-12-01")
    added = replace(engine, releases=inherit((*module.RELEASES, row), engine.reviewed))
    # The one registration: every reader looks engines up through it at call time.
    monkeypatch.setattr(
        engines, "ENGINES", tuple(added if e.name == engine.name else e for e in engines.ENGINES)
    )
    return added.newest


def add_next_vllm(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[dict[str, Any]], None] | None = None,
) -> Release:
    """Add the next vLLM release (``add_next_release``)."""
    return add_next_release(vllm, data_dir, monkeypatch, change)


CITED_RELEASE = re.compile(r"(?<![\w.-])([a-z][\w.-]*==[\w.+-]+):")
"""A citation's release as reports write it (``vllm==0.34.0:`` before a path)."""


def read_in(text: str) -> str:
    """Return the release a reviewed text was read in (``vllm==0.34.0`` of ``(vllm==0.34.0:
    vllm/…)``): where a later release's verdict says ``read at``, whichever is newest."""
    found = CITED_RELEASE.search(text)
    assert found is not None, text
    return found[1]


def citations_not_of(release: Release, text: str) -> list[str]:
    """Return the citations in ``text`` that name neither ``release``'s code nor say which
    release was read (``read at vllm==0.34.0:…``); the line breaks and borders of a wrapped
    table or error box are spaces."""
    flat = " ".join(text.replace("│", " ").split())
    own = {release.spec, release.source}
    return [
        flat[max(0, m.start() - 20) : m.end() + 40]
        for m in CITED_RELEASE.finditer(flat)
        if m[1] not in own and not flat[: m.start()].endswith("read at ")
    ]
