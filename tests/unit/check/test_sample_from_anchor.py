"""DF021: vLLM's DFlash speculator refuses a true ``dflash_config.sample_from_anchor``, per
release, each finding citing that release's own lines (``Release.dflash_anchor``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.report import CheckReport
from dflash_check.knowledge.engines import VLLM, Release
from tests.support.helpers import FIXTURES, check_files, draft_config, fc_tensors, files
from tests.support.releases import read_in

TARGETS = FIXTURES / "targets"


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json (a fresh copy)."""
    return copy.deepcopy(json.loads((folder / "config.json").read_text()))


def hits(report: CheckReport, rule: str) -> dict[str | None, str]:
    """Return runtime -> message for the findings of ``rule``."""
    return {f.runtime: f.message for f in report.findings if f.rule == rule}


def test_speculators_sample_from_anchor_reaches_vllm() -> None:
    """The speculators format keeps sample_from_anchor at the top level; vLLM's loader copies
    it into dflash_config, where the DFlash speculator refuses it."""
    cfg = config(FIXTURES / "hub" / "huaxuan250" / "dflash_zlab_full_atten_speculators")
    target = config(FIXTURES / "hub" / "nvidia" / "Qwen3.6-35B-A3B-NVFP4")
    assert not hits(check_files(files("draft", cfg), files("target", target)), "DF021")
    cfg["sample_from_anchor"] = True
    found = hits(check_files(files("draft", cfg), files("target", target)), "DF021")
    assert set(found) == {"vllm"} and "sample_from_anchor is true" in found["vllm"]


def test_top_level_sample_from_anchor_is_not_read_for_zlab_drafts() -> None:
    """A z-lab draft's top-level copy is ignored by vLLM (it reads dflash_config only)."""
    cfg = draft_config(sample_from_anchor=True)
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)), files("target", config(TARGETS / "Qwen--Qwen3-8B"))
    )
    assert not hits(report, "DF021")


# The lines read in each release's source, by the release read: the DFlash speculator's check
# and the speculators loader's copy (update_dflash). A release after the one read inherits its
# lines, said as ``read at`` it; a reviewed range read elsewhere fails here: read its code.
_ANCHOR_LINES = {
    "vllm==0.32.0": ("speculator.py:77-85", "algos.py:118-121"),
    "vllm==0.33.0": ("speculator.py:80-88", "algos.py:118-121"),
    "vllm==0.34.0": ("speculator.py:77-85", "algos.py:86-89"),
}


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
@pytest.mark.parametrize("value", [True, 1, "yes"])
def test_dflash_sample_from_anchor_cites_each_release(release: Release, value: Any) -> None:
    """Model Runner V2 of every release refuses a truthy dflash_config.sample_from_anchor
    (a dict.get truth test), each finding citing that release's own lines; its V1 does not
    read the key."""
    cfg = draft_config()
    cfg["dflash_config"]["sample_from_anchor"] = value
    target = files("target", config(TARGETS / "Qwen--Qwen3-8B"))
    draft = files("draft", cfg, fc_tensors(cfg))
    found = hits(check_files(draft, target, release.spec), "DF021")
    assert set(found) == {"vllm"}, found
    assert release.dflash_anchor is not None
    read = read_in(release.dflash_anchor)
    speculator, algos = _ANCHOR_LINES[read]
    message = found["vllm"]
    assert f"{release.spec} refuses it at load" in message, message
    cited = release.spec if read == release.spec else f"read at {read}"
    assert f"({cited}:vllm/v1/worker/gpu/spec_decode/dflash/{speculator}," in message
    assert f"configs/speculators/{algos}," in message
    if release.has_runner("V1"):
        v1 = check_files(draft, target, f"vllm-v1=={release.version}")
        assert not hits(v1, "DF021")
    falsy = draft_config()
    falsy["dflash_config"]["sample_from_anchor"] = 0 if value == 1 else False
    quiet = files("draft", falsy, fc_tensors(falsy))
    assert not hits(check_files(quiet, target, release.spec), "DF021")
