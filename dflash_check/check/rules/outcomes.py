"""Rules about the outcome of a run and about a target asked about alone: no pair check of
their own, they give reports a rule id and docs a row."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    V033,
    Issue,
    PairContext,
    Rule,
    every_runtime,
)
from dflash_check.knowledge.engines import registered


def mtp_engines() -> tuple[str, ...]:
    """The engines whose MTP rows say they build an MTP draft from the target's own layers
    (DF041-DF043), read from the registered engines when asked."""
    return tuple(e.name for e in registered() if any(r.builds for r in e.mtp))


def rerun_engines() -> tuple[str, ...]:
    """The engines whose MTP rows say how they rerun the layers past k draft tokens (DF044,
    DF045), read from the registered engines when asked."""
    return tuple(e.name for e in registered() if any(r.reruns for r in e.mtp))


def step_flag_engines() -> tuple[str, ...]:
    """The engines whose MTP rows say how they read their own draft-step flags (DF060,
    DF061), read from the registered engines when asked."""
    return tuple(e.name for e in registered() if any(r.steps for r in e.mtp))


def layer_rerun_engines() -> tuple[str, ...]:
    """The engines that rerun MTP layers past k (DF045): by the draft tokens (``reruns``) or
    by their own step flags over one built layer (``steps.reruns_one``)."""
    return tuple(
        e.name
        for e in registered()
        if any(r.reruns or (r.steps and r.steps.reruns_one) for r in e.mtp)
    )


def step_limit_engines() -> tuple[str, ...]:
    """The engines whose MTP rows say a draft has fixed trained steps and refuse more draft
    tokens (DF059), read from the registered engines when asked."""
    return tuple(e.name for e in registered() if any(r.step_limit for r in e.mtp))


def refusing_engines() -> tuple[str, ...]:
    """The engines whose MTP rows say they refuse the MTP method for some targets at start-up
    (DF063), read from the registered engines when asked."""
    return tuple(e.name for e in registered() if any(r.refusal for r in e.mtp))


def _no_check(ctx: PairContext) -> Iterator[Issue]:
    """Outcome rules are raised by the renderers of a run, not by checking a pair."""
    return iter(())


# Rules about the outcome of a run rather than about a pair: they give SARIF, JUnit and
# GitHub annotations a rule id for "not as expected" and "could not check".
OUTCOME_RULES: tuple[Rule, ...] = (
    Rule(
        "DF090",
        "expectation-mismatch",
        Severity.ERROR,
        "A pairs.yaml entry got another verdict than its expect",
        "A registry of pairings is only useful if it is true: an entry expected compatible "
        "that is not is how the Qwen3.5-4B pairing shipped in vLLM's test registry "
        "(vllm-project/vllm#48113); one expected incompatible that passes is a stale entry.",
        "Fix the pairing, or change 'expect' (and 'reason') if the models changed.",
        every_runtime,
        _no_check,
    ),
    Rule(
        "DF091",
        "not-checked",
        Severity.ERROR,
        "A pair could not be checked",
        "A model was missing, gated, malformed or unreachable, so no verdict exists; a gate "
        "must not pass silently on a pair it never checked.",
        "Follow the error's hint: fix the name or revision, grant access, or warm the cache.",
        every_runtime,
        _no_check,
    ),
    Rule(
        "DF092",
        "smoke-failed",
        Severity.ERROR,
        "The smoke run's decode was not lossless, or tau was below --min-acceptance",
        "Configs can agree while the pair is still broken: layer ids off by one, a draft trained "
        "for other weights. The target then verifies every token, output stays correct, and "
        "acceptance collapses (vllm-project/vllm#50170: 1.21% instead of 58.9%); only a real "
        "decode shows it. A decode that differs from plain greedy decoding is a runtime bug.",
        "Check the draft's target_layer_ids and target weights against its training; for a "
        "lossless failure, report it with the JSON report's cases.",
        every_runtime,
        _no_check,
    ),
)
# Rules of a target asked about alone (`pair TARGET`, check/target_alone.py): its own MTP layers.
TARGET_ALONE_RULES: tuple[Rule, ...] = (
    Rule(
        "DF041",
        "no-mtp-layers",
        Severity.ERROR,
        "The target states no MTP layers: there is nothing for an engine to draft with",
        "An MTP (NextN) draft is the target's own extra layers, counted by "
        "num_nextn_predict_layers, mtp_num_hidden_layers or num_mtp_modules; a target with "
        "none (Kimi K2.x states 0) has no MTP draft, and engines asked for one fail at start-up.",
        "Use a separate draft (DFlash, EAGLE-3) for this target, or a checkpoint with its MTP "
        "layers.",
        mtp_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF042",
        "mtp-weights-missing",
        Severity.ERROR,
        "The config states MTP layers the checkpoint does not hold",
        "Some quantised or re-exported checkpoints drop the MTP weights but keep the count in "
        "config.json. vLLM's DeepSeek MTP loader then refuses the checkpoint ('…weights "
        "missing from checkpoint. The checkpoint may have been quantized…', "
        f"{V033}:vllm/model_executor/models/deepseek_mtp.py:526-537); other "
        "loaders may start with uninitialised layers. Read from a local checkpoint's index or "
        "headers.",
        "Serve a checkpoint that ships the MTP layers (often the unquantised one), or drop MTP.",
        mtp_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF043",
        "mtp-no-engine",
        Severity.WARNING,
        "No engine read here builds an MTP draft for this architecture",
        "Each engine maps a target architecture to an MTP draft class "
        "(vllm/config/speculative.py hf_config_override; SGLang configs/model_config.py); a "
        "target outside those maps cannot use its MTP layers there.",
        "Check the engine's MTP support for this architecture, or use a separate draft.",
        mtp_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF044",
        "mtp-tokens-not-multiple",
        Severity.ERROR,
        "The engine refuses more draft tokens than MTP layers unless a multiple of them",
        "vLLM drafts k tokens with k MTP layers by default and accepts more only as a multiple "
        f"of k ({V033}:vllm/config/speculative.py:1600-1612); an engine whose MTP rows say "
        "so (EngineMtp.reruns) is held to the same.",
        "Serve with --num-speculative-tokens at most k, or a multiple of k.",
        rerun_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF045",
        "mtp-layers-rerun",
        Severity.INFO,
        "More draft tokens than MTP layers: the layers are rerun",
        "Past k draft tokens the engines run the same MTP layers again; vLLM warns that "
        "acceptance may drop (vllm/config/speculative.py:1486-1495). SGLang builds one MTP "
        "layer for most targets (num_nextn_predict_layers set to 1 by ModelConfig."
        "_config_draft_model, sglang==0.5.23:sglang/srt/configs/model_config.py:1010-1211) "
        "and its EAGLE worker runs it once per draft step "
        "(speculative/eagle_worker_v2.py:808-848): --speculative-num-steps above k reruns it, "
        "with no check of the steps against k.",
        "Nothing to do if the acceptance you measure is good enough.",
        layer_rerun_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF059",
        "mtp-tokens-over-trained-steps",
        Severity.ERROR,
        "The engine refuses more draft tokens than the MTP draft's trained steps",
        "Some MTP drafts are built with a fixed number of trained steps whatever the config "
        "counts, and the engine refuses more draft tokens per step while it resolves the "
        "speculative config, at start-up: vLLM's Nemotron Parse 3.5 draft has one ('Parse 3.5 "
        "has only one trained MTP step', vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/mtp/"
        "config.py:101-106); an engine whose MTP rows say so (EngineMtp.step_limit) is held "
        "to the same.",
        "Serve with --num-speculative-tokens at most the draft's trained steps.",
        step_limit_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF063",
        "mtp-method-refused",
        Severity.ERROR,
        "The engine refuses the MTP method for this target at start-up",
        "An engine builds an MTP draft only for the targets its code maps to one; for another, "
        "whatever its MTP count, it may refuse the method while it resolves the speculative "
        "config: vLLM 0.32.0 and 0.33.0 map Kimi K2 (model_type kimi_k2) to no MTP draft and "
        "raise 'NotImplementedError: Unsupported speculative method: 'mtp'' "
        f"({V033}:vllm/config/speculative.py:1498-1501); an engine whose MTP rows say so "
        "(EngineMtp.refusal) is held to the same.",
        "Use a separate draft (DFlash, EAGLE-3) with this target on this release, or a "
        "release that builds an MTP draft for it.",
        refusing_engines,
        _no_check,
        methods=("mtp",),
    ),
    Rule(
        "DF061",
        "mtp-draft-tokens-adjusted",
        Severity.WARNING,
        "The engine replaces the MTP draft tokens given with steps + 1",
        "At --speculative-eagle-topk 1 SGLang drafts a chain of --speculative-num-steps tokens "
        "and sets --speculative-num-draft-tokens to steps + 1, warning 'speculative_num_draft_"
        "tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1' "
        "(sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:1255-1266): another value "
        "given is not what it serves with.",
        "Give --speculative-num-draft-tokens steps + 1, or leave it out.",
        step_flag_engines,
        _no_check,
        methods=("mtp",),
    ),
)
