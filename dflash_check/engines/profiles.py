"""How dflash-check talks to each serving engine: its HTTP surface and metric names.

Where each engine keeps what (read from their sources; paths are in each repository):

* vLLM — counters ``vllm:spec_decode_num_drafts``, ``…_num_draft_tokens``,
  ``…_num_accepted_tokens`` and ``…_num_accepted_tokens_per_pos{position="0".."K-1"}``
  (``vllm-project/vllm:vllm/v1/spec_decode/metrics.py``, ``SpecDecodingProm``); prometheus_client
  exposes counters with a ``_total`` suffix. ``vllm:generation_tokens`` counts every generated
  token (``vllm/v1/metrics/loggers.py``). The OpenAI server answers ``/v1/models`` and
  ``/version`` and returns token ids when asked with ``return_token_ids``
  (``vllm/entrypoints/openai/protocol.py``). Neither names the draft: only ``/server_info``
  does (``vllm_config.speculative_config.model`` with ``config_format=json``), and it exists
  only in dev mode (``VLLM_SERVER_DEV_MODE=1``,
  ``vllm==0.33.0:vllm/entrypoints/serve/dev/server_info/api_router.py:43-59``): elsewhere the
  served draft is reported as not verified. A tokenizer without a chat template makes
  ``/v1/chat/completions`` answer 400 "…you must provide a chat template if the tokenizer does
  not define one" (``vllm==0.33.0:vllm/renderers/hf.py:884-889``): the prompts then go raw to
  ``/v1/completions``, as the bundled runtime encodes them without a template.
* SGLang — ``/metrics`` (with ``--enable-metrics``) has only gauges for speculation,
  ``sglang:spec_accept_length`` and ``sglang:spec_accept_rate``, windowed averages that cannot be
  differenced (``sgl-project/sglang:python/sglang/srt/metrics/collector.py``,
  ``SchedulerMetricsCollector``). Its exact per-request counters are in the ``meta_info`` of the
  native ``/generate`` answer: ``spec_verify_ct``, ``completion_tokens``, the accepted/proposed
  draft counts and the acceptance histogram (``python/sglang/srt/managers/tokenizer_manager.py``,
  ``_calculate_spec_decoding_metrics``). ``/get_server_info`` reports the speculative settings,
  parallelism and version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dflash_check.knowledge.engines import SGLANG, VLLM

EngineName = Literal["vllm", "sglang"]


@dataclass(frozen=True)
class EngineProfile:
    """What dflash-check needs to know about one engine's HTTP surface."""

    name: EngineName
    info_paths: tuple[str, ...]
    """Engine info endpoints, all asked in order (the first to report a field wins; a 404 is
    skipped)."""
    metric_drafts: str | None
    """Counter of verify steps (exposed name), or None when the engine has no such counter."""
    metric_draft_tokens: str | None
    metric_accepted: str | None
    metric_accepted_per_pos: str | None
    metric_generated: str | None
    """Counter of all generated tokens: tells when someone else shares the server."""
    metric_required: str
    """The series whose absence means the server runs without speculation (or without metrics)."""
    metrics_hint: str
    """What to do when ``metric_required`` is missing."""


ENGINES: dict[str, EngineProfile] = {
    SGLANG.name: EngineProfile(
        name=SGLANG.name,
        # /get_server_info is the long-standing path; newer servers also answer /server_info.
        info_paths=("/get_server_info", "/server_info"),
        metric_drafts=None,
        metric_draft_tokens=None,
        metric_accepted=None,
        metric_accepted_per_pos=None,
        metric_generated="sglang:generation_tokens_total",
        metric_required="sglang:spec_accept_length",
        metrics_hint="start SGLang with --enable-metrics and a --speculative-algorithm",
    ),
    VLLM.name: EngineProfile(
        name=VLLM.name,
        # /server_info answers only in dev mode; it is the one place that names the draft.
        info_paths=("/version", "/server_info?config_format=json"),
        metric_drafts="vllm:spec_decode_num_drafts_total",
        metric_draft_tokens="vllm:spec_decode_num_draft_tokens_total",
        metric_accepted="vllm:spec_decode_num_accepted_tokens_total",
        metric_accepted_per_pos="vllm:spec_decode_num_accepted_tokens_per_pos_total",
        metric_generated="vllm:generation_tokens_total",
        metric_required="vllm:spec_decode_num_drafts_total",
        metrics_hint="start vLLM with --speculative-config naming the draft (and without "
        "--disable-log-stats)",
    ),
}
ENGINE_NAMES = tuple(sorted(ENGINES))


@dataclass(frozen=True)
class EngineOptions:
    """The ``--engine`` options."""

    engine: EngineName
    endpoint: str
    baseline_endpoint: str | None = None
    api_key: str | None = field(default=None, repr=False)
    """Sent as ``Authorization: Bearer``; never printed (the CLI redacts it)."""
    timeout: float = 300.0
    """Seconds to wait for one answer (a 400B target decodes slowly)."""
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    mode: Literal["attach", "launch"] = "attach"
    launch_timeout: float = 1800.0
    """``--launch``: seconds to wait for the started engine's /health."""
    binary: str | None = None
    """``--launch``: the Python (or ``vllm`` executable) that starts the engine."""
    extra_args: tuple[str, ...] = ()
    """``--launch``: ``--engine-arg`` values appended to the engine command."""
    trust_served_draft: bool = False
    """``--trust-served-draft``: accept a server that does not name its draft (vLLM without
    dev mode) as serving the pair's; the report still says the draft is not verified."""
