"""A target on which an engine admits only some speculative algorithms (DF058).

SGLang 0.5.23 applies per-architecture defaults while it resolves the server arguments, before
any weight loads; for a DeepSeek V4 target they assert that the ``--speculative-algorithm``
string is EAGLE or DSPARK (``Release.algorithm_gates`` cites it), so a DFlash draft or an
EAGLE-3 head is refused at start-up whatever the draft's config says, and EAGLE (a NextN
checkpoint, or the target's own MTP layers asked about alone) with a topk above 1
(``Release.eagle_topk_gates``). The capture rules
(DF017, DF053) may also speak for such a target: this is what the engine says first.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import ALL_METHODS, Issue, PairContext, Rule, rule
from dflash_check.knowledge.engines import SGLANG
from dflash_check.knowledge.settings import SGLANG_ALGORITHMS

EAGLE = "EAGLE"
"""SGLang's algorithm for the target's own MTP layers and NextN checkpoints (NEXTN's alias)."""


def eagle_topk_refusal(runtime: str, arch: str, topk: int, where: str) -> str:
    """Say that ``runtime`` refuses EAGLE with ``topk`` on ``arch`` at start-up, citing
    ``where`` (``Release.eagle_topk_gates``): for a pair and for a target alone."""
    return (
        f"{runtime} runs EAGLE (NEXTN) on it with --speculative-eagle-topk 1 only and refuses "
        f"--speculative-eagle-topk {topk} when it starts: 'Only EAGLE speculative algorithm with "
        f"topk == 1 is supported for {arch}' ({where})"
    )


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
    "alias of EAGLE) pass this check. With EAGLE it also asserts --speculative-eagle-topk 1 "
    "('Only EAGLE speculative algorithm with topk == 1 is supported for "
    "DeepseekV4ForCausalLM', deepseek_v4_hook.py:156-158): a NextN checkpoint or the target "
    "asked about alone (pair TARGET) with a topk above 1 (--engine-arg) is refused at start-up.",
    "Serve a DSpark draft or the target's own MTP layers on this target with SGLang, with "
    "--speculative-eagle-topk 1, or the pair with another engine.",
    runtimes=(SGLANG.name,),
    methods=ALL_METHODS,
)
def check_algorithm_gate(ctx: PairContext) -> Iterator[Issue]:
    """Flag the releases that refuse the draft's algorithm on the target's architecture, or
    EAGLE's topk there."""
    # The algorithm SGLang is started with for the draft's method (a NextN checkpoint: EAGLE).
    algorithm = SGLANG_ALGORITHMS.get(ctx.draft.method)
    if algorithm is None:
        return
    t = ctx.target
    topk = ctx.engine_settings.sglang.speculative_eagle_topk
    for p in ctx.profiles:
        if p.release is None:
            continue
        for arch in t.architectures[:1]:
            where = p.release.eagle_topk_gates.get(arch)
            if algorithm == EAGLE and where is not None and topk is not None and topk != 1:
                yield Issue(
                    f"target {t.name} ({arch}): {eagle_topk_refusal(p.name, arch, topk, where)}",
                    runtime=p.name,
                    field="--speculative-eagle-topk",
                    model="target",
                )
        gates = p.release.algorithm_gates
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
