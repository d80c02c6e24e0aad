"""Contracts generated from the engine model: whatever release or engine is added, each must
hold without a test being edited (every release of an extracted engine has its facts, every
citation of a release resolves in that release's facts, every error rule has a stage for
every runtime)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import fields

import pytest

from dflash_check.check import rules
from dflash_check.check.report import Severity
from dflash_check.knowledge import facts
from dflash_check.knowledge.citations import own_citations
from dflash_check.knowledge.engines import ENGINES, ENGINES_BY_NAME, Engine, Release
from dflash_check.knowledge.outcomes import STAGES, stage_of
from dflash_check.knowledge.reviewed import UNREAD_FIELDS, Reviewed
from dflash_check.knowledge.selection import runtime_names
from tests.support.releases import citations_not_of

EXTRACTED = [r for e in ENGINES if e.extracted for r in e.releases]
"""Every release whose code the extractor reads."""


@pytest.mark.parametrize("release", EXTRACTED, ids=lambda r: r.spec)
def test_every_extracted_release_has_its_facts(release: Release) -> None:
    found = facts.for_release(release)
    assert (found.engine, found.release) == (release.engine, release.version)
    assert found.cite_as == release.source  # its citations name the code that was read


@pytest.mark.parametrize("path", sorted(facts.DATA_DIR.glob("*.json")), ids=lambda p: p.name)
def test_every_data_file_is_a_known_release(path: object) -> None:
    engine, _, version = path.name[: -len(".json")].partition("-")  # type: ignore[attr-defined]
    assert engine in ENGINES_BY_NAME, f"{path}: no engine {engine}"
    assert version in ENGINES_BY_NAME[engine].versions, f"{path}: no release {version}"


@pytest.mark.parametrize("release", EXTRACTED, ids=lambda r: r.spec)
def test_no_capture_messages_come_from_the_release_s_facts(release: Release) -> None:
    """Each runner's no-capture message is quoted from the release's own code, cited there."""
    for runner in release.runners:
        said = facts.no_capture(ENGINES_BY_NAME[release.engine], release, runner)
        if said is not None:
            assert f"({release.source}:" in said


@pytest.mark.parametrize("release", [r for e in ENGINES for r in e.releases], ids=lambda r: r.spec)
def test_every_citation_names_a_release_that_was_read(release: Release) -> None:
    """A release's citations name its own code, or (inherited through ``Reviewed``) an earlier
    release of the engine whose code was read; never a later one, never an unknown one."""
    engine = ENGINES_BY_NAME[release.engine]
    upto = engine.releases[: engine.releases.index(release) + 1]
    readable = {name for r in upto for name in (r.source, r.spec)}
    texts = [release.runner_choice or "", *release.removed_runners.values()]
    texts += [release.checks_method or "", release.omni_dspark_contract or ""]
    for text in texts:
        for cited in re.findall(r"\b([a-z][a-z.-]*==[\w.+-]+):", text):
            assert cited in readable, f"{release.spec} cites {cited}"


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _texts(v)]
    return []


@pytest.mark.parametrize("release", [r for e in ENGINES for r in e.releases], ids=lambda r: r.spec)
def test_every_citation_a_check_reads_names_its_release_or_says_read_at(release: Release) -> None:
    """What a check takes of a release (``selection.release_for``) cites the release's own
    code, or says at which release a reviewed text was read."""
    judged = own_citations(release, ENGINES_BY_NAME[release.engine])
    for f in fields(judged):
        for text in _texts(getattr(judged, f.name)):
            assert citations_not_of(judged, text) == [], f"{release.spec}.{f.name}"


ERROR_RULES = [r.id for r in rules.RULES if r.severity is Severity.ERROR]


@pytest.mark.parametrize("rule", ERROR_RULES)
def test_every_error_rule_has_a_stage_for_every_runtime(rule: str) -> None:
    for runtime in runtime_names()[1:]:
        assert stage_of(rule, runtime) is not None, f"{rule} on {runtime}: no stage"


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_stage_rows_name_the_engine_s_runtimes_and_known_rules(engine: Engine) -> None:
    """An engine's stage rows speak of its own runtimes (each a runtime row the tool has) and
    of rules that have a default stage."""
    known = set(runtime_names())
    for runtime, rows in engine.stages.items():
        assert runtime in engine.runtime_names and runtime in known, f"{engine.name}: {runtime}"
        assert set(rows) <= set(STAGES), f"{runtime}: {set(rows) - set(STAGES)}"


def _fingerprinted(engine: Engine) -> bool:
    """Whether the extractor fingerprints ``engine``'s reviewed code (Python sources: vLLM,
    SGLang; llama.cpp's C++ is not): its facts files carry a ``reviewed`` section."""
    return engine.extracted and all(
        "reviewed" in _raw_facts(engine.name, r.version) for r in engine.releases
    )


def _raw_facts(engine: str, version: str) -> Mapping[str, object]:
    path = facts.DATA_DIR / f"{engine}-{version}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


REVIEWED_ROWS = [(e, row) for e in ENGINES if _fingerprinted(e) for row in e.reviewed]
"""Every reviewed range of an engine whose reviewed code the extractor fingerprints."""


@pytest.mark.parametrize(
    ("engine", "row"), REVIEWED_ROWS, ids=lambda x: x.name if isinstance(x, Engine) else x.releases
)
def test_every_reviewed_field_names_the_functions_it_was_read_from(
    engine: Engine, row: Reviewed
) -> None:
    """Each semantic field of a reviewed range names the engine functions it was read from,
    and each of those is fingerprinted, as reviewed, in the facts of every release the range
    covers: a release whose function changed could not have been extracted."""
    unread = sorted(set(row.fields) - set(row.read) - UNREAD_FIELDS)
    assert not unread, f"{engine.name} {row.releases}: {unread} name no engine function"
    assert all(row.read.values()), f"{engine.name} {row.releases}: a field names no function"
    covered = [r for r in engine.releases if engine.in_range(r.version, row.releases)]
    assert covered, f"{engine.name} {row.releases} covers no release"
    for release in covered:
        printed = _raw_facts(engine.name, release.version)["reviewed"]
        assert isinstance(printed, dict)
        for name, reads in row.read.items():
            for read in reads:
                got = printed.get(read.function)
                assert got is not None, (
                    f"{release.spec}: {read.function} ({name}) not fingerprinted"
                )
                assert got["at"].startswith(read.path + ":"), (release.spec, read, got)
                assert got["fingerprint"] in read.fingerprints, (release.spec, name, read, got)


def test_the_fingerprinted_engines_have_reviewed_rows() -> None:
    """The contract above runs on vLLM's and SGLang's rows (else it would pass on none)."""
    assert {e.name for e, _ in REVIEWED_ROWS} >= {"vllm", "sglang"}
