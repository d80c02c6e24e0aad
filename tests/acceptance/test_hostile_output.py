"""Hostile input, round three: nothing from data becomes a CI command, an escape or markup.

A GitHub runner reads every line of a step's output that starts (after blanks) with ``::`` as a
workflow command. Only ``--format github`` may write such a line; every value from data is one
visible line, cut at ``sanitize.DATA_LIMIT`` characters.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dflash_check.sanitize import DATA_LIMIT
from tests.acceptance.test_engine import engine_cli, fake
from tests.acceptance.test_engine_tests import FIXED, checkout
from tests.support.engineserver import serve as serve_engine
from tests.support.helpers import (
    invoke_cli,
    qwen3_4b_config,
    seed_draft_config,
    write_draft,
    write_model,
)
from tests.support.hubserver import LoopbackHub, add_fixture_repos, serve

COMMAND_LINE = re.compile(r"^\s*::", re.MULTILINE)
ESCAPES = re.compile(r"[\x1b\x07\x80-\x9f]")
FORMATS = ("table", "json", "sarif", "junit", "github", "markdown")


def assert_obeys_nothing(result: subprocess.CompletedProcess, fmt: str = "table") -> None:
    """No stream line starts a workflow command (stdout may, in --format github) and no
    escape sequence, BEL or C1 control from data is written."""
    streams = {"stderr": result.stderr} | ({} if fmt == "github" else {"stdout": result.stdout})
    for name, text in streams.items():
        lines = [line for line in text.splitlines() if COMMAND_LINE.match(line)]
        assert not lines, f"{name} would run {lines[:3]}"
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert not ESCAPES.search(text), f"{name}: {text[:500]!r}"
    if fmt == "github":  # the tool's own commands: each from its renderer, none from data
        for line in result.stdout.splitlines():
            if COMMAND_LINE.match(line):
                assert re.match(r"::(error|warning|notice) [^\n]*::", line), line


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """The loopback Hub with every fixture model."""
    with serve() as server:
        add_fixture_repos(server)
        yield server


# -- the sources the issue names --------------------------------------------------------------


@pytest.mark.parametrize(
    "version",
    [
        "0.34.0\\n::error title=X::X",  # an escape in the Python literal
        "0.34.0\\r::add-mask::x",
        "0.34.0\\x1b]0;PWNED\\x07",
    ],
)
@pytest.mark.parametrize("fmt", ["table", "github", "markdown"])
def test_a_checkout_version_writes_no_command(
    hub: LoopbackHub, tmp_path: Path, version: str, fmt: str
) -> None:
    """A pull request on the engine that edits ``_version.py`` cannot write into its CI."""
    path = checkout(tmp_path, FIXED, version=None)
    (tmp_path / "vllm" / "vllm").mkdir()
    (tmp_path / "vllm" / "vllm" / "_version.py").write_text(f"__version__ = '{version}'\n")
    result = invoke_cli(
        "registry", str(path), "--format", fmt, env=hub.env(tmp_path / "h"), cwd=tmp_path
    )
    assert_obeys_nothing(result, fmt)


def test_a_raw_newline_in_the_version_file_is_one_line(hub: LoopbackHub, tmp_path: Path) -> None:
    """Text after a real newline inside the quotes is never a line of the output."""
    path = checkout(tmp_path, FIXED, version=None)
    (tmp_path / "vllm" / "vllm").mkdir()
    (tmp_path / "vllm" / "vllm" / "_version.py").write_text(
        "__version__ = '0.99\n::error title=X::X'\n"
    )
    result = invoke_cli("registry", str(path), env=hub.env(tmp_path / "h"), cwd=tmp_path)
    assert_obeys_nothing(result)


def test_a_huge_version_is_cut(hub: LoopbackHub, tmp_path: Path) -> None:
    """A 3 MB version line is shown as at most DATA_LIMIT characters, with an ellipsis."""
    path = checkout(tmp_path, FIXED, version=None)
    (tmp_path / "vllm" / "vllm").mkdir()
    (tmp_path / "vllm" / "vllm" / "_version.py").write_text(
        "__version__ = '0.99" + "9" * 3_000_000 + "'\n"
    )
    result = invoke_cli("registry", str(path), env=hub.env(tmp_path / "h"), cwd=tmp_path)
    assert max(map(len, result.stderr.splitlines()), default=0) < 2 * DATA_LIMIT + 400
    assert len(result.stdout) < 200_000


@pytest.mark.parametrize(
    "version", ["0.99\x1b]0;PWNED\x07\x1b[2J", "0.99\n::error title=X::X", "0.99\r::warning ::Y"]
)
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_server_version_is_shown_not_obeyed(version: str, engine: str) -> None:
    """vLLM's /version and SGLang's server info are the server's: one visible line."""
    with serve_engine(fake(engine, version=version)) as server:
        result = engine_cli(server.url, engine)
    assert_obeys_nothing(result)


@pytest.mark.parametrize("arch", ["X\n::warning ::Y", "X\r\n::error ::Z", "X\x1b[31m\x9b"])
def test_an_architecture_with_a_newline_stays_on_its_line(tmp_path: Path, arch: str) -> None:
    """A config's ``architectures`` value reaches error lines as one visible line."""
    cfg = seed_draft_config()
    cfg["architectures"] = [arch]
    draft = write_draft(tmp_path / "draft", cfg)
    target = write_model(tmp_path / "target", {"architectures": [arch], "model_type": arch})
    for fmt in FORMATS:
        result = invoke_cli("pair", str(draft), str(target), "--format", fmt, "--offline")
        assert_obeys_nothing(result, fmt)


@pytest.mark.parametrize(
    "value", ["vllm==0.34.0\x1b[31m", "llamacpp==\x9b2J", "vllm==\n::error ::X", "sglang==0.5\x07"]
)
def test_runtime_values_reach_the_usage_box_visible(tmp_path: Path, value: str) -> None:
    """The usage-error box quotes ``-r`` as visible text (an escape would recolour it)."""
    result = invoke_cli("pair", "a", "b", "--offline", "-r", value)
    assert result.returncode == 2, result.stderr
    assert_obeys_nothing(result)


@pytest.mark.parametrize("value", ["vllm==", "sglang== ", "vllm==,sglang"])
def test_a_release_sign_with_nothing_after_it_is_a_usage_error(value: str) -> None:
    """``vllm==`` is a typo, not the newest release."""
    result = invoke_cli("pair", "a", "b", "--offline", "-r", value)
    assert result.returncode == 2, result.stderr
    assert "names no release after ==" in result.stderr


# -- package metadata ---------------------------------------------------------------------------


@pytest.mark.parametrize("metadata", ["no-version", "missing", "directory", "escape"])
def test_installed_metadata_that_lies_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metadata: str
) -> None:
    """``vllm=installed`` with METADATA lacking a Version, missing or a folder: one line."""
    info = tmp_path / "site" / "vllm-0.34.0.dist-info"
    info.mkdir(parents=True)
    if metadata == "no-version":
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\n\n")
    elif metadata == "directory":
        (info / "METADATA").mkdir()
    elif metadata == "escape":
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.3\x1b[2J\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    result = invoke_cli("pair", "a", "b", "--offline", "-r", "vllm=installed")
    assert result.returncode == 2, result.stderr
    assert "vllm" in result.stderr
    assert_obeys_nothing(result)


# -- documents: Markdown (the job summary) and SARIF --------------------------------------------


def hostile_pair(tmp_path: Path, folder: str, arch: str) -> tuple[Path, Path]:
    """A draft in ``folder`` (fc.weight one layer too narrow: DF005 at its file) and a Qwen3
    target whose ``architectures`` is ``arch``."""
    draft = write_draft(tmp_path / folder / "draft", seed_draft_config(), fc_in=4 * 2560)
    target = write_model(
        tmp_path / folder / "target", {**qwen3_4b_config(), "architectures": [arch]}
    )
    return draft, target


@pytest.mark.parametrize(
    "arch", ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "[link](https://e.x)"]
)
def test_markdown_renders_data_as_text(tmp_path: Path, arch: str) -> None:
    """No HTML element and no link from a config reaches the job summary; a folder with
    backticks stays inside its code span."""
    draft, target = hostile_pair(tmp_path, "we``ird`", arch)
    result = invoke_cli("pair", str(draft), str(target), "--format", "markdown", "--offline")
    assert arch.split("(")[0] in result.stdout.replace("\\", "")  # shown, as text
    assert not re.search(r"(?<!\\)<(img|script)", result.stdout), result.stdout
    assert not re.search(r"(?<!\\)\[link\\?\]\(", result.stdout), result.stdout
    heading = result.stdout.splitlines()[0]
    fence = re.match(r"## dflash-check: (`+)", heading)
    assert fence is not None and heading.endswith(fence.group(1)), heading
    inner = heading[len(fence.group(0)) : -len(fence.group(1))]
    assert fence.group(1) not in inner and "we``ird`" in inner


def test_sarif_uris_are_percent_encoded(tmp_path: Path) -> None:
    """artifactLocation.uri is a URI reference: space, '#', '?', '%' and non-ASCII encoded."""
    import json
    from urllib.parse import unquote

    draft, target = hostile_pair(tmp_path, "my dir#1?x%ü", "NoSuchForCausalLM")
    result = invoke_cli("pair", str(draft), str(target), "--format", "sarif", "--offline")
    uris = re.findall(r'"uri": "([^"]*)"', result.stdout)
    local = [u for u in uris if "dir" in unquote(u)]
    assert local, result.stdout[:2000]
    for u in local:
        assert not re.search(r"[ #?\u0080-\uffff]|%(?![0-9A-F]{2})", u), u
        assert "my dir#1?x%ü" in unquote(u)
    json.loads(result.stdout)


# -- crashes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_self_drafting_entry_not_as_expected_is_reported(
    hub: LoopbackHub, tmp_path: Path, fmt: str
) -> None:
    """An MTP entry whose target has no MTP layers is a mismatch in every format (the table
    renderer read a pair's ``.draft`` of it)."""
    mtp = '"Qwen/Qwen3.5-35B-A3B",\n        speculative_model="Qwen/Qwen3.5-35B-A3B",'
    assert mtp in FIXED
    text = FIXED.replace(mtp, '"Qwen/Qwen3-4B",\n        speculative_model="Qwen/Qwen3-4B",')
    path = checkout(tmp_path, text)
    result = invoke_cli(
        "registry", str(path), "--format", fmt, env=hub.env(tmp_path / "h"), cwd=tmp_path
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Qwen/Qwen3-4B" in result.stdout
    assert "unexpected" not in result.stderr


@pytest.mark.parametrize("fmt", ["table", "github", "markdown", "junit"])
def test_an_override_name_with_a_newline_stays_on_its_line(
    hub: LoopbackHub, tmp_path: Path, fmt: str
) -> None:
    """An ``--overrides`` entry name is quoted in the error as one visible line."""
    path = checkout(tmp_path, FIXED)
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text('entries:\n  "X\\n::warning ::Y\\r::error ::Z\\u001b[2J":\n    skip: x\n')
    result = invoke_cli(
        "registry", str(path), "--overrides", str(overrides), "--format", fmt,
        env=hub.env(tmp_path / "h"), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode in (2, 3), result.stdout + result.stderr
    assert_obeys_nothing(result, fmt)
    assert "X\\n::warning" in result.stderr + result.stdout


def test_an_error_line_is_one_line(tmp_path: Path) -> None:
    """An error quoting a config value with a newline prints it as ``\\n``: one Error line."""
    draft = write_model(tmp_path / "draft", {"architectures": ["X\n::warning ::Y"]})
    target = write_model(tmp_path / "target", {"architectures": ["X\n::warning ::Y"]})
    result = invoke_cli("pair", str(draft), str(target), "--offline")
    assert_obeys_nothing(result)
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("Error:") and "X\\n::warning ::Y" in result.stderr, (
        result.stderr
    )


@pytest.mark.parametrize(
    "args",
    [
        ("pair", "a", "b", "--\x1b]0;X\x07"),
        ("pair", "a", "b", "--format", "x\n::error ::y"),
        ("registry", "p.yaml", "--nope\x9b2J"),
    ],
)
def test_usage_errors_quote_the_command_line_visibly(args: tuple[str, ...]) -> None:
    result = invoke_cli(*args)
    assert result.returncode == 2, result.stderr
    assert_obeys_nothing(result)
