"""Which engine test entries are checked, how, and why the others are not.

Every entry ends in exactly one place: a pair check, a target-alone check (an MTP entry whose
draft is the target itself, or that names no draft: the target's own MTP layers, as ``pair
TARGET`` answers), or the list of entries not checked, with its reason. None is dropped.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path

from dflash_check.app.engine_tests import (
    EngineEntry,
    EngineFile,
    Kind,
    engine_test_file,
    load_engine_file,
)
from dflash_check.app.engine_tests.overrides import Override, load_overrides
from dflash_check.app.pairs_run import check_one, request_for, select
from dflash_check.app.pipeline import ModelCache, check_target_alone
from dflash_check.check.entries import PairSpec, SkippedEntry
from dflash_check.check.outcome import PairOutcome
from dflash_check.check.report import Verdict
from dflash_check.errors import CheckError, NotADraftError, RegistryError
from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.selection import Selection, engine_release
from dflash_check.problems import FileProblem
from dflash_check.sources.interface import BadModelSpec, parse_model_ref

CHECKED_METHODS = ("dflash", "dflash2", "dspark", "eagle3", "mtp")
"""The methods this tool checks; an entry of any other method is listed as not checked."""

# vLLM's entry keys are draft architectures: the method is read from the name when the entry
# does not state it. Order matters: Eagle3 before Eagle, EagleDeepSeekMTP (EAGLE-1) before MTP.
_KEY_METHODS = (
    ("medusa", "medusa"),
    ("mlpspeculator", "mlp_speculator"),
    ("eagle3", "eagle3"),
    ("dflash2", "dflash2"),
    ("dflash", "dflash"),
    ("dspark", "dspark"),
    ("eagle", "eagle"),
    ("mtp", "mtp"),
    ("nextn", "mtp"),
    ("extracthiddenstates", "extract_hidden_states"),
)
METHOD_TITLES = {
    "eagle": "EAGLE-1/2",
    "medusa": "Medusa heads",
    "mlp_speculator": "MLP speculator",
    "draft_model": "a standalone draft model",
    "ngram": "n-gram lookup, no draft model",
    "suffix": "suffix decoding, no draft model",
    "extract_hidden_states": "hidden-state extraction, no draft model",
    "peagle": "P-EAGLE",
}
"""Words for the methods the tool does not check, shown after the engine's own name."""


def method_text(method: str) -> str:
    """Return ``method medusa (Medusa heads)``: the engine's name, and what it is."""
    title = METHOD_TITLES.get(method)
    return f"method {method} ({title})" if title else f"method {method}"


def method_of(entry: EngineEntry, engine: str) -> str | None:
    """Return the entry's method: as stated, else from its key (matched whole where the
    engine's file names methods by key, else read from the name); None: the draft's config
    says."""
    if entry.method:
        return "mtp" if entry.method.endswith("mtp") else entry.method
    key_methods = engine_test_file(engine).key_methods
    if key_methods is not None:
        return key_methods.get(entry.key)
    name = entry.key.lower().replace("_", "")
    return next((method for needle, method in _KEY_METHODS if needle in name), None)


@dataclass(frozen=True)
class Plan:
    """What a run of an engine's test file does."""

    specs: tuple[PairSpec, ...]
    """The checks, in file order; ``spec.draft == spec.target`` for a target-alone check."""
    alone: frozenset[int]
    """``spec.index`` of the target-alone checks."""
    skipped: tuple[SkippedEntry, ...]
    """The entries listed as not checked."""
    keys: dict[int, str]
    """``spec.index`` -> the entry's name in the file."""


def _label(entry: EngineEntry) -> str:
    return f"{entry.draft or '(no draft)'} -> {entry.target or '(no target)'}"


def _why_not(entry: EngineEntry, method: str | None, override: Override | None) -> str | None:
    """Return why an entry is not checked, or None when it is."""
    if entry.commented_out:
        return "commented out in the registry"
    if override is not None and override.skip:
        return f"{override.skip} (overrides file)"
    if not entry.available_online:
        return "is_available_online=False (the engine's own tests skip it)"
    if method is not None and method not in CHECKED_METHODS:
        return method_text(method)
    if entry.target is None:
        return "names no target"
    if entry.draft is None and method != "mtp":
        return "names no draft" + (f" (method {method})" if method else "")
    return None


def _bad_names(entry: EngineEntry) -> str | None:
    """Return why the entry's target or draft is not a model name (None: both are)."""
    for name, revision in ((entry.target, entry.revision), (entry.draft, None)):
        try:
            if name is not None:
                parse_model_ref(name, revision)
        except BadModelSpec as err:
            return str(err)
    return None


def make_plan(
    file: EngineFile, overrides: dict[str, Override], selection: Selection, display: str
) -> Plan:
    """Sort every entry into a check or the not-checked list."""
    specs: list[PairSpec] = []
    alone: set[int] = set()
    skipped: list[SkippedEntry] = []
    keys: dict[int, str] = {}
    problems: list[FileProblem] = []  # every broken entry, reported in one run
    for entry in file.entries:
        method = method_of(entry, file.engine)
        override = overrides.get(entry.key)
        reason = _why_not(entry, method, override)
        if reason is not None:
            if override is not None and override.expect is Verdict.INCOMPATIBLE:
                problems.append(
                    FileProblem(
                        display,
                        entry.line,
                        f"'{entry.key}' is not checked ({reason}); "
                        "an 'expect' override does not apply to it",
                    )
                )
                continue
            skipped.append(SkippedEntry(entry.line, entry.key, _label(entry), reason))
            continue
        assert entry.target is not None  # _why_not lists an entry without a target
        is_alone = entry.draft is None or entry.draft == entry.target
        bad = _bad_names(entry)
        if bad is not None:
            problems.append(FileProblem(display, entry.line, f"'{entry.key}': {bad}"))
            continue
        index = len(specs)
        keys[index] = entry.key
        if is_alone:
            alone.add(index)
        specs.append(
            PairSpec(
                draft=entry.target if is_alone else str(entry.draft),
                target=entry.target,
                expect=override.expect if override else Verdict.COMPATIBLE,
                line=entry.line,
                index=index,
                selection=selection,
                draft_revision=entry.revision if is_alone else None,
                target_revision=entry.revision,
                reason=override.reason if override else None,
                source=f"{display}:{entry.line} ({entry.key})",
                # As the engine's tests ask for it: vLLM checks it against the draft's class.
                method=entry.method if engine_test_file(file.engine).asks_method else None,
            )
        )
    if problems:
        raise RegistryError.collected(problems)
    return Plan(tuple(specs), frozenset(alone), tuple(skipped), keys)


@dataclass(frozen=True)
class Checked:
    """A check's outcome, or why the entry turned out not to be checkable by this tool."""

    outcome: PairOutcome | None
    skipped: SkippedEntry | None = None


def _check(spec: PairSpec, key: str, alone: bool, base: Path, cache: ModelCache) -> Checked:
    """Check one planned entry; a draft of a method the tool does not check is listed."""
    if alone:
        try:
            # The entry's own selection, draft length and engine settings, as for a pair.
            request = request_for(spec, base)
            report = check_target_alone(request.target, cache, request.settings)
        except CheckError as err:
            failed = PairOutcome(
                spec.label,
                spec.expect,
                error=str(err),
                error_hint=err.hint,
                error_shared=err.shared,
            )
            return Checked(replace(failed, spec=spec))
        return Checked(PairOutcome(spec.label, spec.expect, report=report, spec=spec))
    from dflash_check.check.formats import normalise_draft

    try:
        normalise_draft(cache.fetch(request_for(spec, base).draft, "draft"))
    except NotADraftError as err:
        if err.method is not None:  # named by the draft's config, not by the entry
            reason = f"{method_text(err.method)}, named by the draft's config"
            return Checked(None, SkippedEntry(spec.line, key, spec.label, reason))
    except CheckError:
        pass  # check_one reports it as the pair's error
    return Checked(check_one(spec, base, cache))


def run_plan(
    plan: Plan,
    base: Path,
    cache: ModelCache,
    workers: int = 8,
    on_done: Callable[[PairOutcome], None] | None = None,
) -> tuple[tuple[PairOutcome, ...], tuple[SkippedEntry, ...]]:
    """Run every planned check; return the outcomes and the full not-checked list."""
    results: dict[int, Checked] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {
            pool.submit(_check, s, plan.keys[s.index], s.index in plan.alone, base, cache): s.index
            for s in plan.specs
        }
        for future in as_completed(futures):
            checked = future.result()
            results[futures[future]] = checked
            if on_done is not None and checked.outcome is not None:
                on_done(checked.outcome)
    outcomes = tuple(o for s in plan.specs if (o := results[s.index].outcome) is not None)
    late = tuple(k for s in plan.specs if (k := results[s.index].skipped) is not None)
    return outcomes, tuple(sorted(plan.skipped + late, key=lambda k: k.line))


def prepare(
    path: Path,
    display: str,
    kind: Kind,
    text: str,
    overrides_path: Path | None,
    selection: Selection | None,
) -> tuple[Plan, str]:
    """Read an engine's test file (and its overrides); return the plan and what the file is.

    ``selection`` is the ``--runtime`` selection; without it, the engine at the checkout's
    release (``knowledge.selection.engine_release``).
    """
    file = load_engine_file(path, display, kind, text)
    overrides = {}
    if overrides_path is not None:
        overrides = load_overrides(overrides_path, {e.key for e in file.entries})
    chosen = selection or engine_release(file.engine, file.version)
    release = file.version or "(release unknown)"
    title = ENGINES_BY_NAME[file.engine].title
    about = f"{title} {release} test registry, checked for {chosen.spec}"
    return make_plan(file, overrides, chosen, display), about


def narrow(plan: Plan, pattern: str | None) -> Plan:
    """Keep the checks and listed entries whose draft or target matches ``--only``."""
    if not pattern:
        return plan
    specs = select(plan.specs, pattern)
    glob = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
    skipped = tuple(
        k
        for k in plan.skipped
        if any(
            fnmatch.fnmatch(name.lower(), glob.lower())
            for name in (k.label, *k.label.split(" -> "))
        )
    )
    return replace(plan, specs=specs, skipped=skipped)
