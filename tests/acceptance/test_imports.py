"""The check path never imports torch or transformers."""

from __future__ import annotations

import subprocess
import sys

from tests.support.helpers import QWEN3_4B, SEED_DRAFT

PROBE = """
import sys, runpy
sys.argv = ["dflash-check", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("dflash_check", run_name="__main__")
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), "CODE=" + str(code), file=sys.stderr)
"""


def probe(*args: str) -> str:
    """Run the CLI with ``args`` in a fresh interpreter; return its probe line."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120
    )
    return proc.stderr.strip().splitlines()[-1]


def test_pair_on_local_dirs_imports_no_torch() -> None:
    """A whole check on two directories stays free of torch and transformers."""
    assert probe("pair", str(SEED_DRAFT), str(QWEN3_4B), "--format", "json") == "HEAVY= CODE=0"


def test_help_imports_no_torch() -> None:
    """--help too."""
    assert probe("--help").startswith("HEAVY= ")
