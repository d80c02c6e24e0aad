"""Which draft architectures each engine release loads: read from its model registry facts.

The facts pinned here are the releases' own (they do not move when a release is added): vLLM
0.32.0 registers no MuseSparkDSparkModel and 0.33.0 does; 0.34.0 registers
DSparkMiniMaxDraftModel and 0.33.0 does not. The contract tests hold every architecture the
tool names for an extracted engine to that release's facts, and the listing to the verdict.
"""

from __future__ import annotations

import pytest

from dflash_check.check.formats import FORMATS, DraftFormat, format_named
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES, SGLANG, VLLM, Engine, Release
from dflash_check.knowledge.registered_drafts import reads_registry, registering, registration
from dflash_check.render.listing.formats import formats_json, registered_by

EXTRACTED: tuple[Engine, ...] = tuple(e for e in ENGINES if reads_registry(e))
BY_ARCHITECTURE = tuple(f for f in FORMATS if f.architectures)
"""The formats named by their architectures: the ones an extracted engine judges by its model
registry."""


@pytest.mark.parametrize(
    ("engine", "version", "arch", "registered"),
    [
        (VLLM, "0.32.0", "MuseSparkDSparkModel", False),
        (VLLM, "0.33.0", "MuseSparkDSparkModel", True),
        (VLLM, "0.34.0", "MuseSparkDSparkModel", True),
        (VLLM, "0.33.0", "DSparkMiniMaxDraftModel", False),
        (VLLM, "0.34.0", "DSparkMiniMaxDraftModel", True),
        (VLLM, "0.34.0", "LingDSparkModel", False),
        (SGLANG, "0.5.23", "LingDSparkModel", True),
        (SGLANG, "0.5.23", "MuseSparkDSparkModel", False),
    ],
)
def test_a_release_registers_what_its_facts_hold(
    engine: Engine, version: str, arch: str, registered: bool
) -> None:
    """Each release's answer is its own facts', cited at its model registry entry."""
    release = engine.release(version)
    found = registration(release, (arch,), format_named("dspark").architectures)
    assert found.registered is registered
    assert found.release is release
    loaded = facts.for_release(release)
    if registered:
        assert found.architecture == arch
        assert found.citation == loaded.cite(loaded.drafts[arch]["at"])
    else:
        assert found.architecture is None
        assert f"holds no {arch}" in found.citation
        # What it does hold is cited in its own facts, never another release's.
        assert f"{loaded.cite_as}:" in found.citation
    assert (release in registering(engine, arch)) is registered


def test_vllm_cites_its_own_refusal_of_an_unregistered_draft() -> None:
    """vLLM refuses an architecture outside its model registry with the registry's message,
    quoted from the judged release's facts."""
    release = VLLM.release("0.32.0")
    found = registration(release, ("MuseSparkDSparkModel",))
    message = facts.for_release(release).message("unsupported_architecture")
    assert message is not None and message in found.citation


def _releases() -> list[tuple[Engine, Release]]:
    return [(e, r) for e in EXTRACTED for r in e.releases]


@pytest.mark.parametrize("fmt", BY_ARCHITECTURE, ids=lambda f: f.name)
@pytest.mark.parametrize(
    ("engine", "release"), _releases(), ids=lambda v: getattr(v, "spec", None) or v.name
)
def test_every_architecture_named_for_an_extracted_engine_is_in_its_facts(
    fmt: DraftFormat, engine: Engine, release: Release
) -> None:
    """Contract: a runtime of vLLM or SGLang loads an architecture at a release exactly when
    that release's extracted model registry holds it, on every runner row."""
    drafts = facts.for_release(release).drafts
    for runtime in engine.runtime_names:
        for arch in fmt.architectures:
            assert fmt.loads(runtime, (arch,), release) is (arch in drafts), (runtime, arch)


@pytest.mark.parametrize("fmt", BY_ARCHITECTURE, ids=lambda f: f.name)
def test_reviewed_rows_name_no_extracted_engine(fmt: DraftFormat) -> None:
    """Contract: a format's hand-reviewed runtimes are only engines whose code is not read;
    vLLM and SGLang are never written there (their releases' facts decide)."""
    extracted = {r for e in EXTRACTED for r in e.runtime_names}
    assert not extracted & set(fmt.runtimes or ())


@pytest.mark.parametrize("fmt", BY_ARCHITECTURE, ids=lambda f: f.name)
def test_the_listing_shows_what_the_verdict_uses(fmt: DraftFormat) -> None:
    """``dflash-check formats`` (and docs/formats.md) list, per architecture, exactly the
    releases whose runtimes the check lets load it."""
    listed = registered_by(fmt)
    for arch in fmt.architectures:
        shown = {spec for spec, _ in listed[arch]}
        loading = {
            r.spec
            for e in EXTRACTED
            for r in e.releases
            if fmt.loads(e.runtime_names[0], (arch,), r)
        }
        assert shown == loading, arch
    assert f'"{fmt.name}"' in formats_json()


def test_an_unregistered_release_is_refused_only_where_pinned() -> None:
    """The newest vLLM registers Muse Spark DSpark, so the bare name loads it; the pin to
    0.32.0 does not (the selection's release reaches the format)."""
    dspark = format_named("dspark")
    arch = ("MuseSparkDSparkModel",)
    newest = "MuseSparkDSparkModel" in facts.for_release(VLLM.newest).drafts
    assert dspark.loads(VLLM.name, arch) is newest
    assert not dspark.loads(VLLM.name, arch, VLLM.release("0.32.0"))
