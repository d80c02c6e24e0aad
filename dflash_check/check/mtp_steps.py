"""An engine's own draft-step flags for the MTP draft it builds from a target asked about alone
(``pair TARGET --engine-arg ...``): SGLang's ``--speculative-num-steps``,
``--speculative-eagle-topk`` and ``--speculative-num-draft-tokens``, parsed once by
``knowledge/settings.py``, against what each engine's MTP row says it does with them
(``EngineMtp.steps``). vLLM has no such flags: its draft length stays
``--num-speculative-tokens`` (``target_alone._token_findings``). Pure, like the check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from dflash_check.check.report import Finding, Severity
from dflash_check.knowledge.engines import ENGINES_BY_NAME, EngineMtp, MtpSteps
from dflash_check.knowledge.mtp_layers import selected_engines
from dflash_check.knowledge.settings import EngineSettings, SglangSettings


def step_flag_findings(
    layers_of: Callable[[str], int | None],
    settings: EngineSettings,
    engines: tuple[EngineMtp, ...],
) -> Iterator[Finding]:
    """Each engine's reading of its own step flags, where its MTP row says how it reads them
    and the user gave any (``layers_of``: the k an engine reads, as ``MtpStated.layers_of``)."""
    for row in engines:
        own = settings.of(row.engine)
        if row.steps is None or own is None:
            continue
        title = ENGINES_BY_NAME[row.engine].title
        refused = _refusal(row.steps, own, title)
        if refused is not None:
            # The server does not start: what it would do with the steps is moot.
            yield Finding("DF060", Severity.ERROR, row.engine, *refused, model="target")
            continue
        yield from _adjusted(row.steps, own, row.engine, title)
        yield from _reruns(row.steps, own, layers_of(row.engine), row.engine, title)


def topk_gate_findings(
    architectures: tuple[str, ...],
    settings: EngineSettings,
    releases: Mapping[str, str | None] | None,
) -> Iterator[Finding]:
    """DF058 for a target asked about alone: an engine that runs its MTP layers as EAGLE
    (SGLang's NEXTN) and refuses a topk above 1 on the target's architecture at start-up
    (``Release.eagle_topk_gates``), where the user gave one (``releases``: as for
    ``engine_rows``)."""
    # Imported here, as the caller imports this module: the rule module is the pair's.
    from dflash_check.check.rules.algorithm_gate import eagle_topk_refusal

    for engine in selected_engines(releases):
        own = settings.of(engine.name)
        topk = own.speculative_eagle_topk if own is not None else None
        if topk is None or topk == 1:
            continue
        release = engine.release((releases or {}).get(engine.name))
        for arch in architectures[:1]:  # the engine resolves the model class from the first
            where = release.eagle_topk_gates.get(arch)
            if where is not None:
                yield Finding(
                    "DF058",
                    Severity.ERROR,
                    engine.name,
                    f"target ({arch}): {eagle_topk_refusal(engine.name, arch, topk, where)}",
                    f"serve its MTP layers with --speculative-eagle-topk 1 on {engine.title}",
                    field="--speculative-eagle-topk",
                    model="target",
                )


def eagle_step_refusal(method: str, settings: EngineSettings) -> tuple[str, str] | None:
    """(message, hint) where SGLang, running a separate draft of ``method`` in its EAGLE family
    (an EAGLE-3 head as EAGLE3, a NextN checkpoint as EAGLE: ``SGLANG_ALGORITHMS``), fails at
    start-up on the step flags given, as it does for a target's own MTP layers (DF060 of a
    pair); None otherwise. The MTP rows' module is imported only when a flag was given."""
    from dflash_check.knowledge.engines.sglang import EAGLE_FAMILY, ENGINE, algorithm

    own = settings.sglang
    n, topk, tokens = (
        own.speculative_num_steps,
        own.speculative_eagle_topk,
        own.speculative_num_draft_tokens,
    )
    if algorithm(method) not in EAGLE_FAMILY or n is topk is tokens is None:
        return None
    from dflash_check.knowledge.engines.sglang_mtp import STEP_FLAGS

    return _refusal(STEP_FLAGS, own, ENGINE.title, "draft")


def _refusal(
    steps: MtpSteps, own: SglangSettings, title: str, drafting: str = "MTP"
) -> tuple[str, str] | None:
    """(message, hint) where the flags given make the engine fail at start-up, else None
    (``drafting``: what runs the steps, as the hint names it)."""
    n, topk, tokens = (
        own.speculative_num_steps,
        own.speculative_eagle_topk,
        own.speculative_num_draft_tokens,
    )
    if n is None and (topk is not None or tokens is not None):
        given = " and ".join(
            flag
            for flag, value in (
                ("--speculative-eagle-topk", topk),
                ("--speculative-num-draft-tokens", tokens),
            )
            if value is not None
        )
        return (
            f"{given} without --speculative-num-steps: {title} fails at start-up while it "
            f"resolves the server arguments ({steps.topk_without_steps})",
            "add --speculative-num-steps (and --speculative-eagle-topk 1), or leave all three "
            f"out: {title} then picks them",
        )
    if n is not None and topk is None:
        return (
            f"--speculative-num-steps {n} without --speculative-eagle-topk: {title} fails at "
            f"start-up while it resolves the server arguments ({steps.steps_without_topk})",
            f"add --speculative-eagle-topk 1 (a chain of {n} {drafting} steps)",
        )
    # Above topk 1 the hook keeps the draft tokens given (None when not given), and the
    # multi-layer worker asserts them when it is built.
    if steps.multi_layer and n is not None and topk is not None and topk > 1 and tokens != n + 1:
        given = "no --speculative-num-draft-tokens" if tokens is None else f"{tokens} draft tokens"
        return (
            f"--speculative-num-steps {n} at --speculative-eagle-topk {topk} with {given}: "
            f"{title} runs this target's MTP layers as multi-layer EAGLE, whose worker fails at "
            "start-up: 'multi-layer EAGLE requires speculative_num_draft_tokens == "
            f"speculative_num_steps + 1' ({steps.multi_layer})",
            f"give --speculative-num-draft-tokens {n + 1}, or --speculative-eagle-topk 1",
        )
    return None


def _adjusted(steps: MtpSteps, own: SglangSettings, engine: str, title: str) -> Iterator[Finding]:
    """At topk 1, draft tokens given other than steps + 1 are replaced, with a warning."""
    n, tokens = own.speculative_num_steps, own.speculative_num_draft_tokens
    if own.speculative_eagle_topk != 1 or n is None or tokens is None or tokens == n + 1:
        return
    yield Finding(
        "DF061",
        Severity.WARNING,
        engine,
        f"--speculative-num-draft-tokens {tokens} with --speculative-num-steps {n} at "
        f"--speculative-eagle-topk 1: {title} serves with {n + 1} draft tokens instead and "
        "warns 'speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
        f"speculative_eagle_topk == 1' ({steps.adjusts})",
        f"give --speculative-num-draft-tokens {n + 1}, or leave it out",
        model="target",
    )


def _reruns(
    steps: MtpSteps, own: SglangSettings, k: int | None, engine: str, title: str
) -> Iterator[Finding]:
    """Steps above k on an engine that builds one MTP layer: it reruns that layer, unchecked."""
    n = own.speculative_num_steps
    if steps.reruns_one is None or n is None or not k or n <= k:
        return
    yield Finding(
        "DF045",
        Severity.INFO,
        engine,
        f"--speculative-num-steps {n} is more than the target's {k} MTP layer(s): {title} "
        f"builds one MTP layer and runs it once per step, {n} times, with no check against "
        f"k ({steps.reruns_one})",
        "nothing to do if the acceptance you measure is good enough",
        model="target",
    )
