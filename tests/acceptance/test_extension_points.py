"""Each extension point is one place (CONTRIBUTING.md): a fake runtime, draft format and target
family, each added to its one table alone, is picked up end to end by ``pair``.

The fake rule (``tests/unit/check/test_rule_table.py``) and the fake output format
(``tests/acceptance/test_output_formats.py``) show the same for rules and output formats. Each
test here first shows the fake is unknown without its row, so that it can fail.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check import formats
from dflash_check.check.formats import DraftFormat
from dflash_check.check.formats.zlab import read_dflash_config_draft
from dflash_check.knowledge import families
from dflash_check.knowledge.families import TargetFamily
from dflash_check.knowledge.runtimes import METHOD_PROFILES, PROFILES_BY_NAME
from dflash_check.views import DraftView, ModelFiles
from tests.support.helpers import (
    EXAMPLES,
    invoke_cli,
    qwen3_4b_config,
    seed_draft_config,
    write_draft,
    write_model,
)

SEED = (str(EXAMPLES / "Qwen3-4B-DFlash-b16"), str(EXAMPLES / "Qwen3-4B"))


def pair_json(*args: str) -> tuple[int, dict[str, Any]]:
    """Run ``pair ... --format json`` in this process (so the monkeypatched table is seen)."""
    proc = invoke_cli("pair", *args, "--format", "json")
    return proc.returncode, json.loads(proc.stdout)


# -- a runtime: one row of its method's runtime table ------------------------------------------

# A runtime of an engine the tool knows (a new engine is a release's extension point) that
# loads DFlash drafts the way the z-lab reference does, under its own name.
FAKE_RUNTIME = replace(
    PROFILES_BY_NAME["reference"], name="fake", title="a fake runtime", engine="reference"
)


def test_an_unlisted_runtime_is_refused() -> None:
    proc = invoke_cli("pair", *SEED, "-r", "fake")
    assert proc.returncode == 2 and "unknown runtime 'fake'" in proc.stderr


def test_a_runtime_row_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """``pair -r fake`` gives a verdict for the fake runtime, its layers resolved its way."""
    monkeypatch.setitem(METHOD_PROFILES, "dflash", (*METHOD_PROFILES["dflash"], FAKE_RUNTIME))
    code, data = pair_json(*SEED, "-r", "fake")
    assert code == 0, data
    assert data["runtimes"] == {"fake": "compatible"}
    assert data["layer_resolution"]["fake"]["layer_ids"] == [1, 9, 17, 25, 33]
    # And it fails where the reference fails: 32 layers are too few for id 33.
    code, data = pair_json(SEED[0], str(EXAMPLES / "Qwen3.5-4B"), "-r", "fake,vllm")
    assert code == 1
    assert data["runtimes"] == {"vllm": "incompatible", "fake": "incompatible"}
    df004 = next(f for f in data["findings"] if f["rule"] == "DF004")
    assert "fake" in df004["runtimes"]
    # --help lists it: the names come from the same table.
    assert "fake" in invoke_cli("pair", "--help").stdout


# -- a draft format: one module with its normaliser, one row of FORMATS ------------------------

FAKE_ARCHITECTURE = "FakeDFlashDraftModel"


def normalise_fake(files: ModelFiles) -> DraftView:
    """The fake format's normaliser: z-lab's key layout under another architecture name."""
    return read_dflash_config_draft(files, "fake", {FAKE_ARCHITECTURE: "dflash"})


FAKE_FORMAT = DraftFormat(
    name="fake",
    title="a fake DFlash format",
    identified_by=f"architectures {FAKE_ARCHITECTURE}",
    keys=(("all DFlash keys", "as the z-lab format"),),
    numbering="DFlash layer-output ids, as the z-lab format",
    runtimes=None,
    dflash_config_keys=True,
    source="tests/acceptance/test_extension_points.py",
    matches=lambda config: FAKE_ARCHITECTURE in (config.get("architectures") or ()),
    normalise=normalise_fake,
    architectures=(FAKE_ARCHITECTURE,),
)


@pytest.fixture
def fake_draft(tmp_path: Path) -> Path:
    """The seed draft under the fake format's architecture name."""
    cfg = seed_draft_config() | {"architectures": [FAKE_ARCHITECTURE]}
    return write_draft(tmp_path / "fake-draft", cfg)


def test_an_unknown_format_is_not_a_draft(fake_draft: Path) -> None:
    code, data = pair_json(str(fake_draft), SEED[1])
    assert code == 3 and "not a DFlash draft" in data["error"]["message"]


def test_a_format_row_is_recognised(monkeypatch: pytest.MonkeyPatch, fake_draft: Path) -> None:
    """A draft in the fake format is read by its normaliser and checked on every runtime."""
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, FAKE_FORMAT))
    code, data = pair_json(str(fake_draft), SEED[1])
    assert code == 0, data
    assert (data["draft"]["format"], data["draft"]["method"]) == ("fake", "dflash")
    assert data["verdict"] == "compatible" and len(data["runtimes"]) > 1
    # The message for a config in no format lists the row's architecture too.
    other = write_model(fake_draft.parent / "other", {"architectures": ["Nope"], "hidden_size": 8})
    proc = invoke_cli("pair", str(other), SEED[1], "-f", "json")
    assert FAKE_ARCHITECTURE in json.loads(proc.stdout)["error"]["message"]


# -- a target family: one TargetFamily in FAMILIES ---------------------------------------------

FAKE_FAMILY = TargetFamily("fake_family", "A fake family", ("FakeForCausalLM",), ("fake_type",))


@pytest.fixture
def fake_target(tmp_path: Path) -> Path:
    """Qwen3-4B's dimensions under an architecture and model type no family has."""
    cfg = qwen3_4b_config() | {"architectures": ["FakeForCausalLM"], "model_type": "fake_type"}
    return write_model(tmp_path / "fake-target", cfg)


def df051(data: dict[str, Any]) -> str:
    """Return DF051's message (the family note): it names the family, or says there is none."""
    return next(f["message"] for f in data["findings"] if f["rule"] == "DF051")


def test_an_unknown_family_is_reported(fake_target: Path) -> None:
    code, data = pair_json(SEED[0], str(fake_target))
    # Incompatible either way: SGLang's registry has no class for the architecture (DF052).
    assert code == 1, data
    assert data["target"]["family"] is None
    assert "is in no target family the tool knows" in df051(data)


def test_a_family_row_is_known(monkeypatch: pytest.MonkeyPatch, fake_target: Path) -> None:
    """The fake family is the target's family: the report names it, and DF051 no longer calls
    the family unknown (no engine's cells cover it, so nothing is noted as unread)."""
    monkeypatch.setattr(families, "FAMILIES", (*families.FAMILIES, FAKE_FAMILY))
    code, data = pair_json(SEED[0], str(fake_target))
    assert code == 1, data
    assert data["target"]["family"] == "fake_family"
    assert "DF051" not in {f["rule"] for f in data["findings"]}
