"""Bad input: one clear line naming model, file and field, exit 3, never a traceback."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dflash_check.check.formats import normalise_draft
from dflash_check.check.target import normalise_target
from dflash_check.errors import ConfigError
from dflash_check.sources.safetensors_header import parse_file_prefix
from tests.support.helpers import (
    QWEN3_4B,
    SEED_DRAFT,
    draft_config,
    files,
    invoke_cli,
    qwen3_4b_config,
    write_model,
)

BAD_VALUES: list[tuple[str, Any]] = [
    ("string", "2560"),
    ("float", 2560.0),
    ("boolean", True),
    ("null-required", None),
    ("negative", -2560),
    ("huge", 10**30),
    ("list", [2560]),
    ("object", {"value": 2560}),
]


@pytest.mark.parametrize(("kind", "value"), BAD_VALUES, ids=[k for k, _ in BAD_VALUES])
def test_bad_hidden_size_names_model_file_and_field(kind: str, value: Any) -> None:
    """Every wrong type of a required dimension is a ConfigError naming the field."""
    cfg = draft_config()
    cfg["hidden_size"] = value
    with pytest.raises(ConfigError) as info:
        normalise_draft(files("draft", cfg))
    message = str(info.value)
    assert message.startswith("draft mem/draft: config.json: field 'hidden_size'")


@pytest.mark.parametrize(
    ("ids", "needle"),
    [
        ("1,9,17", "must be a list of integers, got string"),
        ([1, "9", 17], "field 'dflash_config.target_layer_ids[1]' must be an integer"),
        ([1, 9.0], "target_layer_ids[1]' must be an integer, got number 9.0"),
        ([1, True], "target_layer_ids[1]' must be an integer, got boolean true"),
        ([1, 2**40], "implausibly large"),
        ({"a": 1}, "must be a list of integers, got an object"),
    ],
)
def test_bad_layer_ids(ids: Any, needle: str) -> None:
    """Ill-typed ids are malformed input (exit 3), with the exact element named."""
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = ids
    with pytest.raises(ConfigError, match=None) as info:
        normalise_draft(files("draft", cfg))
    assert needle in str(info.value)


def test_target_without_layer_count() -> None:
    """A target with no layer count at all cannot be checked."""
    cfg = qwen3_4b_config()
    del cfg["num_hidden_layers"]
    with pytest.raises(ConfigError, match="no layer count"):
        normalise_target(files("target", cfg))


@pytest.mark.parametrize(
    ("prefix", "needle"),
    [
        (b"", "not a safetensors file"),
        (b"\x00" * 8, "header length 0"),
        ((10**12).to_bytes(8, "little"), "header length"),
        ((50 << 20).to_bytes(8, "little"), "larger than the 16 MB limit"),
        ((20).to_bytes(8, "little") + b"{", "truncated"),
        ((2).to_bytes(8, "little") + b"[]", "expected a JSON object"),
        ((16).to_bytes(8, "little") + b'{"a": {"x": 1}} ', "has no dtype"),
    ],
)
def test_bad_safetensors_headers(prefix: bytes, needle: str) -> None:
    """A corrupt header is one clear ConfigError."""
    with pytest.raises(ConfigError, match=needle):
        parse_file_prefix(prefix, "draft d", "model.safetensors")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
DRAFT_KEYS = [
    "architectures",
    "hidden_size",
    "vocab_size",
    "num_hidden_layers",
    "num_target_layers",
    "block_size",
    "max_position_embeddings",
    "dflash_config",
    "target_layer_ids",
    "mask_token_id",
    "target_hidden_size",
]
TARGET_KEYS = [
    "num_hidden_layers",
    "hidden_size",
    "vocab_size",
    "text_config",
    "max_position_embeddings",
    "architectures",
    "model_type",
    "layers_block_type",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(DRAFT_KEYS), json_values, st.sampled_from(["top", "dflash_config"]))
def test_parser_never_crashes_on_drafts(key: str, value: Any, where: str) -> None:
    """Any value in any draft field gives a view or a ConfigError, nothing else."""
    cfg = draft_config()
    (cfg if where == "top" else cfg["dflash_config"])[key] = value
    try:
        view = normalise_draft(files("draft", cfg))
    except ConfigError as err:
        assert "\n" not in str(err) and "draft mem/draft" in str(err)
    else:
        assert isinstance(view.hidden_size, int)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(TARGET_KEYS), json_values)
def test_parser_never_crashes_on_targets(key: str, value: Any) -> None:
    """Any value in any target field gives a view or a ConfigError, nothing else."""
    cfg = qwen3_4b_config()
    cfg[key] = value
    try:
        view = normalise_target(files("target", cfg))
    except ConfigError as err:
        assert "\n" not in str(err) and "target mem/target" in str(err)
    else:
        assert view.num_hidden_layers >= 1


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_whole_config_replaced(value: Any) -> None:
    """A config that is any JSON value at all is handled."""
    from dflash_check.fields import parse_json_object

    raw = json.dumps(value).encode()
    try:
        cfg = parse_json_object(raw, "draft d", "config.json")
        normalise_draft(files("draft", cfg))
    except ConfigError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_header_bytes_fuzz(data: bytes) -> None:
    """Arbitrary bytes as a safetensors prefix never crash the parser."""
    with contextlib.suppress(ConfigError):
        parse_file_prefix(data, "draft d", "model.safetensors")


CLI_CASES = {
    "malformed-json": ('{"hidden_size": 2560,', "malformed JSON at line 1"),
    "not-an-object": ("[1, 2]", "expected a JSON object, got a list of 2"),
    "empty-file": ("", "malformed JSON"),
    "missing-field": (json.dumps(draft_config(hidden_size=None)), "field 'hidden_size' is missing"),
    "not-a-draft": (json.dumps(qwen3_4b_config()), "not a DFlash draft"),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_bad_draft_is_one_line_exit_3(tmp_path: Path, case: str) -> None:
    """Through the real CLI: exit 3, an 'Error:' line naming the file, no traceback."""
    text, needle = CLI_CASES[case]
    draft = write_model(tmp_path / "draft", text)
    proc = invoke_cli("pair", str(draft), str(QWEN3_4B))
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(error_lines) == 1
    assert needle in error_lines[0]
    assert "config.json" in error_lines[0]
    assert proc.stdout == ""


def test_cli_missing_directory(tmp_path: Path) -> None:
    """A directory that does not exist: exit 3, named."""
    proc = invoke_cli("pair", str(SEED_DRAFT), str(tmp_path / "gone"))
    assert proc.returncode == 3
    assert "target" in proc.stderr and "directory not found" in proc.stderr


def test_cli_debug_shows_traceback(tmp_path: Path) -> None:
    """DFLASH_CHECK_DEBUG=1 shows the traceback on request."""
    draft = write_model(tmp_path / "draft", "{")
    proc = invoke_cli("pair", str(draft), str(QWEN3_4B), env={"DFLASH_CHECK_DEBUG": "1"})
    assert proc.returncode == 3
    assert "Traceback" in proc.stderr
