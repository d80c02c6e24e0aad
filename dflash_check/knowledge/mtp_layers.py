"""The MTP (NextN) tables: which config keys count a target's MTP layers and where each family's
checkpoints keep the MTP weights, each row with the engine source it was read from; what each
engine builds from them is its module's ``Engine.mtp`` rows, read here from the registered
engines at call time (``engine_rows``). The reader and the checks that use them are
``check/target_alone.py``; MTP's row of the runtime table (SGLang's NextN draft checkpoint)
is ``runtimes/mtp.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from dflash_check.knowledge import facts
from dflash_check.knowledge.citations import cited_in
from dflash_check.knowledge.engines import VLLM_033, Engine, EngineMtp, registered
from dflash_check.knowledge.reviewed import in_range

MTP_KEYS: tuple[str, ...] = ("mtp_num_hidden_layers", "num_mtp_modules", "num_nextn_predict_layers")
"""The keys that count a target's MTP layers, in the order they are taken as k when a config
states several: Qwen3.5/3.6 use ``mtp_num_hidden_layers`` (under ``text_config`` for the
multimodal wrappers); MiniMax ``num_mtp_modules`` (MiniMax-M3 also states
``num_nextn_predict_layers: 1``, but vLLM sizes its MTP draft by ``num_mtp_modules``,
``vllm/config/speculative.py:1131``); DeepSeek, GLM-5, MiMo, Nemotron 3, Step and Kimi
``num_nextn_predict_layers`` (Kimi states 0: none). Each key is read at the top level, then
under ``text_config``, then under ``MTP_SECTION``."""

MTP_SECTION = "mtp_config"
"""A section some configs keep their MTP count in: Inkling states its depths only as
``mtp_config.num_nextn_predict_layers``, which vLLM reads
(``vllm==0.33.0:vllm/config/speculative.py:1087-1103``)."""


@dataclass(frozen=True)
class ClassDefault:
    """An MTP count that an engine's config class for a target fills in when config.json states
    none, at the engine's releases in ``releases`` (reviewed over a range: a release after the
    one read cites it as ``read at``).

    The engines load a target's config through a class chosen by its ``model_type``, so a field
    the class declares with a default is there whether the file states it or not:
    DeepSeek-V3's class defaults ``num_nextn_predict_layers`` to 1, and vLLM builds a one-layer
    DeepSeekMTPModel from a config stating no count
    (``vllm==0.34.0:vllm/config/speculative.py:847-862`` reads the attribute). Which class a
    model type gets is the engine's own choice (vLLM and SGLang load ``deepseek_v32`` and
    ``kimi_k2`` through DeepseekV3Config; vLLM 0.32.0 loads ``deepseek_v4`` through a class of
    its own), so the rows are per engine and release range. The class also reads an alias of
    the field (``attribute_map``), which a config may state instead.
    """

    engine: str
    """The engine (``vllm``) that loads the class."""
    releases: str
    """The engine's releases that do, as ``Reviewed.releases`` writes a range (``>=0.34``)."""
    model_types: tuple[str, ...]
    """Top-level ``model_type`` values loaded through the class (the engines' MTP branches read
    the top-level config's attribute, not ``text_config``'s)."""
    config_class: str
    """The class, for reports (``DeepseekV3Config``)."""
    key: str
    """The field the engines read (one of ``MTP_KEYS``)."""
    default: int
    """What the class fills in when no key is stated."""
    aliases: tuple[str, ...]
    """Keys the class stores as ``key`` (its ``attribute_map``)."""
    citation: str
    """Where the engine picks the class, and where the field, alias and default were read."""


# The field, its alias and its default were read in transformers 5.16.1, 5.19.0, 5.20.2 and
# 5.22.2 and at 5.25.0 (this project's lock), the same in each (5.16.1 one line lower); each
# row cites the newest transformers its engine release allows: vLLM 0.32.0, 0.33.0 and 0.34.0
# require >= 5.16.1 and < 5.20.0, < 5.21.0, < 5.23.0 (requirements/common.txt:10-11 of each),
# SGLang 0.5.23 pins 5.19.0 (its wheel's metadata).
_TF_DS = "transformers/models/deepseek_v3/configuration_deepseek_v3.py:79,117"
_TF_GLM = "transformers/models/glm4_moe/configuration_glm4_moe.py:88,120"
_KEY, _ALIAS = "num_nextn_predict_layers", ("num_mtp_layers",)
# kimi_k2 loads through the class too, but vLLM's hf_config_override maps it to no MTP draft:
# what each release does with it is its MTP row (knowledge/engines/vllm_mtp.py), not its count.
_DEEPSEEK_TYPES = ("deepseek_v3", "deepseek_v32", "kimi_k2")
# vLLM, reviewed per range of releases, each read in one release: transformers, the newest
# that release allows, and the lines of vllm's config registry mapping deepseek_v32 and kimi_k2
# to DeepseekV3Config (transformers_utils/config.py) and that name to transformers' class
# (transformers_utils/configs/__init__.py); deepseek_v3 and glm4_moe are not in that registry
# and load through transformers' AutoConfig. A later release in the open range cites the lines
# read (``read at``, citations.cited_in) until its own config loading is read.
_VLLM_READ = (
    (">=0.32,<0.33", "0.32.0", "5.19.0", "92,100", "86"),
    (">=0.33,<0.34", "0.33.0", "5.20.2", "133,141", "84"),
    (">=0.34", "0.34.0", "5.22.2", "134,142", "86"),
)


def _vllm_rows(
    releases: str, version: str, tf: str, registry: str, lazy: str
) -> tuple[ClassDefault, ...]:
    src = f"vllm=={version}:vllm/transformers_utils"
    return (
        ClassDefault(
            "vllm",
            releases,
            _DEEPSEEK_TYPES,
            "DeepseekV3Config",
            _KEY,
            1,
            _ALIAS,
            f"{src}/config.py:{registry} and {src}/configs/__init__.py:{lazy} (deepseek_v32, "
            f"kimi_k2: transformers' class); transformers=={tf}:{_TF_DS}",
        ),
        ClassDefault(
            "vllm",
            releases,
            ("glm4_moe",),
            "Glm4MoeConfig",
            _KEY,
            1,
            _ALIAS,
            f"transformers=={tf}:{_TF_GLM}",
        ),
    )


# SGLang 0.5.23 subclasses transformers' DeepseekV3Config for deepseek_v32 and kimi_k2 (only
# the model_type differs) and loads deepseek_v3 and glm4_moe through AutoConfig; its
# ModelConfig reads the count from the loaded config.
_SGLANG = "sglang==0.5.23:sglang/srt"
CLASS_DEFAULTS: tuple[ClassDefault, ...] = (
    *(row for read in _VLLM_READ for row in _vllm_rows(*read)),
    ClassDefault(
        "sglang",
        "==0.5.23",
        _DEEPSEEK_TYPES,
        "DeepseekV3Config",
        _KEY,
        1,
        _ALIAS,
        f"{_SGLANG}/utils/hf_transformers/common.py:199-202,223,230-233 (deepseek_v32, kimi_k2: "
        f"subclasses of transformers' class), read at {_SGLANG}/configs/model_config.py:1602-1604; "
        f"transformers==5.19.0:{_TF_DS}",
    ),
    ClassDefault(
        "sglang",
        "==0.5.23",
        ("glm4_moe",),
        "Glm4MoeConfig",
        _KEY,
        1,
        _ALIAS,
        f"transformers==5.19.0:{_TF_GLM}",
    ),
)
"""The config classes that fill in an MTP count, per engine, release range and ``model_type``;
a model type, engine or release not listed has no count but the one its config states. Not
here: ``deepseek_v4`` (transformers' class defaults it to 1, but vLLM 0.32.0 loads its own
DeepseekV4Config, which has no such field, ``vllm==0.32.0:vllm/transformers_utils/config.py:93``;
its later releases were not read for it)."""


def class_defaults(
    model_type: str | None, releases: Mapping[str, str | None] | None = None
) -> tuple[ClassDefault, ...]:
    """Return, per MTP engine the selection names at the release selected for it
    (``releases``: see ``selected_engines``), the class default of a target's top-level
    ``model_type``, where one was read (an engine without one is left out)."""
    found = []
    for engine in selected_engines(releases):
        rows = [
            c for c in CLASS_DEFAULTS if c.engine == engine.name and model_type in c.model_types
        ]
        if not rows:  # before the release lookup: an engine with no rows needs no release
            continue
        release = engine.release((releases or {}).get(engine.name))
        found += [
            replace(c, citation=cited_in(release, engine, c.citation))
            for c in rows
            if in_range(release.version, c.releases, engine.releases)
        ][:1]
    return tuple(found)


@dataclass(frozen=True)
class KeyedMtp:
    """A target whose MTP draft an engine keys on its architecture and a flag of its config,
    not on a count: the draft has a fixed number of steps, and the config may state neither an
    MTP count nor a layer count."""

    architecture: str
    """``architectures[0]`` of the target."""
    section: str
    """The config section the flag and the text model's dimensions are in."""
    flag: str
    """The flag in ``section`` that must be true."""
    layers: int
    """The steps the draft makes (its n_predict)."""
    hidden_key: str
    """The section's key for the hidden size."""
    layers_key: str
    """The section's key for the decoder layer count, where the config states one."""
    citation: str
    """Where the branch was read."""


KEYED_MTP: tuple[KeyedMtp, ...] = (
    # Nemotron Parse 3.5 (an MBart decoder behind a RADIO encoder): vLLM rewrites the config
    # into a one-step ParseAuxMTPModel (n_predict = num_nextn_predict_layers = 1) before any
    # count is read (vllm==0.34.0:vllm/config/speculative.py:810-821; 0.33.0:721-731); its
    # dimensions are the decoder's MBart ones (nemotron_parse3_5.py:288-305, _mtp.py:46-48).
    KeyedMtp(
        "RadioMBartPrefixForCausalLM",
        "decoder",
        "causal_vision_prefix",
        1,
        "d_model",
        "decoder_layers",
        "vllm==0.34.0:vllm/config/speculative.py:810-821",
    ),
)
"""Targets whose MTP draft is keyed on the architecture; the steps are then the engine's."""


def keyed_mtp(config: Mapping[str, Any]) -> KeyedMtp | None:
    """Return the keyed MTP draft a target's config selects, if any."""
    archs = config.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs else None
    for row in KEYED_MTP:
        section = config.get(row.section)
        if first == row.architecture and isinstance(section, dict) and section.get(row.flag):
            return row
    return None


# Where the families' MTP weight names were read.
_VLLM_SRC = VLLM_033.source

Placement = Literal["after", "mtp_layers", "mtp"]
"""Where a checkpoint keeps its MTP weights: ``after`` the decoder (``model.layers.{N}`` …
``model.layers.{N+k-1}``, DeepSeek), ``mtp_layers`` (``model.mtp_layers.{i}``, MiMo), or under
an ``mtp.`` prefix whose inner numbering is not one layer per MTP step (Qwen3.5, Qwen3-Next,
Nemotron-H: only the prefix is looked for)."""


@dataclass(frozen=True)
class MtpFamily:
    """How one family of targets lays out its MTP weights, matched on ``model_type``."""

    name: str
    """The family, for reports."""
    model_types: tuple[str, ...]
    """``model_type`` values (top level or ``text_config``) of the family."""
    placement: Placement
    """Where its checkpoints keep the MTP weights."""
    citation: str
    """The engine loader the placement was read from."""


FAMILIES: tuple[MtpFamily, ...] = (
    MtpFamily(
        "DeepSeek-V3/R1/V3.2, GLM-5",
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "kimi_k2"),
        "after",
        f"{_VLLM_SRC}:vllm/model_executor/models/deepseek_mtp.py:151-163,541-575",
    ),
    MtpFamily(
        "MiMo",
        ("mimo",),
        "mtp_layers",
        f"{_VLLM_SRC}:vllm/model_executor/models/mimo_mtp.py:96-115,183",
    ),
    MtpFamily(
        "Nemotron-H (Nemotron 3)",
        ("nemotron_h",),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/nemotron_h_mtp.py:424,462",
    ),
    MtpFamily(
        "Qwen3-Next",
        ("qwen3_next",),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/qwen3_next_mtp.py:231-241",
    ),
    MtpFamily(
        "Qwen3.5/3.6",
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "mtp",
        f"{_VLLM_SRC}:vllm/model_executor/models/qwen3_5_mtp.py:302-318",
    ),
)
"""Families whose MTP weight names were read; for any other the weights are not looked for."""


def mtp_engines() -> tuple[Engine, ...]:
    """Return the registered engines whose MTP support was read (``Engine.mtp``), in the
    order reports list the engines, read at call time."""
    return tuple(e for e in registered() if e.mtp)


def selected_engines(releases: Mapping[str, str | None] | None) -> tuple[Engine, ...]:
    """Return the MTP engines a selection names: ``releases`` None, every one (each at its
    newest release); else only the engines it maps, each to its release (None: its newest).
    An engine left out says nothing: neither its rows, its findings nor its class default."""
    return tuple(e for e in mtp_engines() if releases is None or e.name in releases)


def mtp_engine_rows() -> tuple[EngineMtp, ...]:
    """Return every engine's MTP rows, engine by engine (the docs' table)."""
    return tuple(r for e in mtp_engines() for r in e.mtp)


def engine_rows(
    architectures: tuple[str, ...],
    model_type: str | None,
    releases: Mapping[str, str | None] | None = None,
) -> tuple[EngineMtp, ...]:
    """Return, per engine the selection names, the row that applies to a target at the
    release selected for it (``releases``: see ``selected_engines``).

    The engines branch on ``architectures[0]`` and the top-level ``model_type`` (not
    ``text_config``'s: Kimi-K2.5's text model is a ``deepseek_v3``, its wrapper is not); a
    row read in some releases only (``EngineMtp.releases``) answers for those.
    """
    names = set(architectures[:1]) | ({model_type} if model_type else set())
    rows = []
    for engine in selected_engines(releases):
        version = (releases or {}).get(engine.name)
        row = next(
            r
            for r in engine.mtp
            if (not r.match or names & set(r.match))
            # Asked only of a ranged row: an engine with none needs no release.
            and (r.releases is None or engine.in_range(engine.release(version).version, r.releases))
        )
        rows.append(_at_release(engine, row, version))
    return tuple(rows)


def _at_release(engine: Engine, row: EngineMtp, version: str | None) -> EngineMtp:
    """The row as the release has it: a release of an extracted engine whose model registry
    registers none of the row's drafts builds none (its facts, with its own citation); a step
    limit cites where the release refuses."""
    if row.step_limit is not None:
        row = replace(row, step_limit=row.step_limit.at(engine.release(version).version))
    if not engine.extracted or not row.drafts:
        return row
    release = engine.release(version)
    found = facts.for_release(release)
    if set(row.drafts) & set(found.drafts):
        return row
    mtp = sorted(
        int(entry["at"].rsplit(":", 1)[1])
        for name, entry in found.drafts.items()
        if "MTP" in name and entry["at"].rsplit(":", 1)[1].isdigit()
    )
    path = next(iter(found.drafts.values()))["at"].rsplit(":", 1)[0] if found.drafts else ""
    where = f"{path}:{mtp[0]}-{mtp[-1]}" if mtp else path
    missing = ", ".join(row.drafts)
    return replace(
        row,
        draft=f"none: {engine.title} {release.version} registers no {missing}",
        request="not available",
        tokens="-",
        on_missing="-",
        citation=f"{found.cite(where)} (its MTP drafts, without {missing})",
        reruns=None,
        step_limit=None,
    )


def family(model_types: tuple[str, ...]) -> MtpFamily | None:
    """Return the MTP family of a target, if known."""
    return next((f for f in FAMILIES if set(f.model_types) & set(model_types)), None)
