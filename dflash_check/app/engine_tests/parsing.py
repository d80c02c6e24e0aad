"""What every engine test-file reader shares: the bounded ``ast`` parse, the check that no
statement the reader skips changes what it read, and the entry it yields.

Its own module, below the package ``__init__`` that picks a reader: each reader
(``vllm_test_registry.py``, ``sglang_constants.py``) imports this, never the package, so the
package may import the readers without an import circle.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dflash_check.errors import RegistryError

MAX_SOURCE = 4_000_000
"""Characters of an engine test file read at most (vLLM's registry is ~100 kB)."""
MAX_DEPTH = 200
"""How deep the file's syntax tree may nest (the engines' files stay under 20): deeper, the
readers' walks and Python's own would recurse past their limits."""


def parse_python(text: str, display: str) -> ast.Module:
    """Parse an engine's test file (never run it); a file that is not Python, too large or too
    deeply nested is one line (exit 3). A UTF-8 byte order mark is read as Python reads it."""
    text = text.removeprefix("\ufeff")
    if len(text) > MAX_SOURCE:
        raise RegistryError(
            f"{display}: {len(text):,} characters, more than the {MAX_SOURCE:,} an engine test "
            "file is read up to; nothing was checked"
        )
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as err:
        raise RegistryError.at(
            display, err.lineno or 1, f"not valid Python ({err.msg}); nothing was checked"
        ) from None
    except ValueError as err:  # e.g. a NUL byte
        raise RegistryError(f"{display}: not valid Python ({err})") from None
    except (RecursionError, MemoryError):
        raise RegistryError(f"{display}: {TOO_DEEP}") from None
    check_depth(tree, display)
    return tree


TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels; nothing was checked"


def check_depth(tree: ast.AST, display: str) -> None:
    """Refuse a tree nested deeper than ``MAX_DEPTH`` (walked without recursion)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            line = getattr(node, "lineno", None)
            raise RegistryError.at(display, line, TOO_DEEP)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def first_change(
    statements: Iterable[ast.stmt], named: Callable[[str], bool], *, mutable: bool
) -> tuple[int, str] | None:
    """Return (line, name) of the first node in ``statements`` (the top-level statements a
    reader did not evaluate) that could change a value ``named`` picks: a binding or ``del``
    of the name, a ``global``/``nonlocal`` of it, and for a ``mutable`` value (a dict) also a
    method call or an item set or deleted (reading it, in a loop or a call, changes nothing).
    None: nothing changes one. Both engines' readers refuse such a file: guessing would let an
    entry go unchecked, or check one the engine never runs."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Global | ast.Nonlocal):
                found = next((n for n in node.names if named(n)), None)
            elif isinstance(node, ast.Name):
                found = node.id if named(node.id) and not isinstance(node.ctx, ast.Load) else None
            elif mutable and isinstance(node, ast.Attribute | ast.Subscript):
                base = node.value
                stored = isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load)
                found = base.id if isinstance(base, ast.Name) and named(base.id) else None
                found = found if stored else None
            else:
                found = None
            if found is not None:
                return getattr(node, "lineno", statement.lineno), found
    return None


def unevaluated_change(display: str, line: int, what: str) -> RegistryError:
    """The error for a file whose ``what`` is changed at ``line`` by a statement not read."""
    return RegistryError.at(
        display,
        line,
        f"not checked: {what} is changed at line {line} by a statement the reader does not "
        "evaluate; nothing was checked",
    )


@dataclass(frozen=True)
class EngineEntry:
    """One speculative example of an engine's test file, as written there."""

    key: str
    """The entry's name: vLLM's architecture key, or SGLang's constant suffix (``EAGLE3``)."""
    line: int
    """1-based line of the entry in the file."""
    target: str | None
    """The target model, if the entry names one."""
    draft: str | None
    """The draft (vLLM ``speculative_model``), if named; an MTP entry often names none."""
    method: str | None = None
    """The speculative method as stated (vLLM ``speculative_method``), lower case."""
    tokenizer: str | None = None
    """The tokenizer the engine's test loads, if stated."""
    revision: str | None = None
    """The target's revision, if pinned."""
    available_online: bool = True
    """False for vLLM's ``is_available_online=False``: the engine's tests skip the entry."""
    commented_out: bool = False
    """The entry is in a comment: listed, never checked."""
