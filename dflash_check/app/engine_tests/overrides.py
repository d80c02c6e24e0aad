"""The overrides file: the few engine test entries that are not expected compatible.

An engine's test registry lists pairings its tests run, so each is expected to work. A few
are known not to (an entry kept for a bug report, a model too large for the CI), and the
overrides file says so, by entry name::

    version: 1
    entries:
      DFlashDraftModel:
        expect: incompatible
        reason: vllm-project/vllm#48113
      EagleMistralLarge3ForCausalLM:
        skip: OOM in CI

Entry names are vLLM's architecture keys or SGLang's constant suffixes (``EAGLE3``). A name
that is not in the file is an error: a stale override would otherwise hide nothing forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflash_check.app.engine_tests import read_text
from dflash_check.app.pairs_run import (
    _fail,
    _mapping,
    _refuse_unknown,
    _string,
    _suggest,
    check_version,
    compose_yaml,
)
from dflash_check.check.report import Verdict
from dflash_check.errors import RegistryError
from dflash_check.problems import FileProblem

ENTRY_KEYS = ("expect", "reason", "skip")


@dataclass(frozen=True)
class Override:
    """What the overrides file says of one entry."""

    expect: Verdict = Verdict.COMPATIBLE
    """The verdict the entry must get."""
    reason: str | None = None
    """Why (shown when the verdict differs)."""
    skip: str | None = None
    """Not checked, for this reason."""
    line: int = 0
    """Where the override is, for messages."""


def load_overrides(path: Path, names: set[str]) -> dict[str, Override]:
    """Parse the overrides file; every entry it names must be one of ``names``."""
    import yaml

    display = str(path)
    root = compose_yaml(read_text(path, display), display)
    if not isinstance(root, yaml.MappingNode):
        raise RegistryError.at(display, None, "expected a mapping with 'version: 1' and 'entries:'")
    top = _mapping(root, display)
    for key, (knode, _) in top.items():
        if key not in ("version", "entries"):
            raise _fail(display, knode.start_mark.line + 1, f"unknown key '{key}'")
    check_version(top, display)
    entries = top.get("entries")
    if entries is None or not isinstance(entries[1], yaml.MappingNode):
        raise _fail(display, root.start_mark.line + 1, "'entries' must be a mapping")
    out: dict[str, Override] = {}
    problems: list[FileProblem] = []
    for name, (knode, vnode) in _mapping(entries[1], display).items():
        # Each entry is checked on its own: every broken one is reported in one run.
        try:
            out[name] = _override(name, knode, vnode, names, display)
        except RegistryError as err:
            problems += err.problems_in(display)
    if problems:
        raise RegistryError.collected(problems)
    return out


def _override(name: str, knode: Any, vnode: Any, names: set[str], display: str) -> Override:
    """Validate one entry of the overrides file."""
    import yaml

    line = knode.start_mark.line + 1
    if name not in names:
        raise _fail(
            display,
            line,
            f"no entry '{name}' in the registry file{_suggest(name, sorted(names))}",
        )
    if not isinstance(vnode, yaml.MappingNode):
        raise _fail(display, line, f"'{name}' must be a mapping (expect, reason or skip)")
    fields = _mapping(vnode, display)
    values = {}
    for key, (fknode, fvnode) in fields.items():
        _refuse_unknown(key, fknode, ENTRY_KEYS, display, f"'{name}'")
        values[key] = _string(fvnode, key, display)
    expect = values.get("expect", Verdict.COMPATIBLE.value)
    if expect not in (Verdict.COMPATIBLE.value, Verdict.INCOMPATIBLE.value):
        raise _fail(display, line, f"'{name}': 'expect' must be compatible or incompatible")
    if "skip" in values and "expect" in values:
        raise _fail(display, line, f"'{name}': give 'skip' or 'expect', not both")
    return Override(Verdict(expect), values.get("reason"), values.get("skip"), line)
