"""``docs/pairs.schema.json``, made from the tables the ``pairs.yaml`` reader uses.

Editors validate ``pairs.yaml`` with it (``# yaml-language-server: $schema=...``), so it must
accept every file the reader accepts: the keys and their descriptions are ``PAIR_KEYS``, the
runtimes are ``runtime_names()`` (any case, with ``==VERSION`` or ``=installed``; ``-ENGINE``
for an engine ``portable`` leaves out), the methods
``SPECULATIVE_METHODS``, the rule ids the rule table's. ``tools/gen_docs.py`` writes it, and a
test fails when the committed file differs.
"""

from __future__ import annotations

import json
from typing import Any

from dflash_check.app.pairs_run import PAIR_KEYS
from dflash_check.knowledge.selection import WITHOUT, default_rows, runtime_names
from dflash_check.knowledge.settings import MAX_SPECULATIVE_TOKENS, SPECULATIVE_METHODS


def any_case(word: str) -> str:
    """Return a regex matching ``word`` in any case (JSON Schema regexes have no flags)."""
    return "".join(
        f"[{c.lower()}{c.upper()}]" if c.isalpha() else f"\\{c}" if c in ".-" else c for c in word
    )


def runtime_pattern() -> str:
    """Return the regex of one runtime selection part, as ``parse_part`` reads it."""
    names = "|".join(any_case(n) for n in sorted(runtime_names(), key=len, reverse=True))
    engines = sorted({p.engine_name for p in default_rows()}, key=lambda e: (-len(e), e))
    left_out = "|".join(any_case(e) for e in engines)
    # "vllm==" is read as the newest release, as "vllm" is: the reader accepts it, so must this.
    named = rf"(?:{names})\s*(?:==\s*\S*|=\s*{any_case('installed')})?"
    return rf"^\s*(?:{named}|{WITHOUT}\s*(?:{left_out}))\s*$"


def one_or_list(item: dict[str, Any]) -> dict[str, Any]:
    """Return a schema for one ``item`` or a non-empty list of them (the reader takes both)."""
    return {"oneOf": [item, {"type": "array", "items": item, "minItems": 1}]}


def _value_schemas() -> dict[str, dict[str, Any]]:
    """Return key -> the schema of its value (descriptions come from ``PAIR_KEYS``)."""
    text = {"type": "string", "pattern": r"\S"}  # the reader refuses empty and blank strings
    methods = "|".join(SPECULATIVE_METHODS)
    return {
        "draft": {"$ref": "#/$defs/model"},
        "target": {"$ref": "#/$defs/model"},
        "expect": {"enum": ["compatible", "incompatible"]},
        "draft_revision": text,
        "target_revision": text,
        "draft_subfolder": text,
        "target_subfolder": text,
        "runtimes": one_or_list({"$ref": "#/$defs/runtime"}),
        "num_speculative_tokens": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SPECULATIVE_TOKENS,
        },
        "method": {
            "type": "string",
            "pattern": rf"^\s*(?:(?:{any_case(methods)})|[A-Za-z0-9_]+_[mM][tT][pP])\s*$",
        },
        "ignore": one_or_list({"$ref": "#/$defs/rule_id"}),
        # As on a command line: --dp-size, 2 (YAML reads the 2 as a number).
        "engine_args": one_or_list({"oneOf": [text, {"type": "integer"}]}),
        "reason": text,
        "source": text,
    }


def pairs_schema() -> dict[str, Any]:
    """Return the JSON Schema of ``pairs.yaml``."""
    values = _value_schemas()
    # A key the reader knows with no schema here (or the reverse) is a bug: fail at generation.
    assert set(values) == set(PAIR_KEYS), set(values) ^ set(PAIR_KEYS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "dflash-check pairs.yaml",
        "description": "Draft -> target pairings and their expected verdicts, checked by "
        "`dflash-check registry`. Generated from the reader's tables (tools/gen_docs.py).",
        "type": "object",
        "additionalProperties": False,
        "required": ["pairs"],
        "properties": {
            "version": {"const": 1, "description": "Format version."},
            "pairs": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/pair"}},
        },
        "$defs": {
            "model": {
                "type": "string",
                "pattern": r"\S",
                "description": "Hub repo id (ORG/NAME, optionally :SUBFOLDER and @REVISION) "
                "or a directory relative to this file.",
            },
            "runtime": {
                "type": "string",
                "pattern": runtime_pattern(),
                "description": f"A runtime ({', '.join(runtime_names())}), optionally with a "
                "release: NAME==VERSION or NAME=installed; or -ENGINE, an engine portable leaves "
                "out (portable, -vllm, vllm-v1==0.32.0).",
            },
            "rule_id": {"type": "string", "pattern": "^[dD][fF][0-9]{3}$"},
            "pair": {
                "type": "object",
                "additionalProperties": False,
                "required": [k for k, (required, _) in PAIR_KEYS.items() if required],
                "properties": {
                    key: {**values[key], "description": description}
                    for key, (_, description) in PAIR_KEYS.items()
                },
            },
        },
    }


def pairs_schema_json() -> str:
    """Return ``docs/pairs.schema.json``'s text."""
    return json.dumps(pairs_schema(), indent=2, ensure_ascii=False) + "\n"
