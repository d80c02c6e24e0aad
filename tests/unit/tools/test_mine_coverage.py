"""The miners' shared pieces (``tools/mine/coverage.py``): the line of a test's n-th assertion,
which a case made from part of a test cites (``part``), and the coverage page's note for it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tools.mine import coverage

SOURCE = textwrap.dedent(
    """\
    import pytest


    class TestThing:
        def test_parts(self):
            value = make(3)
            self.assertEqual(value, 3)
            with self.assertRaisesRegex(ValueError, "embedding"):
                make(4)
            helper(value)
            assert value
            with pytest.raises(KeyError):
                make(5)


    def test_none():
        make(1)
    """
)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    (tmp_path / "t.py").write_text(SOURCE)
    return tmp_path


def test_assertions_are_numbered_in_source_order(src: Path) -> None:
    lines = [coverage.assertion_line(src, "t.py", "TestThing::test_parts", n) for n in (1, 2, 3, 4)]
    assert lines == [7, 8, 11, 12]  # assertEqual, assertRaisesRegex, assert, pytest.raises


def test_an_assertion_the_test_lacks_is_an_error(src: Path) -> None:
    with pytest.raises(SystemExit, match="4 assertions, no assertion 5"):
        coverage.assertion_line(src, "t.py", "TestThing::test_parts", 5)
    with pytest.raises(SystemExit, match="0 assertions"):
        coverage.assertion_line(src, "t.py", "test_none", 1)
    with pytest.raises(SystemExit, match="no test test_gone"):
        coverage.assertion_line(src, "t.py", "test_gone", 1)


def test_the_page_says_which_assertion_a_case_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coverage, "MINED", tmp_path)
    case = {
        "id": "c",
        "test": "t.py::T::test_x",
        "part": {"assertion": 2, "line": 9, "why": "the first needs what the release lacks"},
    }
    page = coverage.Page("e", "1", "make", "read")
    data, md = coverage.write(page, [case], ["t.py::T::test_x", "t.py::T::test_y"], {})
    assert json.loads(data.read_text())["cases"] == [case]
    text = md.read_text()
    assert (
        "| `t.py::T::test_x` | cases: `c` (its assertion 2 alone, line 9: the first needs what "
        "the release lacks) |"
    ) in text
    assert "| `t.py::T::test_y` | not reviewed |" in text
