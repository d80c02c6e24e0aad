"""Which drafts each engine release loads: read from its model registry and speculators facts.

The facts pinned here are the releases' own (they do not move when a release is added): vLLM
0.32.0 registers no MuseSparkDSparkModel and 0.33.0 does; 0.34.0 registers
DSparkMiniMaxDraftModel and 0.33.0 does not. The contract tests hold every name a format is
looked up by (architectures, after the release's renaming, or speculators types) to that
release's facts, and the listing to the verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash_check.check.formats import FORMATS, DraftFormat, format_named
from dflash_check.knowledge import facts
from dflash_check.knowledge.citations import own_citations
from dflash_check.knowledge.engines import ENGINES, SGLANG, VLLM, Engine, Release, sglang
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
from tests.support.releases import add_next_release, citations_not_of, copy_facts, read_in

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
    release's transformers_utils/configs/eagle.py:55-64, cited in its own code, or ``read at``
    the release read)."""
    rename = release.draft_renames["eagle3"]
    assert rename.renamed("LlamaForCausalLMEagle3") == "LlamaForCausalLMEagle3"
    assert rename.renamed("Eagle3LlamaForCausalLM") == "Eagle3LlamaForCausalLM"
    assert rename.renamed("LlamaForCausalLM") == "Eagle3LlamaForCausalLM"
    text = own_citations(release, VLLM).draft_renames["eagle3"].text
    assert citations_not_of(release, text) == [], text
    cited = (
        release.spec if read_in(rename.text) == release.spec else f"read at {read_in(rename.text)}"
    )
    assert f"{cited}:vllm/transformers_utils/configs/eagle.py:55-64" in text


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


# --- NextN draft checkpoints: SGLang's model registry per release, vLLM by model_type ---------

NEXTN_V3 = "DeepseekV3ForCausalLMNextN"


def _add_next_sglang(data_dir: Path, monkeypatch: pytest.MonkeyPatch, drop: str) -> Release:
    """Add the next SGLang release the way a new release is added (its facts file, one row):
    the newest release's facts without ``drop`` in its model registry."""
    return add_next_release(sglang, data_dir, monkeypatch, lambda raw: raw["drafts"].pop(drop))


def test_nextn_checkpoints_load_where_sglang_s_registry_holds_them() -> None:
    """Every *ForCausalLMNextN class a release registers names the format, and each SGLang
    release loads exactly those; one it does not register is refused, citing its registry."""
    nextn = format_named("nextn")
    assert nextn.lookup is not None and nextn.runtimes == ()
    names = names_of(nextn.lookup)
    held = {n for n in facts.for_release(SGLANG.newest).drafts if n.endswith("ForCausalLMNextN")}
    assert NEXTN_V3 in names and held <= set(names)
    for name in names:
        assert nextn.loads(SGLANG.name, DraftNames("mtp", (name,))) is (name in held)
    refused = nextn.registration(SGLANG.name, DraftNames("mtp", ("Qwen3ForCausalLMNextN",)))
    assert refused is not None and not refused.registered
    assert "model registry holds no Qwen3ForCausalLMNextN" in refused.citation
    assert f"{SGLANG.newest.spec}:sglang/srt/models/deepseek_nextn.py:" in refused.citation
    assert nextn.loaded_by(DraftNames("mtp", (NEXTN_V3,))) == (SGLANG.newest.spec,)


def test_a_release_whose_registry_drops_a_nextn_class_stops_loading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contract: the nextn format's runtimes follow each release's facts, not a hand list: a
    new SGLang release without DeepseekV3ForCausalLMNextN in its model registry refuses it,
    the releases before it still load it, and the listing says the same."""
    nextn = format_named("nextn")
    draft = DraftNames("mtp", (NEXTN_V3,))
    old = SGLANG.newest
    new = _add_next_sglang(copy_facts(tmp_path / "data", monkeypatch), monkeypatch, NEXTN_V3)
    assert not nextn.loads(SGLANG.name, draft, new)
    assert nextn.loads(SGLANG.name, draft, old)
    assert nextn.loaded_by(draft) == (old.spec,)
    assert [spec for spec, _ in registered_by(nextn)[NEXTN_V3]] == [old.spec]
    found = nextn.registration(SGLANG.name, draft, new)
    assert found is not None and f"holds no {NEXTN_V3}" in found.citation
    assert f"{new.spec}:" in found.citation and f"{old.spec}:" not in found.citation


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_vllm_picks_an_mtp_draft_by_model_type_not_by_its_registry(release: Release) -> None:
    """vLLM builds an MTP draft from the draft's model_type (hf_config_override rewrites its
    architectures), cited in each release's own code: its model registry, which holds no
    *ForCausalLMNextN class, does not judge a NextN checkpoint, and no vLLM runtime is written
    for the format by hand."""
    nextn = format_named("nextn")
    assert nextn.lookup is not None
    assert not judged(release, nextn.lookup)
    assert holds_table(release, Table.DRAFTS)
    read = read_in(release.draft_class_from_config["mtp"])
    text = own_citations(release, VLLM).draft_class_from_config["mtp"]
    cited = release.spec if read == release.spec else f"read at {read}"
    assert text.startswith(f"{cited}:vllm/") and "DeepSeekMTPModel" in text
    assert citations_not_of(release, text) == [], text
    assert NEXTN_V3 not in facts.for_release(release).drafts
    assert "DeepSeekMTPModel" in facts.for_release(release).drafts
    assert nextn.registration(VLLM.name, DraftNames("mtp", (NEXTN_V3,)), release) is None
    assert VLLM.name not in (nextn.runtimes or ())
    # Another format's lookup (EAGLE-3 heads) is still judged by vLLM's model registry.
    eagle3 = format_named("eagle3")
    assert eagle3.lookup is not None and judged(release, eagle3.lookup)


def test_sglang_looks_a_nextn_checkpoint_up_as_it_is() -> None:
    """SGLang picks no draft class from the config for MTP: it is judged by its registry."""
    nextn = format_named("nextn")
    assert nextn.lookup is not None
    assert all(judged(r, nextn.lookup) for r in SGLANG.releases)
    assert all("mtp" not in r.draft_class_from_config for r in SGLANG.releases)
