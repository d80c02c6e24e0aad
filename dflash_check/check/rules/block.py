"""Rules about the draft block: its size, the draft length an engine runs and the anchor
token it samples from (DF012, DF019, DF021)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    V033,
    Issue,
    PairContext,
    Rule,
    rule,
)
from dflash_check.knowledge.engines import SGLANG, TRTLLM, VLLM, VLLM_RUNNERS, handling
from dflash_check.knowledge.engines.vllm import XPRESS_ARCHITECTURES
from dflash_check.knowledge.outcomes import Stage


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
    d, f = ctx.draft, ctx.draft.dflash
    if f is None:
        return
    least = 1 if d.dspark is not None else 2
    if f.block_size is None:
        yield Issue(
            f"draft {d.name} has no block_size (neither dflash_config.block_size nor top-level); "
            f"the references would assume 16",
            severity=Severity.WARNING,
            field="dflash_config.block_size",
        )
    elif f.block_size < least:
        yield Issue(
            f"draft {d.name}: {f.block_size_key} is {f.block_size}; a block needs at least 2 "
            f"positions (the bonus token and one draft slot)",
            field=f.block_size_key,
        )
    if f.block_size is not None and "block_size" not in f.top_level_keys:
        # dflash-mlx builds its arguments from the top-level keys only: block_size in
        # dflash_config alone is no argument, and the draft fails to load.
        for p in ctx.profiles:
            if "block_size" in p.top_level_only:
                yield Issue(
                    f"draft {d.name} states block_size only in {f.block_size_key}; {p.name} "
                    "reads it at the top level only and fails to load the draft (TypeError: "
                    "… missing 1 required positional argument: 'block_size')",
                    runtime=p.name,
                    field="block_size",
                    hint=f"Add top-level block_size ({f.block_size}) to the draft's config.json.",
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
    "SGLang's --speculative-num-draft-tokens (or --speculative-dflash-block-size) counts the "
    "bonus token and should equal block_size (SGLang refuses the two flags given with different "
    "values for DFLASH at start-up, sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py"
    ":374-384): with another value it starts, warns 'DFLASH "
    "block size mismatch' when the worker loads the draft and drafts that many positions, "
    "neither clamped nor refused (sglang==0.5.23:sglang/srt/speculative/dflash_worker_v2.py"
    ":511-522; the draft adopts it, models/dflash.py:806-817). SGLang's line reads SGLang's own "
    "setting where given (--engine-arg, pairs.yaml engine_args), else N + 1, the value the "
    "launch passes. A DSpark block counts draft tokens only (gamma): SGLang refuses a "
    "--speculative-num-draft-tokens other than gamma + 1 while the server arguments resolve, "
    "gamma being --speculative-dspark-block-size where given, else the draft's "
    "dspark_block_size or block_size (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py"
    ":807-834; speculative/dspark_components/dspark_config.py:214-250), and warns 'DSpark gamma "
    "mismatch' when the worker loads a draft trained with another gamma (dspark_config.py"
    ":100-117, run by dspark_worker_v2.py:261-265); it ignores --speculative-dflash-block-size "
    "for DSpark. Without a setting the rule says nothing.",
    "Serve with block_size - 1 draft tokens (vLLM num_speculative_tokens, TensorRT-LLM "
    "max_draft_len; SGLang --speculative-num-draft-tokens block_size), or fewer.",
    runtimes=(VLLM.name, SGLANG.name, TRTLLM.name),
)
def check_speculative_length(ctx: PairContext) -> Iterator[Issue]:
    """Compare the engine setting the user serves with against the draft's block size."""
    d, f, n = ctx.draft, ctx.draft.dflash, ctx.num_speculative_tokens
    if f is None or f.block_size is None or f.block_size < 2:
        return  # DF012 speaks for a missing or unusable block size
    if d.dspark is not None:
        # DSpark's block size counts draft tokens; vLLM derives N from it, SGLang checks it.
        yield from _sglang_dspark_length(ctx, f.block_size, f.block_size_key)
        return
    block, most = f.block_size, f.block_size - 1
    where = f"draft {d.name} was trained with {f.block_size_key} {block}"
    # Both vLLM runners draft 1 + N positions (dflash/speculator.py:63-64).
    hint = f"Serve with at most {most} draft tokens (--num-speculative-tokens {most})."
    for name in VLLM_RUNNERS if n is not None and n > most else ():
        yield Issue(
            f"{where}: {name} with num_speculative_tokens {n} drafts {1 + n} positions, "
            f"{n - most} past the {block} the draft was trained on (acceptance drops there)",
            runtime=name,
            field=f.block_size_key,
            hint=hint,
        )
    yield from _sglang_length(ctx, where, block, f.block_size_key)
    if n is not None and n > most:
        yield Issue(
            f"{where}: trtllm with max_draft_len {n} fails at the first step: 'DFlash "
            f"checkpoint was trained with block_size={block}.Lower max_draft_len to at most "
            f"{most}.Current max_draft_len={n}.'",
            runtime=TRTLLM.name,
            severity=Severity.ERROR,
            field=f.block_size_key,
            hint=hint,
            # DF019 is a warning elsewhere, so it has no row in the outcome table: TensorRT-LLM
            # raises when the first step sizes its context buffers (_lazy_init_ctx_buffers).
            stage=Stage.FIRST_DECODE,
        )


def _sglang_length(ctx: PairContext, where: str, block: int, key: str | None) -> Iterator[Issue]:
    """SGLang's line: its own --speculative-num-draft-tokens where given, which wins over what
    --num-speculative-tokens implies (an engine argument comes after the launch's own flags,
    and argparse keeps the last), else N + 1 (SGLang counts the bonus token)."""
    settings = ctx.engine_settings.sglang
    conflict = settings.dflash_conflict(ctx.draft.method)
    if conflict is not None:
        tokens, alias = conflict
        yield Issue(
            f"{where}: sglang refuses to start with --speculative-num-draft-tokens {tokens} and "
            f"--speculative-dflash-block-size {alias}: 'Both --speculative-num-draft-tokens and "
            "--speculative-dflash-block-size are set but they differ. For DFLASH they must "
            "match.' (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:374-384)",
            runtime=SGLANG.name,
            severity=Severity.ERROR,
            field=key,
            hint=f"Give only one of the two flags, set to {block} (the draft's block size).",
            # Raised while the server arguments resolve, before any weight loads.
            stage=Stage.LOAD,
        )
        return
    own = settings.draft_tokens(ctx.draft.method)
    n = ctx.num_speculative_tokens
    tokens = own if own is not None else (None if n is None else n + 1)
    if tokens is None or tokens == block:
        return
    yield Issue(
        f"{where}: sglang with --speculative-num-draft-tokens {tokens} warns 'DFLASH block "
        f"size mismatch: using speculative_num_draft_tokens={tokens} but draft config "
        f"block_size={block}.' and drafts {tokens} positions",
        runtime=SGLANG.name,
        field=key,
        hint=f"Serve with --speculative-num-draft-tokens {block} "
        f"(--num-speculative-tokens {block - 1}).",
    )


def _sglang_dspark_length(ctx: PairContext, block: int, key: str | None) -> Iterator[Issue]:
    """SGLang's line for a DSpark draft: the verify window must be gamma + 1, gamma being
    --speculative-dspark-block-size where given, else the draft's block (SGLang refuses another
    window at start-up, speculative_hook.py:824-834); a given gamma unlike the draft's starts,
    with a warning when the worker loads the draft (dspark_config.py:100-117)."""
    settings, n = ctx.engine_settings.sglang, ctx.num_speculative_tokens
    own_gamma = settings.speculative_dspark_block_size
    gamma = block if own_gamma is None else own_gamma
    # The window the launch passes: SGLang's own where given, else N + 1 (the DSpark flag
    # alone leaves the window to SGLang, which makes it gamma + 1).
    window = settings.speculative_num_draft_tokens
    if window is None and own_gamma is None and n is not None:
        window = n + 1
    name = f"draft {ctx.draft.name}"
    if window is not None and window != gamma + 1:
        said = f"gamma {gamma} (" + (
            "--speculative-dspark-block-size)" if own_gamma is not None else f"its {key})"
        )
        yield Issue(
            f"{name}, {said}: sglang with --speculative-num-draft-tokens {window} refuses to "
            f"start: 'DSpark speculative_num_draft_tokens must equal gamma + 1 (= {gamma + 1} "
            f"for gamma={gamma}), but got speculative_num_draft_tokens={window}.'",
            runtime=SGLANG.name,
            severity=Severity.ERROR,
            field=key,
            hint=f"Serve with --speculative-num-draft-tokens {gamma + 1} "
            f"(--num-speculative-tokens {gamma}), or leave it out: SGLang takes gamma + 1.",
            # Raised while the server arguments resolve, before any weight loads.
            stage=Stage.LOAD,
        )
    elif own_gamma is not None and own_gamma != block:
        yield Issue(
            f"{name} was trained with {key} {block}: sglang with --speculative-dspark-block-size "
            f"{own_gamma} warns 'DSpark gamma mismatch: using gamma={own_gamma} (from "
            f"speculative_num_draft_tokens={own_gamma + 1}) but draft config block_size={block}.' "
            f"and drafts {own_gamma} tokens",
            runtime=SGLANG.name,
            field=key,
            hint=f"Serve with --speculative-dspark-block-size {block}, or leave it out.",
        )


# vLLM's XPress speculator subclasses the DFlash one: the parent refuses the dflash_config key
# first, then XPress refuses a top-level one, which XPress checkpoints carry (its kernels are
# built for the fill-in layout, anchor at slot 0). Release.xpress cites it per release.
_XPRESS_ANCHOR = (
    "sample_from_anchor=True is not supported for XPress: the refiner is trained and served in "
    "the fill-in layout (anchor at slot 0, slots 1..N predicted)."
)


@rule(
    "DF021",
    "sample-from-anchor",
    Severity.ERROR,
    "The draft asks to sample from the anchor, which vLLM refuses for DFlash",
    "vLLM's DFlash speculator uses a fixed 1 + N query layout whose anchor is the bonus token, "
    "and refuses a true dflash_config.sample_from_anchor when Model Runner V2 builds it, at "
    "load: 'sample_from_anchor=True is not supported for DFlash. DFlash uses a fixed 1+N query "
    "layout where the anchor is the bonus token.' (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/"
    "dflash/speculator.py:77-85; 0.33.0: :80-88; 0.32.0: :77-85; the speculators format's "
    "top-level sample_from_anchor is copied there by transformers_utils/configs/speculators/"
    "algos.py, 0.34.0: :86-89, 0.33.0 and 0.32.0: :118-121). It reads only dflash_config; the "
    "V1 runner (0.32, 0.33) does not check it. Its XPress speculator (0.33.0, 0.34.0) "
    "also refuses a true top-level sample_from_anchor when it is built: 'sample_from_anchor="
    "True is not supported for XPress' (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/xpress/"
    "speculator.py:29-34; 0.33.0: :30-35).",
    "Remove sample_from_anchor (or set it to false) for DFlash drafts served by vLLM.",
    runtimes=(VLLM.name,),
)
def check_sample_from_anchor(ctx: PairContext) -> Iterator[Issue]:
    """Flag sample_from_anchor: true for vLLM (an XPress draft's top-level one too)."""
    d, f = ctx.draft, ctx.draft.dflash
    key = f.sample_from_anchor_key if f is not None else None
    if key is None:
        yield from _xpress_anchor(ctx)
        return
    # The DFlash parent raises first: XPress's own check is never reached.
    for p in ctx.profiles:
        if not handling(p.engine_name).builds_classes(p.runner):
            continue  # V1's proposer does not read the key
        # Each release cites its own lines; a row without a release cites the rule's why.
        where = p.release.dflash_anchor if p.release is not None else None
        if p.release is not None and where is None:
            continue  # a release whose speculator was not read for it
        cited = f" ({where})" if where else ""
        yield Issue(
            f"draft {d.name}: {key} is true; {p.label} refuses it at load: "
            f"'sample_from_anchor=True is not supported for DFlash.'{cited}",
            runtime=p.name,
            field=key,
        )


def _xpress_anchor(ctx: PairContext) -> Iterator[Issue]:
    """Yield, per vLLM release with an XPress speculator, its refusal of an XPress draft's true
    top-level sample_from_anchor (the engine tests it with getattr: any true value)."""
    d, f = ctx.draft, ctx.draft.dflash
    stated = dict(f.xpress) if f is not None else {}
    if not XPRESS_ARCHITECTURES.intersection(d.architectures) or not json.loads(
        stated.get("sample_from_anchor", "null")
    ):
        return
    for p in ctx.profiles:
        xpress = p.release.xpress if p.release is not None else None
        if xpress is None or not handling(p.engine_name).builds_classes(p.runner):
            continue  # V1 refuses XPress drafts whole (DF016); 0.32 has no XPress class
        yield Issue(
            f"draft {d.name} (XPress): sample_from_anchor is "
            f"{stated['sample_from_anchor']}; {p.label} refuses it at load: "
            f"'{_XPRESS_ANCHOR}' ({xpress.top_level_anchor})",
            runtime=p.name,
            field="sample_from_anchor",
            # Raised when the V2 runner builds its speculator, before any draft token.
            stage=Stage.LOAD,
            hint="Remove the top-level sample_from_anchor (or set it to false): XPress drafts "
            "are served in the fill-in layout only.",
        )


RULES: tuple[Rule, ...] = (
    check_block_size,
    check_speculative_length,
    check_sample_from_anchor,
)
