"""No control character from data reaches a terminal or breaks a structured format.

Random strings with C0/C1 controls, DEL, escape sequences and rich markup go into every field a
config, registry or server can set that the renderers show, then through every renderer: the
table (plain and coloured), JSON, SARIF, JUnit, GitHub annotations, the registry table and the
error path. The terminal-bound text must hold no raw control character (only the tool's own
SGR colour sequences in the coloured table), and the structured outputs must still parse.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dflash_check.check.entries import PairSpec
from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import CheckReport, Verdict
from dflash_check.render.github import render_github
from dflash_check.render.json import render_json
from dflash_check.render.junit import render_junit
from dflash_check.render.pairs_report import render_registry_table
from dflash_check.render.sarif import render_sarif
from dflash_check.render.table import export_text, render_table, render_text
from dflash_check.sanitize import (
    guard_document,
    one_line,
    safe_console,
    shorten,
    visible,
    xml_text,
)
from tests.acceptance.test_registry import registry
from tests.support.helpers import (
    QWEN3_4B,
    SEED_DRAFT,
    check_files,
    draft_config,
    fc_tensors,
    files,
    qwen3_4b_config,
)
from tests.support.helpers import invoke_cli as cli
from tests.support.hubserver import LoopbackHub, add_fixture_repos, serve

# Anything a terminal could act on: C0 but newline, DEL, C1.
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
# The one escape sequence the tool itself writes: SGR colours (ESC [ digits ; … m).
SGR = re.compile(r"\x1b\[[0-9;]*m")

HOSTILE = [
    "\x1b]0;pwned\x07",  # OSC: retitle the terminal
    "\x1b[2J\x1b[H",  # CSI: clear the screen
    "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\",  # OSC-8 hyperlink
    "\x9b31m\x9d0;x\x9c",  # 8-bit CSI / OSC / ST
    "\x00\x01\x0c\x7f\r",
    "[bold red]markup[/]",
]
controls = st.sampled_from([chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]])
texts = st.lists(
    st.one_of(controls, st.sampled_from(HOSTILE), st.text(max_size=4)), min_size=1, max_size=8
).map("".join)


def test_visible_forms() -> None:
    assert visible("a\x1b[2Jb\nc\td") == "a\\x1b[2Jb\nc\\td"
    assert visible("\x9b\x7f\x00") == "\\u009b\\x7f\\x00"
    assert visible("a\tb", keep="\n\t") == "a\tb"
    assert one_line("a\nb") == "a\\nb"
    assert visible("plain ✓ text") == "plain ✓ text"
    assert xml_text("a\x01\ufffe\ud800\tb") == "a\\x01\\ufffe\\ud800\tb"
    assert guard_document('{"a": "\x9b"}\n') == '{"a": "\\u009b"}\n'
    assert json.loads(guard_document(json.dumps({"a": "\x9b\x7f"}, ensure_ascii=False))) == {
        "a": "\x9b\x7f"
    }


def test_shorten_names_a_few_and_the_count() -> None:
    assert shorten(["a", "b"]) == "a, b"
    text = shorten([f"model-{i}" for i in range(300_000)], limit=3)
    assert text == "model-0, model-1, model-2 (and 299997 more)"
    assert len(shorten(["x" * 10_000])) <= 200


def test_markup_in_data_is_text() -> None:
    out = io.StringIO()
    console = safe_console(file=out, force_terminal=True, color_system="standard", width=80)
    console.print("[bold red]name[/] \x1b]0;t\x07")
    assert "[bold red]name[/]" in out.getvalue()
    assert not RAW.search(SGR.sub("", out.getvalue()))


def hostile_report(text: str) -> CheckReport:
    """A real check whose target (and draft) strings hold ``text`` wherever data can."""
    cfg = draft_config()
    target = qwen3_4b_config() | {"architectures": [text], "model_type": text}
    report = check_files(
        replace(files("draft", cfg, fc_tensors(cfg)), name=f"org/draft{text}"),
        replace(files("target", target), name=f"org/target{text}"),
        "portable",
    )
    return report


def hostile_run(text: str, report: CheckReport) -> RunResult:
    spec = PairSpec(
        draft=f"d{text}",
        target=f"t{text}",
        expect=Verdict.INCOMPATIBLE,
        line=3,
        index=0,
        reason=text,
        source=text,
    )
    outcomes = (
        PairOutcome(f"pair {text}", Verdict.INCOMPATIBLE, report=report, spec=spec),
        PairOutcome(f"err {text}", Verdict.COMPATIBLE, error=text, error_hint=text, spec=spec),
    )
    return RunResult(outcomes, file=f"pairs{text}.yaml", strict=True)


def assert_terminal_safe(text: str) -> None:
    assert not RAW.search(text), ascii(text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_every_renderer_keeps_data_inert(text: str) -> None:
    report = hostile_report(text)
    # The human report: plain text (--output, a pipe) and coloured (a terminal).
    assert_terminal_safe(render_text(report, 100, verbose=True))
    out = io.StringIO()
    console = safe_console(file=out, force_terminal=True, color_system="truecolor", width=100)
    console.print(render_table(report, 100, verbose=True), crop=False)
    assert_terminal_safe(SGR.sub("", out.getvalue()))
    # JSON keeps the exact strings, by JSON's own escapes.
    data = json.loads(render_json(report))
    assert_terminal_safe(render_json(report))
    assert data["target"]["name"] == f"org/target{text}"
    run = hostile_run(text, report)
    sarif = render_sarif(run)
    json.loads(sarif)
    assert_terminal_safe(sarif)
    junit = render_junit(run)
    ET.fromstring(junit.split("\n", 1)[1])  # well-formed (the declaration aside)
    assert_terminal_safe(junit.replace("\t", " "))
    assert_terminal_safe(render_github(run))
    assert_terminal_safe(export_text(render_registry_table(run, 100), 100))


def test_hostile_config_reaches_no_stream_raw(tmp_path: Path) -> None:
    """End to end: a target whose config holds escape sequences, every format, stdout and the
    --output file and stderr, nothing raw; JUnit and SARIF files parse."""
    evil = "".join(HOSTILE)
    target = tmp_path / "target"
    target.mkdir()
    cfg = json.loads((QWEN3_4B / "config.json").read_text())
    cfg |= {"architectures": [evil], "model_type": evil, "layer_types": [evil]}
    (target / "config.json").write_text(json.dumps(cfg))
    for fmt in ("table", "json", "sarif", "junit", "github"):
        out = tmp_path / f"report.{fmt}"
        for extra in ([], ["--output", str(out)]):
            proc = cli("pair", str(SEED_DRAFT), str(target), "--format", fmt, "--verbose", *extra)
            assert proc.returncode in (0, 1, 3), proc.stderr
            assert "unexpected" not in proc.stderr
            assert_terminal_safe(proc.stdout.replace("\t", " "))
            assert_terminal_safe(proc.stderr)
        written = out.read_text()
        assert_terminal_safe(written.replace("\t", " "))
        if fmt in ("json", "sarif"):
            json.loads(written)
        if fmt == "junit":
            ET.fromstring(written.split("\n", 1)[1])


def test_print_command_shows_an_escape_in_a_folder_name(tmp_path: Path) -> None:
    folder = tmp_path / "tgt\x1b]0;x\x07"
    folder.mkdir()
    (folder / "config.json").write_text((QWEN3_4B / "config.json").read_text())
    proc = cli("pair", str(SEED_DRAFT), str(folder), "--engine", "vllm", "--print-command")
    assert proc.returncode == 0, proc.stderr
    assert "\\x1b]0;x\\x07" in proc.stdout
    assert_terminal_safe(proc.stdout + proc.stderr)


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    with serve() as server:
        add_fixture_repos(server)
        yield server


def test_registry_reason_with_controls_keeps_junit_well_formed(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """A pairs.yaml `reason` (and a model name) holding \\x01, \\x0c, NUL, ESC and BEL: the
    JUnit file parses, the table, GitHub annotations and stderr show them escaped."""
    (tmp_path / "pairs.yaml").write_text(
        "version: 1\npairs:\n"
        "  - draft: z-lab/Qwen3-4B-DFlash-b16\n    target: Qwen/Qwen3-4B\n"
        '    expect: incompatible\n    reason: "a\\x01b\\fc\\0d \\e]0;t\\a \\e[2J \\x9b1m"\n'
        "  - draft: nobody/none\n    target: Qwen/Qwen3-4B\n    expect: compatible\n"
        '    reason: "[bold]x[/] \\e]8;;http://e\\e\\\\l"\n'
    )
    home = tmp_path / "home"
    junit = registry(hub, home, "pairs.yaml", "-f", "junit", cwd=tmp_path)
    assert junit.returncode in (1, 3), junit.stderr
    root = ET.fromstring(junit.stdout.split("\n", 1)[1])
    assert root.tag == "testsuites"
    for fmt in ("table", "github", "sarif", "json"):
        proc = registry(hub, home, "pairs.yaml", "-f", fmt, cwd=tmp_path)
        assert "unexpected" not in proc.stderr
        assert_terminal_safe(proc.stdout.replace("\t", " "))
        assert_terminal_safe(proc.stderr)
        if fmt in ("sarif", "json"):
            json.loads(proc.stdout)


def test_data_is_one_line_cut_at_the_limit() -> None:
    from dflash_check.sanitize import DATA_LIMIT, data

    assert data("0.99\n::error") == "0.99\\n::error"
    long = data("9" * 3_000_000)
    assert len(long) == DATA_LIMIT and long.endswith("…")
    assert len(data("\x1b" * 500)) == DATA_LIMIT  # cut after escaping too


def test_defuse_commands_breaks_every_line_start() -> None:
    from dflash_check.sanitize import defuse_commands

    text = "ok ::x\n::error ::a\r  ::warning ::b\u2028\t::notice ::c"
    assert defuse_commands(text) == (
        "ok ::x\n\\::error ::a\r  \\::warning ::b\u2028\t\\::notice ::c"
    )


def test_the_stream_follows_a_line_across_writes() -> None:
    import io

    from dflash_check.cli.terminal import SafeStream

    inner = io.StringIO()
    stream = SafeStream(inner)
    for chunk in ["::x\n", "a ", "::b\n", "  ", "::c\n", "  :", ":d\n"]:
        stream.write(chunk)
    stream.write_commands("::error ::tool\n")
    assert inner.getvalue() == "\\::x\na ::b\n  \\::c\n  :\\:d\n::error ::tool\n"


def test_bytes_are_written_as_guarded_text() -> None:
    """click's echo hands bytes to a stream without a binary buffer: they are decoded and
    guarded like text, never a TypeError, never a way around the guard."""
    import io

    from dflash_check.cli.terminal import SafeStream

    inner = io.StringIO()
    stream = SafeStream(inner)
    assert stream.write(b"::error::x\n") == len("::error::x\n")
    stream.write(bytearray("é ok\n".encode()))
    assert inner.getvalue() == "\\::error::x\né ok\n"


def test_a_command_after_a_split_pair_is_guarded_too() -> None:
    """A write that completes a ':' left open also guards the lines it starts."""
    import io

    from dflash_check.cli.terminal import SafeStream

    inner = io.StringIO()
    stream = SafeStream(inner)
    stream.write(":")
    stream.write(":x\n::add-mask::secret\n")
    assert inner.getvalue() == ":\\:x\n\\::add-mask::secret\n"


def test_markdown_text_and_code_spans() -> None:
    from dflash_check.sanitize import code_span, markdown_text

    assert markdown_text("<img src=x onerror=a()>") == "\\<img src=x onerror=a()\\>"
    assert markdown_text("[l](https://x)") == "\\[l\\](https://x)"
    assert code_span("a``b") == "```a``b```"
    assert code_span("`x") == "`` `x ``"
    assert code_span("a|b") == "`a\\|b`"


def test_uri_is_percent_encoded() -> None:
    from dflash_check.sanitize import uri

    assert uri("my dir/a#b?c%.json") == "my%20dir/a%23b%3Fc%25.json"
    assert uri("ü.json") == "%C3%BC.json"
    assert uri("a:b/c") == "a%3Ab/c"
    assert uri("https://huggingface.co/o/r b") == "https://huggingface.co/o/r%20b"
