"""Family cells come from each release's extracted facts; only reviewed exceptions are by hand.

A facts file is the one edit that changes what an engine does on a family: the tests copy the
shipped data to a temporary folder, edit one release's file the way a new extractor run would,
and check that the verdict, the cell's citation and the docs' list of changes follow.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.report import Verdict
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES, ENGINES_BY_NAME, SGLANG, VLLM, Release
from dflash_check.knowledge.families import FAMILIES
from dflash_check.knowledge.reviewed import in_range
from dflash_check.knowledge.runtimes import EAGLE3_PROFILES, PROFILES_BY_NAME, on_family
from dflash_check.knowledge.runtimes.cells import (
    REVIEWED_CELLS,
    derived_cell,
    engines_with_cells,
    family_cell,
    family_named,
)
from dflash_check.render.listing.cells import cell_changes
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.support.releases import add_next_vllm, copy_facts, next_version
from tests.support.releases import clear_facts as _clear

GEMMA3 = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}
IDS = [1, 9, 17, 25, 33]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped facts that the tool reads instead of its own."""
    yield copy_facts(tmp_path / "data", monkeypatch)
    _clear()


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite one facts file with ``change`` applied (what a new extractor run writes)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    change(raw)
    path.write_text(json.dumps(raw), encoding="utf-8")


def vllm_gemma3_captures(raw: dict[str, Any]) -> None:
    """Gemma3ForCausalLM gains SupportsEagle3 and captures after each layer."""
    where = raw["targets"]["Gemma3ForCausalLM"]["class_at"].split(":")[0]
    raw["targets"]["Gemma3ForCausalLM"].update(
        capture=True, sites=[f"{where}:300:before-loop", f"{where}:310:after-layer"]
    )


def vllm_gemma3_no_capture(raw: dict[str, Any]) -> None:
    """Gemma3ForCausalLM without SupportsEagle3 (as vLLM 0.34.0 ships it)."""
    raw["targets"]["Gemma3ForCausalLM"].update(capture=False, sites=[])


def sglang_gemma3_no_hook(raw: dict[str, Any]) -> None:
    """Gemma3ForCausalLM without a DFlash capture hook (as SGLang 0.5.23 ships it)."""
    raw["targets"]["Gemma3ForCausalLM"]["hooks"].pop("dflash", None)


def sglang_gemma3_hooks(raw: dict[str, Any]) -> None:
    """Gemma3ForCausalLM gains a DFlash capture hook (+1)."""
    where = raw["targets"]["Gemma3ForCausalLM"]["class_at"].split(":")[0]
    raw["targets"]["Gemma3ForCausalLM"]["hooks"]["dflash"] = {
        "at": f"{where}:930",
        "rule": "plus-one",
    }


def verdict(target_patch: dict[str, Any], runtime: str) -> tuple[Verdict, set[str]]:
    """Check the seed draft on a Qwen3-4B-shaped target patched to a family: the runtime's
    verdict and the rules that fired for it."""
    draft = copy.deepcopy(draft_config())
    draft["dflash_config"]["target_layer_ids"] = IDS
    target = {**copy.deepcopy(qwen3_4b_config()), **target_patch}
    report = check_files(files("draft", draft, fc_tensors(draft)), files("target", target), runtime)
    name = runtime.split("==")[0]
    fired = {f.rule for f in report.findings if f.runtime == name}
    return report.runtime_verdicts[name], fired


@pytest.mark.parametrize(
    ("engine", "before", "change"),
    [
        (VLLM, vllm_gemma3_no_capture, vllm_gemma3_captures),
        (SGLANG, sglang_gemma3_no_hook, sglang_gemma3_hooks),
    ],
)
def test_a_family_gaining_capture_in_the_facts_changes_the_verdict(
    data_dir: Path,
    engine: Any,
    before: Callable[[dict[str, Any]], None],
    change: Callable[[dict[str, Any]], None],
) -> None:
    """Gemma 3 without capture in the newest facts (DF017, as the releases read here ship
    it); the same facts file with a capture makes the pair compatible, with no other edit,
    cited in that release's code. Both states are written here, so a release that does
    capture Gemma 3 changes nothing in this test."""
    data = data_dir / f"{engine.name}-{engine.newest.version}.json"
    edit(data, before)
    _clear()
    assert verdict(GEMMA3, engine.name) == (Verdict.INCOMPATIBLE, {"DF017"})
    edit(data, change)
    _clear()
    assert verdict(GEMMA3, engine.name) == (Verdict.COMPATIBLE, set())
    cell = on_family(PROFILES_BY_NAME[engine.name], "gemma3")
    assert cell.cannot_capture is None
    citation = cell.cell_citation or ""
    assert citation.startswith("Gemma3ForCausalLM: ") and f"{engine.newest.source}:" in citation


@pytest.fixture
def next_vllm(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Release:
    """The next vLLM release (``vllm==0.35.0`` after 0.34.0) as the issue's exercise adds it:
    one extractor run (the newest facts with Gemma 3 gaining capture, under the new release's
    name) and one release row. The newest release's own Gemma 3 is written without capture."""
    edit(data_dir / f"vllm-{VLLM.newest.version}.json", vllm_gemma3_no_capture)
    return add_next_vllm(data_dir, monkeypatch, vllm_gemma3_captures)


def test_a_new_release_is_its_facts_file_and_one_row(next_vllm: Release, data_dir: Path) -> None:
    """The new release's verdict on Gemma 3 comes from its own facts and cites only them; the
    release before keeps its own; the docs' changes list the family."""
    new = next_vllm.version
    assert new == next_version(VLLM.newest.version) and next_vllm.pypi
    old = next(r for r in VLLM.releases if r.version == VLLM.newest.version)
    assert verdict(GEMMA3, f"vllm=={old.version}")[0] is Verdict.INCOMPATIBLE
    assert verdict(GEMMA3, f"vllm=={new}") == (Verdict.COMPATIBLE, set())
    assert verdict(GEMMA3, "vllm") == (Verdict.COMPATIBLE, set())  # the newest, by its row
    for method in ("dflash", "eagle3"):
        cell = family_cell("vllm", next_vllm, method, "gemma3")
        assert cell is not None and cell.cannot_capture is None
        assert f"vllm=={new}:" in cell.citation and old.source not in cell.citation
    eagle3 = on_family(replace(EAGLE3_PROFILES[0], release=next_vllm), "gemma3")
    assert eagle3.cannot_capture is None
    # vllm-v1 is judged at the last release with Model Runner V1, and the docs' matrix reads
    # the same release: the new release (V2 only) gaining capture does not change it.
    last_v1 = [r for r in VLLM.releases if r.has_runner("V1")][-1]
    edit(data_dir / f"vllm-{last_v1.version}.json", vllm_gemma3_no_capture)
    _clear()
    assert verdict(GEMMA3, "vllm-v1")[0] is Verdict.INCOMPATIBLE
    assert on_family(PROFILES_BY_NAME["vllm-v1"], "gemma3").cannot_capture is not None
    changes = cell_changes("vllm", old, next_vllm)
    assert "on `gemma3` (eagle3): captures (was no capture)" in changes
    assert "on `gemma3` (dflash): captures (was no capture)" in changes


def test_a_release_without_facts_borrows_none(data_dir: Path) -> None:
    """No data file, no cell from another release's data: MissingFacts names the file."""
    with pytest.raises(facts.MissingFacts, match=re.escape("vllm-0.999.0.json")):
        family_cell("vllm", Release("vllm", "0.999.0", pypi=True), "dflash", "gemma3")


def _releases_in(exc: Any) -> list[Release]:
    eng = ENGINES_BY_NAME[exc.runtime]
    return [r for r in eng.releases if in_range(r.version, exc.releases, eng.releases)]


@pytest.mark.parametrize("method", sorted(REVIEWED_CELLS))
def test_every_reviewed_exception_says_what_the_facts_do_not(method: str) -> None:
    """An exception has a range, a reason, known families, and changes the derived cell on
    every release it covers: a hand cell the facts already give is removed, not kept."""
    for exc in REVIEWED_CELLS[method]:
        assert exc.releases and exc.reason and exc.citation, exc
        assert ENGINES_BY_NAME[exc.runtime].extracted, exc
        in_scope = _releases_in(exc)
        assert in_scope, f"{exc.runtime} {exc.families}: {exc.releases} covers no release"
        for release in in_scope:
            found = facts.for_release(release)
            for name in exc.families:
                fam = family_named(name)
                assert fam is not None, name
                derived = derived_cell(found, method, fam)
                merged = family_cell(exc.runtime, release, method, name)
                assert merged is not None
                same = (
                    derived is not None
                    and derived.verified
                    and all(
                        getattr(derived, k) == getattr(merged, k)
                        for k in ("max_id_from_end", "min_id", "numbering", "id_readings")
                    )
                    and (derived.cannot_capture is None) == (merged.cannot_capture is None)
                )
                assert not same, f"{release.spec} {method}/{name}: the facts already say it"


@pytest.mark.parametrize("engine", [e for e in ENGINES if e.extracted and e.releases])
def test_derived_cells_cite_their_own_release(engine: Any) -> None:
    """Each derived cell's citation is in its release's code (the facts' ``cite_as``), never
    another release's."""
    for release in engine.releases:
        found = facts.for_release(release)
        others = {r.source for r in engine.releases if r.source != release.source}
        for method in ("dflash", "eagle3"):
            if engine.name not in engines_with_cells(method):
                continue
            for fam in FAMILIES:
                cell = derived_cell(found, method, fam)
                if cell is None:
                    continue
                assert f"{found.cite_as}:" in cell.citation, (release.spec, fam.name)
                assert not any(f"{o}:" in cell.citation for o in others), cell.citation
