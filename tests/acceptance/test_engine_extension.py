"""An engine is one module behind one interface, registered in one list (CONTRIBUTING.md).

A fake engine is added here the way a new one is: one module-like value (an ``Engine`` with its
releases, reviewed semantics, stages, serve command, HTTP profile and capture judge), its
registration in ``knowledge.engines.ENGINES``, its extracted facts (one data file per release,
in a temporary data folder) and its runtime row. With no other edit it is selected by ``-r``,
listed by ``runtimes``, judged from its own release's facts in a verdict, gets its stages and
its command line, answers with its MTP rows for a target asked about alone, answers the rules'
questions about a draft (``Engine.handling``), has its own test registry read by ``registry``
(``Engine.test_file``), and is listed under the rules about extracted engines. Each test first
shows the fake is unknown without its registration.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from dflash_check.app.engine_tests import detect_kind, load_engine_file
from dflash_check.app.engine_tests.parsing import EngineEntry
from dflash_check.engines.command import LaunchSpec, build_command, launch_command
from dflash_check.engines.profiles import profile
from dflash_check.knowledge import engine_limits, engines, facts
from dflash_check.knowledge.engines import vllm
from dflash_check.knowledge.engines.handling import DraftHandling
from dflash_check.knowledge.engines.interface import Engine, EngineLimit, Release, Stage
from dflash_check.knowledge.engines.mtp_reading import EngineMtp, MtpReruns
from dflash_check.knowledge.engines.test_files import EngineTestFile
from dflash_check.knowledge.outcomes import stage_of
from dflash_check.knowledge.reviewed import Reviewed, inherit
from dflash_check.knowledge.runtimes import METHOD_PROFILES, PROFILES_BY_NAME
from dflash_check.knowledge.selection import SelectionError, parse_selection
from dflash_check.views import TensorInfo
from tests.support.helpers import EXAMPLES, FIXTURES, fc_tensors, invoke_cli, write_model
from tests.support.releases import clear_facts, copy_facts
from tests.unit.knowledge.test_engine_contract import ERROR_RULES

SEED = (str(EXAMPLES / "Qwen3-4B-DFlash-b16"), str(EXAMPLES / "Qwen3-4B"))
NAME = "fakeserve"


def _serve(spec: LaunchSpec) -> list[str]:
    return ["fakeserve", "run", spec.target, "--draft", spec.draft, "--block", str(spec.block_size)]


# -- the engine's module: what a new engine module fills ---------------------------------------


def _mtp_rows(_engine: Engine) -> tuple[EngineMtp, ...]:
    """Its MTP rows (``Engine.mtp``): it builds an MTP draft from a target's own NextN layers
    for one architecture."""
    return (
        EngineMtp(
            NAME,
            ("FakeMtpForCausalLM",),
            "FakeNextN (weights from model.layers.{N})",
            "fakeserve run --mtp {k}",
            "k",
            "refuses to load (fake)",
            f"{NAME}==1.1.0:fake/mtp.py:3",
            reruns=MtpReruns(
                "steps must divide by {k}", f"{NAME}==1.1.0:fake/mtp.py:9", f"{NAME}==1.1.0:x:1"
            ),
        ),
        EngineMtp(NAME, (), "none", "not available", "-", "-", f"{NAME}==1.1.0:fake/mtp.py:1"),
    )


def read_fake_pairs(text: str, display: str) -> tuple[EngineEntry, ...]:
    """Its test registry's reader (``EngineTestFile.reader`` names it): one ``draft -> target``
    pairing per line after the marker."""
    pairs = [line.split(" -> ") for line in text.splitlines()[1:] if " -> " in line]
    return tuple(EngineEntry("DFLASH", i + 2, t, d) for i, (d, t) in enumerate(pairs))


FAKE = Engine(
    NAME,
    "A fake serving engine",
    "example/fakeserve",
    inherit(
        (Release(NAME, "1.0.0"), Release(NAME, "1.1.0", date="2026-12-01")),
        (
            Reviewed(">=1.0", repository="example/fakeserve", pypi=True, distributions=(NAME,)),
            Reviewed(">=1.1", notes="drops Qwen3's capture (fake)"),
        ),
    ),
    ("dflash",),
    drivable=True,
    extracted=True,
    # An out-of-range id runs silently here (the rule's default is at load).
    stages=MappingProxyType({NAME: MappingProxyType({"DF004": Stage.SILENT})}),
    limits=(
        EngineLimit(
            releases="<1.1",
            methods=("dflash",),
            pipeline_parallel=True,
            what="pipeline parallelism (fake)",
            where="fakeserve==1.0.0:fake/runner.py:1",
            signature="fake drafter missing",
            instead="use 1.1.0",
        ),
    ),
    http=lambda: replace(vllm.http(), name=NAME, metrics_hint="start fakeserve with --metrics"),
    serve=_serve,
    judge=vllm.judge,  # its facts read like vLLM's: a capture interface per class
    mtp_rows=_mtp_rows,
    # Its converter sizes a draft's vocabulary from the draft's tensors (as llama.cpp's).
    handling=DraftHandling(vocab_from_tensors=True),
    test_file=EngineTestFile(
        "fake_pairs.txt",
        ("# fakeserve pairs",),
        (("fakeserve_version.py",),),
        f"{__name__}:read_fake_pairs",
        asks_method=False,
    ),
)
ROW = replace(
    PROFILES_BY_NAME["reference"], name=NAME, title="a fake engine", family_independent=False
)
"""Its runtime row (a runtime's extension point): loads DFlash drafts as the reference does."""


def _facts(version: str, captures: bool) -> dict[str, Any]:
    """A release's facts as the extractor writes them: Qwen3 served, captured or not."""
    target = {"at": "fake/registry.py:10", "class_at": "fake/qwen3.py:5", "capture": captures}
    if captures:
        target["sites"] = ["fake/qwen3.py:40:after-layer"]
    return {
        "engine": NAME,
        "release": version,
        "cite_as": f"{NAME}=={version}",
        "archive": f"{NAME}-{version}.tar.gz",
        "targets": {"Qwen3ForCausalLM": target},
        # Its model registry holds the seed's draft: an extracted engine loads the draft
        # architectures its release registers (knowledge/registered_drafts.py).
        "drafts": {"DFlashDraftModel": {"at": "fake/registry.py:20", "class_at": "fake/d.py:5"}},
        "speculators": {},
        "messages": {"no_capture_v2": {"at": "fake/capture.py:7", "text": "no capture here"}},
    }


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Engine]:
    """Register the fake engine, its runtime row and its facts (1.0.0 captures, 1.1.0 not)."""
    data = copy_facts(tmp_path / "data", monkeypatch)
    for version, captures in (("1.0.0", True), ("1.1.0", False)):
        text = json.dumps(_facts(version, captures))
        (data / f"{NAME}-{version}.json").write_text(text, encoding="utf-8")
    monkeypatch.setattr(engines, "ENGINES", (*engines.ENGINES, FAKE))
    monkeypatch.setitem(METHOD_PROFILES, "dflash", (*METHOD_PROFILES["dflash"], ROW))
    clear_facts()
    yield FAKE
    clear_facts()


def pair_json(*args: str) -> tuple[int, dict[str, Any]]:
    proc = invoke_cli("pair", *args, "--format", "json")
    return proc.returncode, json.loads(proc.stdout)


def test_an_unregistered_engine_is_unknown() -> None:
    with pytest.raises(KeyError):
        engines.engine(NAME)
    with pytest.raises(SelectionError, match="unknown runtime"):
        parse_selection([f"{NAME}==1.0.0"])


def test_its_releases_are_selected(fake_engine: Engine) -> None:
    assert engines.engine(NAME) is fake_engine
    assert engines.release_of(NAME).version == "1.1.0"  # the newest
    assert engines.release_of(NAME, "1.1.0").notes == "drops Qwen3's capture (fake)"
    assert engines.release_of(NAME, "1.0.0").notes == ""  # the range starts at 1.1
    (choice,) = parse_selection([f"{NAME}==1.0.0"]).choices
    assert (choice.engine, choice.version) == (NAME, "1.0.0")
    with pytest.raises(SelectionError, match=f"{NAME}==1.0.0, {NAME}==1.1.0"):
        parse_selection([f"{NAME}==9.9"])


def test_its_facts_and_stages(fake_engine: Engine) -> None:
    old, new = (facts.for_release(r) for r in fake_engine.releases)
    assert (old.cite_as, new.cite_as) == (f"{NAME}==1.0.0", f"{NAME}==1.1.0")
    assert stage_of("DF004", NAME) is Stage.SILENT
    assert stage_of("DF006", NAME) is Stage.FIRST_DECODE  # the rule's default


def test_it_holds_the_contracts_of_the_engine_model(fake_engine: Engine) -> None:
    """What the contract tests ask of every registered engine holds for the new one: each
    release has its facts, cited as its own code; each error rule has a stage on its runtime."""
    assert fake_engine in engines.registered()
    for release in fake_engine.releases:
        assert facts.for_release(release).cite_as == release.source
    for rule in ERROR_RULES:
        assert stage_of(rule, NAME) is not None, rule


def test_its_command_line_and_profile(fake_engine: Engine) -> None:
    spec = LaunchSpec(NAME, "t", "d", 16, port=9000)
    argv = ("fakeserve", "run", "t", "--draft", "d", "--block", "16")
    assert build_command(spec) == (*argv, "--host", "127.0.0.1", "--port", "9000")
    assert launch_command(spec, "/opt/fakeserve")[0] == "/opt/fakeserve"
    assert profile(NAME).metrics_hint == "start fakeserve with --metrics"


def test_its_limits_hold_by_release_range(fake_engine: Engine) -> None:
    assert engine_limits.limit_for(NAME, "1.0.0", "dflash", 2) is not None
    assert engine_limits.limit_for(NAME, "1.0.0+cpu", "dflash", 2) is not None
    assert engine_limits.limit_for(NAME, "1.1.0", "dflash", 2) is None
    assert engine_limits.limit_for(NAME, "1.0.0", "dflash", 1) is None


def test_it_is_a_choice_of_engine_only_once_registered(fake_engine: Engine, tmp_path: Path) -> None:
    """``--engine`` reads its choices from the registered engines when it parses: the fake
    engine is accepted (the next complaint is the missing --smoke-run), completed, and its
    name joins the flags' messages."""
    from dflash_check.cli.engine import complete_engine

    target = write_model(tmp_path / "t", {"architectures": ["X"], "model_type": "x"})
    run = invoke_cli("pair", str(target), str(target), "--engine", NAME)
    assert run.returncode == 2 and "needs --smoke-run" in run.stderr, run.stderr
    assert complete_engine("fake") == [NAME]
    run = invoke_cli("pair", str(target), str(target), "--launch")
    assert f"--engine vllm|sglang|{NAME}" in run.stderr


def test_an_unregistered_engine_is_no_choice(tmp_path: Path) -> None:
    target = write_model(tmp_path / "t", {"architectures": ["X"], "model_type": "x"})
    run = invoke_cli("pair", str(target), str(target), "--engine", NAME)
    assert run.returncode == 2 and f"'{NAME}' is not one of 'vllm', 'sglang'" in run.stderr


def test_it_is_listed(fake_engine: Engine) -> None:
    listed = invoke_cli("runtimes", "--format", "markdown").stdout
    assert f"`{NAME}==1.1.0` (newest known)" in listed
    assert f"`{NAME}==1.0.0`" in listed


def test_its_verdict_reads_its_own_release_s_facts(fake_engine: Engine) -> None:
    """1.0.0's facts capture on Qwen3: compatible; 1.1.0's do not: refused, in 1.1.0's words,
    cited in 1.1.0's code (never another release's)."""
    code, data = pair_json(*SEED, "-r", f"{NAME}==1.0.0")
    assert code == 0, data
    assert data["runtimes"] == {NAME: "compatible"}
    code, data = pair_json(*SEED, "-r", f"{NAME}==1.1.0")
    assert code == 1, data
    assert data["runtimes"] == {NAME: "incompatible"}
    # The family cell derived from 1.1.0's facts (DF017) or the coverage rule (DF053) says it.
    said = [f["message"] for f in data["findings"] if f["severity"] == "error"]
    assert any(f"'no capture here' ({NAME}==1.1.0:fake/capture.py:7)" in m for m in said), said
    assert f"{NAME}==1.0.0" not in json.dumps(data["findings"])


def _mtp_target(folder: Path, layers: int = 1) -> Path:
    """A DeepSeek-V3-shaped target with ``layers`` MTP layers, of an architecture no real
    engine builds an MTP draft for."""
    config_path = FIXTURES / "targets" / "deepseek-ai--DeepSeek-V3" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.update(
        architectures=["FakeMtpForCausalLM"],
        model_type="fake_mtp",
        num_nextn_predict_layers=layers,
    )
    return write_model(folder, config)


def test_without_it_no_engine_builds_the_target_s_mtp_draft(tmp_path: Path) -> None:
    proc = invoke_cli("pair", str(_mtp_target(tmp_path / "t")), "--format", "json")
    data = json.loads(proc.stdout)
    assert [f["rule"] for f in data["findings"]] == ["DF043"]
    assert NAME not in [e["engine"] for e in data["engines"]]


def test_its_mtp_support_is_listed_and_judged(fake_engine: Engine, tmp_path: Path) -> None:
    """The MTP rows its module declares answer for a target asked about alone: the draft it
    builds, how to ask for it (k filled in), and DF043 (no engine builds one) no longer fires."""
    proc = invoke_cli("pair", str(_mtp_target(tmp_path / "t")), "--format", "json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["findings"] == []
    (row,) = [e for e in data["engines"] if e["engine"] == NAME]
    assert (row["draft"], row["request"]) == (
        "FakeNextN (weights from model.layers.61)",
        "fakeserve run --mtp 1",
    )
    listed = invoke_cli("runtimes", "--format", "markdown").stdout
    assert f"| `{NAME}` | `FakeMtpForCausalLM` | FakeNextN" in listed


def test_its_mtp_rows_say_how_it_reads_more_tokens_than_layers(
    fake_engine: Engine, tmp_path: Path
) -> None:
    """An engine whose MTP row declares how it reruns the layers (``EngineMtp.reruns``) gets
    DF044 in its own words and citation, and is listed under the rule; no real engine builds
    this target's draft, so vLLM says nothing."""
    target = str(_mtp_target(tmp_path / "t", layers=2))
    proc = invoke_cli("pair", target, "--num-speculative-tokens", "3", "--format", "json")
    found = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["runtime"]) for f in found] == [("DF044", NAME)], found
    assert "A fake serving engine refuses it ('steps must divide by 2'" in found[0]["message"]
    assert f"{NAME}==1.1.0:fake/mtp.py:9" in found[0]["message"]
    assert _rule_runtimes()["DF044"] == ["vllm", NAME]


def test_the_mtp_rules_list_it_when_its_rows_say_it_builds_one(
    fake_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DF041-DF043 speak for the engines whose MTP rows say they build a draft from the
    target's layers (``EngineMtp.builds``): the fake one is listed; with rows that say it does
    not (as llama.cpp's, not read), it is not."""
    mtp_rules = ("DF041", "DF042", "DF043")
    listed = _rule_runtimes()
    assert all(listed[r] == ["vllm", "sglang", "trtllm", NAME] for r in mtp_rules), listed
    rows = tuple(replace(r, builds=False) for r in FAKE.mtp)
    unbuilt = replace(FAKE, mtp_rows=lambda _engine: rows)
    monkeypatch.setattr(engines, "ENGINES", (*engines.ENGINES[:-1], unbuilt))
    listed = _rule_runtimes()
    assert all(listed[r] == ["vllm", "sglang", "trtllm"] for r in mtp_rules), listed


def _rule_runtimes() -> dict[str, list[str]]:
    """Each rule's runtimes as ``dflash-check rules`` lists them."""
    listed = json.loads(invoke_cli("rules", "--format", "json").stdout)
    return {r["id"]: r["runtimes"] for r in listed["rules"]}


def test_the_rules_about_extracted_engines_list_it(fake_engine: Engine) -> None:
    """DF052 and DF053 speak for every engine whose code is read as data: the fake one, whose
    releases have facts, is listed under them (read from the registration when asked)."""
    listed = _rule_runtimes()
    assert NAME in listed["DF052"] and NAME in listed["DF053"]
    assert NAME not in listed["DF054"]  # a rule about vLLM's method check names vLLM only
    # A rule about every runtime (the default) lists its runtime row too.
    assert NAME in listed["DF090"]


def _draft_with_own_vocabulary(folder: Path, seed: Path) -> Path:
    """The seed's draft, its config stating another vocabulary while its header ships an
    embedding of the target's size (151936 rows)."""
    config = json.loads((seed / "config.json").read_text(encoding="utf-8"))
    tensors = fc_tensors(config, target_hidden=2560)
    tensors["model.embed_tokens.weight"] = TensorInfo("BF16", (151936, 8))
    return write_model(folder, {**config, "vocab_size": 200000}, tensors)


def test_the_rules_ask_it_how_it_reads_a_draft(
    fake_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DF007 asks the engine whether it sizes the vocabulary from the draft's tensors
    (``DraftHandling.vocab_from_tensors``): the fake one does, so a draft whose config alone
    states another vocabulary is no error on it; the same engine without that answer gets
    DF007's error."""
    draft = str(_draft_with_own_vocabulary(tmp_path / "d", Path(SEED[0])))

    def df007() -> list[str]:
        _, data = pair_json(draft, SEED[1], "-r", f"{NAME}==1.0.0")
        return [f["severity"] for f in data["findings"] if f["rule"] == "DF007"]

    assert engines.handling(NAME) is fake_engine.handling
    assert "error" not in df007()
    unread = replace(fake_engine, handling=DraftHandling())
    monkeypatch.setattr(engines, "ENGINES", (*engines.ENGINES[:-1], unread))
    assert "error" in df007()


def test_its_test_registry_is_read(fake_engine: Engine, tmp_path: Path) -> None:
    """``registry`` tells the engine's test file by its module's markers, reads it with the
    reader the module names and finds the release beside it: no list in app/ names it."""
    path = tmp_path / "fake_pairs.txt"
    path.write_text("# fakeserve pairs\nz-lab/d -> Qwen/t\n", encoding="utf-8")
    (tmp_path / "fakeserve_version.py").write_text("__version__ = '1.1.0'\n")
    assert detect_kind(path, path.read_text()) == NAME
    read = load_engine_file(path, "fake_pairs.txt", NAME, path.read_text())
    assert (read.engine, read.version) == (NAME, "1.1.0")
    assert read.entries == (EngineEntry("DFLASH", 2, "Qwen/t", "z-lab/d"),)


def test_without_it_its_test_registry_is_a_pairs_file(tmp_path: Path) -> None:
    path = tmp_path / "fake_pairs.txt"
    path.write_text("# fakeserve pairs\nz-lab/d -> Qwen/t\n", encoding="utf-8")
    assert detect_kind(path, path.read_text()) == "pairs"
