"""SGLang's EAGLE-family step flags (DF060): refused at start-up in some combinations.

SGLang resolves ``--speculative-num-steps``, ``--speculative-eagle-topk`` and
``--speculative-num-draft-tokens`` together for every algorithm of its EAGLE family: a target's
own MTP layers (NEXTN, asked about alone: ``check/mtp_steps.py`` reports it there), an EAGLE-3
head (EAGLE3) and a NextN checkpoint (EAGLE). The rule lives in the pair table and its pair
check speaks for the separate drafts; the refusal itself is read in one place
(``mtp_steps.eagle_step_refusal``). Registered into ``RULES`` by ``check/rules/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, rule
from dflash_check.check.rules.outcomes import step_flag_engines


@rule(
    "DF060",
    "mtp-step-flags-refused",
    Severity.ERROR,
    "The engine fails at start-up on the EAGLE draft-step flags given",
    "SGLang runs a target's own MTP layers as EAGLE (NEXTN is its alias), a NextN checkpoint "
    "as EAGLE and an EAGLE-3 head as EAGLE3, and resolves --speculative-num-steps, "
    "--speculative-eagle-topk and --speculative-num-draft-tokens together for all of them "
    "(_handle_eagle_family): --speculative-eagle-topk or --speculative-num-draft-tokens "
    "without --speculative-num-steps fails its assert, and --speculative-num-steps without "
    "--speculative-eagle-topk leaves the topk None, which it then compares with 1 "
    "(TypeError), both while the server arguments resolve "
    "(sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:1159-1163, 1273-1276). "
    "On the targets it runs as multi-layer EAGLE (Step3p5, Step3p7: arg_groups/overrides.py"
    ":346-350) the draft worker asserts draft tokens == steps + 1 when it is built, which "
    "above topk 1 nothing sets (speculative/multi_layer_eagle_worker_v2.py:150-153). "
    "Given with --engine-arg (pairs.yaml engine_args).",
    "Give --speculative-num-steps and --speculative-eagle-topk together (topk 1 for a "
    "chain of draft steps), or none of the three: SGLang then picks them per architecture.",
    runtimes=step_flag_engines,
    methods=("eagle3", "mtp"),
)
def check_eagle_step_flags(ctx: PairContext) -> Iterator[Issue]:
    """Flag the SGLang rows that refuse the step flags given for an EAGLE-3 head or a NextN
    checkpoint at start-up."""
    from dflash_check.check.mtp_steps import eagle_step_refusal

    refused = eagle_step_refusal(ctx.draft.method, ctx.engine_settings)
    if refused is None:
        return
    message, hint = refused
    engines = step_flag_engines()  # the engines whose MTP rows read these flags (SGLang)
    for p in ctx.profiles:
        if p.engine_name in engines:
            # The flags are no config field; the draft's method is what brings SGLang's EAGLE
            # family, so the finding is the draft's.
            yield Issue(message, hint=hint, runtime=p.name)


RULES: tuple[Rule, ...] = (check_eagle_step_flags,)
