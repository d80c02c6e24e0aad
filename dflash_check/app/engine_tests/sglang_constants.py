"""SGLang's test pairings: ``DEFAULT_DRAFT_MODEL_X`` / ``DEFAULT_TARGET_MODEL_X`` constants.

``python/sglang/test/test_utils.py`` (sglang==0.5.23:sglang/test/test_utils.py:109-130) names
its speculative test models as module-level string constants, one suffix per scenario:
``EAGLE``, ``EAGLE3``, ``DFLASH``, ``EAGLE_DP_ATTN``, ``STANDALONE``, and ``NGRAM`` (a target
without a draft). A draft and a target with the same suffix are one pairing. Read with ``ast``;
never imported.
"""

from __future__ import annotations

import ast
import re

from dflash_check.app.engine_tests.parsing import (
    EngineEntry,
    first_change,
    parse_python,
    unevaluated_change,
)
from dflash_check.errors import RegistryError

_CONSTANT = re.compile(r"^DEFAULT_(DRAFT|TARGET)_MODEL_(\w+)$")


def _bindings(node: ast.stmt, current: dict[str, tuple[str, int]]) -> list[tuple[str, str]] | None:
    """Return the ``(NAME, string)`` pairs a top-level statement binds, in Python's order:
    ``A = "x"``, ``A = B = "x"``, ``A, B = "x", "y"``, ``A += "x"`` (on a string read before).
    None when the statement binds a name another way (the caller refuses it if it is one of
    the constants); a value that is not a string is paired with ``""`` and refused later."""
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        pairs: list[tuple[str, str]] = []
        for target in targets:
            if isinstance(target, ast.Name):
                pairs.append((target.id, _literal(node.value)))
            elif isinstance(target, ast.Tuple | ast.List) and isinstance(
                node.value, ast.Tuple | ast.List
            ):
                if len(target.elts) != len(node.value.elts) or not all(
                    isinstance(t, ast.Name) for t in target.elts
                ):
                    return None
                pairs += [
                    (t.id, _literal(v))  # type: ignore[attr-defined]
                    for t, v in zip(target.elts, node.value.elts, strict=True)
                ]
            else:
                return None
        return pairs
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        name = node.target.id
        if isinstance(node.op, ast.Add) and name in current and _literal(node.value) is not None:
            return [(name, current[name][0] + _literal(node.value))]  # type: ignore[operator]
        return None
    return None


def _literal(node: ast.expr) -> str | None:
    """Return a string literal's value, None for anything else."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def read_sglang_constants(text: str, display: str) -> tuple[EngineEntry, ...]:
    """Return one entry per suffix that names a draft or a target, at the draft's line.

    The module's top-level statements are followed in order (a later binding wins, as when
    Python runs it); a constant bound or changed in a way not read here is refused by line.
    """
    tree = parse_python(text, display)
    values: dict[str, tuple[str, int]] = {}
    for node in tree.body:
        pairs = _bindings(node, values)
        if pairs is not None:
            for name, value in pairs:
                if not _CONSTANT.match(name):
                    continue
                if value is None:
                    raise RegistryError.at(
                        display, node.lineno, f"unexpected shape: {name} is not a string literal"
                    )
                line = values[name][1] if isinstance(node, ast.AugAssign) else node.lineno
                values[name] = (value, line)
            continue
        # Anything else that could rebind a constant, refused where it stands.
        changed = first_change([node], lambda name: bool(_CONSTANT.match(name)), mutable=False)
        if changed is not None:
            raise unevaluated_change(display, *changed)
    found: dict[str, dict[str, tuple[str, int]]] = {}
    for name, (value, line) in sorted(values.items(), key=lambda kv: kv[1][1]):
        match = _CONSTANT.match(name)
        assert match is not None
        found.setdefault(match.group(2), {})[match.group(1).lower()] = (value, line)
    if not found:
        raise RegistryError(
            f"{display}: no DEFAULT_DRAFT_MODEL_* / DEFAULT_TARGET_MODEL_* constants (expected "
            "SGLang's python/sglang/test/test_utils.py)"
        )
    entries = []
    for suffix, roles in found.items():
        draft, target = roles.get("draft"), roles.get("target")
        line = (draft or target or ("", 1))[1]
        entries.append(
            EngineEntry(
                key=suffix,
                line=line,
                target=target[0] if target else None,
                draft=draft[0] if draft else None,
            )
        )
    return tuple(sorted(entries, key=lambda e: e.line))
