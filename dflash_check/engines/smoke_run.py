"""Smoke-run a pair in a real serving engine (vLLM, SGLang) instead of the bundled runtime.

Targets that need more than one GPU (tensor or pipeline parallel, several nodes) are served by
engines that already run speculative decoding and count its acceptance. ``attach`` uses one the
user started with the draft as its speculative model: it confirms what the server serves, sends
the smoke prompts (greedy, fixed seed, the bundled runtime's prompts and token budget), and
reads the engine's acceptance counters before and after. No torch here, and HTTP is the
standard library's: nothing beyond the check path's own dependencies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dflash_check.engines.client import (
    EngineClient,
    ServerInfo,
    check_draft,
    served_model,
    server_info,
)
from dflash_check.engines.command import DEFAULT_BLOCK_SIZE
from dflash_check.engines.errors import (
    CountersNotMovingError,
    DraftNotVerifiedError,
    EngineError,
    EngineResponseError,
    SharedServerError,
)
from dflash_check.engines.metrics import (
    check_counts,
    delta,
    require_metrics,
    scrape,
    settled,
    sglang_counts,
    vllm_counts,
)
from dflash_check.engines.profiles import EngineOptions, profile
from dflash_check.knowledge.acceptance import BundledTau, floor_for
from dflash_check.smoke.report import (
    EngineRun,
    SmokeCase,
    SmokeReport,
)
from dflash_check.sources.interface import ModelRef


@dataclass(frozen=True)
class Completion:
    """One prompt's answer."""

    prompt_token_ids: tuple[int, ...]
    output_token_ids: tuple[int, ...]
    seconds: float
    meta: Mapping[str, Any]
    """SGLang's ``meta_info`` (empty for vLLM)."""


def _token_ids(value: Any) -> tuple[int, ...] | None:
    """Return a JSON list of ints as a tuple, None for anything else."""
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None


def complete_openai(
    client: EngineClient, model: str, prompt: str, chat: bool, sampling: Mapping[str, Any]
) -> Completion:
    """Decode one prompt through the OpenAI-compatible API (vLLM)."""
    body: dict[str, Any] = {"model": model, **sampling, "stream": False, "n": 1}
    # vLLM's extension: put the prompt and output token ids in the answer, for the lossless
    # comparison and the token count.
    body["return_token_ids"] = True
    if chat:
        body["messages"] = [{"role": "user", "content": prompt}]
        path = "/v1/chat/completions"
    else:
        body["prompt"] = prompt
        path = "/v1/completions"
    t0 = time.perf_counter()
    data = client.json(path, body)
    seconds = time.perf_counter() - t0
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    ids = _token_ids(choice.get("token_ids")) if isinstance(choice, dict) else None
    if ids is None:
        raise EngineResponseError(
            f"{client.engine} server at {client.base}: {path} returned no token ids",
            hint="vLLM returns them with return_token_ids from v0.10.2 on; upgrade the server",
        )
    prompt_ids = _token_ids(data.get("prompt_token_ids")) or ()
    return Completion(prompt_ids, ids, seconds, {})


def complete_sglang(client: EngineClient, prompt: str, sampling: Mapping[str, Any]) -> Completion:
    """Decode one prompt through SGLang's native ``/generate`` (its counters are per request)."""
    params: dict[str, Any] = {
        "temperature": sampling["temperature"],
        "max_new_tokens": sampling["max_tokens"],
    }
    if sampling["temperature"] > 0:
        # Greedy needs no seed; older SGLang releases reject the field they do not know.
        params["sampling_seed"] = sampling["seed"]
    t0 = time.perf_counter()
    data = client.json("/generate", {"text": prompt, "sampling_params": params})
    seconds = time.perf_counter() - t0
    meta = data.get("meta_info") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        raise EngineResponseError(f"sglang server at {client.base}: /generate gave no meta_info")
    ids = _token_ids(data.get("output_ids")) or _token_ids(meta.get("output_token_ids"))
    if ids is None:
        raise EngineResponseError(
            f"sglang server at {client.base}: /generate returned no output ids"
        )
    return Completion((), ids, seconds, meta)


# --- the attach flow --------------------------------------------------------------------------


def run_engine_smoke(
    draft: ModelRef,
    target: ModelRef,
    prompts: Sequence[str],
    max_new_tokens: int,
    temperature: float,
    seed: int,
    chat_template: bool,
    min_acceptance: float | None,
    block_size: int | None,
    options: EngineOptions,
    on_progress: Callable[[str], None] | None = None,
    bundled: BundledTau | None = None,
) -> SmokeReport:
    """Decode the prompts on a running engine; measure tau from its own counters.

    ``min_acceptance`` None: a share of ``bundled``'s tau (``--compare-bundled``: the bundled
    runtime's run of the same pair on the same prompts) when it drafted the block the engine
    drafts, else the floor measured collapses give at that block (``knowledge.acceptance``).

    ``block_size`` is the draft's (or ``--block-size``); vLLM's per-position series and
    SGLang's server info tell the block the engine really drafts, and win when present.
    """
    say = on_progress or (lambda _text: None)
    http = profile(options.engine)
    client = EngineClient(options.engine, options.endpoint, options.api_key, options.timeout)
    say(f"asking {client.base} what it serves")
    model = served_model(client, target)
    info = server_info(client, http)
    match = check_draft(client, info, draft, options.engine)
    require_draft_evidence(client, info, draft, options)
    first = scrape(client)
    require_metrics(client, http, first)
    baseline = None
    base_model = None
    if options.baseline_endpoint:
        baseline = EngineClient(
            options.engine, options.baseline_endpoint, options.api_key, options.timeout
        )
        base_model = served_model(baseline, target)
    block = info.draft_tokens or block_size or DEFAULT_BLOCK_SIZE
    # SGLang's /generate takes raw text: only an engine read through the OpenAI server (whose
    # counts come from /metrics) can apply the chat template.
    chat = chat_template and http.counts_from_metrics
    sampling = {"temperature": temperature, "max_tokens": max_new_tokens, "seed": seed}
    if temperature <= 0:
        sampling["temperature"] = 0.0  # greedy in both engines
    say(f"warming up {options.engine} (one untimed request)")
    chat, warm_tokens = warm_up(client, model, prompts[0], chat, sampling)
    prompts_note = None
    if chat_template and http.counts_from_metrics and not chat:
        prompts_note = "the served tokenizer has no chat template: prompts sent raw"
    if baseline is not None:
        assert base_model is not None
        warm_up(baseline, base_model, prompts[0], chat, sampling)
    # The warm-up's counts are not the run's: wait until they are in, then start counting.
    before = settled(client, http, first, warm_tokens)
    answers: list[Completion] = []
    bases: list[Completion | None] = []
    for i, prompt in enumerate(prompts):
        say(f"decoding prompt {i + 1}/{len(prompts)} on {options.engine}")
        answers.append(_complete(client, model, prompt, chat, sampling))
        if baseline is not None:
            assert base_model is not None
            bases.append(_complete(baseline, base_model, prompt, chat, sampling))
        else:
            bases.append(None)
    generated = sum(len(a.output_token_ids) for a in answers)
    after = settled(client, http, before, generated)
    if http.counts_from_metrics:
        counts, positions = vllm_counts(client, before, after)
        block = positions + 1 if positions else block
    else:
        where = f"{options.engine} server at {client.base}"
        counts = sglang_counts([a.meta for a in answers], block, where)
    if counts.steps == 0:
        raise CountersNotMovingError(
            f"{options.engine} server at {client.base}: {generated} tokens decoded but the "
            "speculative counters did not move (the server decoded without its draft)",
            hint=http.metrics_hint,
        )
    check_counts(counts, block, f"{options.engine} server at {client.base}")
    grown = delta(before, after, http.metric_generated)
    # Counts differenced from /metrics are shared by every request the server decodes.
    if grown is not None and http.counts_from_metrics and round(grown) > generated:
        raise SharedServerError(
            f"{options.engine} server at {client.base} generated {round(grown)} tokens during the "
            f"smoke run, {generated} of them for it: other requests share the counters",
            hint="run the smoke run on a server no one else is using",
        )
    cases = []
    for prompt, answer, base in zip(prompts, answers, bases, strict=True):
        lossless = None
        if base is not None and temperature <= 0:
            lossless = answer.output_token_ids == base.output_token_ids
        cases.append(
            SmokeCase(
                prompt=prompt,
                prompt_token_ids=answer.prompt_token_ids,
                output_token_ids=answer.output_token_ids,
                baseline_token_ids=base.output_token_ids if base is not None else (),
                acceptance_lengths=(),
                drafted=(),
                lossless=lossless,
                seconds=answer.seconds,
                baseline_seconds=base.seconds if base is not None else 0.0,
            )
        )
    draft_model, evidence = info.draft_model, "server" if info.draft_model else None
    if draft_model is None and options.mode == "launch":
        draft_model, evidence = draft.spec, "launch"  # dflash-check started it with this draft
    run = EngineRun(
        engine=options.engine,
        mode=options.mode,
        endpoint=client.base,
        served_model=model,
        version=info.version,
        draft_model=draft_model,
        draft_evidence=evidence,
        draft_match=match.text if match is not None else None,
        tensor_parallel=info.tensor_parallel or options.tensor_parallel,
        pipeline_parallel=info.pipeline_parallel or options.pipeline_parallel,
        baseline_endpoint=baseline.base if baseline is not None else None,
    )
    floor = floor_for(block, min_acceptance, bundled)
    return SmokeReport(
        device=options.engine,
        dtype="as served",
        block_size=block,
        temperature=temperature,
        min_acceptance=floor.tau,
        min_acceptance_reason=floor.reason,
        min_acceptance_source=floor.source,
        bundled=bundled,
        cases=tuple(cases),
        engine=run,
        counts=counts,
        prompts_note=prompts_note,
    )


def require_draft_evidence(
    client: EngineClient, info: ServerInfo, draft: ModelRef, options: EngineOptions
) -> None:
    """Refuse to vouch for a draft nothing showed the server to serve: not the server's info
    (vLLM names it only in dev mode), not the command dflash-check launched it with. A server
    drafting with another model would otherwise pass with that model's tau."""
    if info.draft_model is not None or options.mode == "launch" or options.trust_served_draft:
        return
    how = profile(options.engine).draft_hint
    raise DraftNotVerifiedError(
        f"{options.engine} server at {client.base} does not say which draft it serves: its "
        f"acceptance cannot be vouched for as the draft {draft.spec}'s",
        hint=f"{how}, or --launch it here, or pass --trust-served-draft to take it on trust",
    )


WARM_UP_TOKENS = 8
"""Tokens the untimed warm-up request decodes: enough to run the draft (compilation, graph
capture and caches happen on a cold server's first requests: one took 20 s, and its speedup
read 0.036x), short enough to cost little on a slow target."""


def warm_up(
    client: EngineClient, model: str, prompt: str, chat: bool, sampling: Mapping[str, Any]
) -> tuple[bool, int]:
    """Decode ``prompt`` once, untimed, before anything is timed or counted; return whether
    the chat template is usable (a tokenizer without one makes vLLM refuse chat requests: the
    prompts then go raw, as the bundled runtime encodes them) and the tokens decoded."""
    short = {**sampling, "max_tokens": min(WARM_UP_TOKENS, int(sampling["max_tokens"]))}
    try:
        answer = _complete(client, model, prompt, chat, short)
    except EngineResponseError as err:
        if not (chat and no_chat_template(err)):
            raise
        chat = False
        answer = _complete(client, model, prompt, chat, short)
    return chat, len(answer.output_token_ids)


def no_chat_template(err: EngineError) -> bool:
    """Return whether a refused chat request says the tokenizer has no chat template."""
    return "chat template" in str(err).lower()


def _complete(
    client: EngineClient, model: str, prompt: str, chat: bool, sampling: Mapping[str, Any]
) -> Completion:
    """Decode one prompt the way ``client``'s engine counts speculation per request: its
    native ``/generate`` where the counts are read from each answer."""
    if not profile(client.engine).counts_from_metrics:
        return complete_sglang(client, prompt, sampling)
    return complete_openai(client, model, prompt, chat, sampling)
