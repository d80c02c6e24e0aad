"""Draft formats: which normaliser reads a draft config, as one table.

Every format normalises to the same ``DraftView`` (DFlash layer-output ids, the same facts), so
the rules never see where a format keeps a key. ``FORMATS`` is the single source for detection,
for the error on an unknown format, for the runtimes that load each format and for
``docs/formats.md``.

Which runtimes load a format comes from two places: an engine whose code is extracted (vLLM,
SGLang) loads, at each release, what that release's facts hold in the table the format is
looked up in (``DraftFormat.lookup``: its model registry by architecture, after the release's
renaming, or vLLM's speculators loaders by ``speculators_model_type``;
``knowledge/registered_drafts.py``); every other engine, and a release whose facts lack that
table, is a reviewed row here (``DraftFormat.runtimes``, cited in ``source``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dflash_check.check.formats import (
    dspark,
    eagle3,
    laguna,
    muse,
    nextn,
    specforge,
    speculators,
    zlab,
)
from dflash_check.check.formats.common import config_architectures
from dflash_check.check.formats.other_methods import other_method_of
from dflash_check.check.formats.unchecked import NOT_CHECKED_YET
from dflash_check.errors import NotADraftError
from dflash_check.fields import FieldReader, describe
from dflash_check.knowledge.engines import (
    LLAMACPP,
    TRTLLM,
    VLLM_033,
    Release,
    owner,
)
from dflash_check.knowledge.registered_drafts import (
    Lookup,
    Named,
    Registration,
    Table,
    judged,
    reads_registry,
    registering,
)
from dflash_check.knowledge.registered_drafts import registration as registry_registration
from dflash_check.views import DraftView, ModelFiles

V033 = VLLM_033.source
"""vLLM 0.33.0, where the vLLM lines cited here were read."""
# SGLang's facts have no speculators table: no code of it reads the format (no
# speculators_model_type, speculators_config or transformer_layer_config anywhere in sglang/).
SGLANG_NO_SPECULATORS = (
    "SGLang does not load it: sglang==0.5.23 reads none of speculators_model_type, "
    "speculators_config or transformer_layer_config (no occurrence in sglang/)"
)
SGLANG_EAGLE3_AS_IS = (
    "SGLang looks up the head's own architectures, renaming no EAGLE-3 draft "
    "(sglang==0.5.23:sglang/srt/model_loader/utils.py:198-239, configs/model_config.py:1015-1210 "
    "renames only target architectures, to their MTP, NextN or DSpark classes)"
)

# A NextN draft runs as EAGLE (NEXTN is its alias) and SGLang builds the class its model
# registry holds for the checkpoint's own architecture: ModelConfig renames only a target's
# architecture (DeepseekV3ForCausalLM and the like) to its NextN class for a draft.
SGLANG_NEXTN_AS_IS = (
    "SGLang looks the checkpoint's own architecture up in its model registry "
    "(sglang==0.5.23:sglang/srt/model_loader/utils.py:198-239; configs/model_config.py:1032-1036 "
    "renames only the target architectures DeepseekV3ForCausalLM and DeepseekV32ForCausalLM to "
    "DeepseekV3ForCausalLMNextN; NEXTN is an alias of EAGLE, "
    "arg_groups/speculative_hook.py:109-116)"
)


# eq=False: a format is a behaviour (its matcher and normaliser), one object per format,
# compared by identity; no generated __eq__/__hash__ to compile on every pair's start-up.
@dataclass(frozen=True, eq=False)
class DraftFormat:
    """One draft format and what the tool knows about it."""

    name: str
    """Short name shown in reports (``z-lab``, ``speculators``, ``specforge``)."""
    title: str
    """Human name."""
    identified_by: str
    """What in ``config.json`` identifies the format (for docs and messages)."""
    keys: tuple[tuple[str, str], ...]
    """(fact, where the format keeps it), for ``docs/formats.md``."""
    numbering: str
    """How the format numbers layer ids, and the conversion to DFlash ids."""
    runtimes: tuple[str, ...] | None
    """Runtime profiles that load this format, reviewed by hand (None: every profile). For a
    format with a ``lookup``, the runtimes of an extracted engine are not listed: each release
    loads what its facts hold (``loads``), unless its facts lack the table."""
    dflash_config_keys: bool
    """Whether runtimes look for its keys in ``dflash_config`` (so key location matters)."""
    source: str
    """Where the format was read."""
    matches: Callable[[Mapping[str, Any]], bool]
    """Whether a config is in this format."""
    normalise: Callable[[ModelFiles], DraftView]
    """Its normaliser."""
    architectures: tuple[str, ...] = ()
    """The architectures that name a draft of this format, when they alone identify it (the
    message for a config in no known format lists them)."""
    lookup: Lookup | None = None
    """Which table of an extracted engine's release facts says whether it loads the format, by
    which of the draft's names; a format named by ``architectures`` is looked up by them in the
    model registry unless it says otherwise. None: the reviewed rows alone."""

    def __post_init__(self) -> None:
        if self.lookup is None and self.architectures:
            object.__setattr__(self, "lookup", Lookup(Table.DRAFTS, self.architectures))

    def registration(
        self, runtime: str, draft: Named, release: Release | None = None
    ) -> Registration | None:
        """Return what the facts of ``runtime``'s engine at ``release`` (None: its newest) say
        about ``draft``; None where the reviewed rows decide (a format without a lookup, an
        engine whose code is not extracted, a release whose facts lack the table or that picks
        the format's class from the draft's config: ``registered_drafts.judged``)."""
        engine = owner(runtime)
        if self.lookup is None or engine is None or not reads_registry(engine):
            return None
        release = release or engine.newest
        if not judged(release, self.lookup):
            return None
        return registry_registration(release, self.lookup, draft)

    def loads(self, runtime: str, draft: Named, release: Release | None = None) -> bool:
        """Return whether ``runtime`` at ``release`` (None: its newest) loads ``draft``."""
        found = self.registration(runtime, draft, release)
        if found is not None:
            return found.registered
        return self.runtimes is None or runtime in self.runtimes

    def loaded_by(self, draft: Named) -> tuple[str, ...]:
        """Return what loads ``draft``: for an extracted engine, the releases whose facts hold
        it (``vllm==0.34.0``), for the others the reviewed runtimes, in the order of the
        method's runtime rows."""
        from dflash_check.knowledge.runtimes import method_rows

        found: list[str] = []
        for row in method_rows(draft.method):
            engine = owner(row.name)
            # Judged by the releases' facts where the newest is judged by the table (SGLang has
            # no speculators loaders: its reviewed row says it).
            if self.registration(row.name, draft) is not None and engine is not None:
                assert self.lookup is not None  # registration is None without one
                found += [r.spec for r in registering(engine, self.lookup, draft)]
            elif self.runtimes is None or row.name in self.runtimes:
                found.append(row.name)
        return tuple(dict.fromkeys(found))


def _is_speculators(config: Mapping[str, Any]) -> bool:
    """speculators_model_type decides, before architectures (converted files keep
    ``DFlashDraftModel`` there)."""
    kind = config.get("speculators_model_type")
    return (isinstance(kind, str) and kind in speculators.METHODS) or (
        kind is None and "DFlashSpeculator" in config_architectures(config)
    )


def _has_architecture(names: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    def matches(config: Mapping[str, Any]) -> bool:
        return config.get("speculators_model_type") is None and any(
            a in names for a in config_architectures(config)
        )

    return matches


FORMATS: tuple[DraftFormat, ...] = (
    DraftFormat(
        name="z-lab",
        title="z-lab DFlash / DFlash 2",
        identified_by=zlab.IDENTIFIED_BY,
        keys=(
            ("dimensions", "top level: hidden_size, num_hidden_layers, vocab_size"),
            ("layer ids", "dflash_config.target_layer_ids, else top-level target_layer_ids"),
            ("mask token", "dflash_config.mask_token_id, else top level"),
            ("block size", "dflash_config.block_size, else top level"),
            ("target depth", "top-level num_target_layers"),
        ),
        numbering="DFlash layer-output ids: t is the output of target layer t "
        "(the reference reads hidden_states[t+1]); used as is",
        runtimes=None,
        dflash_config_keys=True,
        source="z-lab/dflash@07ebd93d:dflash/model.py (_draft_value, extract_context_feature)",
        matches=_has_architecture(zlab.ARCHITECTURES),
        architectures=tuple(zlab.ARCHITECTURES),
        normalise=zlab.normalise,
    ),
    DraftFormat(
        name="speculators",
        title="speculators-format DFlash / DFlash 2 / DSpark",
        identified_by="speculators_model_type: dflash, dflash2 or dspark (or architectures "
        "DFlashSpeculator)",
        keys=(
            ("dimensions", "transformer_layer_config: hidden_size, num_hidden_layers, vocab_size"),
            ("layer ids", "top-level aux_hidden_state_layer_ids (vLLM aux numbering)"),
            ("mask token", "top-level mask_token_id"),
            ("block size", "top-level block_size"),
            ("reduced vocabulary", "top-level draft_vocab_size (d2t tensor in the weights)"),
            ("verifier", "speculators_config.verifier.name_or_path"),
            ("target width", "top-level target_hidden_size (null: the verifier's)"),
        ),
        numbering="vLLM aux indices k = t + 1 (k is the residual stream after k layers); "
        "converted once to DFlash ids t = k - 1, and the conversion is shown in the report",
        # vLLM: each release's speculators loaders, by speculators_model_type (its facts).
        runtimes=(),
        dflash_config_keys=False,
        source="vllm-project/speculators@c05b95b3:src/speculators/convert/dflash/converter.py; "
        "vLLM's speculators loaders (transformers_utils/configs/speculators/algos.py, from each "
        f"release's facts); {SGLANG_NO_SPECULATORS}",
        matches=_is_speculators,
        normalise=speculators.normalise,
        lookup=Lookup(Table.SPECULATORS, tuple(speculators.METHODS), by_method=True),
    ),
    DraftFormat(
        name="specforge",
        title="SpecForge DFlash variant",
        identified_by="architectures DeepseekDFlashDraftModel (MLA attention)",
        keys=(("all DFlash keys", "as the z-lab format: dflash_config first, then top level"),),
        numbering="DFlash layer-output ids, as the z-lab format",
        runtimes=None,
        dflash_config_keys=True,
        source="sgl-project/SpecForge specforge/modeling/draft/deepseek_dflash.py",
        matches=_has_architecture(specforge.ARCHITECTURES),
        architectures=tuple(specforge.ARCHITECTURES),
        normalise=specforge.normalise,
    ),
    DraftFormat(
        name="dspark",
        title="DSpark",
        identified_by="architectures " + ", ".join(dspark.ARCHITECTURES),
        keys=(
            ("dimensions", "top level: hidden_size, num_hidden_layers, vocab_size"),
            (
                "layer ids",
                "top-level dspark_target_layer_ids, else dflash_config.target_layer_ids, else "
                "top-level target_layer_ids (dspark_config.target_layer_ids is read by no engine)",
            ),
            (
                "mask token",
                "top-level dspark_noise_token_id, else mask_token_id in dspark_config, "
                "dflash_config, text_config, then the top level",
            ),
            ("block size", "top-level dspark_block_size, else block_size (dflash_config, top)"),
            (
                "Markov head",
                "dspark_markov_rank, else markov_rank in dspark_config, dflash_config, "
                "text_config, top level; markov_head_type likewise",
            ),
            ("reduced vocabulary", "top-level draft_vocab_size (lm_head and d2t in the weights)"),
            ("target depth", "top-level num_target_layers, else dflash_config"),
        ),
        numbering="DFlash layer-output ids (vLLM and SGLang add 1 on their DFlash capture path); "
        "a deepseek_v41 draft's dspark_target_layer_ids are vLLM aux indices k = t + 1, "
        "converted once to t = k - 1 and shown in the report",
        runtimes=dspark.RUNTIMES,  # vLLM and SGLang: each release's model registry
        dflash_config_keys=False,
        source=f"{V033}:vllm/model_executor/models/registry.py:676-697, "
        "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:125-135 (ids), "
        "vllm/v1/worker/gpu/spec_decode/utils.py:92-114 (mask), vllm/config/vllm.py:3332-3337 "
        "(V2 runner only); sglang 0.5.23: srt/speculative/dspark_components/dspark_config.py:"
        "206-322, srt/models/dspark.py:995; NVIDIA/TensorRT-LLM tensorrt_llm/_torch/speculative/"
        "dspark*.py; sgl-project/SpecForge@a6b6b023 configs/*dspark*.json",
        matches=_has_architecture(dspark.ARCHITECTURES),
        architectures=tuple(dspark.ARCHITECTURES),
        normalise=dspark.normalise,
    ),
    DraftFormat(
        name="muse",
        title="Muse Glimmer assistant",
        identified_by="architectures MuseGlimmerAssistantModel",
        keys=(
            ("dimensions", "top level: hidden_size, num_hidden_layers, vocab_size"),
            ("layer ids", "top-level target_layer_ids (no dflash_config)"),
            ("mask token", "top-level mask_token_id"),
            ("block size", "top-level block_size"),
            ("target depth", "none (no num_target_layers)"),
        ),
        numbering="DFlash layer-output ids: vLLM's V2 reader adds 1 to the top-level list; SGLang "
        "adds 1 before a Muse Glimmer target's raw hook, as its DFlash hooks do elsewhere",
        runtimes=(),  # vLLM and SGLang alone: each release's model registry
        dflash_config_keys=False,
        source=f"{V033}:vllm/model_executor/models/registry.py:674-675, "
        "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:136-140; sglang 0.5.23: "
        "srt/models/dflash.py:1317-1324, model_runner_components/spec_aux_hidden_state.py:17-29, "
        "254-258 (Muse remap)",
        matches=_has_architecture(muse.ARCHITECTURES),
        architectures=tuple(muse.ARCHITECTURES),
        normalise=muse.normalise,
    ),
    DraftFormat(
        name="laguna",
        title="poolside Laguna DFlash",
        identified_by="architectures DFlashLagunaForCausalLM",
        keys=(
            ("dimensions", "top level: hidden_size, num_hidden_layers, vocab_size"),
            (
                "layer ids",
                "dflash_config.target_layer_ids (vLLM reads no other key; SGLang falls back to a "
                "top-level list)",
            ),
            ("mask token", "dflash_config.mask_token_id"),
            ("block size", "dflash_config.block_size, else top level"),
            ("reduced vocabulary", "top-level draft_vocab_size, required, = target vocab_size"),
            ("attention", "top-level layer_types, one uniform entry per draft layer"),
        ),
        numbering="DFlash layer-output ids (the runners add 1 on the dflash_config path)",
        runtimes=(),  # vLLM and SGLang alone: each release's model registry
        dflash_config_keys=True,
        source=f"{V033}:vllm/model_executor/models/laguna_dflash.py:44-60, "
        ":78-91, :238-258, registry.py:696; sglang 0.5.23: srt/models/dflash.py:1317-1324",
        matches=_has_architecture(laguna.ARCHITECTURES),
        architectures=tuple(laguna.ARCHITECTURES),
        normalise=laguna.normalise,
    ),
    DraftFormat(
        name="speculators-eagle3",
        title="speculators-format EAGLE-3 head",
        identified_by="speculators_model_type: eagle3 (or architectures Eagle3Speculator)",
        keys=(
            ("dimensions", "transformer_layer_config: hidden_size, num_hidden_layers, vocab_size"),
            ("layer ids", "top-level eagle_aux_hidden_state_layer_ids (vLLM aux numbering)"),
            ("reduced vocabulary", "top-level draft_vocab_size (d2t / t2d tensors)"),
            ("target width", "top-level target_hidden_size (null: the verifier's)"),
            ("verifier", "speculators_config.verifier.name_or_path"),
        ),
        numbering="vLLM aux indices k (hidden_states[k]); as canonical ids t = k - 1",
        runtimes=(LLAMACPP.name,),  # and vLLM's speculators loaders, from each release's facts
        dflash_config_keys=False,
        source=f"{V033}:vllm/transformers_utils/configs/speculators/"
        "algos.py:15-50; ggml-org/llama.cpp@0274f0fc:conversion/llama.py (Eagle3Speculator); "
        f"{SGLANG_NO_SPECULATORS}",
        matches=eagle3.matches_speculators,
        normalise=eagle3.normalise_speculators,
        lookup=Lookup(Table.SPECULATORS, (eagle3.SPECULATORS_TYPE,), by_method=True),
    ),
    DraftFormat(
        name="eagle3",
        title="EAGLE-3 head",
        identified_by="architectures LlamaForCausalLMEagle3, Qwen3MoeForCausalLMEagle3, "
        "DeepseekV3ForCausalLMEagle3, Eagle3* …, or SpecForge's nested eagle_config",
        keys=(
            ("dimensions", "top level: hidden_size, num_hidden_layers, vocab_size"),
            (
                "layer ids",
                "eagle_config.eagle_aux_hidden_state_layer_ids (layer outputs), top-level "
                "eagle_aux_hidden_state_layer_ids (vLLM aux), legacy eagle_config.layer_ids",
            ),
            ("reduced vocabulary", "top-level draft_vocab_size (d2t / t2d tensors)"),
            ("target width", "top-level target_hidden_size (default: hidden_size)"),
        ),
        numbering="nested ids are layer outputs t (SGLang captures t + 1); top-level and "
        "legacy ids are vLLM aux indices k = t + 1; each runtime's reading is in the runtime "
        "table",
        # vLLM and SGLang: each release's model registry, after vLLM's renaming (its facts).
        runtimes=(TRTLLM.name, LLAMACPP.name, "specforge"),
        dflash_config_keys=False,
        source="sgl-project/SpecForge@a6b6b023:specforge/algorithms/model_providers.py:188-211, "
        "configs/*-eagle3.json; vLLM renames the architectures first (Release.draft_renames, "
        f"{V033}:vllm/transformers_utils/configs/eagle.py:55-64); {SGLANG_EAGLE3_AS_IS}",
        matches=eagle3.matches,
        normalise=eagle3.normalise,
        lookup=Lookup(Table.DRAFTS, eagle3.REGISTRY_NAMES, renamed_for=eagle3.SPECULATORS_TYPE),
    ),
    DraftFormat(
        name="nextn",
        title="NextN (MTP) draft checkpoint",
        identified_by="architectures *ForCausalLMNextN (DeepseekV3ForCausalLMNextN, …)",
        keys=(
            ("dimensions", "the target's: hidden_size, vocab_size, num_hidden_layers"),
            ("MTP layer", "weights under model.layers.{N} (header)"),
        ),
        numbering="no layer ids: the MTP layer reads the target's last hidden state",
        # SGLang: each release's model registry, by the checkpoint's own architecture (its
        # facts). vLLM builds an MTP draft from the draft's model_type, never its architecture
        # (Release.draft_class_from_config), and this tool has no vLLM row for NextN
        # checkpoints: no runtime is written by hand.
        runtimes=(),
        dflash_config_keys=False,
        source=f"{SGLANG_NEXTN_AS_IS}; vLLM picks the class from the draft's model_type "
        "(hf_config_override, Release.draft_class_from_config), not from this table",
        matches=nextn.matches,
        normalise=nextn.normalise,
        lookup=Lookup(Table.DRAFTS, (), method="mtp", suffix=nextn.ARCHITECTURE_SUFFIX),
    ),
)
"""Every draft format, in detection order: the one place a format is added. It is read at
each use (``format_named``, ``draft_format_of``), never copied into an index."""


def format_named(name: str) -> DraftFormat:
    """Return the format a view names (``DraftView.format``)."""
    found = next((f for f in FORMATS if f.name == name), None)
    if found is None:  # a view is only built by a format's normaliser
        raise KeyError(f"no draft format {name!r} in FORMATS")
    return found


def draft_format_of(config: Mapping[str, Any]) -> DraftFormat | None:
    """Return the format of a draft config, or None when it is in no known format."""
    return next((f for f in FORMATS if f.matches(config)), None)


# Draft architectures no engine release with data registers, whose loader was read elsewhere.
UNREGISTERED_DRAFTS: dict[str, str] = {
    # SpecForge's Domino drafts are DFlash drafts with dflash_config.projector_type "domino";
    # SGLang 0.5.23 reads their extra keys (projector_type, shift_label, pure_draft_prefix_len,
    # gru_hidden_dim, emb_dim) in speculative/dflash_utils.py:461 onwards.
    "DominoDraftModel": "SpecForge's Domino draft, whose dflash_config keys SGLang 0.5.23 "
    "reads (sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:461)",
}


def _registered_drafts(architectures: tuple[str, ...]) -> str | None:
    """Name the first architecture an engine registers as a draft the tool cannot check, with
    the releases that load it (from the extracted registries: knowledge/data)."""
    from dflash_check.knowledge.facts import releases_loading_draft

    for arch in architectures:
        releases = releases_loading_draft(arch)
        if releases:
            why = NOT_CHECKED_YET.get(arch)
            return f"{arch}, which {', '.join(releases)} load" + (f" ({why})" if why else "")
        if arch in UNREGISTERED_DRAFTS:
            return f"{arch}: {UNREGISTERED_DRAFTS[arch]}"
    return None


def _supported() -> str:
    """Return the formats this tool reads, for messages."""
    return "; ".join(f"{f.title} ({f.identified_by})" for f in FORMATS)


def normalise_draft(files: ModelFiles) -> DraftView:
    """Build the draft view with its format's normaliser, or raise ``NotADraftError``."""
    config = files.config
    other = other_method_of(config)
    found = draft_format_of(config) if other is None else None
    if found is not None:
        return found.normalise(files)
    top = FieldReader(files.who, files.config_location, config)
    where = f"{files.who}: {files.config_location}"
    architectures = top.strings("architectures") or ()
    shown = ", ".join(architectures) if architectures else "none"
    if other is not None:
        err = NotADraftError(
            f"{where}: method {other.title} (architectures {shown}); this version checks "
            "DFlash-family drafts (DFlash, DFlash 2, DSpark, Muse Glimmer, Laguna), EAGLE-3 heads "
            "and NextN checkpoints, not this method yet",
            hint=f"supported draft formats: {_supported()}",
        )
        err.method = other.name
        raise err
    kind = config.get("speculators_model_type")
    if kind is not None:
        raise NotADraftError(
            f"{where}: speculators_model_type is {describe(kind)}; only "
            f"{', '.join(map(repr, speculators.METHODS))} (DFlash family) and "
            f"{eagle3.SPECULATORS_TYPE!r} are supported",
            hint=f"supported draft formats: {_supported()}",
        )
    registered = _registered_drafts(architectures)
    if registered:
        raise NotADraftError(
            f"{where}: draft architecture {registered}; this version does not check that "
            "draft's configuration yet, so no verdict is given",
            hint=f"supported draft formats: {_supported()}",
        )
    looks_like_target = top.has("num_hidden_layers") and not top.has("dflash_config")
    known = sorted({a for f in FORMATS for a in f.architectures})
    raise NotADraftError(
        f"{where}: not a DFlash draft or EAGLE-3 head (field 'architectures' is {shown}; expected "
        f"one of {', '.join(known)}, an EAGLE-3 architecture, or "
        "speculators_model_type dflash / eagle3)",
        hint="the arguments are DRAFT then TARGET: did you swap them?"
        if looks_like_target
        else f"supported draft formats: {_supported()}",
    )
