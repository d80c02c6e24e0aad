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
from collections.abc import Iterator

from dflash_check.app.engine_tests import VLLM_TABLE, EngineEntry, parse_python
from dflash_check.errors import RegistryError

INFO_CLASS = "_HfExamplesInfo"
STRING_FIELDS = ("speculative_model", "speculative_method", "tokenizer", "revision")
"""The keyword arguments read as strings (others, such as ``trust_remote_code``, are ignored)."""

_COMMENTED = re.compile(r"""^\s*#\s*["'](\w+)["']\s*:\s*(\w*""" + INFO_CLASS + r"""\s*\(.*)$""")


class _Reader:
    """Walks the table (and the tables merged into it), keeping every entry's line."""

    def __init__(self, tree: ast.Module, display: str) -> None:
        self.display = display
        self.dicts: dict[str, ast.Dict] = {}
        self.other: dict[str, ast.expr] = {}
        self.strings: dict[str, str] = {}
        for node in tree.body:
            for name, value in _assignments(node):
                if isinstance(value, ast.Dict):
                    self.dicts[name] = value
                elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self.strings[name] = value.value
                else:
                    self.other[name] = value
        self.spans: list[tuple[int, int]] = []

    def fail(self, node: ast.AST, message: str) -> RegistryError:
        """Build an error pointing at ``node``'s line."""
        return RegistryError.at(self.display, getattr(node, "lineno", 1), message)

    def table(self, name: str, seen: tuple[str, ...] = ()) -> Iterator[EngineEntry]:
        """Yield the entries of the dict ``name``, following its ``**`` merges."""
        node = self.dicts.get(name)
        if node is None:
            where = self.other.get(name)
            if where is not None:
                raise self.fail(where, f"unexpected shape: {name} is not a dict literal")
            raise RegistryError(
                f"{self.display}: no {name} table found (expected vLLM's "
                f"tests/models/registry.py with {VLLM_TABLE} = {{...}})"
            )
        self.spans.append((node.lineno, node.end_lineno or node.lineno))
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # a ``**OTHER`` merge
                if not isinstance(value, ast.Name):
                    raise self.fail(value, f"unexpected shape: ** of an expression in {name}")
                if value.id in seen or value.id == name:
                    raise self.fail(value, f"unexpected shape: {value.id} merges itself")
                yield from self.table(value.id, (*seen, name))
                continue
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise self.fail(key, f"unexpected shape: a key of {name} is not a string literal")
            yield self.entry(key.value, key.lineno, value)

    def string(self, node: ast.expr, what: str, key: str) -> str | None:
        """Return a string literal (or a module-level string constant), None for ``None``."""
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.strings:
            return self.strings[node.id]
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


def _assignments(node: ast.stmt) -> Iterator[tuple[str, ast.expr]]:
    """Yield ``(name, value)`` of a module-level ``NAME = …`` or ``NAME: T = …``."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target.id, node.value
    elif (
        isinstance(node, ast.AnnAssign)
        and node.value is not None
        and isinstance(node.target, ast.Name)
    ):
        yield node.target.id, node.value


def _commented(reader: _Reader, lines: list[str]) -> Iterator[EngineEntry]:
    """Yield the entries kept as comments inside the tables' spans (disabled ones).

    A commented entry is uncommented line by line until its parentheses close, then read like
    a live one; when that fails it is still listed, by name, so that none goes unmentioned.
    """
    for first, last in reader.spans:
        number = first
        while number <= last:
            match = _COMMENTED.match(lines[number - 1])
            if match is None:
                number += 1
                continue
            key, body = match.group(1), [match.group(2)]
            end = number
            while _depth("\n".join(body)) > 0 and end < last:
                end += 1
                text = lines[end - 1].lstrip()
                if not text.startswith("#"):
                    break
                body.append(text[1:])
            try:
                call = ast.parse("\n".join(body), mode="eval").body
                if isinstance(call, ast.Tuple) and len(call.elts) == 1:
                    call = call.elts[0]  # the entry's trailing comma
                yield reader.entry(key, number, call, commented=True)
            except (SyntaxError, RegistryError):
                yield EngineEntry(key, number, None, None, commented_out=True)
            number = end + 1


def _depth(text: str) -> int:
    """Return how many parentheses are still open in ``text`` (strings are not parsed)."""
    return text.count("(") - text.count(")")


def read_vllm_registry(text: str, display: str) -> tuple[EngineEntry, ...]:
    """Return every speculative entry of a vLLM test registry, in file order."""
    tree = parse_python(text, display)
    reader = _Reader(tree, display)
    live = list(reader.table(VLLM_TABLE))
    entries = live + list(_commented(reader, text.splitlines()))
    if not entries:
        raise RegistryError(f"{display}: {VLLM_TABLE} has no entries")
    return tuple(sorted(entries, key=lambda e: e.line))
