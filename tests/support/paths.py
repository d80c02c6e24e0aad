"""Where the test data lives, computed once: a test's own folder never matters."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
EXAMPLES = REPO / "examples"
