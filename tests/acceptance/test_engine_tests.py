"""`dflash-check registry` on the engines' own test registries (vLLM, SGLang), never imported."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from dflash_check.app.engine_tests import EngineFile, checkout_version, detect_kind
from dflash_check.app.engine_tests.plan import make_plan
from dflash_check.app.engine_tests.sglang_constants import read_sglang_constants
from dflash_check.app.engine_tests.vllm_test_registry import read_vllm_test_registry
from dflash_check.errors import RegistryError
from tests.acceptance.test_registry import sarif_schema
from tests.support.helpers import REPO, invoke_cli, run_cli
from tests.support.hubserver import LoopbackHub, add_fixture_repos, serve

FIXTURES = REPO / "tests" / "fixtures" / "engine_tests"
MAIN = (FIXTURES / "vllm-registry-main.py.txt").read_text()
OLD = (FIXTURES / "vllm-registry-v0.8.py.txt").read_text()
SGLANG = (FIXTURES / "sglang-test-utils.py.txt").read_text()
BUGGY_TARGET = '        "Qwen/Qwen3.5-4B",\n        speculative_model="z-lab/Qwen3-4B-DFlash-b16",'
FIXED = MAIN.replace(BUGGY_TARGET, BUGGY_TARGET.replace("Qwen3.5-4B", "Qwen3-4B"))


def line_of(text: str, needle: str) -> int:
    """Return the 1-based line of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """The loopback Hub with every fixture model (the #48113 pair's models included)."""
    with serve() as server:
        add_fixture_repos(server)
        yield server


def checkout(root: Path, text: str, version: str | None = "0.34.0") -> Path:
    """Lay ``text`` out as a vLLM checkout's tests/models/registry.py (with its version file)."""
    path = root / "vllm" / "tests" / "models" / "registry.py"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    if version is not None:
        (root / "vllm" / "vllm").mkdir()
        (root / "vllm" / "vllm" / "_version.py").write_text(
            f"__version__ = version = '{version}'\n__version_tuple__ = (0, 34, 0)\n"
        )
    return path


def registry(hub: LoopbackHub, home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run `dflash-check registry` in this process against the loopback Hub."""
    return invoke_cli("registry", *args, env=hub.env(home), cwd=cwd)


def registry_process(
    hub: LoopbackHub, home: Path, *args: str, cwd: Path
) -> subprocess.CompletedProcess:
    """Run `dflash-check registry` in a subprocess against the loopback Hub, as CI does."""
    return run_cli("registry", *args, env=hub.env(home), cwd=cwd, timeout=300)


# -- reading the files -----------------------------------------------------------------------


def test_new_layout_reads_every_entry_at_its_line() -> None:
    """Multi-line entries, each at the line of its key; stated method, tokenizer and flags."""
    entries = {e.key: e for e in read_vllm_test_registry(MAIN, "registry.py")}
    assert list(entries) == [
        "MedusaModel",
        "MLPSpeculatorPreTrainedModel",
        "EagleLlamaForCausalLM",
        "Eagle3LlamaForCausalLM",
        "EagleMistralLarge3ForCausalLM",
        "DFlashDraftModel",
        "ExtractHiddenStatesModel",
        "OpenPanguMTPModel",
        "Qwen3_5MoeMTP",
    ]
    dflash = entries["DFlashDraftModel"]
    assert dflash.line == line_of(MAIN, '"DFlashDraftModel": _HfExamplesInfo(')
    assert (dflash.target, dflash.draft, dflash.method) == (
        "Qwen/Qwen3.5-4B",
        "z-lab/Qwen3-4B-DFlash-b16",
        "dflash",
    )
    assert entries["Eagle3LlamaForCausalLM"].tokenizer == "meta-llama/Llama-3.1-8B-Instruct"
    assert not entries["EagleMistralLarge3ForCausalLM"].available_online
    commented = entries["MLPSpeculatorPreTrainedModel"]
    assert commented.commented_out and commented.draft == "ibm-ai-platform/llama-160m-accelerator"
    assert commented.line == line_of(MAIN, '# "MLPSpeculatorPreTrainedModel"')
    # Tables other than the speculative one are not read.
    assert "LlamaForCausalLM" not in entries and "TransformersForCausalLM" not in entries


def test_old_layout_single_line_entries_and_commented_one() -> None:
    """The one-line layout with aligned continuation lines and # noqa comments."""
    entries = {e.key: e for e in read_vllm_test_registry(OLD, "registry.py")}
    assert list(entries) == [
        "EAGLEModel",
        "MedusaModel",
        "MLPSpeculatorPreTrainedModel",
        "DeepSeekMTPModel",
        "EagleLlamaForCausalLM",
    ]
    mlp = entries["MLPSpeculatorPreTrainedModel"]
    assert mlp.commented_out and mlp.target == "JackFram/llama-160m"
    assert entries["DeepSeekMTPModel"].draft == "luccafong/deepseek_mtp_draft_random"
    assert entries["EAGLEModel"].line == line_of(OLD, '"EAGLEModel"')


def test_merged_tables_keep_their_own_lines() -> None:
    """A table built with ** merges reads the merged tables' entries, at their lines."""
    text = (
        "_EAGLE = {\n"
        '    "Eagle3LlamaForCausalLM": _HfExamplesInfo("t/a", speculative_model="d/a"),\n'
        "}\n"
        "DFLASH_TARGET = 'Qwen/Qwen3-4B'\n"
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n"
        "    **_EAGLE,\n"
        '    "DFlashDraftModel": _HfExamplesInfo(\n'
        "        default=DFLASH_TARGET,\n"
        '        speculative_model="z-lab/Qwen3-4B-DFlash-b16",\n'
        "    ),\n"
        "}\n"
    )
    entries = read_vllm_test_registry(text, "r.py")
    assert [(e.key, e.line, e.target) for e in entries] == [
        ("Eagle3LlamaForCausalLM", 2, "t/a"),
        ("DFlashDraftModel", 7, "Qwen/Qwen3-4B"),
    ]


def test_a_commented_entry_that_does_not_parse_is_still_listed() -> None:
    """A disabled entry whose text is not a literal call is listed by name, never dropped."""
    text = (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n"
        '    # "OldDraftModel": _HfExamplesInfo(\n'
        "    #     TARGET_OF(version),\n"
        "    # ),\n"
        '    "MedusaModel": _HfExamplesInfo("t/a", speculative_model="d/a"),\n'
        "}\n"
    )
    entries = read_vllm_test_registry(text, "r.py")
    assert [(e.key, e.line, e.commented_out, e.target) for e in entries] == [
        ("OldDraftModel", 2, True, None),
        ("MedusaModel", 5, False, "t/a"),
    ]


BAD_SHAPES = {
    "syntax": ("_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n  'a': (\n", "r.py:2: not valid Python"),
    "no-table": ("X = 1\n", "r.py: no _SPECULATIVE_DECODING_EXAMPLE_MODELS table found"),
    "not-a-dict": (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = dict(a=1)\n",
        "r.py:1: unexpected shape: _SPECULATIVE_DECODING_EXAMPLE_MODELS is not a dict literal",
    ),
    "not-a-call": (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n  'A': ('t/a', 'd/a'),\n}\n",
        "r.py:2: unexpected shape: entry 'A' is not _HfExamplesInfo(...)",
    ),
    "computed-name": (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n"
        "  'A': _HfExamplesInfo('t/a', speculative_model=f'd/{x}'),\n}\n",
        "r.py:2: unexpected shape: entry 'A': speculative_model is not a string literal",
    ),
    "merge-of-call": (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {**load()}\n",
        "r.py:1: unexpected shape: ** of an expression",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SHAPES))
def test_unexpected_shapes_are_one_error_with_a_line(case: str) -> None:
    """Nothing is guessed: a shape the reader does not know is refused at its line."""
    text, expected = BAD_SHAPES[case]
    with pytest.raises(RegistryError) as info:
        read_vllm_test_registry(text, "r.py")
    assert str(info.value).startswith(expected), str(info.value)


def test_every_entry_is_checked_or_listed_with_its_reason() -> None:
    """No entry is dropped: the checks and the not-checked list cover the file."""
    entries = read_vllm_test_registry(MAIN, "registry.py")
    plan = make_plan(EngineFile("vllm", None, entries), {}, "vllm", "registry.py")
    assert len(plan.specs) + len(plan.skipped) == len(entries)
    reasons = {k.key: k.reason for k in plan.skipped}
    assert reasons == {
        "MedusaModel": "method medusa (Medusa heads)",
        "MLPSpeculatorPreTrainedModel": "commented out in the registry",
        "EagleLlamaForCausalLM": "method eagle (EAGLE-1/2)",
        "EagleMistralLarge3ForCausalLM": "is_available_online=False (the engine's own tests "
        "skip it)",
        "ExtractHiddenStatesModel": "method extract_hidden_states (hidden-state extraction, "
        "no draft model)",
        "OpenPanguMTPModel": "is_available_online=False (the engine's own tests skip it)",
    }
    alone = [s.target for s in plan.specs if s.index in plan.alone]
    assert alone == ["Qwen/Qwen3.5-35B-A3B"]  # the MTP entry whose draft is the target


def test_sglang_constants_pair_by_suffix() -> None:
    """Draft and target constants with one suffix are one entry, at the draft's line."""
    entries = {e.key: e for e in read_sglang_constants(SGLANG, "test_utils.py")}
    assert entries["DFLASH"].draft == "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat"
    assert entries["DFLASH"].line == line_of(SGLANG, "DEFAULT_DRAFT_MODEL_DFLASH")
    assert entries["NGRAM"].draft is None
    plan = make_plan(EngineFile("sglang", None, tuple(entries.values())), {}, "sglang", "t.py")
    assert {k.key: k.reason for k in plan.skipped} == {
        "EAGLE": "method eagle (EAGLE-1/2)",
        "STANDALONE": "method draft_model (a standalone draft model)",
        "NGRAM": "method ngram (n-gram lookup, no draft model)",
    }
    assert {s.label for s in plan.specs} == {
        "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B -> meta-llama/Llama-3.1-8B-Instruct",
        "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat -> meta-llama/Llama-3.1-8B-Instruct",
        "Tengyunw/qwen3_30b_moe_eagle3 -> Qwen/Qwen3-30B-A3B",
    }


def test_kind_and_version_come_from_the_checkout(tmp_path: Path) -> None:
    """vLLM's registry, SGLang's constants and pairs.yaml are told apart by content; the
    release is read from the checkout's version file (never imported)."""
    path = checkout(tmp_path, MAIN)
    assert detect_kind(path, MAIN) == "vllm"
    assert detect_kind(path, SGLANG) == "sglang"
    assert detect_kind(path, "version: 1\npairs: []\n") == "pairs"
    assert detect_kind(tmp_path / "pairs.yaml", "# like vLLM's _HfExamplesInfo\n") == "pairs"
    assert checkout_version(path, "vllm") == "0.34.0"
    assert checkout_version(checkout(tmp_path / "bare", MAIN, None), "vllm") is None
    sglang = tmp_path / "python" / "sglang"
    (sglang / "test").mkdir(parents=True)
    (sglang / "test" / "test_utils.py").write_text(SGLANG)
    (sglang / "_version.py").write_text("version: str\n__version__ = version = '0.5.23'\n")
    assert checkout_version(sglang / "test" / "test_utils.py", "sglang") == "0.5.23"


def test_a_reader_added_to_the_table_is_a_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``registry --kind`` reads its choices from the registered engines' ``test_file`` when it
    parses, shows them in its help and completes them: an engine registered with one is a
    choice, absent it is not."""
    from dataclasses import replace

    from dflash_check.cli.registry_command import choose_kind, complete_kind
    from dflash_check.knowledge import engines

    path = tmp_path / "test_utils.py"
    path.write_text(SGLANG)
    refused = invoke_cli("registry", str(path), "--kind", "fakeserve")
    assert refused.returncode == 2 and "'fakeserve' is not one of" in refused.stderr
    sglang = engines.SGLANG
    assert sglang.test_file is not None
    fake = replace(
        sglang,
        name="fakeserve",
        test_file=replace(sglang.test_file, display="tests/fake_pairs.py"),
    )
    monkeypatch.setattr(engines, "ENGINES", (*engines.ENGINES, fake))
    # Accepted when parsed (running it would need the engine's runtimes too).
    assert choose_kind("fakeserve") == "fakeserve"
    shown = invoke_cli("registry", "--help", env={"COLUMNS": "200"}).stdout
    assert "<auto|pairs|vllm|sglang|fakeserve>" in shown
    # Its help names each reader's file, from the readers: the added one too.
    words = " ".join(shown.replace("│", " ").split())
    assert "sglang (its test_utils.py constants) or fakeserve (its tests/fake_pairs.py)" in words
    assert complete_kind("f") == ["fakeserve"]


# -- the gate, through the loopback Hub ---------------------------------------------------------


def test_48113_pairing_fails_at_its_line_and_the_fix_passes(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """The bug of vllm-project/vllm#48113: exit 1, SARIF at the DFlashDraftModel line; fixed: 0."""
    path = checkout(tmp_path, MAIN)
    cwd = tmp_path / "vllm"
    line = line_of(MAIN, '"DFlashDraftModel": _HfExamplesInfo(')
    proc = registry(hub, tmp_path / "home", "tests/models/registry.py", "-f", "sarif", cwd=cwd)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    results = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert results and all(
        r["locations"][0]["physicalLocation"]
        == {"artifactLocation": {"uri": "tests/models/registry.py"}, "region": {"startLine": line}}
        for r in results
    )
    assert {r["ruleId"] for r in results} >= {"DF090", "DF004"}
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    texts = [n["message"]["text"] for n in notes]
    assert len(texts) == 6 and any("not checked: method medusa" in t for t in texts)
    assert "vLLM 0.34.0 test registry, checked for vllm" in proc.stderr
    assert "1 not as expected, 0 not checked; 6 entries skipped" in proc.stderr

    path.write_text(FIXED)
    fixed = registry(hub, tmp_path / "home", "tests/models/registry.py", "-f", "json", cwd=cwd)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    data = json.loads(fixed.stdout)
    assert data["summary"] == {
        "pairs": 3,
        "as_expected": 3,
        "not_as_expected": 0,
        "not_checked": 0,
        "skipped": 6,
    }
    mtp = next(p for p in data["pairs"] if p["target"] == "Qwen/Qwen3.5-35B-A3B")
    assert mtp["report"]["kind"] == "mtp" and mtp["verdict"] == "compatible"


def test_table_junit_and_github_list_entries_not_checked(hub: LoopbackHub, tmp_path: Path) -> None:
    """Each format names every entry: the checked ones, and one line per entry not checked."""
    checkout(tmp_path, MAIN)
    cwd, home = tmp_path / "vllm", tmp_path / "home"
    file = "tests/models/registry.py"
    medusa = line_of(MAIN, '"MedusaModel"')
    table = registry(hub, home, file, cwd=cwd)
    assert table.returncode == 1
    assert (
        f"- {file}:{medusa}  MedusaModel  abhigoyal/vllm-medusa-llama-68m-random -> "
        "JackFram/llama-68m  not checked: method medusa (Medusa heads)" in table.stdout
    )
    dflash = line_of(MAIN, '"DFlashDraftModel"')
    row = f"✗ {file}:{dflash}  z-lab/Qwen3-4B-DFlash-b16 -> Qwen/Qwen3.5-4B  [vllm==0.34.0]"
    assert row in table.stdout
    junit = ET.fromstring(registry(hub, home, file, "-f", "junit", cwd=cwd).stdout)
    suite = junit.find("testsuite")
    assert suite is not None and suite.get("skipped") == "6" and suite.get("failures") == "1"
    assert len(suite.findall("testcase/skipped")) == 6
    github = registry(hub, home, file, "-f", "github", cwd=cwd).stdout
    assert f"::notice file={file},line={medusa},title=not checked::MedusaModel: " in github
    assert f"::error file={file},line={dflash},title=DF090::" in github


def test_overrides_mark_expected_failures_and_skips(hub: LoopbackHub, tmp_path: Path) -> None:
    """An override makes the known-bad entry expected incompatible; a stale one is an error."""
    checkout(tmp_path, MAIN)
    cwd, home = tmp_path / "vllm", tmp_path / "home"
    (cwd / "overrides.yaml").write_text(
        "version: 1\nentries:\n  DFlashDraftModel:\n    expect: incompatible\n"
        "    reason: vllm-project/vllm#48113\n"
        "  Eagle3LlamaForCausalLM:\n    skip: not in this CI\n"
    )
    args = ("tests/models/registry.py", "--overrides", "overrides.yaml", "-f", "json")
    proc = registry(hub, home, *args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # An engine file's JSON (about, skipped, MTP reports) validates against the schema too.
    jsonschema.validate(data, json.loads((REPO / "docs" / "report.schema.json").read_text()))
    assert {k["key"]: k["reason"] for k in data["skipped"]}["Eagle3LlamaForCausalLM"] == (
        "not in this CI (overrides file)"
    )
    (cwd / "overrides.yaml").write_text("entries:\n  DFlashDraftModle:\n    skip: x\n")
    stale = registry(hub, home, *args, cwd=cwd)
    assert stale.returncode == 3
    assert (
        "overrides.yaml:2: no entry 'DFlashDraftModle' in the registry file "
        "(did you mean 'DFlashDraftModel'?)" in stale.stderr
    )


def test_broken_registry_is_one_line_exit_3(tmp_path: Path, hub: LoopbackHub) -> None:
    """A syntax error: one Error line naming file and line, exit 3, no traceback, no request."""
    checkout(tmp_path, MAIN.replace('"MedusaModel": _HfExamplesInfo(', '"MedusaModel" _HfEx('))
    proc = registry(hub, tmp_path / "home", "tests/models/registry.py", cwd=tmp_path / "vllm")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "tests/models/registry.py:" in errors[0]
    assert "not valid Python" in errors[0] and not hub.state.log


def test_sglang_constants_through_the_gate(hub: LoopbackHub, tmp_path: Path) -> None:
    """SGLang's EAGLE-3 pairing is checked for SGLang; the rest are listed or skipped."""
    hub.add(
        "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
        REPO / "tests" / "fixtures" / "hub" / "yuhuili" / "EAGLE3-LLaMA3.1-Instruct-8B",
    )
    (tmp_path / "test_utils.py").write_text(SGLANG)
    (tmp_path / "overrides.yaml").write_text(
        "entries:\n  DFLASH: {skip: draft not in the loopback Hub}\n"
        "  EAGLE_DP_ATTN: {skip: models not in the loopback Hub}\n"
    )
    proc = registry_process(  # an engine's test file, end to end in a real process
        hub, tmp_path / "home", "test_utils.py", "--overrides", "overrides.yaml", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SGLang (release unknown) test registry, checked for sglang" in (proc.stderr)
    assert "1 pair, 1 as expected, 0 not as expected, 0 not checked; 5 entries skipped" in (
        proc.stderr
    )


def test_runtime_and_overrides_refused_for_pairs_yaml() -> None:
    """--runtime and --overrides belong to engine files: a usage error for pairs.yaml."""
    proc = invoke_cli("registry", str(REPO / "pairs.yaml"), "-r", "vllm")
    assert proc.returncode == 2 and "apply to an engine's test file" in proc.stderr


def test_a_draft_whose_config_names_an_unchecked_method_is_listed(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """An entry whose name says nothing of its method is checked; when the draft's config shows
    a method the tool does not check (EAGLE-1 here), the entry is listed, not an error; the
    file's only entry, so nothing was checked: exit 3, not a passing gate."""
    config = {"architectures": ["EagleLlamaForCausalLM"], "hidden_size": 4096, "vocab_size": 8}
    hub.add("someone/eagle-head", {"config.json": json.dumps(config).encode()})
    text = (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n"
        '    "SomeDraftModel": _HfExamplesInfo(\n'
        '        "Qwen/Qwen3-4B", speculative_model="someone/eagle-head"\n'
        "    ),\n"
        "}\n"
    )
    (tmp_path / "registry.py").write_text(text)
    proc = registry(hub, tmp_path / "home", "registry.py", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Error: registry.py: nothing was checked: its one entry was skipped" in proc.stderr
    data = json.loads(proc.stdout)
    assert data["pairs"] == [] and data["skipped"] == [
        {
            "line": 2,
            "key": "SomeDraftModel",
            "label": "someone/eagle-head -> Qwen/Qwen3-4B",
            "reason": "method eagle (EAGLE-1/2), named by the draft's config",
        }
    ]


def test_only_and_runtime_narrow_an_engine_file(hub: LoopbackHub, tmp_path: Path) -> None:
    """--only keeps matching checks and listed entries; -r names the runtimes checked."""
    checkout(tmp_path, FIXED)
    args = ("tests/models/registry.py", "--only", "Qwen/*", "-r", "sglang", "-f", "json")
    proc = registry(hub, tmp_path / "home", *args, cwd=tmp_path / "vllm")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert [(p["target"], p["runtimes"]) for p in data["pairs"]] == [
        ("Qwen/Qwen3-4B", ["sglang"]),
        ("Qwen/Qwen3.5-35B-A3B", ["sglang"]),
    ]
    assert [k["key"] for k in data["skipped"]] == ["ExtractHiddenStatesModel"]
    assert "checked for sglang" in data["about"]


def test_speculative_method_of_an_entry_is_checked_at_its_line(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """An entry's speculative_method reaches the check: a DSpark draft asked for as dflash
    fails vLLM 0.34 (DF054) at its entry's line; as dspark it passes; 0.33 has no such check."""
    from tests.support.helpers import draft_config, encode_header, fc_tensors

    cfg = {
        **draft_config(),
        "architectures": ["Qwen3DSparkModel"],
        "markov_rank": 256,
        "markov_head_type": "vanilla",
    }
    hub.add(
        "someone/qwen3-dspark",
        {
            "config.json": json.dumps(cfg).encode(),
            "model.safetensors": encode_header(fc_tensors(cfg)),
        },
    )
    entry = (
        '    "{key}": _HfExamplesInfo(\n'
        '        "Qwen/Qwen3-4B",\n'
        '        speculative_model="someone/qwen3-dspark",\n'
        '        speculative_method="{method}",\n'
        "    ),\n"
    )
    text = (
        "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n"
        + entry.format(key="Qwen3DSparkModel", method="dspark")
        + entry.format(key="DSparkAsDFlash", method="dflash")
        + "}\n"
    )
    (tmp_path / "registry.py").write_text(text)
    args = ("registry.py", "-f", "json", "-r")
    proc = registry(hub, tmp_path / "home", *args, "vllm==0.34.0", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    pairs = json.loads(proc.stdout)["pairs"]
    assert [(p["line"], p["status"]) for p in pairs] == [(2, "ok"), (7, "mismatch")]
    assert [f["rule"] for f in pairs[1]["report"]["findings"]] == ["DF054"]
    old = registry(hub, tmp_path / "home", *args, "vllm==0.33.0", cwd=tmp_path)
    assert old.returncode == 0, old.stdout + old.stderr


def test_48113_offline_with_unchecked_entries_still_exits_1(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """Issue 31: offline, with only the seed pairing's models cached, every other entry is not
    checked; the seed's mismatch still decides (exit 1, never 3), its ✗ at its line in SARIF."""
    checkout(tmp_path, MAIN)
    cwd, home = tmp_path / "vllm", tmp_path / "home"
    file = "tests/models/registry.py"
    warm = registry(hub, home, file, "--only", "z-lab/Qwen3-4B-DFlash-b16", cwd=cwd)
    assert warm.returncode == 1, warm.stderr  # the seed pairing alone, its models now cached
    proc = registry(hub, home, file, "--offline", "-f", "sarif", cwd=cwd)
    assert proc.returncode == 1, proc.stderr
    assert re.search(r"1 not as expected, [1-9]\d* not checked", proc.stderr), proc.stderr
    line = line_of(MAIN, '"DFlashDraftModel": _HfExamplesInfo(')
    results = json.loads(proc.stdout)["runs"][0]["results"]
    mismatch = [r for r in results if r["ruleId"] == "DF090"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in mismatch] == [
        line
    ]


# -- a gate that checked nothing ------------------------------------------------------------------

EAGLE1 = """    "EagleLlamaForCausalLM": _HfExamplesInfo(
        "meta-llama/Meta-Llama-3-8B-Instruct",
        speculative_model="yuhuili/EAGLE-LLaMA3-Instruct-8B",
        speculative_method="eagle",
    ),
"""


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (EAGLE1, "its one entry was skipped (method eagle (EAGLE-1/2))"),
        (
            EAGLE1 + '    # "Eagle3X": _HfExamplesInfo("a/t", speculative_model="a/d"),\n',
            "all 2 entries were skipped (method eagle (EAGLE-1/2): 1; "
            "commented out in the registry: 1)",
        ),
    ],
)
def test_a_registry_whose_every_entry_is_skipped_checks_nothing_and_exits_3(
    tmp_path: Path, body: str, said: str
) -> None:
    """Every entry skipped is a gate that checked nothing: exit 3 (as an empty ``pairs:`` list)
    with one line saying so and why, never 0; the report still lists the entries."""
    path = checkout(tmp_path, "_SPECULATIVE_DECODING_EXAMPLE_MODELS = {\n" + body + "}\n")
    run = invoke_cli(
        "registry", str(path), env={"HF_HUB_OFFLINE": "1"}, cwd=path.parent.parent.parent
    )
    assert run.returncode == 3, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {path}: nothing was checked: {said}"], run.stderr
    assert "EagleLlamaForCausalLM" in run.stdout
