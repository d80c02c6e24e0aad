"""Which drafts an engine release loads, read from its facts: its model registry, its loaders.

vLLM and SGLang build a draft from the class their model registry names for the draft's
``architectures`` (vLLM: ``_SPECULATIVE_DECODING_MODELS`` in
``model_executor/models/registry.py``; SGLang: the ``EntryClass`` of its model files), so a
release loads exactly the draft architectures its model registry holds, and refuses the others
when it reads the draft's config. vLLM reads a speculators-format draft through the loader its
``speculators_model_type`` names (``SUPPORTED_SPECULATORS_TYPES``,
``transformers_utils/configs/speculators/algos.py``) and refuses any other type
(``speculators/base.py``). ``tools/extract_engine_facts.py`` reads both tables from each
release's code (``drafts`` and ``speculators`` of ``knowledge/data/<engine>-<release>.json``):
for an engine whose code is extracted, which releases load a draft is derived here, never
written by hand. A format says which table and which of the draft's names (``Lookup``); a
release whose facts lack that table (SGLang has no speculators loader) and an engine whose
code is not extracted (TensorRT-LLM, llama.cpp, MLX, ...) keep the reviewed rows of the draft
format table (``check/formats``), each citing where it was read.

An engine may rename a draft's architectures before its model registry looks them up: vLLM's
``EAGLEConfig`` keeps an EAGLE-3 name that starts or ends with ``Eagle3`` and prefixes the
others (``Release.draft_renames``, cited per release), so the renamed class is the one looked
up. vLLM renames a ``dflash`` draft's architecture to ``DFlash{arch}`` the same way; for every
DFlash architecture the tool names, the draft's own name and the renamed one are both
registered or both absent (Muse Glimmer registers both spellings), so no DFlash rename is
modelled.

An engine may also pick a method's draft class from the draft's config and never look its
architectures up: vLLM builds an MTP draft from its ``model_type`` (``hf_config_override``:
a NextN checkpoint of model_type deepseek_v3 is ``DeepSeekMTPModel``,
``Release.draft_class_from_config``, cited per release), so its model registry does not judge a
NextN checkpoint's ``*ForCausalLMNextN`` architecture; SGLang looks it up as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES_BY_NAME, Engine, Release, registered


class Table(str, Enum):
    """A table of a release's facts that says which drafts it loads."""

    DRAFTS = "drafts"
    """Its model registry: draft architecture -> registry entry."""
    SPECULATORS = "speculators"
    """vLLM's speculators loaders: ``speculators_model_type`` -> the loader's line."""

    @property
    def words(self) -> str:
        """The table as a refusal names it."""
        return "model registry" if self is Table.DRAFTS else "speculators loaders"


class Named(Protocol):
    """What a lookup reads of a draft (``DraftView`` has both)."""

    @property
    def method(self) -> str:
        """The draft's method (a speculators draft without a type is read as ``dflash``)."""
        ...

    @property
    def speculators_model_type(self) -> str | None:
        """A speculators draft's ``speculators_model_type`` as stated (None: absent)."""
        ...

    @property
    def architectures(self) -> tuple[str, ...]:
        """The draft's ``architectures``."""
        ...


@dataclass(frozen=True)
class DraftNames:
    """A draft named by hand (tests, listings): its method and architectures."""

    method: str
    architectures: tuple[str, ...] = ()
    speculators_model_type: str | None = None


@dataclass(frozen=True)
class Lookup:
    """Which table of a release's facts says whether it loads a draft of a format, by which of
    the draft's names."""

    table: Table
    """The facts table looked in."""
    names: tuple[str, ...]
    """The names the format is known by there: listed per release (``dflash-check formats``),
    and cited as what a release does hold when it lacks the draft's."""
    by_method: bool = False
    """Looked up by the draft's stated ``speculators_model_type`` (not its method, which is
    ``dflash`` for a type-less DFlashSpeculator; vLLM reads the key itself), not its
    architectures."""
    renamed_for: str | None = None
    """The method whose renaming a release applies before it looks up (``Release.draft_renames``:
    vLLM's EAGLE-3 prefix); None: the draft's own names."""
    method: str | None = None
    """The format's draft method, where some release picks that method's class from the draft's
    config instead of its names (``Release.draft_class_from_config``): such a release is not
    judged by this table (``judged``); None: every release holding the table is."""
    suffix: str | None = None
    """Every name of the table ending in this is one of the format's names too, read from each
    release's facts (``names_of``: a NextN checkpoint is ``*ForCausalLMNextN``, one class per
    family, as many as the releases register); None: ``names`` alone."""

    def draft(self, name: str) -> DraftNames:
        """Return a draft known by one of the format's ``names`` (for listings and tests)."""
        if self.by_method:
            return DraftNames(name, speculators_model_type=name)
        return DraftNames(self.method or "", (name,))

    def wanted(self, draft: Named) -> tuple[str, ...]:
        """Return the draft's own names this lookup reads (none for a speculators draft that
        states no type: vLLM finds no loader for it)."""
        if not self.by_method:
            return draft.architectures
        kind = draft.speculators_model_type
        return () if kind is None else (kind,)

    def looked_up(self, release: Release, name: str) -> str:
        """Return the name ``release`` looks up for the draft's ``name``."""
        rename = release.draft_renames.get(self.renamed_for) if self.renamed_for else None
        return name if rename is None else rename.renamed(name)


@dataclass(frozen=True)
class Registration:
    """What one release's facts say about a draft's names."""

    release: Release
    """The release judged."""
    architecture: str | None
    """The first name the release looks up that its table holds (the renamed class where it
    renames; None: none of them)."""
    citation: str
    """Where that was read: the registry entry (``vllm==0.34.0:…/registry.py:722``); for a
    draft it lacks, the names it looked up (renamed, with the renaming's citation), the entries
    it holds among the format's names and the release's own refusal, each with its line in the
    release's facts."""

    @property
    def registered(self) -> bool:
        """Whether the release loads the draft (its table holds a name it looks up)."""
        return self.architecture is not None


def reads_registry(engine: Engine | None) -> bool:
    """Whether ``engine``'s model registry is read from its releases' code (extracted facts)."""
    return engine is not None and engine.extracted


def holds_table(release: Release, table: Table) -> bool:
    """Whether ``release``'s facts hold ``table`` (else the reviewed rows decide)."""
    return table.value in facts.for_release(release).tables


def judged(release: Release, lookup: Lookup) -> bool:
    """Whether ``release``'s facts decide which drafts of ``lookup``'s format it loads: they
    hold its table, and the release looks the draft's names up there (it does not pick the
    format's class from the draft's config instead); else the reviewed rows decide."""
    if lookup.method is not None and lookup.method in release.draft_class_from_config:
        return False
    return holds_table(release, lookup.table)


def names_of(lookup: Lookup) -> tuple[str, ...]:
    """Return the names ``lookup``'s format is known by: its own, then, for a format named by a
    suffix, every name ending in it that a release judged by the table holds, in name order."""
    if lookup.suffix is None:
        return tuple(dict.fromkeys(lookup.names))
    held = {
        name
        for engine in registered()
        if reads_registry(engine)
        for release in engine.releases
        if judged(release, lookup)
        for name in _table(facts.for_release(release), lookup.table)
        if name.endswith(lookup.suffix)
    }
    return tuple(dict.fromkeys((*lookup.names, *sorted(held))))


def _table(found: facts.ReleaseFacts, table: Table) -> Iterable[str]:
    """The names ``table`` of a release's facts holds."""
    return found.speculators if table is Table.SPECULATORS else found.drafts


def _at(found: facts.ReleaseFacts, table: Table, name: str) -> str | None:
    """Return ``path:line`` of ``name``'s entry in ``table`` (None: not held)."""
    if table is Table.SPECULATORS:
        return found.speculators.get(name)
    entry = found.drafts.get(name)
    return None if entry is None else str(entry["at"])


def registration(release: Release, lookup: Lookup, draft: Named) -> Registration:
    """Judge ``release`` on ``draft`` from the release's own facts, by ``lookup``.

    The format's other names (``lookup.names``) are cited when the release holds none of the
    draft's: what it does hold shows where its table was read. Raises ``facts.MissingFacts``
    for a release without its data file.
    """
    found = facts.for_release(release)
    pairs = [(name, lookup.looked_up(release, name)) for name in lookup.wanted(draft)]
    for _, looked in pairs:
        at = _at(found, lookup.table, looked)
        if at is not None:
            return Registration(release, looked, found.cite(at))
    wanted = tuple(dict.fromkeys(looked for _, looked in pairs))
    if lookup.by_method and not wanted:
        # get_config picks SpeculatorsConfig for any config with speculators_config, and it
        # looks the loader up by speculators_model_type alone.
        parts = [
            "the draft states no speculators_model_type, the key its speculators loaders "
            "are looked up by"
        ]
    else:
        what = "speculators_model_type" if lookup.by_method else "architecture named"
        parts = [f"its {lookup.table.words} holds no {' or '.join(wanted) or what}"]
    if lookup.table is Table.DRAFTS:
        # A target class under the same name (SGLang asked for LlamaForCausalLM) builds a
        # target model, not the draft's head: no draft is loaded.
        targets = [found.target((w,)) for w in wanted]
        parts += [
            f"{t.architecture} is a target model there ({found.cite(t.at)})" for t in targets if t
        ]
    renamed = [f"{own} as {looked}" for own, looked in pairs if own != looked]
    rename = release.draft_renames.get(lookup.renamed_for or "")
    if renamed and rename is not None:
        parts.append(f"it looks up {', '.join(renamed)} ({rename.text})")
    held = [s for s in names_of(lookup) if _at(found, lookup.table, s) is not None]
    if held:
        groups = _grouped(found, lookup.table, held)
        parts.append("it holds " + ", ".join(f"{names} ({where})" for names, where in groups))
    engine = ENGINES_BY_NAME[release.engine]
    key = (
        engine.unregistered_draft
        if lookup.table is Table.DRAFTS
        else engine.unloaded_speculators_type
    )
    refusal = found.message(key) if key else None
    if refusal is not None:
        parts.append(f"{release.spec} refuses it at load: {refusal}")
    return Registration(release, None, "; ".join(parts))


def _grouped(found: facts.ReleaseFacts, table: Table, names: list[str]) -> list[tuple[str, str]]:
    """Return (names, citation) per file of their entries: one citation of the lines they
    span, so that a message names what the release holds without a line per name."""
    by_file: dict[str, list[tuple[str, int]]] = {}
    for name in names:
        path, _, line = str(_at(found, table, name)).rpartition(":")
        by_file.setdefault(path, []).append((name, int(line)))
    out = []
    for path, entries in by_file.items():
        lines = sorted({n for _, n in entries})
        span = str(lines[0]) if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"
        shown = ", ".join(sorted(a for a, _ in entries))
        out.append((shown, found.cite(f"{path}:{span}")))
    return out


def registering(engine: Engine, lookup: Lookup, draft: Named) -> tuple[Release, ...]:
    """Return the releases of ``engine`` judged by ``lookup``'s table (``judged``) that hold a
    name looked up for ``draft``, oldest first (every release of an extracted engine has its
    facts: the contract tests hold it)."""
    return tuple(
        r
        for r in engine.releases
        if judged(r, lookup) and registration(r, lookup, draft).registered
    )


def registered_names(lookup: Lookup, draft: Named) -> Iterable[tuple[Release, str, str]]:
    """Yield (release, the name it looks up, citation) for every release of an extracted engine
    whose table holds the draft: what ``dflash-check formats`` lists, from the same lookup as
    the verdict."""
    for engine in registered():
        if not reads_registry(engine):
            continue
        for release in registering(engine, lookup, draft):
            found = registration(release, lookup, draft)
            yield release, str(found.architecture), found.citation
