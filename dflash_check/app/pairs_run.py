"""``pairs.yaml``: load and validate it with file/line/key errors, and check every pair.

The file is a mapping with ``version: 1`` and ``pairs:``, a list of entries. Only this module
parses it; everything downstream sees frozen ``PairSpec`` values. ``docs/pairs.schema.json``
publishes the same format for editors, generated from these tables (``app/pairs_schema.py``).
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from dflash_check.app.pipeline import CheckRequest, ModelCache, check_pair
from dflash_check.check.entries import PairSpec
from dflash_check.check.outcome import PairOutcome
from dflash_check.check.report import Verdict
from dflash_check.check.request import CheckSettings
from dflash_check.errors import CheckError, RegistryError
from dflash_check.knowledge.selection import (
    DEFAULT,
    Part,
    SelectionError,
    assemble,
    parse_part,
    part_name,
    runtime_names,
)
from dflash_check.knowledge.settings import (
    MAX_SPECULATIVE_TOKENS,
    NO_ENGINE_SETTINGS,
    SPECULATIVE_METHODS,
    EngineSettings,
    SettingsError,
    known_method,
    parse_engine_args,
    read_flags_text,
    vllm_method,
)
from dflash_check.sources.interface import BadModelSpec, ModelRef, Role, parse_model_ref

# key -> (required, description); the JSON schema in docs/ is checked against this table.
PAIR_KEYS: dict[str, tuple[bool, str]] = {
    "draft": (True, "Draft: Hub repo id (ORG/NAME) or a directory relative to this file."),
    "target": (True, "Target: Hub repo id (ORG/NAME) or a directory relative to this file."),
    "expect": (True, "The verdict the pairing must get: compatible or incompatible."),
    "draft_revision": (False, "Branch, tag or commit of the draft."),
    "target_revision": (False, "Branch, tag or commit of the target."),
    "draft_subfolder": (
        False,
        "Folder inside the draft's repo (or directory) that holds the draft, e.g. dflash.",
    ),
    "target_subfolder": (
        False,
        "Folder inside the target's repo (or directory) that holds the target.",
    ),
    "runtimes": (False, "Runtimes the pairing is for (default: portable, i.e. all)."),
    "num_speculative_tokens": (
        False,
        "Draft tokens per step the engine serves with (vLLM num_speculative_tokens, "
        "TensorRT-LLM max_draft_len; SGLang --speculative-num-draft-tokens minus one), "
        "checked against the draft's block size.",
    ),
    "method": (
        False,
        "The method the engine is asked for (vLLM's speculative_config.method: dflash, dspark, "
        "eagle3, mtp, ...), checked against the method the draft's class declares.",
    ),
    "ignore": (
        False,
        "Rule ids this pairing does not count (like --ignore): every format still reports what "
        "they find, as suppressed.",
    ),
    "engine_args": (
        False,
        "Engine arguments the pairing is served with, as the engine takes them (like "
        f"--engine-arg): the check reads the ones a verdict depends on ({read_flags_text()}).",
    ),
    "reason": (False, "Why the pairing is expected to be (in)compatible."),
    "source": (False, "Where the pairing is documented."),
}
TOP_KEYS = ("version", "pairs")
# Keys whose values are not plain strings, each read by its own check below.
NON_STRING_KEYS = ("runtimes", "num_speculative_tokens", "ignore", "engine_args")


def _fail(path: str, line: int, message: str) -> RegistryError:
    """Build an error that points at ``path:line``.

    One mistake is one line: a key or value quoted from the file (a name holding a newline
    and ``::warning``) is shown with its line breaks and controls visible, and cut.
    """
    from dflash_check.sanitize import data

    return RegistryError.at(path, line, data(message, 1000))


def _suggest(key: str, allowed: tuple[str, ...] | list[str]) -> str:
    """Return a ' (did you mean …?)' suffix for a misspelt key."""
    close = difflib.get_close_matches(key, list(allowed), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _refuse_unknown(key: str, knode: Any, allowed: Iterable[str], path: str, where: str) -> None:
    """Refuse a key that is not in ``allowed``, at its own line, with the closest allowed key
    (pairs.yaml and the overrides file alike)."""
    if key not in allowed:
        raise _fail(
            path,
            knode.start_mark.line + 1,
            f"{where}: unknown key '{key}'{_suggest(key, list(allowed))}",
        )


def compose_yaml(text: str, name: str) -> Any:
    """Return the YAML node tree of ``text`` (None when empty); a syntax error is one line
    naming file and line. Nodes, not values: every key keeps its line for later messages."""
    import yaml

    try:
        # libyaml's loader when PyYAML has it (10x faster on large registries); same marks.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        line = mark.line + 1 if mark else 1
        raise _fail(name, line, f"invalid YAML: {err.problem}") from None
    except yaml.YAMLError as err:
        raise RegistryError.at(name, None, f"invalid YAML: {err}") from None


def check_version(top: dict[str, Any], name: str) -> None:
    """Refuse a ``version`` other than 1 (a file without one is taken as version 1)."""
    import yaml

    if "version" in top:
        vnode = top["version"][1]
        if not (isinstance(vnode, yaml.ScalarNode) and vnode.value == "1"):
            raise _fail(name, vnode.start_mark.line + 1, "'version' must be 1")


def load_pairs(
    path: Path, display: str | None = None, text: str | None = None
) -> tuple[PairSpec, ...]:
    """Parse and validate ``pairs.yaml`` (``text``: its content, when already read); raise
    ``RegistryError`` naming file, line and key."""
    import yaml

    from dflash_check.app.engine_tests import read_text

    name = display or str(path)
    root = compose_yaml(read_text(path, name) if text is None else text, name)
    if root is None:
        raise RegistryError.at(name, None, "empty file (expected 'version: 1' and 'pairs:')")
    if not isinstance(root, yaml.MappingNode):
        raise _fail(name, root.start_mark.line + 1, "expected a mapping with 'version' and 'pairs'")
    top = _mapping(root, name)
    for key, (knode, _) in top.items():
        if key not in TOP_KEYS:
            raise _fail(
                name, knode.start_mark.line + 1, f"unknown key '{key}'{_suggest(key, TOP_KEYS)}"
            )
    check_version(top, name)
    if "pairs" not in top:
        raise _fail(name, root.start_mark.line + 1, "missing key 'pairs'")
    pairs_node = top["pairs"][1]
    if not isinstance(pairs_node, yaml.SequenceNode):
        raise _fail(name, pairs_node.start_mark.line + 1, "'pairs' must be a list")
    if not pairs_node.value:
        raise _fail(
            name, pairs_node.start_mark.line + 1, "'pairs' is empty: list at least one pair"
        )
    # Each entry is checked on its own: every broken entry is reported in one run.
    specs, problems = [], []
    for i, node in enumerate(pairs_node.value):
        try:
            specs.append(_pair(node, i, name))
        except RegistryError as err:
            problems += err.problems_in(name)
    if problems:
        raise RegistryError.collected(problems)
    return tuple(specs)


def _mapping(node: Any, name: str) -> dict[str, tuple[Any, Any]]:
    """Return key -> (key node, value node) of a YAML mapping, refusing duplicate keys."""
    import yaml

    out: dict[str, tuple[Any, Any]] = {}
    for knode, vnode in node.value:
        if not isinstance(knode, yaml.ScalarNode):
            raise _fail(name, knode.start_mark.line + 1, "keys must be plain strings")
        if knode.value in out:
            raise _fail(name, knode.start_mark.line + 1, f"duplicate key '{knode.value}'")
        out[knode.value] = (knode, vnode)
    return out


def _string(vnode: Any, key: str, name: str) -> str:
    """Return a scalar string value, or fail naming the key."""
    import yaml

    if not isinstance(vnode, yaml.ScalarNode) or vnode.tag != "tag:yaml.org,2002:str":
        raise _fail(name, vnode.start_mark.line + 1, f"'{key}' must be a string")
    if not vnode.value.strip():
        raise _fail(name, vnode.start_mark.line + 1, f"'{key}' is empty")
    return str(vnode.value)


def _pair(node: Any, index: int, name: str) -> PairSpec:
    """Validate one entry of the list."""
    import yaml

    line = node.start_mark.line + 1
    where = f"pair {index + 1}"
    if not isinstance(node, yaml.MappingNode):
        raise _fail(name, line, f"{where} must be a mapping with 'draft', 'target', 'expect'")
    fields = _mapping(node, name)
    for key, (knode, _) in fields.items():
        _refuse_unknown(key, knode, PAIR_KEYS, name, where)
    for key, (required, _) in PAIR_KEYS.items():
        if required and key not in fields:
            raise _fail(name, line, f"{where}: missing key '{key}'")
    values = {
        key: _string(vnode, key, name)
        for key, (_, vnode) in fields.items()
        if key not in NON_STRING_KEYS
    }
    expect = values["expect"]
    if expect not in (Verdict.COMPATIBLE.value, Verdict.INCOMPATIBLE.value):
        vnode = fields["expect"][1]
        raise _fail(
            name,
            vnode.start_mark.line + 1,
            f"{where}: 'expect' must be compatible or incompatible, not '{expect}'",
        )
    selection = DEFAULT
    if "runtimes" in fields:
        vnode = fields["runtimes"][1]
        items = vnode.value if isinstance(vnode, yaml.SequenceNode) else [vnode]
        runtimes = tuple(_string(item, "runtimes", name) for item in items)
        parts: list[Part] = []
        for item, value in zip(items, runtimes, strict=True):
            name_only = part_name(value)
            if name_only not in (known := runtime_names()):
                raise _fail(
                    name,
                    item.start_mark.line + 1,
                    f"{where}: unknown runtime '{value}'{_suggest(name_only, known)}"
                    f"; choose from {', '.join(known)}",
                )
            try:
                parts.append(parse_part(value))
            except SelectionError as err:
                raise _fail(name, item.start_mark.line + 1, f"{where}: {err}") from None
        if not parts:
            raise _fail(name, vnode.start_mark.line + 1, f"{where}: 'runtimes' is empty")
        try:
            selection = assemble(parts)
        except SelectionError as err:  # a runtime with two releases, -ENGINE without portable
            raise _fail(name, vnode.start_mark.line + 1, f"{where}: {err}") from None
    speculative = None
    if "num_speculative_tokens" in fields:
        vnode = fields["num_speculative_tokens"][1]
        if (
            not isinstance(vnode, yaml.ScalarNode)
            or vnode.tag != "tag:yaml.org,2002:int"
            or not vnode.value.isdigit()
            or not 1 <= int(vnode.value) <= MAX_SPECULATIVE_TOKENS
        ):
            raise _fail(
                name,
                vnode.start_mark.line + 1,
                f"{where}: 'num_speculative_tokens' must be an integer from 1 to "
                f"{MAX_SPECULATIVE_TOKENS}",
            )
        speculative = int(vnode.value)
    ignore = _ignore(fields, where, name)
    engine_settings = _engine_settings(fields, where, name)
    method = values.get("method")
    if method is not None and not known_method(method):
        vnode = fields["method"][1]
        raise _fail(
            name,
            vnode.start_mark.line + 1,
            f"{where}: unknown method '{method}'{_suggest(method, SPECULATIVE_METHODS)}; "
            f"choose from {', '.join(SPECULATIVE_METHODS)} or a model's *_mtp",
        )
    spec = PairSpec(
        draft=values["draft"],
        target=values["target"],
        expect=Verdict(expect),
        line=line,
        index=index,
        selection=selection,
        draft_revision=values.get("draft_revision"),
        target_revision=values.get("target_revision"),
        draft_subfolder=values.get("draft_subfolder"),
        target_subfolder=values.get("target_subfolder"),
        reason=values.get("reason"),
        source=values.get("source"),
        num_speculative_tokens=speculative,
        method=vllm_method(method) if method is not None else None,
        ignore=ignore,
        engine_settings=engine_settings,
    )
    for role in ("draft", "target"):
        try:
            parse_model_ref(
                getattr(spec, role),
                getattr(spec, f"{role}_revision"),
                getattr(spec, f"{role}_subfolder"),
            )
        except BadModelSpec as err:
            vnode = fields[role][1]
            raise _fail(name, vnode.start_mark.line + 1, f"{where}: '{role}': {err}") from None
    return spec


def _one_or_list(
    fields: dict[str, tuple[Any, Any]], key: str, where: str, name: str
) -> list[Any] | None:
    """Return the nodes of a key that takes one value or a list of them (None: not stated);
    an empty list fails at its line."""
    import yaml

    if key not in fields:
        return None
    vnode = fields[key][1]
    items = list(vnode.value) if isinstance(vnode, yaml.SequenceNode) else [vnode]
    if not items:
        raise _fail(name, vnode.start_mark.line + 1, f"{where}: '{key}' is empty")
    return items


def _ignore(fields: dict[str, tuple[Any, Any]], where: str, name: str) -> tuple[str, ...]:
    """Return a pair's ``ignore`` rule ids (one id or a list), upper-cased and sorted; an
    unknown id fails at its line, as ``--ignore`` does."""
    from dflash_check.check.rules import RULES_BY_ID

    items = _one_or_list(fields, "ignore", where, name)
    if items is None:
        return ()
    ids = []
    for item in items:
        rule = _string(item, "ignore", name).upper()
        if rule not in RULES_BY_ID:
            raise _fail(
                name,
                item.start_mark.line + 1,
                f"{where}: unknown rule id '{rule}'{_suggest(rule, list(RULES_BY_ID))}",
            )
        ids.append(rule)
    return tuple(sorted(set(ids)))


def _engine_settings(fields: dict[str, tuple[Any, Any]], where: str, name: str) -> EngineSettings:
    """Return the engine settings of a pair's ``engine_args`` (one argument or a list, each a
    string or a number, as on a command line); a bad value of one the check reads fails at
    the key's line, as ``--engine-arg`` does."""
    import yaml

    items = _one_or_list(fields, "engine_args", where, name)
    if items is None:
        return NO_ENGINE_SETTINGS
    args = []
    for item in items:
        # A number is an argument too (--dp-size, 2): YAML reads 2 as an int, not a string.
        plain = isinstance(item, yaml.ScalarNode) and item.tag.endswith((":str", ":int"))
        if not plain or not item.value.strip():
            raise _fail(
                name, item.start_mark.line + 1, f"{where}: 'engine_args' items must be strings"
            )
        args.append(str(item.value))
    try:
        return parse_engine_args(args)
    except SettingsError as err:
        line = fields["engine_args"][1].start_mark.line + 1  # the key's value, as before
        raise _fail(name, line, f"{where}: 'engine_args': {err}") from None


def select(specs: tuple[PairSpec, ...], pattern: str | None) -> tuple[PairSpec, ...]:
    """Keep the pairs whose draft or target matches a glob (or contains the text)."""
    if not pattern:
        return specs
    glob = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
    return tuple(
        s
        for s in specs
        if fnmatch.fnmatch(s.draft.lower(), glob.lower())
        or fnmatch.fnmatch(s.target.lower(), glob.lower())
        or fnmatch.fnmatch(s.label.lower(), glob.lower())
    )


def request_for(spec: PairSpec, base: Path) -> CheckRequest:
    """Build the check request of an entry; local paths are relative to the file."""

    def ref(text: str, revision: str | None, subfolder: str | None) -> ModelRef:
        parsed = parse_model_ref(text, revision, subfolder)
        if parsed.path is not None and not parsed.path.is_absolute():
            return replace(parsed, path=base / parsed.path)
        return parsed

    return CheckRequest(
        draft=ref(spec.draft, spec.draft_revision, spec.draft_subfolder),
        target=ref(spec.target, spec.target_revision, spec.target_subfolder),
        settings=CheckSettings(
            spec.selection,
            ignore=frozenset(spec.ignore),
            strict=spec.strict,
            num_speculative_tokens=spec.num_speculative_tokens,
            speculative_method=spec.method,
            engine_settings=spec.engine_settings,
        ),
    )


def _prefetch(cache: ModelCache, ref: ModelRef, role: Role) -> None:
    """Fetch one model into the cache; a failure is cached and reported by its pairs."""
    with contextlib.suppress(CheckError):
        cache.fetch(ref, role)


def check_one(spec: PairSpec, base: Path, cache: ModelCache) -> PairOutcome:
    """Check one entry; a failure to check becomes an ``error`` outcome, not an exception."""
    try:
        report = check_pair(request_for(spec, base), cache)
    except CheckError as err:
        return PairOutcome(
            spec.label,
            spec.expect,
            error=str(err),
            error_hint=err.hint,
            error_shared=err.shared,
            spec=spec,
        )
    return PairOutcome(spec.label, spec.expect, report=report, spec=spec)


def check_pairs(
    specs: tuple[PairSpec, ...],
    base: Path,
    cache: ModelCache,
    workers: int = 8,
    on_done: Callable[[PairOutcome], None] | None = None,
) -> tuple[PairOutcome, ...]:
    """Check every pair with at most ``workers`` threads; each model is fetched once."""
    outcomes: dict[int, PairOutcome] = {}
    requests = []
    for s in specs:
        try:
            requests.append(request_for(s, base))
        except BadModelSpec:
            continue  # load_pairs validated every name; nothing to prefetch otherwise
    models = {(r.draft, "draft"): None for r in requests} | {
        (r.target, "target"): None for r in requests
    }
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        # Fetch the distinct models first: pairs that share a model would otherwise queue
        # behind one worker's fetch of it, and the run would follow the pairs, not the models.
        for _ in pool.map(lambda key: _prefetch(cache, *key), models):
            pass
        futures = {pool.submit(check_one, s, base, cache): s.index for s in specs}
        for future in as_completed(futures):
            outcome = future.result()
            outcomes[futures[future]] = outcome
            if on_done is not None:
                on_done(outcome)
    return tuple(outcomes[s.index] for s in specs)
