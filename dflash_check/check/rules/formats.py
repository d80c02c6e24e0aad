"""Rules of the DSpark and Laguna draft formats: what their engines' loaders require of the
config (Markov head, mask keys, reduced vocabulary, Laguna's layer kinds and vocabulary, and the
MoE layers vLLM builds a Laguna draft with)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from dflash_check.check.formats import dspark, format_named
from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    Issue,
    PairContext,
    Rule,
    rule,
)
from dflash_check.knowledge.config_classes import (
    LAGUNA_DEFAULTS_SOURCE,
    MLP_KEYS,
    laguna_mlp_as_loaded,
)
from dflash_check.knowledge.engines import SGLANG, VLLM, VLLM_RUNNERS, handling
from dflash_check.knowledge.runtimes import PROFILES_BY_NAME
from dflash_check.views import DFlashFacts, DraftView

if TYPE_CHECKING:
    from dflash_check.method_facets import DSparkFacts

MlpStated = tuple[tuple[str, str], ...]
"""(key, JSON text) of a config's ``mlp_layer_types`` and ``num_experts`` (``views``)."""


def _loading(ctx: PairContext, runtimes: tuple[str, ...]) -> Iterator[str]:
    """Yield the selected runtimes among ``runtimes`` that load the draft's architecture (the
    others fail DF016 instead)."""
    d = ctx.draft
    fmt = format_named(d.format)
    for p in ctx.profiles:
        if p.name in runtimes and fmt.loads(p.name, d, p.release):
            yield p.name


# SGLang 0.5.23 srt/speculative/dspark_components/dspark_config.py:271-275.
DSPARK_HEAD_TYPES = ("vanilla", "gated", "rnn")
# The top-level key each vLLM DSpark model class reads the Markov rank from, as an attribute
# (AttributeError at load without it): qwen3_dspark.py:209-216, gemma4_dspark.py:190,
# kimi_k3/nvidia/dspark_mla.py:191, muse_spark/common/dspark.py read markov_rank;
# deepseek_v4/nvidia/dspark.py:172 and deepseek_v41 read dspark_markov_rank (vLLM 4ba787ec).
# MiniMax's (vllm==0.34.0): its class is Qwen3's (minimax_m3/common/dspark.py:308, :413; the rank
# read at qwen3_dspark.py:213), but the config override first swaps in text_config when there
# is one and sets markov_rank from dspark_markov_rank (config/speculative.py:1234-1250).
VLLM_MARKOV_KEY = {
    "DSparkMiniMaxDraftModel": "dspark_markov_rank",
    "Qwen3DSparkModel": "markov_rank",
    "Qwen3OmniDSparkModel": "markov_rank",
    "Gemma4DSparkModel": "markov_rank",
    "K3DSparkModel": "markov_rank",
    "MuseSparkDSparkModel": "markov_rank",
    "DSparkDraftModel": "dspark_markov_rank",
    "DSparkV41DraftModel": "dspark_markov_rank",
}
# vLLM serves DSparkDraftModel with a qwen3 model_type as Qwen3DSparkModel
# (config/speculative.py:1535-1542).
VLLM_QWEN3_MODEL_TYPE = "qwen3"


def _vllm_dspark_class(d: DraftView) -> str | None:
    """Return the vLLM DSpark architecture that serves the draft, if any."""
    for a in d.architectures:
        if a == "DSparkDraftModel" and d.model_type == VLLM_QWEN3_MODEL_TYPE:
            return "Qwen3DSparkModel"
        if a in VLLM_MARKOV_KEY:
            return a
    return None


@rule(
    "DF025",
    "dspark-markov-head",
    Severity.ERROR,
    "A DSpark draft's Markov head is missing or of a kind the engine does not build",
    "DSpark adds a sequential Markov head (rank markov_rank, kind markov_head_type) to the "
    "DFlash backbone. SGLang reads the rank from dspark_markov_rank, dspark_config, "
    "dflash_config, text_config or the top level and refuses 0 ('DSpark draft requires "
    "markov_rank > 0'), needs markov_head_type unless the draft uses the prefixed dspark_* keys, "
    "and builds only vanilla, gated and rnn heads (dspark_config.py:94-98, :265-275). vLLM's "
    "model classes read the rank as a top-level attribute, markov_rank (Qwen3, Gemma 4, K3, "
    "Muse Spark) or dspark_markov_rank (DeepSeek-V4; MiniMax in its text_config when it has "
    "one, vllm==0.34.0 config/speculative.py:1234-1250), and fail at load without it; its "
    "Qwen3-Omni DSpark takes only a vanilla head (config/speculative.py:312-317). SpecForge's "
    "training configs keep the Markov keys nested (dflash-check docs engine-reading/others).",
    "Publish the Markov keys where the engine reads them: a top-level markov_rank (> 0) and "
    "markov_head_type as trained (dspark_markov_rank for DeepSeek-V4 drafts).",
    runtimes=(VLLM.name, SGLANG.name),
)
def check_dspark_markov(ctx: PairContext) -> Iterator[Issue]:
    """Check the Markov head the way SGLang parses it and vLLM's model classes read it."""
    d, f, k = ctx.draft, ctx.draft.dflash, ctx.draft.dspark
    if f is None or k is None:
        return
    # Each engine's own checks of the head, by the engine whose code they were read in.
    by_engine: dict[str, Callable[[], Iterator[Issue]]] = {
        VLLM.name: lambda: _vllm_markov(d, k),
        SGLANG.name: lambda: _sglang_markov(d, f, k),
    }
    for name in _loading(ctx, tuple(by_engine)):
        yield from by_engine[name]()


def _sglang_markov(d: DraftView, f: DFlashFacts, k: DSparkFacts) -> Iterator[Issue]:
    """SGLang's checks (dspark_config.py:94-98, :265-275)."""
    rank = k.markov_rank or 0
    where = k.markov_rank_key or "markov_rank"
    if rank <= 0:
        yield Issue(
            f"draft {d.name} (DSpark): {where} is {rank if k.markov_rank_key else 'not set'}; "
            f"sglang refuses it at load ('DSpark draft requires markov_rank > 0; got "
            f"markov_rank={rank}.')",
            runtime=SGLANG.name,
            field=where,
        )
        return
    # A MiniMax draft read at its text_config names its keys from the top (text_config.…).
    prefixed = (
        d.rootless(d.layer_ids_key) == "dspark_target_layer_ids"
        or d.rootless(f.mask_token_key) == "dspark_noise_token_id"
        or d.rootless(f.block_size_key) == "dspark_block_size"
        or "dspark_markov_rank" in {d.rootless(key) for key in k.markov_rank_keys}
    )
    if k.markov_head_type is None and not prefixed:
        yield Issue(
            f"draft {d.name} (DSpark) has {where} {rank} but no markov_head_type; sglang refuses "
            "it at load ('DSpark requires markov_head_type when markov_rank > 0, got None.')",
            runtime=SGLANG.name,
            field="markov_head_type",
        )
    elif k.markov_head_type is not None and k.markov_head_type.lower() not in DSPARK_HEAD_TYPES:
        yield Issue(
            f"draft {d.name} (DSpark): {k.markov_head_type_key} is {k.markov_head_type!r}; sglang "
            f"builds only {', '.join(DSPARK_HEAD_TYPES)} heads ('Unsupported DSpark "
            f"markov_head_type={k.markov_head_type!r}.')",
            runtime=SGLANG.name,
            field=k.markov_head_type_key,
        )


def _where(key: str) -> str:
    """Say where a dotted key sits (``top-level markov_rank``, ``text_config.…``)."""
    return key if "." in key else f"top-level {key}"


def _vllm_markov(d: DraftView, k: DSparkFacts) -> Iterator[Issue]:
    """vLLM's model classes (qwen3_dspark.py:209-216, deepseek_v4/nvidia/dspark.py:172,
    config/speculative.py:312-317)."""
    arch = _vllm_dspark_class(d)
    if arch is None:
        return
    key = VLLM_MARKOV_KEY[arch]
    if arch in dspark.TEXT_ROOT_ARCHITECTURES:
        key = d.key(key)  # its text_config where it has one (config_root), else the top level
    if key not in k.markov_rank_keys:
        keys = k.markov_rank_keys
        found = f"only in {', '.join(keys)}" if keys else "nowhere"
        yield Issue(
            f"draft {d.name} (DSpark): vllm's {arch} reads {_where(key)}, but the config "
            f"states a Markov rank {found}; it fails at load (AttributeError)",
            runtime=VLLM.name,
            field=key,
        )
    if arch == "Qwen3OmniDSparkModel" and (k.markov_head_type or "").lower() != "vanilla":
        yield Issue(
            f"draft {d.name} (DSpark): vllm refuses a Qwen3-Omni DSpark head that is not vanilla "
            f"('Qwen3-Omni DSpark currently requires markov_head_type='vanilla'; got "
            f"{k.markov_head_type!r}.')",
            runtime=VLLM.name,
            field=k.markov_head_type_key or "markov_head_type",
        )


# The order in which each engine takes a DSpark mask token id from the keys it reads (dotted
# paths as in DraftView.mask_sources): SGLang's is the order the normaliser reads them in;
# vLLM's is its runtime row's mask keys (spec_decode/utils.py:92-114: dflash_config, top
# level, then dspark_noise_token_id), restricted to DSpark's.
DSPARK_MASK_ORDER: dict[str, tuple[str, ...]] = {
    VLLM.name: tuple(k for k in PROFILES_BY_NAME[VLLM.name].mask_keys if k in dspark.MASK_KEYS),
    SGLANG.name: dspark.MASK_KEYS,
}


def _mask_order(name: str, d: DraftView) -> tuple[str, ...]:
    """Return the keys engine ``name`` takes a DSpark mask id from, named from the top: for a
    draft read at its text_config, the same keys there, after (SGLang only) the top-level
    dspark_noise_token_id it copies onto it (dspark.TEXT_ROOT_ARCHITECTURES says where)."""
    order = DSPARK_MASK_ORDER[name]
    if not d.config_root:
        return order
    copied = ("dspark_noise_token_id",) if handling(name).copies_dspark_noise else ()
    return (*copied, *(d.key(k) for k in order))


@rule(
    "DF026",
    "dspark-mask-keys",
    Severity.WARNING,
    "A DSpark draft states different mask token ids that engines take in different orders",
    "DSpark fills its draft block with a noise (mask) token. vLLM takes dflash_config."
    "mask_token_id, then mask_token_id, then dspark_noise_token_id (spec_decode/utils.py:"
    "92-114); SGLang takes dspark_noise_token_id first, then the nested and top-level "
    "mask_token_id (dspark_config.py:277-288). When they hold different ids, one engine "
    "embeds a token the draft was not trained with: nothing fails, acceptance drops. A "
    "missing or out-of-vocabulary mask is DF008 (SGLang has no tokenizer fallback for DSpark).",
    "Keep one mask token id: the same value under every key the draft states.",
    runtimes=tuple(DSPARK_MASK_ORDER),
)
def check_dspark_mask_keys(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per engine, a mask id that differs from another engine's pick."""
    d, k = ctx.draft, ctx.draft.dspark
    if k is None:
        return
    stated = dict(k.mask_sources)
    if len(set(stated.values())) < 2:
        return
    fmt = format_named(d.format)
    # The release a selected runtime pins for its engine; the others at their newest.
    pinned = {p.name: p.release for p in ctx.profiles}
    # Judged over every engine that loads the draft, selected or not: the draft was trained with
    # one mask, so keys that disagree put a wrong mask into one of them.
    picks = {
        name: pick
        for name in DSPARK_MASK_ORDER
        if fmt.loads(name, d, pinned.get(name))
        and (pick := next(((k, stated[k]) for k in _mask_order(name, d) if k in stated), None))
        is not None
    }
    if len(set(picks.values())) < 2:
        return
    shown = ", ".join(f"{k} = {v}" for k, v in stated.items())
    told = "; ".join(f"{n} feeds {key} = {value}" for n, (key, value) in picks.items())
    for name in _loading(ctx, tuple(picks)):
        yield Issue(
            f"draft {d.name} (DSpark) states mask ids {shown}: {told}",
            runtime=name,
            field=picks[name][0],
        )


# vLLM's Qwen3 DSpark (qwen3_dspark.py:340-357) serves DSparkDraftModel with a qwen3 model type
# and the Qwen3 architectures.
_QWEN3_DSPARK = ("Qwen3DSparkModel", "Qwen3OmniDSparkModel")


@rule(
    "DF027",
    "dspark-reduced-vocab",
    Severity.ERROR,
    "A reduced-vocabulary Qwen3 DSpark draft does not ship its own lm_head",
    "A DSpark draft with draft_vocab_size below vocab_size samples from its own reduced "
    "vocabulary, so it cannot share the target's LM head. vLLM's Qwen3 DSpark refuses it at load: "
    "'Reduced-vocabulary Qwen3 DSpark checkpoints must include lm_head weights; the full target "
    "lm_head cannot be shared.' (qwen3_dspark.py:340-357). The d2t map it also needs is DF007's.",
    "Publish the draft's lm_head.weight (draft_vocab_size rows) with its d2t map, or train with "
    "the full vocabulary.",
    runtimes=(VLLM.name,),
)
def check_dspark_reduced_vocab(ctx: PairContext) -> Iterator[Issue]:
    """Require lm_head in the header of a reduced-vocabulary Qwen3 DSpark draft (vLLM)."""
    d = ctx.draft
    reduced = d.draft_vocab_size
    if (
        d.dspark is None
        or _vllm_dspark_class(d) not in _QWEN3_DSPARK
        or reduced is None
        or d.vocab_size is None
        or reduced >= d.vocab_size
        or not d.has_safetensors  # without a header there is nothing to look in (DF010)
        or d.has_lm_head
    ):
        return
    for name in _loading(ctx, (VLLM.name,)):
        yield Issue(
            f"draft {d.name} (DSpark): draft_vocab_size {reduced} < vocab_size {d.vocab_size}, but "
            "the safetensors header has no lm_head.weight; vllm refuses it at load",
            runtime=name,
            field="draft_vocab_size",
        )


@rule(
    "DF028",
    "laguna-config",
    Severity.ERROR,
    "A Laguna DFlash draft lacks the keys its loader requires",
    "vLLM's DFlashLagunaForCausalLM reads the ids only from dflash_config.target_layer_ids "
    "('Laguna DFlash config requires non-empty `dflash_config.target_layer_ids`.'), needs "
    "layer_types with one uniform entry per draft layer ('Laguna DFlash config requires "
    "`layer_types`.', 'DFlash layer_types length … does not match num_hidden_layers …', "
    "'Laguna DFlash drafter requires a uniform `layer_types`'), and, since it shares the "
    "target's LM head, a draft_vocab_size equal to the target's vocabulary ('Laguna DFlash "
    "config requires `draft_vocab_size`.', '… requires `draft_vocab_size` to match the target "
    "vocabulary size') (laguna_dflash.py:44-60, :78-83, :238-258). SGLang's DFlash loader "
    "needs one layer_types entry per draft layer too (models/dflash.py:171-176).",
    "Publish the Laguna draft's config as trained: ids in dflash_config, layer_types for every "
    "draft layer, and draft_vocab_size equal to the target's vocab_size.",
    runtimes=(*VLLM_RUNNERS, SGLANG.name),
)
def check_laguna_config(ctx: PairContext) -> Iterator[Issue]:
    """Check what vLLM's and SGLang's Laguna DFlash loaders require of the config."""
    d, t = ctx.draft, ctx.target
    if d.format != "laguna":
        return
    # Both vLLM runners build the Laguna drafter with the same model class (laguna_dflash.py).
    loading = set(_loading(ctx, (*VLLM_RUNNERS, SGLANG.name)))

    def each(runtimes: tuple[str, ...], message: str, key: str) -> Iterator[Issue]:
        for name in runtimes:
            if name in loading:
                yield Issue(f"{message} ({name} refuses it at load)", runtime=name, field=key)

    nested = "dflash_config.target_layer_ids"
    if d.layer_ids_key != nested:
        state = f"has them only in {d.layer_ids_key}" if d.layer_ids_key else "has none"
        yield from each(
            VLLM_RUNNERS,
            f"draft {d.name} (Laguna DFlash) reads ids only from {nested}, and {state}",
            nested,
        )
    types, layers = d.layer_types, d.num_hidden_layers
    if types is None:
        yield from each(
            VLLM_RUNNERS, f"draft {d.name} (Laguna DFlash) has no layer_types", "layer_types"
        )
    else:
        if layers is not None and len(types) != layers:
            yield from each(
                (*VLLM_RUNNERS, SGLANG.name) if len(types) < layers else VLLM_RUNNERS,
                f"draft {d.name} (Laguna DFlash): layer_types has {len(types)} entries for "
                f"num_hidden_layers {layers}",
                "layer_types",
            )
        if len(set(types)) > 1:
            yield from each(
                VLLM_RUNNERS,
                f"draft {d.name} (Laguna DFlash): layer_types mixes "
                f"{', '.join(sorted(set(types)))}; "
                "the drafter requires one kind for every layer",
                "layer_types",
            )
    if d.draft_vocab_size is None:
        yield from each(
            VLLM_RUNNERS,
            f"draft {d.name} (Laguna DFlash) has no draft_vocab_size",
            "draft_vocab_size",
        )
    elif d.draft_vocab_size != t.vocab_size:
        tkey = t.key("vocab_size")
        yield from each(
            VLLM_RUNNERS,
            f"draft {d.name} (Laguna DFlash): draft_vocab_size {d.draft_vocab_size} != target "
            f"{t.name} {tkey} {t.vocab_size}; the drafter shares the target's LM head",
            "draft_vocab_size",
        )


def _vllm_moe_layers(model_type: str | None, layers: int | None, mlp: MlpStated) -> set[int]:
    """Return the layer indices vLLM's ``LagunaDecoderLayer`` builds as MoE: ``mlp_layer_types``
    says ``sparse`` and ``num_experts`` > 0 (laguna.py:519-521 in 0.32.0, :517-519 in 0.33.0
    and 0.34.0), as ``LagunaConfig`` hands them over; none where it does not load the config."""
    loaded = laguna_mlp_as_loaded(model_type, layers, mlp)
    if loaded is None:
        return set()
    types, experts = loaded
    return {i for i, kind in enumerate(types) if kind == "sparse" and experts > 0}


@rule(
    "DF093",
    "laguna-moe-names",
    Severity.ERROR,
    "vLLM builds a Laguna DFlash draft's layers as MoE under names the target's MoE layers hold",
    "vLLM builds each Laguna DFlash draft layer with the target's LagunaDecoderLayer, which "
    "is MoE where mlp_layer_types[i] is 'sparse' and num_experts > 0 (laguna.py:519-521 in "
    "0.32.0, :517-519 in 0.33.0 and 0.34.0), and transformers' LagunaConfig fills in an "
    f"unstated mlp_layer_types and num_experts ({LAGUNA_DEFAULTS_SOURCE}). The drafter names "
    "layer i layers.{i}, offsetting only its attention past the target's layers "
    "(laguna_dflash.py:105-114 in 0.32.0 and 0.33.0, :111-120 in 0.34.0), so a sparse draft "
    "layer registers its experts as model.layers.{i}.mlp.experts, the name the target's layer "
    "i holds when it is sparse too. Both runners build the draft in a replace() of the "
    "target's config, which keeps its compilation config and so its forward context (V2: "
    "v1/worker/gpu/spec_decode/dflash/utils.py:26-47 in 0.32.0 to 0.34.0; V1 in 0.32.0 and "
    "0.33.0: v1/spec_decode/llm_base_proposer.py:1304-1312 (:1303-1311 in 0.33.0) and "
    "dflash.py:91-104; config/utils.py:121-129 in 0.32.0 and 0.33.0, :122-130 in 0.34.0), "
    "and the second registration is refused at load: 'Duplicate "
    "layer name: model.layers.1.mlp.experts' (fused_moe/runner/moe_runner.py:66-67 in 0.32.0 "
    "and 0.33.0, :71-72 in 0.34.0; the oracle's laguna-dflash case on all three). SGLang's "
    "Laguna DFlash class builds every layer with a dense MLP (sglang==0.5.23: "
    "srt/models/dflash.py:620-623, :1053-1060).",
    "Publish the draft's MLP layout as trained: mlp_layer_types for every draft layer (all "
    "'dense' for a dense drafter) and num_experts, so that LagunaConfig fills in no MoE layers.",
    runtimes=VLLM_RUNNERS,
)
def check_laguna_moe_names(ctx: PairContext) -> Iterator[Issue]:
    """Flag the draft layers vLLM builds as MoE where the target's same layer is MoE too."""
    d, t = ctx.draft, ctx.target
    if d.format != "laguna":
        return
    both = sorted(
        _vllm_moe_layers(d.model_type, d.num_hidden_layers, d.mlp)
        & _vllm_moe_layers(t.model_type, t.num_hidden_layers, t.mlp)
    )
    if not both:
        return
    stated = dict(d.mlp)
    told = " and ".join(f"{k} {v}" for k, v in stated.items())
    missing = " or ".join(k for k in MLP_KEYS if k not in stated)
    if missing:
        told = f"{told} and no {missing}" if told else f"no {missing}"
        told += ", which LagunaConfig fills in (first layer dense, the rest sparse; 256 experts)"
    first = both[0]
    for name in _loading(ctx, VLLM_RUNNERS):
        yield Issue(
            f"draft {d.name} (Laguna DFlash) states {told}: vllm builds its "
            f"layer{'s' if len(both) > 1 else ''} {_spans(both)} as MoE, as target {t.name} "
            "builds its own, under the same names, and refuses it at load ('Duplicate layer "
            f"name: model.layers.{first}.mlp.experts')",
            runtime=name,
            field="mlp_layer_types",
        )


def _spans(indices: list[int]) -> str:
    """Say sorted indices as ranges (``1-5``, ``1, 3-4``)."""
    out: list[str] = []
    start = prev = indices[0]
    for i in (*indices[1:], None):
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)


RULES: tuple[Rule, ...] = (
    check_dspark_markov,
    check_dspark_mask_keys,
    check_dspark_reduced_vocab,
    check_laguna_config,
    check_laguna_moe_names,
)
