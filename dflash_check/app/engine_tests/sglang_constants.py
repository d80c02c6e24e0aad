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

from dflash_check.app.engine_tests import EngineEntry, parse_python
from dflash_check.errors import RegistryError

_CONSTANT = re.compile(r"^DEFAULT_(DRAFT|TARGET)_MODEL_(\w+)$")


def read_sglang_constants(text: str, display: str) -> tuple[EngineEntry, ...]:
    """Return one entry per suffix that names a draft or a target, at the draft's line."""
    tree = parse_python(text, display)
    found: dict[str, dict[str, tuple[str, int]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            match = _CONSTANT.match(target.id) if isinstance(target, ast.Name) else None
            if match is None:
                continue
            value = node.value
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                raise RegistryError.at(
                    display,
                    node.lineno,
                    f"unexpected shape: {target.id} is not a string literal",
                )
            role, suffix = match.group(1).lower(), match.group(2)
            found.setdefault(suffix, {})[role] = (value.value, node.lineno)
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
