"""A target's own MTP (NextN) layers, asked about the target alone (``dflash-check pair TARGET``).

Many targets ship their multi-token-prediction layers inside the checkpoint; the serving
engines then build the draft from the target itself. This module reads how many MTP layers the
config states (the key differs by family), what each engine would build from them (the
tables, with the engine source each fact was read from, are ``knowledge/mtp_layers.py`` and
each engine's ``Engine.mtp``), and whether the checkpoint's tensor names really hold them.
Pure: no file or network access, no torch.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace

from dflash_check.check.report import Finding, Severity, Verdict
from dflash_check.check.rules import RULES_BY_ID, TARGET_ALONE_RULES, Rule
from dflash_check.check.target import normalise_target
from dflash_check.fields import FieldReader
from dflash_check.knowledge.engines import ENGINES_BY_NAME, EngineMtp
from dflash_check.knowledge.mtp_layers import (
    MTP_KEYS,
    MTP_SECTION,
    ClassDefault,
    KeyedMtp,
    MtpFamily,
    Placement,
    class_defaults,
    engine_rows,
    family,
    keyed_mtp,
)
from dflash_check.knowledge.outcomes import Stage, stage_of
from dflash_check.knowledge.runtimes import RuntimeProfile
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings
from dflash_check.views import ModelFiles, TargetView


@dataclass(frozen=True)
class MtpStated:
    """What a target's config says about its MTP layers."""

    layers: int
    """k, the MTP layer count (0: none)."""
    key: str | None
    """The dotted key k was read from; None when no key is stated."""
    all_keys: tuple[tuple[str, int], ...]
    """Every MTP key the config states, with its value (MiniMax-M3 states two)."""
    defaults: tuple[ClassDefault, ...] = ()
    """Per engine whose config class for the target fills in a count, that class's default,
    when the config states no key (``key`` None); k is then the largest of them."""
    keyed: KeyedMtp | None = None
    """The keyed draft whose fixed steps k is (the engine reads no count: ``key`` None)."""

    @property
    def source(self) -> str:
        """Where k came from, in a few words: the key, or the class default."""
        if self.keyed is not None:
            return f"fixed for {self.keyed.architecture} with {self._flag}"
        if self.key is None and self.defaults:
            classes = "/".join(dict.fromkeys(d.config_class for d in self.defaults))
            return f"{classes}'s default {self.defaults[0].key}, not stated"
        return self.key or "no key stated"

    @property
    def said(self) -> str:
        """k and where it came from, for findings (the class default with its citation)."""
        if self.key is None and self.defaults:
            each = "; ".join(
                f"{ENGINES_BY_NAME[d.engine].title}'s {d.config_class} defaults it to "
                f"{d.default} ({d.citation})"
                for d in self.defaults
            )
            return f"{self.defaults[0].key} is not stated: {each}"
        if self.keyed is not None:
            return f"{self.keyed.architecture} with {self._flag} has {self.layers} step(s)"
        return f"{self.key} is {self.layers}"

    @property
    def _flag(self) -> str:
        assert self.keyed is not None  # only asked of a keyed draft
        return f"{self.keyed.section}.{self.keyed.flag}"

    def default_of(self, engine: str) -> ClassDefault | None:
        """Return the class default an engine takes k from (None: k is stated, or the
        engine's class for the target was not read)."""
        return next((d for d in self.defaults if d.engine == engine), None)

    def layers_of(self, engine: str) -> int | None:
        """Return the k an engine reads: the stated (or keyed) count, else its class default;
        None where the config states none and the engine's class was not read."""
        if self.key is not None or self.keyed is not None or not self.defaults:
            return self.layers
        d = self.default_of(engine)
        return d.default if d is not None else None


def read_mtp_layers(
    files: ModelFiles, releases: Mapping[str, str | None] | None = None
) -> MtpStated:
    """Read k from the first MTP key the config states (top level, then ``text_config``, then
    ``mtp_config``; a key's alias in the target's config class after it), else the defaults
    of the engines' config classes at the releases selected (``releases``, as for
    ``engine_rows``), else 0."""
    keyed = keyed_mtp(files.config)
    if keyed is not None:  # the engine fixes the steps before it reads any count
        return MtpStated(keyed.layers, None, (), keyed=keyed)
    top = FieldReader(files.who, files.config_location, files.config)
    readers = [top]
    text = top.child("text_config")
    if text is not None:
        readers.append(text)
    # Only where it is an object: other families use the name for other things.
    if isinstance(files.config.get(MTP_SECTION), dict):
        section = top.child(MTP_SECTION)
        assert section is not None
        readers.append(section)
    model_type = files.config.get("model_type")
    defaults = class_defaults(model_type if isinstance(model_type, str) else None, releases)
    # A key's aliases: those of any engine's class for the target (the classes read agree).
    aliases = {a: d.key for d in defaults for a in d.aliases}
    stated: list[tuple[str, int]] = []
    for key in MTP_KEYS:
        for reader in readers:
            if reader.has(key):
                value = reader.integer(key, minimum=0)
                assert value is not None  # has() saw a value; integer() raises on a bad one
                stated.append((f"{reader.prefix}{key}", value))
        # The class's alias of the key (num_mtp_layers) is the same field, at the top level
        # where the class is the config's own.
        for alias in (a for a, of in aliases.items() if of == key):
            if top.has(alias):
                value = top.integer(alias, minimum=0)
                assert value is not None  # as above
                stated.append((alias, value))
    if stated:
        return MtpStated(stated[0][1], stated[0][0], tuple(stated))
    if defaults:
        return MtpStated(max(d.default for d in defaults), None, (), defaults)
    return MtpStated(0, None, ())


# At most 9 digits: a longer layer number is no layer (and int() of 5,000 digits raises).
_LAYER = re.compile(r"^model\.(?:language_model\.)?layers\.(\d{1,9})\.")
_MTP_LAYERS = re.compile(r"^model\.mtp_layers\.(\d{1,9})\.")
_MTP_PREFIX = re.compile(r"^(?:model\.(?:language_model\.)?)?mtp\.")


@dataclass(frozen=True)
class MtpTensors:
    """What the checkpoint's tensor names show of the MTP layers."""

    location: str
    """The index or header the names came from."""
    expected: str
    """The names the MTP weights should carry, for messages."""
    found: tuple[int, ...]
    """MTP layers found (their index among the k)."""
    missing: tuple[int, ...]
    """MTP layers stated but absent."""


def find_mtp_tensors(
    names: Collection[str], location: str, n: int, k: int, fam: MtpFamily | None
) -> MtpTensors | None:
    """Look for the k MTP layers among a checkpoint's tensor names (None: layout not known)."""
    if fam is None or k == 0:
        return None
    if fam.placement == "mtp":
        # One prefix for every step: present or absent as a whole.
        held = any(_MTP_PREFIX.match(name) for name in names)
        found = tuple(range(k)) if held else ()
    else:
        pattern, first = (_LAYER, n) if fam.placement == "after" else (_MTP_LAYERS, 0)
        present = {int(m.group(1)) for name in names if (m := pattern.match(name))}
        found = tuple(i for i in range(k) if first + i in present)
    # A set: ``i not in found`` on the tuple made this quadratic in k (k = 200,000 is stated
    # by hostile configs); everything here is linear in the names and k.
    have = set(found)
    missing = tuple(i for i in range(k) if i not in have)
    return MtpTensors(location, mtp_names(fam.placement, n, k), found, missing)


def mtp_names(placement: Placement, n: int, k: int, detail: bool = True) -> str:
    """Return the names the MTP weights carry, for reports (``detail``: the DeepSeek parts)."""

    def span(prefix: str, first: int) -> str:
        last = f"…{first + k - 1}" if k > 1 else ""
        return f"{prefix}{first}{last}"

    if placement == "after":
        parts = " (eh_proj, enorm, hnorm, shared_head)" if detail else ""
        return span("model.layers.", n) + parts
    if placement == "mtp_layers":
        return span("model.mtp_layers.", 0)
    return "mtp.*"


@dataclass(frozen=True)
class MtpReport:
    """The answer for a target asked about alone: its MTP layers and what engines make of them."""

    target: TargetView
    """The target."""
    stated: MtpStated
    """What its config says."""
    family: str | None
    """The MTP family it belongs to, if known."""
    engines: tuple[EngineMtp, ...]
    """Per engine, what it would build (empty when the target has no MTP layers)."""
    tensors: MtpTensors | None
    """What the tensor names show; None when they were not read or the layout is not known."""
    tensors_note: str
    """Why ``tensors`` is None, or where the names came from."""
    findings: tuple[Finding, ...]
    """DF041-DF045, DF058-DF061."""
    num_speculative_tokens: int | None = None
    """The draft tokens per step the user means to serve with (``--num-speculative-tokens``)."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The engines' own flags the user means to serve with (``--engine-arg``): SGLang's draft
    steps (DF045, DF060, DF061)."""
    strict: bool = False
    """Warnings make it incompatible (``--strict``)."""
    ignored: tuple[str, ...] = ()
    """No rule is ignored for a target alone (``--ignore`` is refused with one model); here so
    that renderers read either report alike."""
    suppressed: tuple[Finding, ...] = ()
    """Always empty, as ``ignored``."""

    @property
    def verdict(self) -> Verdict:
        """Compatible when the MTP layers are there for at least one engine to serve."""
        bad = {Severity.ERROR, Severity.WARNING} if self.strict else {Severity.ERROR}
        if any(f.severity in bad for f in self.findings):
            return Verdict.INCOMPATIBLE
        return Verdict.COMPATIBLE

    @property
    def verdict_text(self) -> str:
        """The verdict as printed (the registry's renderers read it as a pair's)."""
        return self.verdict.value

    @property
    def smoke(self) -> None:
        """No smoke run answers for a target alone (read like a pair's report)."""
        return None

    @property
    def profiles(self) -> tuple[RuntimeProfile, ...]:
        """No runtime profile is judged for a target alone (its engines are ``engines``): none,
        so that renderers read it like a pair's report."""
        return ()

    @property
    def runtime_stages(self) -> dict[str, Stage | None]:
        """No runtime profile, so no stage per runtime (read like a pair's report)."""
        return {}

    def count(self, severity: Severity) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def layer_names(self) -> str:
        """The MTP layers' place in the checkpoint, for reports."""
        n, k = self.target.num_hidden_layers, self.stated.layers
        if k == 0:
            return "-"
        fam = family(self.target.model_types)
        if fam is None:
            return "not known for this family"
        return mtp_names(fam.placement, n, k, detail=False)


# DF060 judges an EAGLE-3 head's or a NextN checkpoint's pair too: it is in the pair table.
_OWN = sorted((*TARGET_ALONE_RULES, RULES_BY_ID["DF060"]), key=lambda r: r.id)
MTP_RULES: dict[str, Rule] = {r.id: r for r in _OWN}
"""The rules of a target asked about alone (their why and fix live in the rule table)."""


def fill(text: str, k: int, n: int) -> str:
    """Put a target's k and N into a row's text (rows keep ``{k}`` and ``{N}`` as placeholders)."""
    return text.replace("{k}", str(k)).replace("{N}", str(n))


def _finding(rule: str, message: str, hint: str, field: str | None = None) -> Finding:
    return Finding(rule, MTP_RULES[rule].severity, None, message, hint, field=field, model="target")


def _token_findings(
    stated: MtpStated, tokens: int, engines: tuple[EngineMtp, ...]
) -> Iterator[Finding]:
    """Each engine's reading of num_speculative_tokens against its k, where its MTP row says how
    it reruns the layers (``EngineMtp.reruns``; vLLM's speculative.py:1600-1612)."""
    for row in engines:
        reruns, k = row.reruns, stated.layers_of(row.engine)
        # Not read for this engine (or it builds no draft), or its k not known: nothing to say.
        if reruns is None or not k or tokens <= k:
            continue
        title = ENGINES_BY_NAME[row.engine].title
        refusal = reruns.refusal.replace("{k}", str(k))
        if tokens % k:
            yield Finding(
                "DF044",
                Severity.ERROR,
                row.engine,
                f"num_speculative_tokens {tokens} is more than the target's {k} MTP layers and "
                f"not a multiple of them: {title} refuses it ('{refusal}', "
                f"{reruns.refusal_citation})",
                f"use {k} or a multiple of {k}",
                model="target",
            )
        else:
            yield Finding(
                "DF045",
                Severity.INFO,
                row.engine,
                f"num_speculative_tokens {tokens} reruns the target's {k} MTP layer(s) "
                f"{tokens // k} times per step; {title} warns the acceptance rate may drop "
                f"({reruns.warning_citation})",
                f"{k} draft tokens use each MTP layer once",
                model="target",
            )


def _step_findings(tokens: int, engines: tuple[EngineMtp, ...]) -> Iterator[Finding]:
    """Each engine that refuses more draft tokens than its draft's fixed trained steps
    (``EngineMtp.step_limit``), where the tokens asked for are more."""
    for row in engines:
        limit = row.step_limit
        if limit is None or tokens <= limit.steps:
            continue
        title = ENGINES_BY_NAME[row.engine].title
        yield Finding(
            "DF059",
            MTP_RULES["DF059"].severity,
            row.engine,
            f"num_speculative_tokens {tokens} is more than the {limit.steps} trained step(s) of "
            f"the MTP draft {title} builds for this target: it refuses it at start-up "
            f"('{limit.refusal}', {limit.citation})",
            f"use at most {limit.steps}",
            model="target",
        )


def _refusals(
    name: str, engines: tuple[EngineMtp, ...], releases: Mapping[str, str | None] | None
) -> Iterator[Finding]:
    """DF063 for each engine that refuses the MTP method for this target at start-up
    (``EngineMtp.refusal``): it builds no draft from the target, whatever its count."""
    for row in engines:
        if row.refusal is None:
            continue
        engine = ENGINES_BY_NAME[row.engine]
        release = engine.release((releases or {}).get(row.engine)).version
        why = row.draft.removeprefix("none: ")
        yield Finding(
            "DF063",
            MTP_RULES["DF063"].severity,
            row.engine,
            f"target {name}: {why} ({row.citation}); {engine.title} {release} refuses "
            "method mtp on it at start-up "
            f"('{row.refusal.message}', {row.refusal.citation})",
            "use a separate draft (DFlash, EAGLE-3) with this target on this release: "
            "dflash-check pair DRAFT TARGET",
            model="target",
        )


def _findings(
    target: TargetView,
    stated: MtpStated,
    engines: tuple[EngineMtp, ...],
    tensors: MtpTensors | None,
    tokens: int | None,
    settings: EngineSettings,
    releases: Mapping[str, str | None] | None = None,
) -> Iterator[Finding]:
    name = target.name
    if stated.layers == 0:
        said = f"{stated.key} is 0" if stated.key else f"it states none of {', '.join(MTP_KEYS)}"
        yield _finding(
            "DF041",
            f"target {name} has no MTP layers ({said})",
            "use a separate draft (DFlash, EAGLE-3) with this target: "
            "dflash-check pair DRAFT TARGET",
            stated.key,
        )
        return
    if tensors is not None and tensors.missing:
        yield _finding(
            "DF042",
            f"target {name}: {stated.said}, but {tensors.location} has "
            f"{len(tensors.missing)} of them missing (expected {tensors.expected}); "
            + "; ".join(
                f"{r.engine}: {fill(r.on_missing, stated.layers, target.num_hidden_layers)}"
                for r in engines
                if r.on_missing not in ("-", "not verified")
            ),
            "use a checkpoint exported with its MTP layers (quantised exports often drop them), "
            "or serve it without MTP",
            stated.key,
        )
    yield from _refusals(name, engines, releases)
    # Not where every engine refuses the method for the target: DF041 said so, as an error.
    unbuilt = all(r.request == "not available" or not r.verified for r in engines)
    if unbuilt and not all(r.refusal for r in engines):
        yield _finding(
            "DF043",
            f"target {name}: none of the engines read here builds an MTP draft for "
            f"{', '.join(target.architectures[:1]) or target.model_type}",
            "check the engine's release notes for MTP support of this architecture",
        )
    if tokens is not None:
        yield from _token_findings(stated, tokens, engines)
        yield from _step_findings(tokens, engines)
    # Imported here: a target asked about alone is the rare path, its step flags rarer.
    from dflash_check.check.mtp_steps import step_flag_findings, topk_gate_findings

    gated = tuple(topk_gate_findings(target.architectures, settings, releases))
    yield from gated
    # An engine that refuses the topk does not start: what it does with the steps is moot.
    refused = {f.runtime for f in gated}
    rest = tuple(r for r in engines if r.engine not in refused)
    yield from step_flag_findings(stated.layers_of, settings, rest)


def _keyed_target(files: ModelFiles, keyed: KeyedMtp) -> TargetView:
    """The target view of a keyed MTP target, from its section's dimensions: its layer count
    is read where stated (0 where not: the draft's steps do not depend on it, and the
    report says it is not stated)."""
    top = FieldReader(files.who, files.config_location, files.config)
    section = top.child(keyed.section)
    assert section is not None  # keyed_mtp() found the flag in it
    hidden = section.integer(keyed.hidden_key, required=True)
    vocab = section.integer("vocab_size", required=True)
    assert hidden is not None and vocab is not None  # required=True guarantees it
    n = section.integer(keyed.layers_key, minimum=0)
    model_type = top.string("model_type")
    return TargetView(
        name=files.name,
        architectures=top.strings("architectures") or (),
        model_type=model_type,
        model_types=(model_type,) if model_type else (),
        nested=True,
        text_prefix=section.prefix,
        num_hidden_layers=n or 0,
        layers_key=f"{section.prefix}{keyed.layers_key}" if n is not None else "",
        hidden_size=hidden,
        vocab_size=vocab,
        max_position_embeddings=None,
    )


def check_target_mtp(
    files: ModelFiles,
    tensor_names: Collection[str] | None,
    tensors_note: str,
    strict: bool = False,
    num_speculative_tokens: int | None = None,
    releases: Mapping[str, str | None] | None = None,
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS,
) -> MtpReport:
    """Answer for a target asked about alone; ``tensor_names`` None when they were not read;
    ``releases``: the engines the selection names, each at its release (None: every engine at
    its newest; ``knowledge.mtp_layers.selected_engines``); ``engine_settings``: the engines'
    own flags, parsed once (``--engine-arg``)."""
    stated = read_mtp_layers(files, releases)
    target = normalise_target(files) if stated.keyed is None else _keyed_target(files, stated.keyed)
    fam = family(target.model_types)
    top_type = files.config.get("model_type")
    top_type = top_type if isinstance(top_type, str) else None
    engines = engine_rows(target.architectures, top_type, releases) if stated.layers else ()
    tensors = None
    if tensor_names is not None:
        tensors = find_mtp_tensors(
            tensor_names, tensors_note, target.num_hidden_layers, stated.layers, fam
        )
        if tensors is None and stated.layers:
            tensors_note = f"{tensors_note} (where this family keeps its MTP weights is not known)"
    return MtpReport(
        target=target,
        stated=stated,
        family=fam.name if fam else None,
        engines=engines,
        tensors=tensors,
        tensors_note=tensors_note,
        # Each finding with its stage, as a pair's are (``knowledge/outcomes.py``).
        findings=tuple(
            f if f.stage is not None else replace(f, stage=stage_of(f.rule, f.runtime))
            for f in _findings(
                target, stated, engines, tensors, num_speculative_tokens, engine_settings, releases
            )
        ),
        num_speculative_tokens=num_speculative_tokens,
        engine_settings=engine_settings,
        strict=strict,
    )
