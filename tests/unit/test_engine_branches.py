"""No module outside ``dflash_check/knowledge/engines/`` compares an engine's name (issue 28).

An engine is one module behind one interface: a rule asks the engine (``Engine.handling``,
``Release`` fields, its stages) what it does, instead of branching on which engine it is. A
comparison (``==``, ``!=``, ``in``, ``not in``) with an engine's or runtime's name, written as
``VLLM.name``, a name imported from the registration (``VLLM_V1``, ``VLLM_RUNNERS``), a string
literal (``"sglang"``) or a module-level table of such names, is such a branch. Naming an
engine is still fine where a rule or a row says which runtimes it speaks about (``runtimes=``,
``runtime=``): that is no branch.
"""

from __future__ import annotations

import ast

from dflash_check.knowledge import engines
from tests.support.paths import REPO

PACKAGE = REPO / "dflash_check"
ENGINES_ROOM = PACKAGE / "knowledge" / "engines"


def _names() -> frozenset[str]:
    """Every registered engine's name and runtime names."""
    return frozenset(
        {e.name for e in engines.ENGINES} | {r for e in engines.ENGINES for r in e.runtime_names}
    )


def _imported_kind(value: object, names: frozenset[str]) -> str | None:
    """What a name imported from the registration stands for: an engine, an engine's name,
    or a tuple of names (None: none of these)."""
    if isinstance(value, engines.Engine):
        return "engine"
    if isinstance(value, str) and value in names:
        return "name"
    if isinstance(value, tuple | frozenset) and value and set(value) <= names:
        return "names"
    return None


def engine_comparisons(source: str, names: frozenset[str] | None = None) -> list[tuple[int, str]]:
    """Return (line, text) of each comparison in ``source`` with an engine's name."""
    names = _names() if names is None else names
    tree = ast.parse(source)
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "dflash_check.knowledge.engines":
            for alias in node.names:
                kind = _imported_kind(getattr(engines, alias.name, None), names)
                if kind is not None:
                    imported[alias.asname or alias.name] = kind
    tables: set[str] = set()

    def names_engine(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and node.value in names
        if isinstance(node, ast.Attribute):
            base = node.value
            return (
                node.attr == "name"
                and isinstance(base, ast.Name)
                and imported.get(base.id) == "engine"
            )
        if isinstance(node, ast.Name):
            return imported.get(node.id) in ("name", "names") or node.id in tables
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(names_engine(e) for e in node.elts)
        if isinstance(node, ast.Starred):
            return names_engine(node.value)
        if isinstance(node, ast.Dict):
            return any(k is not None and names_engine(k) for k in node.keys)
        if isinstance(node, ast.Call):  # frozenset((...)), MappingProxyType({...})
            return any(names_engine(a) for a in node.args)
        return False

    # A module-level table of engine names (a tuple, a set, a dict keyed by them).
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        if not isinstance(value, ast.Attribute | ast.Constant) and names_engine(value):
            tables.update(t.id for t in targets if isinstance(t, ast.Name))
    return [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(names_engine(side) for side in (node.left, *node.comparators))
    ]


def test_no_module_outside_the_engines_compares_an_engine_name() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if ENGINES_ROOM not in path.parents
        for line, text in engine_comparisons(path.read_text())
    ]
    assert not found, (
        "engine-specific branches outside knowledge/engines/: ask the engine instead "
        "(Engine.handling, a Release field)\n" + "\n".join(found)
    )


def test_each_way_of_naming_an_engine_is_seen() -> None:
    """The branches issue 28 removed, and their kin, are each found."""
    branches = (
        "from dflash_check.knowledge.engines import VLLM\nif p.name != VLLM.name: pass\n",
        "from dflash_check.knowledge.engines import SGLANG as S\nx = n == S.name\n",
        "from dflash_check.knowledge.engines import VLLM_V1\nx = n in (VLLM_V1,)\n",
        "from dflash_check.knowledge.engines import VLLM_RUNNERS\nx = k not in VLLM_RUNNERS\n",
        "x = engine == 'sglang'\n",
        "from dflash_check.knowledge.engines import LLAMACPP\n_T = (LLAMACPP.name,)\n"
        "def f(p):\n    return p.engine_name in _T\n",
        "from types import MappingProxyType\nfrom dflash_check.knowledge.engines import SGLANG\n"
        "_T = MappingProxyType({SGLANG.name: 'why'})\nx = e in _T\n",
    )
    for source in branches:
        assert engine_comparisons(source), source
    # Naming the runtimes a rule or a finding is about is no branch; nor is another string.
    fine = (
        "from dflash_check.knowledge.engines import VLLM\n"
        "x = rule(runtimes=(VLLM.name,))\ny = Issue(runtime=VLLM.name)\n",
        "x = fmt == 'speculators'\n",
    )
    for source in fine:
        assert not engine_comparisons(source), source
