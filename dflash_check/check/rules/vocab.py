"""Rules about the vocabulary both models index: its size and the tokenizer (DF007, DF015)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    ALL_METHODS,
    Issue,
    PairContext,
    Rule,
    per_runtime,
    rule,
)
from dflash_check.check.rules.omni_dspark import vocabulary_by_contract
from dflash_check.knowledge.engines import handling
from dflash_check.knowledge.engines.vllm import XPRESS_ARCHITECTURES
from dflash_check.knowledge.outcomes import Stage

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


def _tensors_decide(ctx: PairContext) -> frozenset[str]:
    """Return the runtimes that take the vocabulary from the draft's tensors, not its config,
    when the header shows a vocabulary tensor of the target's size: llama.cpp's converter
    writes the GGUF from the tensors, and a draft whose config alone declares another
    vocabulary ran exactly like the right pair on 0c1e57098 (issue 29's runs; the engine says
    so, ``DraftHandling.vocab_from_tensors``). Without such a tensor nothing shows the
    vocabularies agree (a draft trained on another tokenizer borrows the target's head and
    collapses silently), so DF007 stands."""
    d, t = ctx.draft, ctx.target
    if d.dflash2 is not None or d.vocab_tensor is None or d.vocab_tensor[1] != t.vocab_size:
        return frozenset()
    return frozenset(p.name for p in ctx.profiles if handling(p.engine_name).vocab_from_tensors)


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
    if d.dflash2 is not None:
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


# vLLM's XPress refiner scores its Jacobi passes over the target vocabulary, so the class
# raises when it is built for any other draft vocabulary, padding included (Release.
# xpress.full_vocab cites it per release).
_XPRESS_REFUSAL = (
    "XPress currently requires a full-vocab draft (the refiner bias is defined over the target "
    "vocabulary)."
)


def _xpress_refusals(ctx: PairContext) -> Iterator[Issue]:
    """Yield vLLM's load-time refusal of an XPress draft whose vocabulary is not the target's,
    on each selected release whose XPress class has it."""
    d, t = ctx.draft, ctx.target
    if not XPRESS_ARCHITECTURES.intersection(d.architectures):
        return
    # The class takes draft_vocab_size when the config states it, else vocab_size
    # (qwen3_xpress.py:297-298), and compares it with the target's (get_vocab_size()).
    if d.draft_vocab_size is not None:
        key, drafted = "draft_vocab_size", d.draft_vocab_size
    elif d.vocab_size is not None:
        key, drafted = "vocab_size (no draft_vocab_size)", d.vocab_size
    else:
        return  # no vocab_size: the warning above says it cannot be verified
    if drafted == t.vocab_size:
        return
    for p in ctx.profiles:
        xpress = p.release.xpress if p.release is not None else None
        if xpress is None or not handling(p.engine_name).builds_classes(p.runner):
            # V1 refuses XPress drafts while the config resolves, before the class is built;
            # a release without the class refuses the architecture: DF016 says both.
            continue
        where = xpress.full_vocab
        yield Issue(
            f"draft {d.name} (XPress): {key} {drafted} != target {t.name} "
            f"{t.key('vocab_size')} {t.vocab_size}; {p.label} refuses it at load "
            f"('{_XPRESS_REFUSAL}', {where})",
            runtime=p.name,
            severity=Severity.ERROR,
            field=key.split(" ")[0],
            stage=Stage.LOAD,
            hint="Serve the XPress draft with the target whose full vocabulary it was trained "
            "on; vLLM's XPress class takes no reduced or padded draft vocabulary.",
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
    "vocab_size cannot be verified (warning). vLLM's XPress drafter (Qwen3XPressModel, "
    "0.33.0 and 0.34.0) refuses at load any draft vocabulary other than the target's, padding "
    "included: 'XPress currently requires a full-vocab draft' (vllm==0.34.0:vllm/model_executor/"
    "models/qwen3_xpress.py:317-322; vllm==0.33.0: :299-304).",
    "Use the target whose tokenizer the draft was trained with.",
)
def check_vocab_size(ctx: PairContext) -> Iterator[Issue]:
    """Compare vocabularies, telling padding from a different tokenizer."""
    d, t = ctx.draft, ctx.target
    tkey = t.key("vocab_size")
    xpress = tuple(_xpress_refusals(ctx))
    yield from xpress
    # Where XPress refuses the pair at load, that is what the runtime does with it.
    refused = frozenset(i.runtime for i in xpress if i.runtime is not None)
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
        issue = Issue(
            f"draft {d.name} vocab_size {d.vocab_size} != target {t.name} {tkey} "
            f"{t.vocab_size}; {because}",
            severity=Severity.INFO if padding else None,
            field="vocab_size",
            hint="Nothing to do: the draft borrows the target's embedding and LM head."
            if padding
            else None,
        )
        # A Qwen3-Omni DSpark draft's own input vocabulary is the contract's to judge (DF055).
        yield from per_runtime(
            ctx, issue, vocabulary_by_contract(ctx) | _tensors_decide(ctx) | refused
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
        if d.dspark is None:
            yield Issue(said, field="draft_vocab_size")
            return
        # Each engine says what it does with a larger DSpark vocabulary (vLLM pads it,
        # SGLang asserts); an engine not read for it gets the plain finding.
        for p in ctx.profiles:
            does = handling(p.engine_name)
            if not does.pads_dspark_vocab:
                yield Issue(
                    said + does.dspark_larger_vocab, runtime=p.name, field="draft_vocab_size"
                )


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


RULES: tuple[Rule, ...] = (
    check_vocab_size,
    check_tokenizer,
)
