"""Issue 28's exercise, end to end: the next vLLM release, added the way CONTRIBUTING.md says
(one extractor run: the newest release's facts, Gemma 3 gaining capture, written with the
extractor's own ``dump`` under the new name; one ``Release`` row), answers every check that
names it on its own facts, with no other edit: its target-alone MTP rows, its DFlash and
EAGLE-3 verdicts, the formats listing and the generated docs, each citing the new release
(or saying ``read at`` the release that was read), never the release before as its own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.report import Verdict
from dflash_check.check.target_alone import check_target_mtp
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import VLLM, Release
from dflash_check.knowledge.engines.vllm_mtp import branch_lines
from dflash_check.render.listing.formats import formats_json
from tests.support.helpers import (
    check_files,
    draft_config,
    fc_tensors,
    files,
    invoke_cli,
    qwen3_4b_config,
)
from tests.support.paths import FIXTURES
from tests.support.releases import add_next_vllm, citations_not_of, clear_facts, copy_facts
from tools import gen_docs

DEEPSEEK_V3 = FIXTURES / "targets" / "deepseek-ai--DeepSeek-V3"
LLAMA_HEAD = FIXTURES / "eagle3" / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
LLAMA_31_8B = FIXTURES / "targets" / "meta-llama--Meta-Llama-3.1-8B"
GEMMA3 = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}


def _gemma3(capture: bool) -> Any:
    """A facts change: Gemma3ForCausalLM with SupportsEagle3 capturing after each layer, or
    without (as vLLM 0.34.0 ships it)."""

    def change(raw: dict[str, Any]) -> None:
        entry = raw["targets"]["Gemma3ForCausalLM"]
        where = entry["class_at"].split(":")[0]
        sites = [f"{where}:300:before-loop", f"{where}:310:after-layer"] if capture else []
        entry.update(capture=capture, sites=sites)

    return change


@pytest.fixture
def releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Release, Release]]:
    """(the release before, the new one): the newest release's own Gemma 3 written without
    capture, the new release's facts with it."""
    data = copy_facts(tmp_path / "data", monkeypatch)
    path = data / f"vllm-{VLLM.newest.version}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    _gemma3(False)(raw)
    path.write_text(json.dumps(raw), encoding="utf-8")
    old = VLLM.newest
    new = add_next_vllm(data, monkeypatch, _gemma3(True))
    yield old, new
    clear_facts()


def _vllm_row(args: tuple[str, ...]) -> tuple[int, dict[str, Any]]:
    ran = invoke_cli("pair", *args, "--format", "json")
    (row,) = [r for r in json.loads(ran.stdout)["engines"] if r["engine"] == "vllm"]
    return ran.returncode, row


def test_deepseek_v3_alone_gets_its_mtp_draft_on_the_new_release(
    releases: tuple[Release, Release],
) -> None:
    """``pair DeepSeek-V3 -r vllm==NEW`` (and the bare ``vllm``, its newest) names
    DeepSeekMTPModel and how to ask for it, citing the new release's own lines of
    hf_config_override (from its facts) and its draft-length check (its facts' message)."""
    old, new = releases
    lines = branch_lines(facts.for_release(new).hf_config_override, ("deepseek_v3",))
    assert lines is not None
    for runtime in (new.spec, "vllm"):
        code, row = _vllm_row((str(DEEPSEEK_V3), "-r", runtime))
        assert code == 0, row
        assert row["draft"].startswith("DeepSeekMTPModel"), row
        assert row["request"].startswith("--speculative-config"), row
        assert row["citation"].startswith(f"{new.spec}:vllm/config/speculative.py:{lines};")
        assert f"{new.spec}:" in row["tokens"], row["tokens"]
        text = json.dumps(row, ensure_ascii=False)
        assert citations_not_of(new, text) == [], text
        assert f"{old.spec}:" not in text.replace(f"read at {old.spec}:", "")


def test_the_class_default_holds_on_the_new_release_read_at_the_one_read(
    releases: tuple[Release, Release],
) -> None:
    """DeepSeek-V3 stating no MTP count: the new release inherits the reviewed class default
    (DeepseekV3Config's 1), its vLLM lines said ``read at`` the release read."""
    _, new = releases
    config = json.loads((DEEPSEEK_V3 / "config.json").read_text(encoding="utf-8"))
    config.pop("num_nextn_predict_layers")
    report = check_target_mtp(files("target", config), None, "", releases={"vllm": new.version})
    (row,) = report.engines
    assert row.draft.startswith("DeepSeekMTPModel") and report.verdict is Verdict.COMPATIBLE
    (default,) = report.stated.defaults
    vllm_part = default.citation.split("; transformers==")[0]
    assert "read at vllm==" in vllm_part and citations_not_of(new, vllm_part) == []


def _verdict(draft: Any, target: Any, runtime: str) -> tuple[Verdict, list[str]]:
    report = check_files(draft, target, runtime)
    return report.runtime_verdicts["vllm"], [f.message for f in report.findings]


def test_dflash_and_eagle3_on_gemma3_follow_the_new_release_s_facts(
    releases: tuple[Release, Release],
) -> None:
    """Gemma 3 gains capture in the new release's facts alone: a DFlash draft and an EAGLE-3
    head on it are refused at the release before and served at the new one, whose report
    cites no other release as its own."""
    old, new = releases
    dflash = copy.deepcopy(draft_config())
    dflash["dflash_config"]["target_layer_ids"] = [1, 9, 17, 25, 33]
    head = json.loads((LLAMA_HEAD / "config.json").read_text(encoding="utf-8"))
    llama = json.loads((LLAMA_31_8B / "config.json").read_text(encoding="utf-8"))
    pairs = [
        (files("draft", dflash, fc_tensors(dflash)), {**qwen3_4b_config(), **GEMMA3}),
        (files("draft", head), {**llama, **GEMMA3}),
    ]
    for draft, target in pairs:
        target_files = files("target", target)
        assert _verdict(draft, target_files, old.spec)[0] is Verdict.INCOMPATIBLE
        verdict, messages = _verdict(draft, target_files, new.spec)
        assert verdict is Verdict.COMPATIBLE, messages
        assert citations_not_of(new, " ".join(messages)) == [], messages


def test_the_formats_listing_names_the_new_release(releases: tuple[Release, Release]) -> None:
    """``formats`` lists the new release among those that load each draft its model registry
    holds (read from its facts)."""
    _, new = releases
    assert new.spec in formats_json()
    ran = invoke_cli("formats", "--format", "json")
    assert ran.returncode == 0 and new.spec in ran.stdout


def test_the_generated_docs_name_the_new_release(releases: tuple[Release, Release]) -> None:
    """tools/gen_docs.py writes every page with the new release: its own MTP rows (cited at its
    own hf_config_override lines) and its formats."""
    _, new = releases
    pages = {path: make() for path, make in gen_docs.DOCS.items()}
    runtimes = pages["docs/runtimes.md"]
    mtp_rows = [line for line in runtimes.splitlines() if f"(`=={new.version}`)" in line]
    assert any("DeepSeekMTPModel" in line for line in mtp_rows), runtimes
    assert all(f"{new.spec}:vllm/config/speculative.py:" in line for line in mtp_rows)
    assert all(citations_not_of(new, line) == [] for line in mtp_rows)
    assert new.spec in pages["docs/formats.md"]
