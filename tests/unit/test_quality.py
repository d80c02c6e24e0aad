"""The code stays ruff-clean (the lint rules in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.support.helpers import REPO


def test_ruff_check() -> None:
    """`ruff check` finds nothing."""
    if (
        shutil.which("ruff") is None
        and subprocess.run(
            [sys.executable, "-m", "ruff", "--version"], capture_output=True
        ).returncode
    ):
        pytest.skip("ruff is not installed")
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
