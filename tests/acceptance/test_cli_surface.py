"""Every command of the top-level help, in every format, and its --help at 80 and 120 columns.

A new user's first hour runs each command once in its default format; a crash there (as
`formats` once did) must fail a test, and so must a help page that cuts an option name.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dflash_check.cli import app
from dflash_check.cli.rules import DocFormat
from dflash_check.render import OUTPUT_FORMATS
from tests.support.helpers import REPO

SEED = (str(REPO / "examples" / "Qwen3-4B-DFlash-b16"), str(REPO / "examples" / "Qwen3-4B"))


def commands() -> dict[str, Any]:
    """Return the commands the top-level help lists, by name (typer's own click commands)."""
    group = typer.main.get_command(app)
    return dict(group.commands)  # type: ignore[attr-defined]


def invoke(*args: str, columns: int = 120) -> tuple[int, str]:
    """Run the app in-process at ``columns`` columns; return its exit code and output."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns), "NO_COLOR": "1"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def registry_file(tmp_path: Path) -> Path:
    """Write a pairs.yaml whose one pair (the seed pair) is as expected."""
    path = tmp_path / "pairs.yaml"
    path.write_text(
        "version: 1\npairs:\n"
        f"  - draft: {SEED[0]}\n    target: {SEED[1]}\n    expect: compatible\n"
        "    source: tests\n"
    )
    return path


def test_top_level_help_lists_every_command() -> None:
    """The commands tested below are the ones the top-level help shows."""
    code, text = invoke("--help", columns=80)
    assert code == 0
    for name in commands():
        assert re.search(rf"│ {name}\b", text), name


@pytest.mark.parametrize("fmt", [f.value for f in DocFormat])
@pytest.mark.parametrize("command", [["rules"], ["runtimes"], ["formats"]])
def test_doc_commands_run_in_every_format(command: list[str], fmt: str) -> None:
    """Each documentation command answers in each format, exit 0, with some output."""
    code, text = invoke(*command, "--format", fmt, columns=80)
    assert code == 0, text
    assert text.strip()


def test_explain_runs() -> None:
    """`explain` answers for a known rule."""
    code, text = invoke("explain", "DF004", columns=80)
    assert code == 0 and "DF004" in text


@pytest.mark.parametrize("fmt", list(OUTPUT_FORMATS))
def test_pair_runs_in_every_format(fmt: str) -> None:
    """The seed pair is compatible (exit 0) in every report format."""
    code, text = invoke("pair", *SEED, "--format", fmt, columns=80)
    assert code == 0, text
    assert text.strip()


@pytest.mark.parametrize("fmt", list(OUTPUT_FORMATS))
def test_registry_runs_in_every_format(fmt: str, tmp_path: Path) -> None:
    """A pairs.yaml whose pair is as expected exits 0 in every report format."""
    code, text = invoke("registry", str(registry_file(tmp_path)), "--format", fmt, columns=80)
    assert code == 0, text
    assert text.strip()


def option_names(command: Any) -> list[str]:
    """Return every option name and metavar a command's help must show whole."""
    names = []
    for param in command.params:
        names += [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")]
    return names


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("name", list(commands()))
def test_help_cuts_no_name(name: str, columns: int) -> None:
    """No option name is cut (rich's "…") or split across lines, at 80 or 120 columns."""
    code, text = invoke(name, "--help", columns=columns)
    assert code == 0, text
    assert "…" not in text
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns
    words = set(re.findall(r"--[a-z][a-z0-9-]*[a-z0-9]", text))
    for option in option_names(commands()[name]):
        assert option in words, f"{option} is not shown whole in `{name} --help`"
    # a line that ends inside a word (letter, then a letter on the next line's text) is a split
    cells = [re.sub(r"^[│ ]+|[│ ]+$", "", line) for line in lines]
    for before, after in itertools.pairwise(cells):
        assert not (before.endswith("-") and after[:1].isalpha()), (before, after)


def test_pair_help_fits_150_lines_at_80_columns() -> None:
    """`pair --help` groups its options into panels and stays within 150 lines."""
    code, text = invoke("pair", "--help", columns=80)
    assert code == 0
    assert len(text.splitlines()) <= 150
    for panel in ("Check", "Output", "Hub", "Smoke run", "Smoke run in a serving engine"):
        assert f"╭─ {panel} ─" in text, panel
    assert "[DRAFT] TARGET" in text
    assert "[required]" not in text  # DRAFT may be left out (pair TARGET)
    # --engine-arg changes the static verdict (the flags the check reads): a Check option.
    check = " ".join(text.split("╭─ Check ─", 1)[1].split("╰", 1)[0].replace("│", " ").split())
    assert "--engine-arg ARG Engine argument" in check
    assert "SGLang's DP attention and speculative flags are checked" in check


def test_runtime_help_names_every_runtime() -> None:
    """`--runtime`'s help lists the same runtimes as its error message."""
    from dflash_check.knowledge.selection import runtime_names

    code, text = invoke("pair", "--help", columns=200)
    flat = " ".join(text.split())
    assert ", ".join(runtime_names()) in flat
    code, text = invoke("pair", *SEED, "--runtime", "nope", columns=200)
    assert code == 2 and ", ".join(runtime_names()) in " ".join(text.split())


def test_pair_without_arguments_is_a_usage_error() -> None:
    """Both arguments are optional to typer; none given is still exit 2, naming TARGET."""
    code, text = invoke("pair", columns=120)
    assert code == 2 and "TARGET" in text


@pytest.mark.parametrize(
    ("name", "local"),
    [
        ("examples/Qwen3-4B-DFlash", True),  # first component exists: a mistyped local path
        ("./Qwen3-4B", True),
        ("~/models/draft", True),
        ("/models/draft", True),
        ("z-lab/Qwen3-4B-DFlash-b16", False),  # no folder z-lab here: a Hub repo id
    ],
)
def test_local_or_hub_rule(
    name: str, local: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/cli.md#local-or-hub: what makes a name a local path."""
    from dflash_check.sources.interface import parse_model_ref

    (tmp_path / "examples").mkdir()
    monkeypatch.chdir(tmp_path)
    ref = parse_model_ref(name)
    assert (ref.path is not None) is local


def test_mistyped_local_path_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing folder under an existing one answers within a second, naming its neighbour."""
    import time

    monkeypatch.chdir(REPO)
    start = time.monotonic()
    code, text = invoke("pair", "examples/Qwen3-4B-DFlash", "examples/Qwen3-4B")
    assert time.monotonic() - start < 1.0
    assert code == 3
    assert "examples/Qwen3-4B-DFlash: directory not found" in text
    assert "did you mean examples/Qwen3-4B-DFlash-b16?" in text


def test_registry_without_network_gives_the_hint_once(tmp_path: Path) -> None:
    """Three Hub pairs and no Hub: one error line each, the network hint once, no retry lines."""
    import socket

    from tests.support.helpers import invoke_cli

    with socket.socket() as sock:  # a loopback port nobody listens on: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pairs = tmp_path / "pairs.yaml"
    entries = "".join(
        f"  - draft: org/draft-{i}\n    target: org/target-{i}\n    expect: compatible\n"
        "    source: tests\n"
        for i in range(3)
    )
    pairs.write_text(f"version: 1\npairs:\n{entries}")
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(tmp_path / "hf")}
    proc = invoke_cli("registry", str(pairs), "--timeout", "0.5", env={**env, "COLUMNS": "80"})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout.count("HF_ENDPOINT") == 1, proc.stdout
    assert proc.stdout.count("cannot connect") == 3
    assert "retrying" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1  # the counts


def test_missing_transformers_is_named_before_torch_is_imported() -> None:
    """The smoke extra is looked up first: a missing transformers never costs a torch import.

    torch is reported found whether or not this environment has it (the check-only one has
    not), so the test holds on both.
    """
    import subprocess
    import sys

    code = (
        "import importlib.machinery, importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "fake = {'transformers': None, 'torch': importlib.machinery.ModuleSpec('torch', None)}\n"
        "importlib.util.find_spec = lambda n, *a: fake[n] if n in fake else real(n, *a)\n"
        "from dflash_check.errors import MissingExtraError\n"
        "from dflash_check.smoke.run import import_runtime\n"
        "try:\n"
        "    import_runtime()\n"
        "except MissingExtraError as err:\n"
        "    print(err, 'torch' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip().endswith("(transformers is not installed) False"), proc.stderr


def test_target_alone_uses_the_diagnostic_layout() -> None:
    """`pair TARGET` prints `error[DF041]:` and `= help:`, as the pair report does."""
    code, text = invoke("pair", str(REPO / "examples" / "Qwen3-4B"), columns=80)
    assert code == 1
    assert "error[DF041]: target" in text and "   = help: " in text
    assert "DF041 error" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_print_command_uses_absolute_paths_and_explains_a_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--print-command names local folders by absolute path; refused, it shows the findings."""
    monkeypatch.chdir(REPO)
    code, text = invoke(
        "pair",
        "examples/Qwen3-4B-DFlash-b16",
        "examples/Qwen3-4B",
        "--engine",
        "vllm",
        "--print-command",
    )
    assert code == 0
    assert f"vllm serve {REPO / 'examples' / 'Qwen3-4B'} " in text
    assert f'"model": "{REPO / "examples" / "Qwen3-4B-DFlash-b16"}"' in text
    code, text = invoke(
        "pair",
        "examples/Qwen3-4B-DFlash-b16",
        "examples/Qwen3.5-4B",
        "--engine",
        "vllm",
        "--print-command",
    )
    assert code == 1
    assert "error[DF004]" in text
    assert "No command printed: the static check failed on vllm==" in text


def test_seed_report_fits_40_lines_whatever_the_path(tmp_path: Path) -> None:
    """At 80 columns the seed report is ≤ 40 lines, its answer in the first 10, and the
    messages say "the draft" / "the target" instead of repeating the paths."""
    import shutil

    deep = tmp_path / ("a-rather-long-folder-name-for-models-" * 2) / "another-level-of-nesting"
    for name in ("Qwen3-4B-DFlash-b16", "Qwen3.5-4B"):
        shutil.copytree(REPO / "examples" / name, deep / name)
    code, text = invoke(
        "pair", str(deep / "Qwen3-4B-DFlash-b16"), str(deep / "Qwen3.5-4B"), columns=80
    )
    assert code == 1
    lines = text.splitlines()
    assert len(lines) <= 40, text
    assert lines[0].startswith("incompatible on all 6 runtimes:")
    assert "3 errors, 1 warning" in "\n".join(lines[:10])
    blocks = text.split("\n\n", 1)[1]  # past the answer, which names both models
    assert str(deep) not in blocks
    assert "error[DF011]: the draft was trained for a 36-layer target" in blocks


def test_fc_width_not_checked_is_said_once(tmp_path: Path) -> None:
    """A draft without safetensors: the DF010 warning says DF005 was not checked, and no
    separate `not checked: DF005` line repeats it."""
    import shutil

    draft = tmp_path / "draft"
    shutil.copytree(REPO / "examples" / "Qwen3-4B-DFlash-b16", draft)
    for weights in draft.glob("*.safetensors"):
        weights.unlink()
    code, text = invoke("pair", str(draft), str(REPO / "examples" / "Qwen3-4B"), columns=80)
    assert code == 0
    assert text.count("DF005") == 1 and "warning[DF010]" in text
    assert "not checked: DF005" not in text


def test_help_text_does_not_import_the_runtime_table() -> None:
    """The runtime names are filled into --help when shown: importing the CLI (every run)
    does not import the runtime table (~0.2 s)."""
    import subprocess
    import sys

    code = "import sys, dflash_check.cli; print('dflash_check.knowledge.runtimes' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip() == "False", proc.stderr
