"""A release cites its own code: what it inherits from a reviewed range is cited in its own
facts, or says which release was read (``knowledge/citations.py``).

The exercise of a new release (the newest release's facts under the next version, one row)
is judged through the CLI; every citation its verdicts print is checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dflash_check.knowledge import engines
from dflash_check.knowledge.citations import own_citations
from dflash_check.knowledge.engines import LLAMACPP, VLLM, Release, llamacpp
from dflash_check.knowledge.engines.interface import ProfileKey
from dflash_check.knowledge.reviewed import inherit
from tests.support.helpers import QWEN3_4B, SEED_DRAFT, draft_config, invoke_cli, write_draft
from tests.support.releases import (
    add_next_vllm,
    citations_not_of,
    clear_facts,
    copy_facts,
    read_in,
)

REMOVAL = "Model Runner V1 has been removed"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped facts that the tool reads instead of its own."""
    yield copy_facts(tmp_path / "data", monkeypatch)
    clear_facts()


def _verdicts(tmp_path: Path, release: Release) -> str:
    """Everything the CLI prints judging pairs on ``release``: its runner, a refused runner,
    the load-time method check (DF054) and repeated ids (DF003), as tables and JSON."""
    dspark = draft_config(
        architectures=["Qwen3DSparkModel"], markov_rank=256, markov_head_type="vanilla"
    )
    repeated = draft_config()
    repeated["dflash_config"] = {**repeated["dflash_config"], "target_layer_ids": [1, 1, 17, 33]}
    drafts = {
        "seed": SEED_DRAFT,
        "dspark": write_draft(tmp_path / "dspark", dspark),
        "repeated": write_draft(tmp_path / "repeated", repeated),
    }
    runs = [
        ("seed", "-r", release.spec),
        ("seed", "-r", f"vllm-v1=={release.version}"),
        ("dspark", "-r", release.spec, "--speculative-method", "dflash"),
        ("repeated", "-r", release.spec),
    ]
    out = []
    for name, *args in runs:
        for fmt in ("table", "json"):
            done = invoke_cli("pair", str(drafts[name]), str(QWEN3_4B), *args, "-f", fmt)
            out.append(done.stdout + done.stderr)
    return "\n".join(out)


def test_every_citation_of_a_new_release_s_verdicts_names_its_facts_or_says_read_at(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where the reviewed texts were read (the newest release before this one, today); a
    # release row added later does not move it.
    read = read_in(VLLM.newest.duplicate_ids_refused["V2"])
    new = add_next_vllm(data_dir, monkeypatch)
    said = _verdicts(tmp_path, new)
    assert citations_not_of(new, said) == []
    flat = " ".join(said.split())
    # The V1 removal and the method check are messages its own facts carry: cited there.
    assert f"{REMOVAL} ({new.spec}:vllm/platforms/interface.py:" in flat  # JSON runner_choice
    assert f"{new.spec}:vllm/v1/worker/gpu/spec_decode/speculator_config.py:" in flat
    # Why repeated ids are refused was read in a release's code, not in its facts.
    assert f"read at {read}:vllm/model_executor/models/interfaces.py:" in flat


def _without_v1_removal(raw: dict[str, Any]) -> None:
    """The new release's code no longer has the V1-removal message where it was read."""
    raw["messages"]["v1_removed"] = None


def test_a_fact_the_new_release_s_facts_do_not_show_is_cited_where_it_was_read(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = read_in(VLLM.newest.removed_runners["V1"])
    new = add_next_vllm(data_dir, monkeypatch, _without_v1_removal)
    done = invoke_cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", new.spec, "-f", "json")
    assert f"(read at {read}:vllm/platforms/interface.py:" in done.stdout
    assert f"{new.spec}:vllm/platforms" not in done.stdout


def test_a_citation_inside_an_inherited_row_override_says_where_it_was_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """llama.cpp's reviewed row for ``>=0c1e57098`` (read in llama-cpp-python 0.3.36) reaches a
    later commit inside ``Release.overrides``: its citation there says it was read at 0.3.36,
    the release's own rows are untouched."""
    read = LLAMACPP.newest
    key = ProfileKey("dflash", "llamacpp")  # the key the row is stored under
    row = Release("llamacpp", "fedcba987")  # a later commit, with no code read
    engine = replace(LLAMACPP, releases=inherit((*llamacpp.RELEASES, row), llamacpp.REVIEWED))
    monkeypatch.setattr(
        engines, "ENGINES", tuple(engine if e.name == "llamacpp" else e for e in engines.ENGINES)
    )
    later = own_citations(engine.newest, engine)
    cited = later.overrides[key]["citation"]
    assert cited.startswith(f"read at {read.source}:") and citations_not_of(later, cited) == []
    assert engine.newest.overrides[key]["citation"].startswith(f"{read.source}:")
    assert own_citations(read, LLAMACPP) is read  # the release that was read cites itself


def test_a_citation_inside_a_typed_draft_class_value_says_where_it_was_read(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typed value (``draft_classes.NopeLayers``) inherited by a new release keeps its choice
    and has its citation resolved like a text field: the new release's facts hold no message
    in those lines, so it says where it was read."""
    read = VLLM.newest.dflash2_nope
    assert read is not None
    new = own_citations(add_next_vllm(data_dir, monkeypatch), engines.engine("vllm"))
    nope = new.dflash2_nope
    assert nope is not None and nope.serving is read.serving
    assert f"read at {read_in(read.text)}:vllm/config/speculative.py:" in nope.text
    assert citations_not_of(new, nope.text) == []
