"""Which drafts each engine release loads: read from its model registry and speculators facts.

The facts pinned here are the releases' own (they do not move when a release is added): vLLM
0.32.0 registers no MuseSparkDSparkModel and 0.33.0 does; 0.34.0 registers
DSparkMiniMaxDraftModel and 0.33.0 does not. The contract tests hold every name a format is
looked up by (architectures, after the release's renaming, or speculators types) to that
release's facts, and the listing to the verdict.
"""

from __future__ import annotations

import pytest

from dflash_check.check.formats import FORMATS, DraftFormat, format_named
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES, SGLANG, VLLM, Engine, Release
from dflash_check.knowledge.registered_drafts import (
    DraftNames,
    Table,
    holds_table,
    judged,
    names_of,
    reads_registry,
    registering,
    registration,
)
from dflash_check.render.listing.formats import formats_json, registered_by

EXTRACTED: tuple[Engine, ...] = tuple(e for e in ENGINES if reads_registry(e))
LOOKED_UP = tuple(f for f in FORMATS if f.lookup is not None)
"""The formats an extracted engine judges by its releases' facts (model registry or speculators
loaders)."""


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
    dspark = format_named("dspark")
    assert dspark.lookup is not None
    draft = DraftNames("dspark", (arch,))
    found = registration(release, dspark.lookup, draft)
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
    assert (release in registering(engine, dspark.lookup, draft)) is registered


def test_vllm_cites_its_own_refusal_of_an_unregistered_draft() -> None:
    """vLLM refuses an architecture outside its model registry with the registry's message,
    quoted from the judged release's facts."""
    release = VLLM.release("0.32.0")
    lookup = format_named("dspark").lookup
    assert lookup is not None
    found = registration(release, lookup, DraftNames("dspark", ("MuseSparkDSparkModel",)))
    message = facts.for_release(release).message("unsupported_architecture")
    assert message is not None and message in found.citation


def _releases() -> list[tuple[Engine, Release]]:
    return [(e, r) for e in EXTRACTED for r in e.releases]


def _table(release: Release, table: Table) -> frozenset[str]:
    """The names ``table`` of the release's facts holds, read from the facts directly."""
    found = facts.for_release(release)
    return frozenset(found.drafts if table is Table.DRAFTS else found.speculators)


@pytest.mark.parametrize("fmt", LOOKED_UP, ids=lambda f: f.name)
@pytest.mark.parametrize(
    ("engine", "release"), _releases(), ids=lambda v: getattr(v, "spec", None) or v.name
)
def test_every_name_looked_up_for_an_extracted_engine_is_in_its_facts(
    fmt: DraftFormat, engine: Engine, release: Release
) -> None:
    """Contract: a runtime of vLLM or SGLang loads a draft at a release exactly when that
    release's facts hold the name it looks up (after its renaming) in the format's table, on
    every runner row; a release whose facts lack the table, or that picks the format's class
    from the draft's config (vLLM's MTP drafts), keeps the reviewed rows."""
    lookup = fmt.lookup
    assert lookup is not None
    held = _table(release, lookup.table)
    for runtime in engine.runtime_names:
        for name in names_of(lookup):
            loads = fmt.loads(runtime, lookup.draft(name), release)
            if judged(release, lookup):
                expected = lookup.looked_up(release, name) in held
            else:
                expected = fmt.runtimes is None or runtime in fmt.runtimes
            assert loads is expected, (runtime, name)


@pytest.mark.parametrize("fmt", LOOKED_UP, ids=lambda f: f.name)
def test_reviewed_rows_name_no_extracted_engine(fmt: DraftFormat) -> None:
    """Contract: a format's hand-reviewed runtimes are only engines whose facts do not hold
    the format's table; vLLM and SGLang are never written there where their releases' facts
    decide."""
    lookup = fmt.lookup
    assert lookup is not None
    decided = {r for e in EXTRACTED if holds_table(e.newest, lookup.table) for r in e.runtime_names}
    assert decided  # some engine's facts hold every table a format is looked up in
    assert not decided & set(fmt.runtimes or ())


@pytest.mark.parametrize("fmt", LOOKED_UP, ids=lambda f: f.name)
def test_the_listing_shows_what_the_verdict_uses(fmt: DraftFormat) -> None:
    """``dflash-check formats`` (and docs/formats.md) list, per name, exactly the releases whose
    runtimes the check lets load it."""
    lookup = fmt.lookup
    assert lookup is not None
    listed = registered_by(fmt)
    assert set(listed) == set(names_of(lookup))
    for name in names_of(lookup):
        shown = {spec for spec, _ in listed[name]}
        loading = {
            r.spec
            for e in EXTRACTED
            for r in e.releases
            if judged(r, lookup) and fmt.loads(e.runtime_names[0], lookup.draft(name), r)
        }
        assert shown == loading, name
    assert f'"{fmt.name}"' in formats_json()


def test_an_unregistered_release_is_refused_only_where_pinned() -> None:
    """The newest vLLM registers Muse Spark DSpark, so the bare name loads it; the pin to
    0.32.0 does not (the selection's release reaches the format)."""
    dspark = format_named("dspark")
    arch = ("MuseSparkDSparkModel",)
    newest = "MuseSparkDSparkModel" in facts.for_release(VLLM.newest).drafts
    assert dspark.loads(VLLM.name, DraftNames("dspark", arch)) is newest
    assert not dspark.loads(VLLM.name, DraftNames("dspark", arch), VLLM.release("0.32.0"))


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_vllm_renames_an_eagle3_heads_architecture_per_release(release: Release) -> None:
    """EAGLEConfig keeps a name that starts or ends with Eagle3 and prefixes any other (each
    release's transformers_utils/configs/eagle.py:55-64, cited in its own code)."""
    rename = release.draft_renames["eagle3"]
    assert rename.renamed("LlamaForCausalLMEagle3") == "LlamaForCausalLMEagle3"
    assert rename.renamed("Eagle3LlamaForCausalLM") == "Eagle3LlamaForCausalLM"
    assert rename.renamed("LlamaForCausalLM") == "Eagle3LlamaForCausalLM"
    assert f"{release.spec}:vllm/transformers_utils/configs/eagle.py:55-64" in rename.text


def test_sglang_renames_no_eagle3_head() -> None:
    """SGLang looks a draft's architectures up as they are (model_loader/utils.py:198-239)."""
    assert all("eagle3" not in r.draft_renames for r in SGLANG.releases)


@pytest.mark.parametrize("name", ["speculators", "speculators-eagle3"])
def test_speculators_drafts_load_where_the_release_has_the_loader(name: str) -> None:
    """vLLM loads a speculators draft through the loader its speculators_model_type names, at
    every release whose facts hold it (algos.py); SGLang's facts have no speculators table and
    its reviewed row says it loads none."""
    fmt = format_named(name)
    assert fmt.lookup is not None and fmt.lookup.by_method
    for kind in fmt.lookup.names:
        draft = fmt.lookup.draft(kind)
        for release in VLLM.releases:
            held = kind in facts.for_release(release).speculators
            assert held  # every release with facts has each loader the tool reads
            found = fmt.registration(VLLM.name, draft, release)
            assert found is not None and found.registered is held
            assert "speculators/algos.py" in found.citation
        assert not holds_table(SGLANG.newest, Table.SPECULATORS)
        assert not fmt.loads(SGLANG.name, draft, SGLANG.newest)
    # A type no release has a loader for is refused, citing the loaders it does have.
    refused = fmt.registration(
        VLLM.name, DraftNames("dflash", speculators_model_type="dflash9"), VLLM.newest
    )
    assert refused is not None and not refused.registered
    assert "speculators loaders holds no dflash9" in refused.citation


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_vllm_picks_an_mtp_draft_s_class_from_its_config(release: Release) -> None:
    """vLLM builds an MTP draft from the draft's model_type (hf_config_override rewrites its
    architectures), cited in each release's own code; SGLang picks none that way."""
    text = release.draft_class_from_config["mtp"]
    assert text.startswith(f"{release.spec}:vllm/") and "DeepSeekMTPModel" in text
    assert "DeepSeekMTPModel" in facts.for_release(release).drafts
    looked_up = format_named("eagle3").lookup
    assert looked_up is not None and judged(release, looked_up)
    assert not any(r.draft_class_from_config for r in SGLANG.releases)
