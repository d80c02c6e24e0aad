"""The JSON report: docs/report.schema.json describes it, and its counts are the table's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from tests.support.helpers import REPO, invoke_cli

SCHEMA = json.loads((REPO / "docs" / "report.schema.json").read_text())
EXAMPLES = REPO / "examples"
DRAFT = str(EXAMPLES / "Qwen3-4B-DFlash-b16")
TARGETS = REPO / "tests" / "fixtures" / "targets"


@pytest.mark.parametrize(
    "args",
    [
        (DRAFT, str(EXAMPLES / "Qwen3-4B")),  # compatible
        (DRAFT, str(EXAMPLES / "Qwen3.5-4B")),  # incompatible, DF004 on every runtime
        (DRAFT, str(EXAMPLES / "Qwen3.5-4B"), "--runtime", "vllm,sglang"),
        (str(EXAMPLES / "Qwen3-4B"),),  # the target alone: the MTP report
        (DRAFT, str(EXAMPLES / "no-such-folder")),  # the error object
    ],
)
def test_every_json_validates(args: tuple[str, ...]) -> None:
    """Each kind of JSON the tool prints validates against the published schema."""
    proc = invoke_cli("pair", *args, "--format", "json")
    assert proc.returncode in (0, 1, 3), proc.stderr
    jsonschema.validate(json.loads(proc.stdout), SCHEMA)


def test_registry_reports_validate() -> None:
    """Each pair's report inside the registry JSON validates too."""
    proc = invoke_cli("registry", "tests/fixtures/registry/pairs.yaml", "--format", "json")
    for pair in json.loads(proc.stdout)["pairs"]:
        if pair["report"] is not None:
            jsonschema.validate(pair["report"], SCHEMA)


def test_every_registry_json_validates(tmp_path: Path) -> None:
    """The registry's own JSON validates as a whole: a run with every outcome, one with
    rules ignored, a broken file (its errors), and a file that is not there."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("pairs:\n  - draft: a\n")
    ignoring = tmp_path / "ignore.yaml"
    ignoring.write_text(
        f"pairs:\n  - draft: {DRAFT}\n    target: {EXAMPLES / 'Qwen3.5-4B'}\n"
        "    expect: incompatible\n    ignore: DF013\n"
    )
    runs = [
        ("tests/fixtures/registry/pairs.yaml",),
        (str(ignoring),),
        (str(bad),),
        (str(tmp_path / "missing.yaml"),),
    ]
    kinds = set()
    for args in runs:
        data = json.loads(invoke_cli("registry", *args, "--format", "json", cwd=REPO).stdout)
        jsonschema.validate(data, SCHEMA)
        # As a registry run, not by another branch of the oneOf.
        jsonschema.validate(data, {"$ref": "#/$defs/registry", "$defs": SCHEMA["$defs"]})
        kinds.add("errors" if data["errors"] else "pairs")
    assert kinds == {"errors", "pairs"}
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail: a count goes missing
        del data["summary"]["pairs"]
        jsonschema.validate(data, SCHEMA)


def test_json_counts_equal_the_table() -> None:
    """One finding per problem: the JSON summary and findings match the table's count line."""
    args = ("pair", DRAFT, str(EXAMPLES / "Qwen3.5-4B"))
    table = invoke_cli(*args).stdout
    data = json.loads(invoke_cli(*args, "--format", "json").stdout)
    errors, warnings = (
        int(n) for n in re.search(r"(\d+) errors?, (\d+) warnings?", table).groups()
    )
    assert (data["summary"]["errors"], data["summary"]["warnings"]) == (errors, warnings)
    assert len(data["findings"]) == data["summary"]["problems"] == errors + warnings
    (df004,) = [f for f in data["findings"] if f["rule"] == "DF004"]
    assert df004["runtimes"] == list(data["runtimes"])  # every runtime checked, listed once
    by_runtime = {rt: m["message"] for m in df004["messages"] for rt in m["runtimes"]}
    assert "at least 35 target layers" in by_runtime["sglang"]
    assert "at least 34 target layers" in by_runtime["vllm"]


@pytest.mark.parametrize(
    ("engine_args", "stated"),
    [((), {}), (("--engine-arg=--attn-dp-size=2",), {"sglang": {"attn_dp_size": 2}})],
    ids=["none", "given"],
)
def test_report_names_the_engine_settings(
    engine_args: tuple[str, ...], stated: dict[str, dict[str, int]]
) -> None:
    """Schema 3: a pair's report names the engine settings it was judged with, {} without;
    the schema requires the key, and refuses an engine or a setting it does not name."""
    proc = invoke_cli("pair", DRAFT, str(EXAMPLES / "Qwen3-4B"), "-f", "json", *engine_args)
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 3 and data["engine_settings"] == stated
    jsonschema.validate(data, SCHEMA)
    for broken in ({"vllm": {"x": 1}}, {"sglang": {"tp_size": 2}}, {"sglang": {}}, None):
        bad = {**data, "engine_settings": broken}
        if broken is None:
            del bad["engine_settings"]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def test_the_schema_names_every_engine_setting() -> None:
    """Every setting the check reads (``EngineSettings``: one dataclass per engine) is a
    property of the schema's ``engine_settings``, so a report stating it validates."""
    from dataclasses import fields

    from dflash_check.knowledge.settings import EngineSettings

    published = SCHEMA["$defs"]["engine_settings"]["properties"]
    for engine in fields(EngineSettings):
        names = {f.name for f in fields(getattr(EngineSettings(), engine.name))}
        assert set(published[engine.name]["properties"]) == names, engine.name


ALL_SGLANG_FLAGS = (
    "--engine-arg=--speculative-num-draft-tokens=4",
    "--engine-arg=--speculative-dflash-block-size=4",
    "--engine-arg=--speculative-dspark-block-size=3",
    "--engine-arg=--speculative-num-steps=3",
    "--engine-arg=--speculative-eagle-topk=1",
    "--engine-arg=--attn-dp-size=2",
)


@pytest.mark.parametrize(
    "models", [(DRAFT, str(EXAMPLES / "Qwen3-4B")), (str(TARGETS / "deepseek-ai--DeepSeek-V3"),)]
)
def test_reports_stating_every_setting_validate(models: tuple[str, ...]) -> None:
    """A pair's report and a target-alone report, each judged with every SGLang setting the
    check reads, name them all and validate; the target-alone text says them too."""
    proc = invoke_cli("pair", *models, "-f", "json", *ALL_SGLANG_FLAGS)
    data = json.loads(proc.stdout)
    assert len(data["engine_settings"]["sglang"]) == len(ALL_SGLANG_FLAGS)
    jsonschema.validate(data, SCHEMA)
    if len(models) == 1:
        text = invoke_cli("pair", *models, *ALL_SGLANG_FLAGS).stdout
        said = " ".join(text.split())  # the text wraps to the terminal
        assert "Settings sglang --attn-dp-size 2 --speculative-num-draft-tokens 4" in said, text


def test_schema_version_is_the_one_published() -> None:
    """The schema pins the version the tool prints: a change of shape bumps both."""
    from dflash_check.render.json import SCHEMA_VERSION

    assert SCHEMA["$defs"]["schema_version"] == {"const": SCHEMA_VERSION}


@pytest.mark.parametrize("role", ["draft", "target"])
def test_views_print_exactly_the_documented_fields(role: str) -> None:
    """The serialiser writes each documented field of a view and nothing else: a view field
    that is not in the schema does not leak into the report, and none documented is missing."""
    proc = invoke_cli("pair", DRAFT, str(EXAMPLES / "Qwen3-4B"), "--format", "json")
    printed = json.loads(proc.stdout)[role]
    assert list(printed) == list(SCHEMA["$defs"][role]["properties"])


@pytest.mark.parametrize(
    ("runtime", "stage"), [("vllm", "first-decode"), ("llamacpp", "silent"), ("mlx", "silent")]
)
def test_a_problem_states_each_runtime_own_stage(runtime: str, stage: str) -> None:
    """DF007 (another vocabulary) is a problem for every runtime; each shows it at its own
    stage, and the problem's stage is the one its runtime's release entry gives."""
    proc = invoke_cli(
        "pair", DRAFT, str(EXAMPLES / "Qwen3.5-4B"), "-r", runtime, "--format", "json"
    )
    report = json.loads(proc.stdout)
    (vocab,) = [f for f in report["findings"] if f["rule"] == "DF007"]
    assert vocab["stages"] == {runtime: stage}
    assert vocab["stage"] == stage


def test_the_requested_method_is_echoed() -> None:
    """The JSON report says which method the engine was asked for (null: none requested)."""
    pair = (DRAFT, str(EXAMPLES / "Qwen3-4B"), "--format", "json")
    asked = json.loads(invoke_cli("pair", *pair, "--speculative-method", "eagle3").stdout)
    assert asked["speculative_method"] == "eagle3"
    assert json.loads(invoke_cli("pair", *pair).stdout)["speculative_method"] is None
    jsonschema.validate(asked, SCHEMA)
