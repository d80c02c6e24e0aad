"""Rules about the draft's own layers: what each loader requires of the draft's architecture.

These are load-time checks the engines run on the draft alone (its attention layer kinds and
window), registered into the same rule table as the pair rules. Keys a loader merely indexes are
left alone: hand-trimmed configs omit them, and their absence is a malformed config, not a
pairing problem.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, rule
from dflash_check.knowledge.engines import MLX, REFERENCE, VLLM, VLLM_033, VLLM_RUNNERS, VLLM_V1

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
_NO_WINDOW = {
    MLX.name: "Draft config must define sliding_window for sliding_attention layers.",
    VLLM.name: _VLLM_NO_WINDOW,  # the draft model class, the same under both runners
    VLLM_V1: _VLLM_NO_WINDOW,
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
    "The draft's own layer configuration is one a runtime refuses at load",
    "Loaders check the draft's architecture before any pair check: the MLX reference "
    "requires layer_types to have one known kind per layer "
    "and a sliding_window for sliding layers (z-lab/dflash@07ebd93d:dflash/model_mlx.py:"
    "430-470); the transformers reference indexes layer_types per layer (model.py:363-367) "
    "and without a window runs sliding layers as full attention, unlike training; vLLM needs "
    "a window for sliding layers and its V1 runner refuses drafts mixing sliding and full "
    f"layers ({V033}:vllm/model_executor/models/qwen3_dflash.py:127-154).",
    "Publish the draft's config as trained: one layer_types entry per draft layer, and the "
    "sliding_window its sliding layers were trained with.",
    runtimes=(REFERENCE.name, *VLLM_RUNNERS, MLX.name),
)
def check_draft_layers(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, layer kinds, windows and keys the runtime's loader rejects."""
    d = ctx.draft

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
    if "sliding_attention" in kinds and d.sliding_window is None:
        no_window = _NO_WINDOW
        if OWN_WINDOW & set(d.architectures):
            no_window = {k: v for k, v in _NO_WINDOW.items() if k not in VLLM_RUNNERS}
        yield from each(
            no_window,
            "layer_types has sliding_attention layers but no sliding_window",
            "layer_types",
        )
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


RULES: tuple[Rule, ...] = (check_draft_layers,)
