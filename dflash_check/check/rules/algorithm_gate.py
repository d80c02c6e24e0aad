"""A target on which an engine admits only some speculative algorithms (DF058).

SGLang 0.5.23 applies per-architecture defaults while it resolves the server arguments, before
any weight loads; for a DeepSeek V4 target they assert that the ``--speculative-algorithm``
string is EAGLE or DSPARK (``Release.algorithm_gates`` cites it), so a DFlash draft or an
EAGLE-3 head is refused at start-up whatever the draft's config says. The capture rules
(DF017, DF053) may also speak for such a target: this is what the engine says first.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import ALL_METHODS, Issue, PairContext, Rule, rule
from dflash_check.knowledge.engines import SGLANG
from dflash_check.knowledge.engines.sglang import ALGORITHMS


@rule(
    "DF058",
    "target-algorithm-gate",
    Severity.ERROR,
    "The engine admits only other speculative algorithms on this target",
    "SGLang 0.5.23 applies a DeepSeek V4 target's defaults while it resolves the server "
    "arguments and asserts the speculative algorithm there, before any weight loads: 'Only "
    "EAGLE and DSPARK speculative algorithms are supported for DeepseekV4ForCausalLM' "
    "(sglang==0.5.23:sglang/srt/arg_groups/deepseek_v4_hook.py:148-158, run by "
    "arg_groups/model_hook.py:258-265). A DFlash or DFlash 2 draft (DFLASH) or an EAGLE-3 head "
    "(EAGLE3) is refused at start-up; a DSpark draft or the target's own MTP layers (NEXTN, an "
    "alias of EAGLE) pass this check. With EAGLE it also asserts --speculative-eagle-topk 1.",
    "Serve a DSpark draft or the target's own MTP layers on this target with SGLang, or the "
    "pair with another engine.",
    runtimes=(SGLANG.name,),
    methods=ALL_METHODS,
)
def check_algorithm_gate(ctx: PairContext) -> Iterator[Issue]:
    """Flag the releases that refuse the draft's algorithm on the target's architecture."""
    algorithm = ALGORITHMS.get(ctx.draft.method)
    if algorithm is None:
        return  # a method SGLang serves under no algorithm of its own (MTP runs as EAGLE)
    t = ctx.target
    for p in ctx.profiles:
        gates = p.release.algorithm_gates if p.release is not None else {}
        for arch in t.architectures[:1]:  # SGLang resolves the model class from the first
            if arch not in gates or algorithm in gates[arch][0]:
                continue
            admits, where = gates[arch]
            yield Issue(
                f"target {t.name} ({arch}): {p.name} admits only {' and '.join(admits)} on it "
                f"and refuses --speculative-algorithm {algorithm} when it starts: 'Only "
                f"{' and '.join(admits)} speculative algorithms are supported for {arch}' "
                f"({where})",
                runtime=p.name,
                field="architectures",
                model="target",
            )


RULES: tuple[Rule, ...] = (check_algorithm_gate,)
