"""The check path never imports torch or transformers, nor what only other commands need."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.helpers import QWEN3_4B, SEED_DRAFT

PROBE = """
import sys, runpy
sys.argv = ["dflash-check", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("dflash_check", run_name="__main__")
except SystemExit as exc:
    code = exc.code
# Start-up (benchmarks/bench_pair.py): what a pair written as a document does not need.
unneeded = (
    "rich",
    "dflash_check.cli.registry_command",
    "dflash_check.cli.rules",
    "dflash_check.cli.info",
    "dflash_check.smoke.report",
    "dflash_check.engines.command",
    "dflash_check.method_facets",
)
# The rooms and modules a check of two local folders has no use for, each loaded only on the
# path that needs it (a prefix covers a whole room).
not_for_local = (
    "dflash_check.sources.hub",
    "dflash_check.smoke",
    "dflash_check.engines",
    "dflash_check.app.engine",
    "dflash_check.app.served",
    "dflash_check.app.smoke_pair",
    "dflash_check.app.bundled_floor",
    "dflash_check.app.registry_run",
    "dflash_check.app.pairs",
    "dflash_check.check.entries",
    "dflash_check.check.target_alone",
    "dflash_check.check.tokenizers",
    "dflash_check.problems",
    "dflash_check.knowledge.installed",
    "dflash_check.knowledge.mtp_layers",
    "dflash_check.render.listing",
    # What only other methods' drafts or the engine smoke run define: each frozen class costs
    # start-up (the EAGLE-3 fc sizing rules, DFlash 2's key readers, the non-DFlash facets,
    # the HTTP and serve specs).
    "dflash_check.knowledge.runtimes.eagle3_counts",
    "dflash_check.knowledge.dflash2_readers",
    "dflash_check.method_facets",
    "dflash_check.knowledge.engines.serving",
    # The engines' MTP rows and their classes (Engine.mtp): only a target asked about alone
    # and the listings read them.
    "dflash_check.knowledge.engines.mtp_reading",
    "dflash_check.knowledge.engines.vllm_mtp",
    "dflash_check.knowledge.engines.sglang_mtp",
)
# What only a report for the console needs (the look at stdout, the table): not a document's.
console_only = ("dflash_check.cli.stdout", "dflash_check.render.table", "dflash_check.render.lines")
print("CONSOLE=" + ",".join(m for m in console_only if m in sys.modules), file=sys.stderr)
print(
    "ROOMS=" + ",".join(sorted(m for m in sys.modules if m.startswith(not_for_local))),
    file=sys.stderr,
)
print("LOADED=" + ",".join(m for m in unneeded if m in sys.modules), file=sys.stderr)
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), "CODE=" + str(code), file=sys.stderr)
"""


def probe(*args: str, line: int = -1) -> str:
    """Run the CLI with ``args`` in a fresh interpreter; return a probe line (the last:
    torch and the exit code; the one before: the start-up modules loaded; the one before
    that: the modules of rooms a local check does not use; the first: the console's modules
    loaded)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120
    )
    return proc.stderr.strip().splitlines()[line]


def test_pair_on_local_dirs_imports_no_torch() -> None:
    """A whole check on two directories stays free of torch and transformers."""
    assert probe("pair", str(SEED_DRAFT), str(QWEN3_4B), "--format", "json") == "HEAVY= CODE=0"


def test_help_imports_no_torch() -> None:
    """--help too."""
    assert probe("--help").startswith("HEAVY= ")


def test_pair_as_a_document_loads_only_its_command() -> None:
    """``pair`` builds only its own command, and a JSON report needs no rich console, no smoke
    report, no engine command and, for a DFlash draft, no other method's facets: each would
    cost start-up time (benchmarks/bench_pair.py)."""
    args = ("pair", str(SEED_DRAFT), str(QWEN3_4B), "--format", "json")
    assert probe(*args, line=-2) == "LOADED="


def test_pair_as_a_document_loads_nothing_for_the_console() -> None:
    """A JSON report is written without a look at stdout (``cli/stdout.py``: no width, no
    terminal to ask about) and without the table's modules."""
    args = ("pair", str(SEED_DRAFT), str(QWEN3_4B), "--format", "json")
    assert probe(*args, line=-4) == "CONSOLE="


def test_pair_table_for_a_pipe_loads_no_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default table written to a pipe (a CI log, ``| less``) shows no style: it is written
    as its text, with no rich console (cli/stdout.py), and without the other commands."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):  # either would make the pipe a terminal
        monkeypatch.delenv(name, raising=False)
    assert probe("pair", str(SEED_DRAFT), str(QWEN3_4B), line=-2) == "LOADED="


def test_pair_on_local_dirs_loads_only_the_rooms_it_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check of two local folders without tokenizers, as a table to a pipe, loads no Hub
    client, engine, smoke run, registry, tokenizer comparison or target-alone module, nor the
    classes only other methods' drafts or a served engine use (facets, fc sizing, HTTP profile,
    serve spec): every module and frozen class defined at import costs start-up time
    (benchmarks/bench_pair.py)."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    assert probe("pair", str(SEED_DRAFT), str(QWEN3_4B), line=-3) == "ROOMS="


def test_pair_defines_no_mtp_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair check reads no engine's MTP rows (``Engine.mtp``, called when asked): neither
    vLLM's rows nor the classes of a row (``mtp_reading.py``) are imported, as table or JSON."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for fmt in ((), ("--format", "json")):
        rooms = probe("pair", str(SEED_DRAFT), str(QWEN3_4B), *fmt, line=-3)
        assert "engines.vllm_mtp" not in rooms, rooms
        assert "engines.mtp_reading" not in rooms, rooms
