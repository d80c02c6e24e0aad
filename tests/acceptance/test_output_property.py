"""Property: whatever text data holds, no stream of any command obeys it.

Random control characters, line breaks, workflow commands and markup go through the configs,
folder names, ``pairs.yaml`` fields and options of every command, into every ``--format`` and
``--output``. No line of stdout or stderr may start a GitHub workflow command (stdout may in
``--format github``, the tool's own lines only), and no ESC, BEL or C1 control may be written.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.acceptance.test_hostile_output import FORMATS, assert_obeys_nothing
from tests.support.helpers import (
    invoke_cli,
    qwen3_4b_config,
    seed_draft_config,
    write_draft,
    write_model,
)

PIECES = [
    "\n", "\r", "\r\n", "\x1b[31m", "\x1b]0;PWNED\x07", "\x1b[2J", "\x9b2J", "\x85", "\u2028",
    "\x07", "\x00", "\t", "::error title=X::X", "::add-mask::s", "::stop-commands::t",
    "  ::warning ::Y", "<img src=x onerror=alert(1)>", "<script>", "`", "``", "[l](https://e.x)",
    "|", "%", "#", "?", "ü", " ", "x", "0.34.0", "*", "_", "&amp;",
]  # fmt: skip
HOSTILE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
SETTINGS = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,  # the same cases on every run: a failure is reproducible
    suppress_health_check=[HealthCheck.too_slow],
)


def folder_name(text: str) -> str:
    """A folder name holding ``text`` (no '/' or NUL, which no file system takes)."""
    return "d" + text.replace("/", "_").replace("\x00", "_")[:60]


def check_all_formats(*args: str, home: Path) -> None:
    """Run a command in every format, to stdout and to --output, and check every stream."""
    for fmt in FORMATS:
        result = invoke_cli(*args, "--format", fmt)
        assert_obeys_nothing(result, fmt)
        out = home / f"report.{fmt}"
        out.unlink(missing_ok=True)
        written = invoke_cli(*args, "--format", fmt, "--output", str(out))
        assert_obeys_nothing(written, fmt)
        if out.exists() and fmt != "github":
            text = out.read_text(errors="replace")
            assert not [line for line in text.splitlines() if line.lstrip().startswith("::")]


@SETTINGS
@given(text=HOSTILE)
def test_pair_streams_obey_no_data(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = seed_draft_config()
        cfg["architectures"] = [text]
        draft = write_draft(root / folder_name(text) / "draft", cfg, fc_in=4 * 2560)
        target = write_model(
            root / "target", {**qwen3_4b_config(), "architectures": [text], "model_type": text}
        )
        check_all_formats("pair", str(draft), str(target), "--offline", home=root)


@SETTINGS
@given(text=HOSTILE)
def test_registry_streams_obey_no_data(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        draft = write_draft(root / folder_name(text) / "draft", seed_draft_config(), fc_in=10240)
        target = write_model(root / "target", qwen3_4b_config())
        pairs = root / "pairs.yaml"
        quoted = json.dumps(text)  # a YAML double-quoted scalar
        pairs.write_text(
            "version: 1\npairs:\n"
            f"  - draft: {json.dumps(str(draft))}\n    target: {json.dumps(str(target))}\n"
            f"    expect: compatible\n    reason: {quoted}\n    source: {quoted}\n"
            f"  - draft: {json.dumps(str(root / 'missing'))}\n    target: {quoted}\n"
            "    expect: compatible\n"
        )
        check_all_formats("registry", str(pairs), "--offline", home=root)


@SETTINGS
@given(text=HOSTILE)
def test_options_reach_no_stream_raw(text: str) -> None:
    """Values given on the command line come back in usage errors: shown, never obeyed."""
    text = text.replace("\x00", "") or "x"  # no argv can hold a NUL (exec ends it there)
    for args in (
        ("pair", "a", "b", "--offline", "-r", text),
        ("pair", "a", "b", "--offline", "-r", f"vllm=={text}"),
        ("pair", text, "--offline"),
        ("explain", text),
        ("rules", "--format", text),
        ("registry", text),
    ):
        assert_obeys_nothing(invoke_cli(*args))
