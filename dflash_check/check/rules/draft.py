"""Rules about the draft's own config: what each loader requires of the draft's architecture.

These are load-time checks the engines run on the draft alone (its attention layer kinds and
window, vLLM XPress's top-C), registered into the same rule table as the pair rules. Keys a
loader merely indexes are left alone: hand-trimmed configs omit them, and their absence is a
malformed config, not a pairing problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, rule
from dflash_check.knowledge.config_classes import WINDOW_NEEDS_FLAG_SOURCE
from dflash_check.knowledge.engines import (
    MLX,
    REFERENCE,
    SGLANG,
    VLLM,
    VLLM_033,
    VLLM_RUNNERS,
    VLLM_V1,
)
from dflash_check.knowledge.engines.vllm import XPRESS_ARCHITECTURES
from dflash_check.knowledge.outcomes import Stage
from dflash_check.views import DraftView

V033 = VLLM_033.source
"""vLLM 0.33.0, where the vLLM lines cited here were read."""

LAYER_KINDS = ("full_attention", "sliding_attention")

# Who rejects each defect at load, and with which message (cited in DF050's why).
_UNKNOWN_KIND = {MLX.name: "Unsupported draft layer_types: …"}
_LENGTH = {
    MLX.name: "Draft config layer_types length must match num_hidden_layers.",
    REFERENCE.name: "IndexError building the draft's layers (layer_types[layer_idx])",
}
_VLLM_NO_WINDOW = (
    "DFlash sliding attention requires a window size configured in "
    "dflash_config.swa_window_size or the top-level sliding_window."
)
_MLX_NO_WINDOW = {
    MLX.name: "Draft config must define sliding_window for sliding_attention layers.",
}
"""Who refuses sliding layers without a window whatever the draft's class."""
_NO_WINDOW = {
    **_MLX_NO_WINDOW,
    VLLM.name: _VLLM_NO_WINDOW,  # the draft model class, the same under both runners
    VLLM_V1: _VLLM_NO_WINDOW,
    # sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:400-414, when the draft is built.
    SGLANG.name: "DFLASH sliding_attention layers require config.sliding_window.",
}
OWN_WINDOW = frozenset({"MuseSparkDSparkModel"})
"""Drafts whose vLLM model class is not the DFlash one that asks for ``sliding_window``: Muse
Spark DSpark takes its attention windows from ``global_attn_cfg``
(vllm==0.34.0:vllm/transformers_utils/configs/muse_spark.py:118-235, read by
vllm/models/muse_spark/common/dspark.py), and vLLM's own tests build it with sliding layers and
no ``sliding_window`` (tests/transformers_utils/test_muse_spark_config.py, ``_dspark_config``)."""
_MIXED = {
    VLLM_V1: "DFlash drafters with mixed sliding/full attention require the V2 model runner; "
    "relaunch with VLLM_USE_V2_MODEL_RUNNER=1.",
}


@rule(
    "DF050",
    "draft-layers",
    Severity.ERROR,
    "The draft's own layer or refiner configuration is one a runtime refuses at load",
    "Loaders check the draft's architecture before any pair check: the MLX reference "
    "requires layer_types to have one known kind per layer "
    "and a sliding_window for sliding layers (z-lab/dflash@07ebd93d:dflash/model_mlx.py:"
    "430-470); the transformers reference indexes layer_types per layer (model.py:363-367) "
    "and without a window runs sliding layers as full attention, unlike training; vLLM needs "
    "a window for sliding layers and its V1 runner refuses drafts mixing sliding and full "
    f"layers ({V033}:vllm/model_executor/models/qwen3_dflash.py:127-154), as SGLang does "
    "(sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:400-414); both load the draft's "
    "config through transformers' class for its model_type, and the Qwen2/Qwen3 classes keep "
    "a stated sliding_window only with use_sliding_window true "
    f"({WINDOW_NEEDS_FLAG_SOURCE}). vLLM's XPress "
    "refiner (0.33.0, 0.34.0) scores each Jacobi pass on the drafter's top-C candidates and "
    "refuses a draft xpress_topc outside 0 .. the draft vocabulary (draft_vocab_size, else "
    "vocab_size) when the speculative config resolves: 'xpress_topc must be between 0 and the "
    "draft vocabulary size' (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/xpress/config.py:"
    "21-28; vllm==0.33.0:vllm/config/speculative.py:1623-1638).",
    "Publish the draft's config as trained: one layer_types entry per draft layer, and the "
    "sliding_window its sliding layers were trained with (with use_sliding_window: true for "
    "a Qwen2/Qwen3 model_type).",
    runtimes=(REFERENCE.name, *VLLM_RUNNERS, SGLANG.name, MLX.name),
)
def check_draft_layers(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, layer kinds, windows and keys the runtime's loader rejects."""
    d = ctx.draft
    yield from _xpress_topc(ctx)

    def each(rejects: dict[str, str], problem: str, key: str) -> Iterator[Issue]:
        for name, message in rejects.items():
            yield Issue(f"draft {d.name}: {problem}; {name}: '{message}'", runtime=name, field=key)

    kinds = d.layer_types
    if kinds is None:
        return  # every loader then assumes full attention in every layer
    unknown = sorted(set(kinds) - set(LAYER_KINDS))
    if unknown:
        yield from each(_UNKNOWN_KIND, f"layer_types has {', '.join(unknown)}", "layer_types")
    if d.num_hidden_layers is not None and len(kinds) != d.num_hidden_layers:
        rejects = (
            dict(_LENGTH) if len(kinds) < d.num_hidden_layers else {MLX.name: _LENGTH[MLX.name]}
        )
        yield from each(
            rejects,
            f"layer_types has {len(kinds)} entries for {d.num_hidden_layers} draft layers "
            "(num_hidden_layers)",
            "layer_types",
        )
    if "sliding_attention" in kinds:
        yield from _no_window(ctx, each)
    if "sliding_attention" in kinds and d.sliding_window is None:
        yield Issue(
            f"draft {d.name}: sliding_attention layers without a sliding_window; the "
            "reference then attends over the whole context in them, unlike a window-trained "
            "draft",
            runtime=REFERENCE.name,
            severity=Severity.WARNING,
            field="sliding_window",
        )
    if "sliding_attention" in kinds and "full_attention" in kinds:
        yield from each(_MIXED, "layer_types mixes sliding and full attention", "layer_types")


def _stated(d: DraftView) -> int | None:
    """MLX reads the JSON as it is."""
    return d.sliding_window


def _swa_then_loaded(d: DraftView) -> int | None:
    """vLLM: ``dflash_config.swa_window_size``, else ``config.sliding_window`` of the config as
    transformers' class loaded it (vllm==0.34.0:vllm/model_executor/models/qwen3_dflash.py:
    176-184)."""
    return d.swa_window_size if d.swa_window_size is not None else d.loaded_window


def _loaded_then_swa(d: DraftView) -> int | None:
    """SGLang: the loaded ``sliding_window`` (dflash_utils.py:400-414), and ``swa_window_size``
    only for the Nemotron 3.5 layout (:461-497), which is not modelled: a stated
    ``swa_window_size`` counts, so that no refusal is claimed that the engine may not make."""
    return d.loaded_window if d.loaded_window is not None else d.swa_window_size


_WINDOW_READ: dict[str, Callable[[DraftView], int | None]] = {
    MLX.name: _stated,
    VLLM.name: _swa_then_loaded,
    VLLM_V1: _swa_then_loaded,
    SGLANG.name: _loaded_then_swa,
}
"""Where each loader that refuses sliding layers without a window (``_NO_WINDOW``) finds it."""


def _no_window(ctx: PairContext, each: Callable[..., Iterator[Issue]]) -> Iterator[Issue]:
    """Yield, per loader, its refusal of sliding layers it finds no window for; a window the
    config states that transformers' class drops (no ``use_sliding_window: true``) is named."""
    d = ctx.draft
    # vLLM's class for an OWN_WINDOW draft takes its windows elsewhere: not refused there.
    loaders = _MLX_NO_WINDOW if OWN_WINDOW & set(d.architectures) else _NO_WINDOW
    refusing = {name: message for name, message in loaders.items() if _WINDOW_READ[name](d) is None}
    if not refusing:
        return
    if d.sliding_window is None:
        problem = "layer_types has sliding_attention layers but no sliding_window"
    else:
        problem = (
            f"layer_types has sliding_attention layers and sliding_window {d.sliding_window}, "
            "which transformers' Qwen2/Qwen3 config classes drop without "
            "use_sliding_window set to true (the engine loads the config through them)"
        )
    yield from each(refusing, problem, "layer_types")


def _xpress_topc(ctx: PairContext) -> Iterator[Issue]:
    """Yield, per vLLM runtime whose release has an XPress class, its refusal of an XPress
    draft's xpress_topc outside 0 .. the draft vocabulary (the check runs while the speculative
    config resolves, before a runner is chosen: 0.33's V1 reaches it too)."""
    d, f = ctx.draft, ctx.draft.dflash
    stated = dict(f.xpress) if f is not None else {}
    if not XPRESS_ARCHITECTURES.intersection(d.architectures) or "xpress_topc" not in stated:
        return
    topc = json.loads(stated["xpress_topc"])
    # getattr(hf_config, "draft_vocab_size", None) or hf_config.vocab_size: a 0 falls through.
    vocab = d.draft_vocab_size or d.vocab_size
    if topc is None or isinstance(topc, bool):
        return  # None: no narrowing asked; a bool compares as 0 or 1, which passes
    if isinstance(topc, (int, float)):
        if vocab is None or 0 <= topc <= vocab:
            return  # in range, or no vocabulary to bound it (DF007 says it is unstated)
        problem = f"xpress_topc {stated['xpress_topc']} is outside 0 .. {vocab}"
        said = f"'xpress_topc must be between 0 and the draft vocabulary size ({vocab})'"
    else:
        # A string or a list: Python's chained comparison with an int raises TypeError.
        problem = f"xpress_topc {stated['xpress_topc']} is not a number"
        said = "TypeError comparing it with 0"
    for p in ctx.profiles:
        xpress = p.release.xpress if p.release is not None else None
        if xpress is None:
            # No XPress class in the release (of any engine but vLLM 0.33 and later): DF016
            # refuses the draft. vLLM's config check runs under both its runners.
            continue
        yield Issue(
            f"draft {d.name} (XPress): {problem}; {p.label} refuses it at load: {said} "
            f"({xpress.topc_range})",
            runtime=p.name,
            field="xpress_topc",
            stage=Stage.LOAD,
            hint="State xpress_topc as trained, between 0 (score the full vocabulary) and the "
            "draft vocabulary size, or leave it out; a speculative config's xpress_topc "
            "overrides the draft's.",
        )


RULES: tuple[Rule, ...] = (check_draft_layers,)
