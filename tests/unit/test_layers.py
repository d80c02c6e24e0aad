"""The package's rooms import only downward, without circles, in modules a reader can hold.

Bottom to top: errors and the views < knowledge < check < sources < engines, smoke < render <
app < cli. Every import counts, lazy ones and ``TYPE_CHECKING`` ones too: a function-level
import that climbs a layer is still a dependency a reader of the lower room must know about.

``KNOWN_UPWARD``, ``KNOWN_CIRCLES`` and ``KNOWN_LONG`` are the debts the layout move left
(each needs a split that is not mechanical). They may only shrink: a new upward import fails,
and so does an entry that no longer holds, so that the list is edited as the debt is paid.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "dflash_check"

# module prefix -> rank; the longest prefix decides. Equal ranks may import each other.
LAYERS: dict[str, int] = {
    "dflash_check": 0,  # the package __init__: the version only
    "dflash_check.errors": 0,
    "dflash_check.views": 0,
    "dflash_check.method_facets": 0,
    "dflash_check.fields": 0,
    "dflash_check.sanitize": 0,
    "dflash_check.knowledge": 1,
    "dflash_check.check": 2,
    "dflash_check.sources": 3,
    "dflash_check.engines": 4,
    "dflash_check.smoke": 4,
    "dflash_check.render": 5,
    "dflash_check.app": 6,
    "dflash_check.cli": 7,
    "dflash_check.__main__": 8,
}
MAX_LINES = 500

# (importer, imported) pairs that climb a layer today; see the module docstring.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()
# Sets of modules that import each other today, in a function on one side: each breaks the
# circle only by importing late (found when ``circles`` learned to see function-level imports).
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()
# Modules over MAX_LINES today (data tables and code still to be split).
KNOWN_LONG: frozenset[str] = frozenset()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def rank(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        if (head := ".".join(parts[:i])) in LAYERS:
            return LAYERS[head]
    raise AssertionError(f"{module} is in no layer: add its room to LAYERS")


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``: imports a type checker follows and
    Python never runs."""
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If)
        and isinstance(block.test, ast.Name)
        and block.test.id == "TYPE_CHECKING"
        for statement in block.body
        for node in ast.walk(statement)
    }


def imports(
    path: Path,
    *,
    top_level_only: bool = False,
    runtime: bool = False,
    modules: dict[str, Path] = MODULES,
) -> set[str]:
    """The project modules a file imports (``from pkg import sub`` resolves to the submodule):
    every import, or those at the top of the module only, or (``runtime``) every import
    Python runs, at the top or in a function, but not those under ``TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if runtime:
        skipped = _type_checking_only(tree)
        nodes = [n for n in nodes if id(n) not in skipped]
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("dflash_check"))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if not node.module.startswith("dflash_check"):
                continue
            subs = {f"{node.module}.{a.name}" for a in node.names}
            found = subs & modules.keys()
            out.update(found or {node.module})
            if found != subs:
                out.add(node.module)
    return out


def upward() -> set[tuple[str, str]]:
    return {
        (mod, dep)
        for mod, path in MODULES.items()
        for dep in imports(path, top_level_only=False)
        if rank(dep) > rank(mod)
    }


def circles(modules: dict[str, Path] = MODULES) -> set[frozenset[str]]:
    """Strongly connected components (size > 1) of the graph of imports Python runs (Tarjan):
    a function-level import counts, since it closes a circle as soon as the function runs (a
    package ``__init__`` importing, in a function, a submodule that imports the package
    ``__init__`` at its top reads names the package may not have defined yet)."""
    graph = {
        m: imports(p, runtime=True, modules=modules) & modules.keys() for m, p in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.add(frozenset(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_a_function_level_import_closes_a_circle(tmp_path: Path) -> None:
    """A package ``__init__`` that imports its submodule in a function, while the submodule
    imports the package at its top, is a circle (app/engine_tests had one); an import under
    ``TYPE_CHECKING`` is none, since Python never runs it."""
    package, sub = tmp_path / "__init__.py", tmp_path / "sub.py"
    package.write_text("def read():\n    from dflash_check.fake.sub import g\n    return g\n")
    sub.write_text("from dflash_check.fake import read\n")
    modules = {"dflash_check.fake": package, "dflash_check.fake.sub": sub}
    assert circles(modules) == {frozenset(modules)}
    package.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dflash_check.fake.sub import g\n"
    )
    assert circles(modules) == set()


def long_modules() -> set[str]:
    return {m for m, p in MODULES.items() if len(p.read_text().splitlines()) > MAX_LINES}


def test_every_module_has_a_layer() -> None:
    for mod in MODULES:
        rank(mod)


def test_imports_only_go_down() -> None:
    found = upward()
    assert not found - KNOWN_UPWARD, "new upward imports (move the code down, or the import up)"
    assert not KNOWN_UPWARD - found, "paid debt: remove these from KNOWN_UPWARD"


def test_no_import_circles() -> None:
    found = circles()
    assert not found - KNOWN_CIRCLES, "new import circles"
    assert not KNOWN_CIRCLES - found, "paid debt: remove these from KNOWN_CIRCLES"


def test_modules_stay_short() -> None:
    found = long_modules()
    assert not found - KNOWN_LONG, f"modules over {MAX_LINES} lines: split them by role"
    assert not KNOWN_LONG - found, "paid debt: remove these from KNOWN_LONG"


@pytest.mark.parametrize(
    ("importer", "imported", "upward_expected"),
    [
        ("dflash_check.knowledge.families", "dflash_check.cli", True),
        ("dflash_check.cli", "dflash_check.errors", False),
    ],
)
def test_rank_orders_rooms(importer: str, imported: str, upward_expected: bool) -> None:
    """The check itself can fail: a knowledge module importing the CLI climbs."""
    assert (rank(imported) > rank(importer)) is upward_expected


MAX_CLI_FUNCTION_LINES = 60
MAX_PAIR_PARAMETERS = 15


def long_cli_functions() -> set[str]:
    """Functions in ``cli/`` over MAX_CLI_FUNCTION_LINES lines: a command parses its options
    and hands them to ``app/``; a long one is running a flow the CLI should not own."""
    out = set()
    for mod, path in MODULES.items():
        if not mod.startswith("dflash_check.cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > MAX_CLI_FUNCTION_LINES:
                    out.add(f"{mod}.{node.name}")
    return out


def test_cli_functions_stay_short() -> None:
    assert not long_cli_functions(), "split the flow into app/ or a helper"


def test_pair_takes_option_groups() -> None:
    """``pair`` declares a few option groups (``cli/groups.py``), not its forty options."""
    tree = ast.parse(MODULES["dflash_check.cli.pair"].read_text())
    (pair,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pair"]
    count = len(pair.args.args) + len(pair.args.kwonlyargs)
    assert count < MAX_PAIR_PARAMETERS, f"pair() has {count} parameters"


def test_every_room_has_its_unit_tests() -> None:
    """``tests/unit`` mirrors the package: each room (a subpackage) has its folder of tests,
    so a test of ``app/served.py`` is found at ``tests/unit/app/``."""
    rooms = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    tests = REPO / "tests" / "unit"
    missing = sorted(r for r in rooms if not any((tests / r).glob("test_*.py")))
    assert not missing, f"rooms without tests/unit/<room>/test_*.py: {missing}"
