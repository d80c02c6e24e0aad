"""The pieces every engine's miner shares: test ids read from a source folder with ``ast``, and
the cases file and coverage page written from a reviewed table (``conformance/mined/``)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MINED = REPO / "conformance" / "mined"


@dataclass(frozen=True)
class TestId:
    """One test function or method of a file, as pytest names it."""

    path: str
    """The file, relative to the engine's repository root."""
    name: str
    """``test_x`` or ``Class::test_x``."""
    line: int
    """Its ``def`` line in the version read."""

    @property
    def node(self) -> str:
        return f"{self.path}::{self.name}"


def tests_in(src: Path, path: str) -> Iterator[TestId]:
    """Every test function and test method of ``src/path``, in file order."""
    for cls, node in _test_nodes(ast.parse((src / path).read_text())):
        yield TestId(path, f"{cls}{node.name}", node.lineno)


def all_tests(src: Path, folder: str) -> Iterator[TestId]:
    """Every test under ``src/folder``, by file."""
    for file in sorted((src / folder).rglob("test_*.py")):
        yield from tests_in(src, str(file.relative_to(src)))


def relevant_tests(src: Path, folder: str, pattern: re.Pattern[str]) -> Iterator[TestId]:
    """Every test under ``src/folder`` whose own source matches ``pattern``, by file."""
    for file in sorted((src / folder).rglob("test_*.py")):
        path = str(file.relative_to(src))
        text = file.read_text(errors="replace")
        if not pattern.search(text):
            continue
        tree = ast.parse(text)
        bodies = {
            f"{cls}{node.name}": ast.get_source_segment(text, node) or ""
            for cls, node in _test_nodes(tree)
        }
        for test in tests_in(src, path):
            if pattern.search(bodies[test.name]):
                yield test


def _test_nodes(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            yield "", node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    yield f"{node.name}::", item


def line_of(src: Path, path: str, name: str) -> int:
    """The ``def`` line of test ``name`` (``test_x`` or ``Class::test_x``) in ``src/path``."""
    for test in tests_in(src, path):
        if test.name == name:
            return test.line
    raise SystemExit(f"{path}: no test {name} in the version read; review the table")


_ASSERTING_CALLS = re.compile(r"^(self\.assert\w*|pytest\.(raises|warns|fail))$")
"""What an assertion calls: unittest's ``self.assert*`` (``assertRaises`` as a context manager
too) and pytest's ``raises`` / ``warns`` / ``fail``."""


def assertion_line(src: Path, path: str, name: str, n: int) -> int:
    """The line of the ``n``-th assertion (from 1) of test ``name`` in ``src/path``: an
    ``assert`` statement, a call of ``_ASSERTING_CALLS`` as a statement, or a ``with`` over
    one, in source order (one inside another's ``with`` counts on its own). A case made from
    part of a test names the assertion it takes by this number."""
    text = (src / path).read_text()
    for cls, node in _test_nodes(ast.parse(text)):
        if f"{cls}{node.name}" != name:
            continue
        lines = sorted({stmt.lineno for stmt in ast.walk(node) if _asserts(stmt)})
        if not 1 <= n <= len(lines):
            raise SystemExit(f"{path}::{name}: {len(lines)} assertions, no assertion {n}")
        return lines[n - 1]
    raise SystemExit(f"{path}: no test {name} in the version read; review the table")


def _asserts(stmt: ast.AST) -> bool:
    if isinstance(stmt, ast.Assert):
        return True
    calls = []
    if isinstance(stmt, ast.Expr):
        calls = [stmt.value]
    elif isinstance(stmt, ast.With):
        calls = [item.context_expr for item in stmt.items]
    return any(
        isinstance(call, ast.Call) and _ASSERTING_CALLS.match(ast.unparse(call.func))
        for call in calls
    )


@dataclass(frozen=True)
class Page:
    """What one engine's coverage page says beyond its rows."""

    engine: str
    release: str
    command: str
    """The command that regenerates it."""
    read: str
    """Where the tests were read and at which version (markdown paragraphs)."""
    not_read: tuple[str, ...] = ()
    """What could not be read, one markdown bullet each."""


def pytest_outcomes(results: Path, command: str, skip: str | None = None) -> dict[str, Any]:
    """The ``engine_tests`` record of a ``pytest -rA`` run (``results``, its output): each
    test's outcome, less the tests whose id contains ``skip``."""
    records = []
    for line in results.read_text().splitlines():
        m = re.match(r"^(PASSED|FAILED|ERROR) (\S+)", line)
        if m and not (skip and skip in m.group(2)):
            records.append({"test": m.group(2), "outcome": m.group(1).lower()})
    return {"command": command, "records": records}


def write(
    page: Page,
    cases: list[dict[str, Any]],
    tests: Iterable[TestId | str],
    reviewed: Mapping[str, str],
    engine_tests: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``ENGINE-RELEASE.json`` (the cases, and the engine's own test run where there is
    one) and ``ENGINE-RELEASE.md`` (the coverage page: every test of ``tests`` with its cases,
    its reason in ``reviewed``, or "not reviewed")."""
    stem = f"{page.engine}-{page.release}"
    data = MINED / f"{stem}.json"
    payload: dict[str, Any] = {"engine": page.engine, "release": page.release, "cases": cases}
    if engine_tests is not None:
        payload["engine_tests"] = engine_tests
    data.write_text(json.dumps(payload, indent=1) + "\n")
    by_test = cases_by_test(cases)
    parts = {
        case["test"]: f" (its assertion {case['part']['assertion']} alone, line "
        f"{case['part']['line']}: {case['part']['why']})"
        for case in cases
        if case.get("part")
    }
    counts = {"cases": 0, "not applicable": 0, "not reviewed": 0}
    rows = []
    for test in tests:
        node = test.node if isinstance(test, TestId) else test
        where = (
            f"`{test.path}:{test.line}` `{test.name}`" if isinstance(test, TestId) else f"`{test}`"
        )
        if node in by_test:
            what = "cases: " + ", ".join(f"`{c}`" for c in by_test[node]) + parts.get(node, "")
            counts["cases"] += 1
        elif node in reviewed:
            what = f"not applicable: {reviewed[node]}"
            counts["not applicable"] += 1
        else:
            what = "not reviewed"
            counts["not reviewed"] += 1
        rows.append(f"| {where} | {what} |")
    lines = [
        f"# {page.engine} {page.release}: its own tests about speculative decoding, and the cases",
        "",
        f"Generated by `{page.command}`; do not edit. Each test has its case(s) in",
        f'`conformance/mined/{stem}.json`, a reason it is not applicable, or "not reviewed".',
        "",
        page.read,
        "",
    ]
    if page.not_read:
        lines += ["What could not be read:", "", *page.not_read, ""]
    summary = (
        f"{len(rows)} relevant tests: {counts['cases']} with cases ({len(cases)} cases), "
        f"{counts['not applicable']} not applicable, {counts['not reviewed']} not reviewed."
    )
    return data, write_page(MINED / f"{stem}.md", lines, summary, rows)


def cases_by_test(cases: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Test node (parameters dropped) -> the ids of its cases, in order."""
    by_test: dict[str, list[str]] = {}
    for case in cases:
        by_test.setdefault(case["test"].split("[")[0], []).append(case["id"])
    return by_test


def write_page(path: Path, lines: list[str], summary: str, rows: list[str]) -> Path:
    """Write a coverage page: its head (``lines``), the summary line and the table of tests
    (``rows``, one ``| test | case(s) |`` row each); its path."""
    page = [*lines, summary, "", "| test | case(s) |", "|---|---|", *rows]
    path.write_text("\n".join(page) + "\n")
    return path
