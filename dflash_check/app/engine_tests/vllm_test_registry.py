"""vLLM's ``tests/models/registry.py``: the speculative entries, read with ``ast``.

The table is a module-level dict literal, ``_SPECULATIVE_DECODING_EXAMPLE_MODELS = {"Arch":
_HfExamplesInfo(TARGET, speculative_model=DRAFT, speculative_method=…, tokenizer=…, …), …}``;
a layout may split it into several dicts joined with ``**`` merges, and disabled entries are
kept as comments. Only literals are read (a string constant named at module level too): any
other shape is refused with its line, since guessing would let an entry go unchecked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from dflash_check.app.engine_tests.parsing import (
    EngineEntry,
    first_change,
    parse_python,
    unevaluated_change,
)
from dflash_check.errors import RegistryError
from dflash_check.knowledge.engines.vllm_handling import TEST_TABLE as VLLM_TABLE

INFO_CLASS = "_HfExamplesInfo"
STRING_FIELDS = ("speculative_model", "speculative_method", "tokenizer", "revision")
"""The keyword arguments read as strings (others, such as ``trust_remote_code``, are ignored)."""

_COMMENTED = re.compile(r"""^\s*#\s*["'](\w+)["']\s*:\s*(\w*""" + INFO_CLASS + r"""\s*\(.*)$""")


@dataclass(frozen=True)
class _Item:
    """One entry of a table as Python would hold it after the statement that set it."""

    key: str
    line: int
    node: ast.expr
    strings: Mapping[str, str]
    """The module's string constants when the entry was evaluated (a later rebinding does
    not change what the dict holds)."""


@dataclass
class _Table:
    """A module-level dict as it stands after the statements read so far."""

    items: dict[str, _Item] = field(default_factory=dict)
    spans: list[tuple[int, int]] = field(default_factory=list)
    """The lines of the dict literals its entries came from (commented entries live there)."""
    errors: list[RegistryError] = field(default_factory=list)
    """What makes it unreadable, raised only if the speculative table is built from it."""
    sources: set[str] = field(default_factory=set)
    """The names of the tables merged into it (``**NAME``, ``|= NAME``)."""


class _Reader:
    """Follows the module's top-level statements in order, as Python runs them: dict literals
    and their ``**`` merges, ``TABLE[KEY] = …``, ``TABLE.update({…})``, ``TABLE |= {…}``,
    ``del TABLE[KEY]``, string constants (rebound, unpacked from tuples, ``+=``). A statement
    that changes the speculative table (or a table merged into it) any other way is refused
    with its line: guessing would let an entry go unchecked, or check one vLLM never runs."""

    def __init__(self, tree: ast.Module, display: str) -> None:
        self.display = display
        self.tables: dict[str, _Table] = {}
        self.other: dict[str, ast.AST] = {}
        self.strings: dict[str, str] = {}
        self.spans: list[tuple[int, int]] = []
        self.strings_now: Mapping[str, str] = self.strings  # what commented entries name
        unread: list[ast.stmt] = []
        for node in tree.body:
            if not self.statement(node):
                unread.append(node)
        self.unread = unread

    # -- statements -------------------------------------------------------------------------

    def statement(self, node: ast.stmt) -> bool:
        """Apply one top-level statement; False when it is not one the reader evaluates."""
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets):
                for t in targets:
                    self.bind(t.id, node.value)  # type: ignore[attr-defined]
                return True
            if len(targets) == 1 and isinstance(targets[0], ast.Tuple | ast.List):
                return self.unpack(targets[0], node.value)
            if len(targets) == 1 and isinstance(targets[0], ast.Subscript):
                return self.set_item(targets[0], node.value, node)
            return False
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            value = node.value
            if isinstance(node.op, ast.BitOr) and name in self.tables:
                return self.merge(name, value)
            if isinstance(node.op, ast.Add) and name in self.strings and _is_str(value):
                self.strings[name] += value.value  # type: ignore[attr-defined]
                return True
            return False
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "update"
                and isinstance(func.value, ast.Name)
                and func.value.id in self.tables
                and len(call.args) == 1
                and not call.keywords
            ):
                return self.merge(func.value.id, call.args[0])
            return False
        if isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Name) and (t.id in self.tables or t.id in self.strings):
                    self.tables.pop(t.id, None)
                    self.strings.pop(t.id, None)
                    continue
                table, key = self.subscript(t)
                if table is None or key is None:
                    return False
                self.tables[table].items.pop(key, None)
            return True
        return False

    def bind(self, name: str, value: ast.expr) -> None:
        """``NAME = value``: a new table, a string, or something not read."""
        self.tables.pop(name, None)
        self.strings.pop(name, None)
        self.other.pop(name, None)
        if isinstance(value, ast.Dict):
            table = _Table()
            self.add_dict(table, name, value)
            self.tables[name] = table
        elif _is_str(value):
            self.strings[name] = value.value  # type: ignore[attr-defined]
        else:
            self.other[name] = value

    def unpack(self, target: ast.Tuple | ast.List, value: ast.expr) -> bool:
        """``A, B = "x", "y"``: pairwise; any other unpacking is not read."""
        if not isinstance(value, ast.Tuple | ast.List) or len(value.elts) != len(target.elts):
            return False
        if not all(isinstance(t, ast.Name) for t in target.elts):
            return False
        for t, v in zip(target.elts, value.elts, strict=True):
            self.bind(t.id, v)  # type: ignore[attr-defined]
        return True

    def subscript(self, node: ast.expr) -> tuple[str | None, str | None]:
        """Return (table, key) of ``TABLE["KEY"]``; Nones when it is not that."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            return None, None
        if node.value.id not in self.tables or not _is_str(node.slice):
            return None, None
        return node.value.id, node.slice.value  # type: ignore[attr-defined]

    def set_item(self, target: ast.Subscript, value: ast.expr, node: ast.stmt) -> bool:
        """``TABLE["KEY"] = entry``."""
        table, key = self.subscript(target)
        if table is None or key is None:
            return False
        found = self.tables[table]
        found.items[key] = _Item(key, node.lineno, value, dict(self.strings))
        found.spans.append((node.lineno, node.end_lineno or node.lineno))
        return True

    def merge(self, name: str, value: ast.expr) -> bool:
        """``TABLE.update(…)`` / ``TABLE |= …`` with a dict literal or a table."""
        if isinstance(value, ast.Dict):
            self.add_dict(self.tables[name], name, value)
            return True
        if isinstance(value, ast.Name) and value.id in self.tables:
            self.copy_into(self.tables[name], value.id)
            return True
        return False

    def add_dict(self, table: _Table, name: str, node: ast.Dict) -> None:
        """Add a dict literal's entries (a later key replaces an earlier one, as in Python)."""
        table.spans.append((node.lineno, node.end_lineno or node.lineno))
        strings = dict(self.strings)
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # a ``**OTHER`` merge, of OTHER as it is now
                if not isinstance(value, ast.Name):
                    table.errors.append(
                        self.fail(value, f"unexpected shape: ** of an expression in {name}")
                    )
                elif value.id in self.tables:
                    self.copy_into(table, value.id)
                elif value.id in self.other:
                    where = self.other[value.id]
                    table.errors.append(
                        self.fail(where, f"unexpected shape: {value.id} is not a dict literal")
                    )
                else:
                    table.errors.append(
                        self.fail(
                            value, f"unexpected shape: {value.id} is not defined before {name}"
                        )
                    )
                continue
            if not _is_str(key):
                table.errors.append(
                    self.fail(key, f"unexpected shape: a key of {name} is not a string literal")
                )
                continue
            table.items[key.value] = _Item(key.value, key.lineno, value, strings)  # type: ignore[union-attr]

    def copy_into(self, table: _Table, source: str) -> None:
        """Merge the table ``source`` as it stands now into ``table``."""
        other = self.tables[source]
        table.items.update(other.items)
        table.spans += other.spans
        table.errors += other.errors
        table.sources |= {source, *other.sources}

    # -- the result -------------------------------------------------------------------------

    def read(self, name: str) -> list[EngineEntry]:
        """Return the entries of table ``name`` after the whole module ran."""
        table = self.tables.get(name)
        if table is None:
            where = self.other.get(name)
            if where is not None:
                raise self.fail(where, f"unexpected shape: {name} is not a dict literal")
            raise RegistryError(
                f"{self.display}: no {name} table found (expected vLLM's "
                f"tests/models/registry.py with {VLLM_TABLE} = {{...}})"
            )
        # The tables it is built from, and the constants its entries name.
        named = {
            n.id for i in table.items.values() for n in ast.walk(i.node) if isinstance(n, ast.Name)
        }
        self.refuse_changes({name, *table.sources, *named})
        if table.errors:
            raise table.errors[0]
        self.spans = table.spans
        entries = []
        for item in table.items.values():
            self.strings_now = item.strings
            entries.append(self.entry(item.key, item.line, item.node))
        self.strings_now = self.strings
        return entries

    def refuse_changes(self, names: set[str]) -> None:
        """Refuse any statement not evaluated that could change a table in ``names``: a
        binding, a ``del``, a method call, an item set or deleted, a ``global`` (reading the
        table, in a loop or a call's argument, changes nothing)."""
        found = first_change(self.unread, names.__contains__, mutable=True)
        if found is not None:
            raise unevaluated_change(self.display, found[0], "the table")

    def fail(self, node: ast.AST, message: str) -> RegistryError:
        """Build an error pointing at ``node``'s line."""
        return RegistryError.at(self.display, getattr(node, "lineno", 1), message)

    def string(self, node: ast.expr, what: str, key: str) -> str | None:
        """Return a string literal (or a module-level string constant), None for ``None``."""
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.strings_now:
            return self.strings_now[node.id]
        raise self.fail(node, f"unexpected shape: entry '{key}': {what} is not a string literal")

    def entry(self, key: str, line: int, node: ast.expr, commented: bool = False) -> EngineEntry:
        """Read one ``_HfExamplesInfo(...)`` call."""
        func = node.func if isinstance(node, ast.Call) else None
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if not isinstance(node, ast.Call) or name != INFO_CLASS:
            raise self.fail(node, f"unexpected shape: entry '{key}' is not {INFO_CLASS}(...)")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.fail(node, f"unexpected shape: entry '{key}' unpacks * or ** arguments")
        values: dict[str, str | None] = {}
        target_node = node.args[0] if node.args else None
        online = True
        for kw in node.keywords:
            if kw.arg == "default":
                target_node = kw.value
            elif kw.arg in STRING_FIELDS:
                values[kw.arg] = self.string(kw.value, kw.arg, key)
            elif kw.arg == "is_available_online":
                if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
                    raise self.fail(kw.value, f"entry '{key}': is_available_online is not a bool")
                online = kw.value.value
        if target_node is None:
            raise self.fail(node, f"unexpected shape: entry '{key}' names no model")
        method = values.get("speculative_method")
        return EngineEntry(
            key=key,
            line=line,
            target=self.string(target_node, "the model", key),
            draft=values.get("speculative_model"),
            method=method.lower() if method else None,
            tokenizer=values.get("tokenizer"),
            revision=values.get("revision"),
            available_online=online,
            commented_out=commented,
        )


def _is_str(node: ast.AST | None) -> bool:
    """Whether ``node`` is a string literal."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _commented(reader: _Reader, text: str) -> Iterator[EngineEntry]:
    """Yield the entries kept as comments inside the tables' spans (disabled ones).

    Comments are found by Python's own tokenizer (a ``# "X": _HfExamplesInfo(`` line inside a
    string literal is no comment). A commented entry is uncommented line by line until its
    parentheses close (counted outside string literals, in one pass), then read like a live
    one; when that fails it is still listed, by name, so that none goes unmentioned.
    """
    comments = _full_line_comments(text, reader.display)
    starts = sorted(
        line
        for first, last in reader.spans
        for line in comments
        if first <= line <= last and _COMMENTED.match(comments[line])
    )
    last_of = {
        line: last for first, last in reader.spans for line in starts if first <= line <= last
    }
    for number in dict.fromkeys(starts):
        match = _COMMENTED.match(comments[number])
        assert match is not None
        key, body = match.group(1), [match.group(2)]
        depth = _depth(match.group(2))
        end = number
        while depth > 0 and end < last_of[number]:
            following = comments.get(end + 1)
            if following is None or _COMMENTED.match(following):
                break  # the next line is code, or the next commented entry
            end += 1
            body.append(following.lstrip()[1:])
            depth += _depth(body[-1])
        try:
            call = ast.parse("\n".join(body), mode="eval").body
            if isinstance(call, ast.Tuple) and len(call.elts) == 1:
                call = call.elts[0]  # the entry's trailing comma
            yield reader.entry(key, number, call, commented=True)
        except (SyntaxError, RegistryError, RecursionError, MemoryError, ValueError):
            yield EngineEntry(key, number, None, None, commented_out=True)


def _full_line_comments(text: str, display: str) -> dict[int, str]:
    """Return each line that holds only a comment, by number, as written."""
    import io
    import tokenize

    lines = text.splitlines()
    found: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and not lines[tok.start[0] - 1][: tok.start[1]].strip():
                found[tok.start[0]] = lines[tok.start[0] - 1]
    except (tokenize.TokenError, SyntaxError) as err:
        raise RegistryError(f"{display}: not valid Python ({err})") from None
    return found


_STRING_OR_PAREN = re.compile(r"""'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|[()]""")


def _depth(text: str) -> int:
    """Return how many parentheses ``text`` leaves open, not counting those in string
    literals (a ``"(("`` in a model name opens nothing)."""
    depth = 0
    for token in _STRING_OR_PAREN.findall(text):
        depth += 1 if token == "(" else -1 if token == ")" else 0
    return depth


def read_vllm_test_registry(text: str, display: str) -> tuple[EngineEntry, ...]:
    """Return every speculative entry of a vLLM test registry, in file order."""
    tree = parse_python(text, display)
    reader = _Reader(tree, display)
    live = reader.read(VLLM_TABLE)
    entries = live + list(_commented(reader, text.removeprefix("\ufeff")))
    if not entries:
        raise RegistryError(f"{display}: {VLLM_TABLE} has no entries")
    return tuple(sorted(entries, key=lambda e: e.line))
