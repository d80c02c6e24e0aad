"""Smoke-run a pair in a real serving engine (vLLM, SGLang) instead of the bundled runtime.

Targets that need more than one GPU (tensor or pipeline parallel, several nodes) are served by
engines that already run speculative decoding and count its acceptance. ``attach`` uses one the
user started with the draft as its speculative model: it confirms what the server serves, sends
the smoke prompts (greedy, fixed seed, the bundled runtime's prompts and token budget), and
reads the engine's acceptance counters before and after. No torch here, and HTTP is the
standard library's: nothing beyond the check path's own dependencies.

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

import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from dflash_check.engines.http import (
    AnswerFormatError,
    AnswerTooLarge,
    DeadlinePassed,
    Endpoint,
    EndpointError,
    RedirectRefused,
    TransportError,
    parse_endpoint,
    parse_json,
    request,
)
from dflash_check.engines.prometheus import (
    MetricsFormatError,
    Sample,
    by_label,
    parse_metrics,
    total,
)
from dflash_check.errors import CheckError
from dflash_check.sanitize import one_line, shorten
from dflash_check.smoke.report import (
    EngineFailure,
    EngineRun,
    SmokeCase,
    SmokeReport,
    SpecCounts,
)
from dflash_check.sources.interface import ModelRef

EngineName = Literal["vllm", "sglang"]


class EngineError(CheckError):
    """A serving engine could not give a smoke verdict (exit 3)."""


class EngineUnreachableError(EngineError):
    """The server did not answer: refused, timed out, or not HTTP."""


class EngineResponseError(EngineError):
    """The server answered with an error status or with something that is not what it should be."""


class WrongModelError(EngineError):
    """The server serves another target (or another draft) than the pair's."""


class MissingMetricsError(EngineError):
    """``/metrics`` lacks the engine's speculative-decoding counters."""


class CountersNotMovingError(EngineError):
    """The speculative counters did not move while the prompts decoded (no speculation ran)."""


class ImplausibleAnswerError(EngineResponseError):
    """The server's numbers cannot be true (out of range, non-finite, or contradicting each
    other): no verdict is given from them (exit 3)."""


class SharedServerError(EngineError):
    """Other requests ran on the server during the smoke run: the counters are not ours alone."""


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
    "sglang": EngineProfile(
        name="sglang",
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
    "vllm": EngineProfile(
        name="vllm",
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


# --- HTTP -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineClient:
    """JSON and text over HTTP to one server, every failure turned into one ``EngineError``.

    The transport (``runtime/http.py``) bounds each request in time and size and refuses
    redirects to another origin; ``base`` is the endpoint as messages show it, without any
    ``user:password@`` the URL held.
    """

    engine: str
    base: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 300.0
    endpoint: Endpoint = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            endpoint = parse_endpoint(self.base)
        except EndpointError as err:
            raise EngineUnreachableError(f"{self.engine} endpoint: {err}") from None
        object.__setattr__(self, "endpoint", endpoint)
        object.__setattr__(self, "base", endpoint.display)

    def url(self, path: str) -> str:
        """Return the absolute URL of ``path`` (as shown: without credentials)."""
        return self.base + path

    def fetch(self, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, bytes]:
        """GET ``path`` (POST JSON when ``body`` is given); return (status, body) of any answer."""
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            answer = request(
                self.endpoint,
                path,
                timeout=self.timeout,
                body=data,
                headers=headers,
                api_key=self.api_key,
            )
        except DeadlinePassed:
            raise EngineUnreachableError(
                f"{self.engine} server at {self.base} did not answer {path} within "
                f"{self.timeout:g} s",
                hint="raise --engine-timeout for a slow server",
            ) from None
        except AnswerTooLarge as err:
            raise EngineResponseError(
                f"{self.engine} server at {self.base}: {path} answer refused ({err})"
            ) from None
        except RedirectRefused as err:
            raise EngineResponseError(
                f"{self.engine} server at {self.base}: {path}: {err}"
            ) from None
        except TransportError as err:
            raise EngineUnreachableError(
                f"{self.engine} server at {self.base} is not reachable ({err})",
                hint=f"start the server first, or point --endpoint at it (tried {self.url(path)})",
            ) from None
        return answer.status, answer.body

    def parse(self, path: str, raw: bytes) -> Any:
        """Return ``raw`` parsed as JSON, or raise one error naming the endpoint and path."""
        try:
            return parse_json(raw)
        except AnswerFormatError as err:
            raise EngineResponseError(
                f"{self.engine} server at {self.base}: {path} did not answer valid JSON ({err})"
            ) from None

    def json(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """Return the JSON answer of ``path``; a non-2xx status or non-JSON is an error."""
        status, raw = self.fetch(path, body)
        if status == 401 or status == 403:
            raise EngineResponseError(
                f"{self.engine} server at {self.base} refused {path} (HTTP {status})",
                hint="pass the server's key with --engine-api-key (or DFLASH_CHECK_ENGINE_API_KEY)",
            )
        if not 200 <= status < 300:
            raise EngineResponseError(
                f"{self.engine} server at {self.base} answered {path} with HTTP {status}: "
                f"{_first_line(raw)}"
            )
        return self.parse(path, raw)


def _first_line(raw: bytes, limit: int = 160) -> str:
    """Return the first line of an answer body, shortened, for an error message."""
    text = raw[: 64 * 1024].decode("utf-8", "replace").strip()
    try:  # FastAPI and the OpenAI servers wrap errors as {"detail": …} or {"error": {"message"…}}
        data = parse_json(text.encode())
        if isinstance(data, dict):
            inner = data.get("error", data.get("detail", data.get("message", text)))
            text = str(inner.get("message", inner) if isinstance(inner, dict) else inner)
    except (ValueError, RecursionError):
        pass
    line = one_line(text.splitlines()[0]) if text else "empty body"
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- what the server serves -------------------------------------------------------------------


def _names(model: Mapping[str, Any]) -> list[str]:
    """Return the names one /v1/models entry goes by (its id and, on vLLM, its root path)."""
    return [str(v) for v in (model.get("id"), model.get("root")) if isinstance(v, str) and v]


def same_model(served: str, spec: str) -> bool:
    """Return whether a served model name denotes the model given as ``spec``.

    A Hub id matches itself; a local path or a ``--served-model-name`` alias matches by its last
    component (``/models/Qwen3-8B`` serves ``Qwen/Qwen3-8B``), case-insensitively, because
    engines show whatever path or alias they were started with.
    """
    a, b = served.strip().rstrip("/"), spec.strip().rstrip("/")
    if a.lower() == b.lower():
        return True
    return PurePosixPath(a).name.lower() == PurePosixPath(b).name.lower() != ""


def served_model(client: EngineClient, target: ModelRef) -> str:
    """Return the /v1/models id that serves ``target``, or raise ``WrongModelError``."""
    data = client.json("/v1/models")
    models = data.get("data") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models:
        raise EngineResponseError(
            f"{client.engine} server at {client.base}: /v1/models lists no model"
        )
    for model in models:
        if isinstance(model, dict) and any(same_model(n, target.spec) for n in _names(model)):
            return str(model["id"])
    listed = shorten([str(m.get("id")) for m in models[:6] if isinstance(m, dict)], limit=5)
    if len(models) > 6:
        listed = f"{listed} ({len(models)} models in all)"
    raise WrongModelError(
        f"{client.engine} server at {client.base} serves {listed}, not the target {target.spec}",
        hint="point --endpoint at the server of this pair's target (a --served-model-name "
        "alias must end in the target's name, e.g. Qwen3-8B)",
    )


@dataclass(frozen=True)
class ServerInfo:
    """What an engine says about itself (fields it does not report stay None)."""

    version: str | None = None
    draft_model: str | None = None
    speculative_algorithm: str | None = None
    draft_tokens: int | None = None
    """SGLang ``speculative_num_draft_tokens`` (= the draft's block size)."""
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None


def _int_or_none(value: Any) -> int | None:
    """Return ``value`` as an int when it is a finite JSON number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) else None


MAX_DRAFT_POSITIONS = 1024
"""Most draft tokens per step a server's numbers are believed for (block sizes, per-position
series, histogram entries): real drafts propose 1-64. Checked before anything is sized by it."""
MAX_PARALLEL = 1 << 16
"""Largest tensor- or pipeline-parallel size believed."""


def bounded_int(value: Any, where: str, field_name: str, low: int, high: int) -> int | None:
    """Return a server-reported count, None when absent, or raise naming the field when it is
    not an integer in ``low..high`` (``where`` names the server and path)."""
    if value is None:
        return None
    number = _int_or_none(value)
    if number is None or number != value or not low <= number <= high:
        shown = one_line(repr(value))[:40]
        raise ImplausibleAnswerError(
            f"{where}: {field_name} = {shown} is not an integer in {low}..{high}"
        )
    return number


def _text_or_none(value: Any, limit: int = 400) -> str | None:
    """Return a server-reported name, shortened (it is shown, never parsed further)."""
    if value is None or value == "":
        return None
    text = str(value) if isinstance(value, (str, int, float)) else one_line(repr(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _vllm_speculative(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Return (draft model, method) from vLLM's ``/server_info``: its ``vllm_config`` is a
    JSON object with ``config_format=json``, else the config's text, where the speculative
    config reads ``SpeculativeConfig(method='dflash', model='…', num_spec_tokens=15)``
    (``vllm==0.33.0:vllm/config/speculative.py:2196-2210``)."""
    config = data.get("vllm_config")
    if isinstance(config, dict):
        spec = config.get("speculative_config")
        if isinstance(spec, dict):
            model, method = spec.get("model"), spec.get("method")
            return (
                str(model) if isinstance(model, str) and model else None,
                str(method) if isinstance(method, str) and method else None,
            )
        return None, None
    if isinstance(config, str):
        found = re.search(r"SpeculativeConfig\(method='([^']*)', model='([^']*)'", config)
        if found:
            return found.group(2) or None, found.group(1) or None
    return None, None


def server_info(client: EngineClient, profile: EngineProfile) -> ServerInfo:
    """Ask the engine's own info endpoints; fields no endpoint reports stay None."""
    merged: dict[str, Any] = {}
    for path in profile.info_paths:
        status, raw = client.fetch(path)
        if status == 404:
            continue
        if not 200 <= status < 300:
            raise EngineResponseError(
                f"{client.engine} server at {client.base} answered {path} with HTTP {status}: "
                f"{_first_line(raw)}"
            )
        if raw.lstrip()[:1] not in (b"{", b"["):
            continue  # not JSON at all: an engine without this info endpoint
        data = client.parse(path, raw)
        if not isinstance(data, dict):
            continue
        # SGLang nests the server arguments at the top level of /get_server_info (newer
        # releases keep them there and add internal states); vLLM's /version is {"version"}.
        where = f"{client.engine} server at {client.base}: {path}"
        draft, algorithm = (
            data.get("speculative_draft_model_path"),
            data.get("speculative_algorithm"),
        )
        if profile.name == "vllm":
            draft, algorithm = _vllm_speculative(data)
        found = {
            "version": _text_or_none(data.get("version"), 100),
            "draft_model": _text_or_none(draft),
            "speculative_algorithm": _text_or_none(algorithm, 100),
            "draft_tokens": bounded_int(
                data.get("speculative_num_draft_tokens"),
                where,
                "speculative_num_draft_tokens",
                1,
                MAX_DRAFT_POSITIONS,
            ),
            "tensor_parallel": bounded_int(data.get("tp_size"), where, "tp_size", 1, MAX_PARALLEL),
            "pipeline_parallel": bounded_int(
                data.get("pp_size"), where, "pp_size", 1, MAX_PARALLEL
            ),
        }
        for key, value in found.items():
            if merged.get(key) is None:
                merged[key] = value
    return ServerInfo(**merged)


def check_draft(client: EngineClient, info: ServerInfo, draft: ModelRef, engine: str) -> None:
    """Refuse a server that reports no speculation, or a draft other than the pair's."""
    if engine == "sglang" and info.speculative_algorithm is None and info.version is not None:
        raise MissingMetricsError(
            f"sglang server at {client.base} runs without speculative decoding "
            "(speculative_algorithm is unset)",
            hint=ENGINES["sglang"].metrics_hint,
        )
    if info.draft_model is not None and not same_model(info.draft_model, draft.spec):
        raise WrongModelError(
            f"{engine} server at {client.base} drafts with {info.draft_model}, not the draft "
            f"{draft.spec}",
            hint="restart the server with this pair's draft as its speculative model",
        )


# --- metrics ----------------------------------------------------------------------------------


def scrape(client: EngineClient) -> tuple[Sample, ...]:
    """Return the samples of ``/metrics``."""
    status, raw = client.fetch("/metrics")
    if status == 404:
        raise MissingMetricsError(
            f"{client.engine} server at {client.base} has no /metrics endpoint",
            hint=ENGINES[client.engine].metrics_hint,
        )
    if not 200 <= status < 300:
        raise EngineResponseError(
            f"{client.engine} server at {client.base} answered /metrics with HTTP {status}"
        )
    profile = ENGINES[client.engine]
    # Only the series the run reads are kept: a server's thousands of others cost nothing.
    wanted = {
        n
        for n in (
            profile.metric_drafts,
            profile.metric_draft_tokens,
            profile.metric_accepted,
            profile.metric_accepted_per_pos,
            profile.metric_generated,
            profile.metric_required,
        )
        if n
    }
    try:
        samples = parse_metrics(raw.decode("utf-8", "replace"), names=wanted)
    except MetricsFormatError as err:
        raise EngineResponseError(
            f"{client.engine} server at {client.base}: /metrics is not Prometheus text "
            f"({one_line(str(err))})"
        ) from None
    for sample in samples:
        if not math.isfinite(sample.value) or sample.value < 0:
            raise ImplausibleAnswerError(
                f"{client.engine} server at {client.base}: /metrics: {sample.name} = "
                f"{sample.value:g} is not a count"
            )
    return samples


def settled(
    client: EngineClient,
    profile: EngineProfile,
    before: Sequence[Sample],
    generated: int,
    wait: float = 0.25,
    limit: float = 10.0,
) -> tuple[Sample, ...]:
    """Scrape ``/metrics`` until the run's counts are all in (at most ``limit`` s).

    vLLM records a step's statistics after it has handed the step's tokens to the API server,
    so the last answer can arrive before its counts do. The counts are in once the
    generated-tokens counter has grown by the tokens the run received (it is recorded with the
    speculative counters) and two scrapes in a row agree. SGLang's counts come with each answer.
    """
    after = scrape(client)
    if profile.metric_drafts is None:
        return after
    names = [profile.metric_drafts, profile.metric_accepted, profile.metric_generated]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        grown = _delta(before, after, profile.metric_generated)
        time.sleep(wait)
        again = scrape(client)
        stable = all(total(again, n) == total(after, n) for n in names if n)
        if stable and (grown is None or grown >= generated):
            return again
        after = again
    return after


def require_metrics(
    client: EngineClient, profile: EngineProfile, samples: Sequence[Sample]
) -> None:
    """Refuse a ``/metrics`` without the speculative series (speculation off, or stats off)."""
    if total(samples, profile.metric_required) is None:
        raise MissingMetricsError(
            f"{profile.name} server at {client.base}: /metrics has no {profile.metric_required} "
            "(speculative decoding is off, or its statistics are not exported)",
            hint=profile.metrics_hint,
        )


def _delta(before: Sequence[Sample], after: Sequence[Sample], name: str | None) -> float | None:
    """Return how much a counter grew (None when absent; a restart shows as negative)."""
    if name is None:
        return None
    a, b = total(before, name), total(after, name)
    return None if a is None or b is None else b - a


def vllm_counts(
    client: EngineClient, before: Sequence[Sample], after: Sequence[Sample]
) -> tuple[SpecCounts, int]:
    """Return the run's vLLM counter deltas and the number of positions vLLM drafts (K)."""
    p = ENGINES["vllm"]
    drafts = _delta(before, after, p.metric_drafts)
    drafted = _delta(before, after, p.metric_draft_tokens)
    accepted = _delta(before, after, p.metric_accepted)
    missing = [
        n
        for n, v in (
            (p.metric_drafts, drafts),
            (p.metric_draft_tokens, drafted),
            (p.metric_accepted, accepted),
        )
        if v is None
    ]
    if missing:
        raise MissingMetricsError(
            f"vllm server at {client.base}: /metrics lacks {', '.join(str(m) for m in missing)}",
            hint=p.metrics_hint,
        )
    assert drafts is not None and drafted is not None and accepted is not None  # narrowed above
    if drafts < 0 or drafted < 0 or accepted < 0:
        raise EngineResponseError(
            f"vllm server at {client.base}: the speculative counters went down during the run "
            "(the server restarted)"
        )
    pos_name = str(p.metric_accepted_per_pos)
    pos_before = by_label(before, pos_name, "position")
    pos_after = by_label(after, pos_name, "position")
    # vLLM numbers positions from 0 and creates one series per speculative token up front.
    where = f"vllm server at {client.base}: /metrics"
    for label in pos_after.keys() | pos_before.keys():
        # Plain ASCII decimals only: "²".isdigit() is true, and int() refuses it.
        if not (label.isascii() and label.isdigit() and int(label) < MAX_DRAFT_POSITIONS):
            raise ImplausibleAnswerError(
                f"{where}: {pos_name} has position={one_line(label)[:40]!r}, not a draft "
                f"position 0..{MAX_DRAFT_POSITIONS - 1}"
            )
    positions = sorted(int(k) for k in pos_after)
    per_pos = tuple(
        round(pos_after.get(str(j), 0.0) - pos_before.get(str(j), 0.0)) for j in positions
    )
    if any(n < 0 for n in per_pos):
        raise EngineResponseError(
            f"{where}: {pos_name} went down during the run (the server restarted)"
        )
    counts = SpecCounts(
        steps=round(drafts),
        drafted_tokens=round(drafted),
        accepted_tokens=round(accepted),
        accepted_per_position=per_pos,
    )
    return counts, len(positions)


def check_counts(counts: SpecCounts, block_size: int, where: str) -> None:
    """Refuse counters that cannot be true, naming the first impossibility (exit 3).

    Each holds for any engine: counts are not negative; a step cannot accept more tokens than
    were drafted; a step commits at most its block (``block_size`` drafts and the bonus token),
    so tau <= block size + 1 leaves room for an engine that drafts a whole block; a position is
    accepted at most once per step, and the histogram has one entry per step.
    """
    problems = []
    for name, value in (
        ("verify steps", counts.steps),
        ("drafted tokens", counts.drafted_tokens),
        ("accepted tokens", counts.accepted_tokens),
    ):
        if value < 0:
            problems.append(f"{name} counted negative ({value})")
    if counts.accepted_tokens > counts.drafted_tokens:
        problems.append(
            f"{counts.accepted_tokens} accepted draft tokens but only "
            f"{counts.drafted_tokens} drafted"
        )
    if counts.steps > 0 and (counts.accepted_tokens + counts.steps) > counts.steps * (
        block_size + 1
    ):
        tau = (counts.accepted_tokens + counts.steps) / counts.steps
        problems.append(f"tau {tau:.4g} above the block size + 1 ({block_size + 1})")
    if any(n < 0 or n > max(counts.steps, 0) for n in counts.accepted_per_position):
        problems.append(f"a per-position count outside 0..{counts.steps} steps")
    if counts.accepted_histogram and (
        any(n < 0 for n in counts.accepted_histogram)
        or sum(counts.accepted_histogram) > max(counts.steps, 0)
    ):
        problems.append(f"an acceptance histogram that does not add up to {counts.steps} steps")
    if problems:
        raise ImplausibleAnswerError(
            f"{where}: the speculative counters cannot be true: {problems[0]}",
            hint="check the server's metrics (and that it is the engine it claims to be)",
        )


def sglang_counts(
    metas: Sequence[Mapping[str, Any]], block_size: int, where: str = "sglang server"
) -> SpecCounts:
    """Add up SGLang's per-request ``meta_info`` counters over the run.

    Field names changed across releases, so each value is read from the names SGLang has used
    (``spec_num_correct_drafts`` / ``spec_accepted_drafts`` / ``spec_accept_token_num``, and
    ``spec_correct_drafts_histogram`` / ``spec_accept_histogram``). Without them, accepted
    tokens follow from ``completion_tokens``: the first token comes from the prefill and each
    verify step commits its accepted drafts plus one.
    """

    def first(meta: Mapping[str, Any], *names: str) -> Any:
        for n in names:
            if meta.get(n) is not None:
                return meta[n]
        return None

    steps = drafted = accepted = 0
    histogram: list[int] = []
    have_hist = True
    for meta in metas:
        verify = _int_or_none(meta.get("spec_verify_ct"))
        completion = _int_or_none(meta.get("completion_tokens"))
        if verify is None or completion is None:
            raise MissingMetricsError(
                "sglang /generate answered without spec_verify_ct (speculative decoding is off)",
                hint=ENGINES["sglang"].metrics_hint,
            )
        steps += verify
        acc = _int_or_none(
            first(meta, "spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num")
        )
        accepted += acc if acc is not None else max(completion - 1 - verify, 0)
        proposed = _int_or_none(
            first(meta, "spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num")
        )
        drafted += proposed if proposed is not None else verify * (block_size - 1)
        hist = first(meta, "spec_correct_drafts_histogram", "spec_accept_histogram")
        if isinstance(hist, list) and len(hist) > MAX_DRAFT_POSITIONS + 1:
            raise ImplausibleAnswerError(
                f"{where}: /generate meta_info: an acceptance histogram of {len(hist)} entries "
                f"(at most {MAX_DRAFT_POSITIONS + 1} believed)"
            )
        if isinstance(hist, list) and all(
            isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in hist
        ):
            if len(histogram) < len(hist):
                histogram += [0] * (len(hist) - len(histogram))
            for i, h in enumerate(hist):
                histogram[i] += h
        elif verify:
            have_hist = False
    return SpecCounts(
        steps=steps,
        drafted_tokens=drafted,
        accepted_tokens=accepted,
        accepted_histogram=tuple(histogram) if have_hist and histogram else (),
    )


# --- prompts ----------------------------------------------------------------------------------


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
    min_acceptance: float,
    block_size: int | None,
    options: EngineOptions,
    on_progress: Callable[[str], None] | None = None,
) -> SmokeReport:
    """Decode the prompts on a running engine; measure tau from its own counters.

    ``block_size`` is the draft's (or ``--block-size``); vLLM's per-position series and
    SGLang's server info tell the block the engine really drafts, and win when present.
    """
    say = on_progress or (lambda _text: None)
    profile = ENGINES[options.engine]
    client = EngineClient(options.engine, options.endpoint, options.api_key, options.timeout)
    say(f"asking {client.base} what it serves")
    model = served_model(client, target)
    info = server_info(client, profile)
    check_draft(client, info, draft, options.engine)
    before = scrape(client)
    require_metrics(client, profile, before)
    baseline = None
    base_model = None
    if options.baseline_endpoint:
        baseline = EngineClient(
            options.engine, options.baseline_endpoint, options.api_key, options.timeout
        )
        base_model = served_model(baseline, target)
    block = info.draft_tokens or block_size or 16
    # SGLang's /generate takes raw text: the chat template is vLLM-only here.
    chat = chat_template and options.engine == "vllm"
    sampling = {"temperature": temperature, "max_tokens": max_new_tokens, "seed": seed}
    if temperature <= 0:
        sampling["temperature"] = 0.0  # greedy in both engines
    answers: list[Completion] = []
    bases: list[Completion | None] = []
    prompts_note = None
    for i, prompt in enumerate(prompts):
        say(f"decoding prompt {i + 1}/{len(prompts)} on {options.engine}")
        try:
            answers.append(_complete(client, model, prompt, chat, sampling))
        except EngineResponseError as err:
            if not (chat and i == 0 and no_chat_template(err)):
                raise
            # The served tokenizer has no chat template: raw prompts, as the bundled runtime.
            chat = False
            prompts_note = "the served tokenizer has no chat template: prompts sent raw"
            answers.append(_complete(client, model, prompt, chat, sampling))
        if baseline is not None:
            assert base_model is not None
            bases.append(_complete(baseline, base_model, prompt, chat, sampling))
        else:
            bases.append(None)
    generated = sum(len(a.output_token_ids) for a in answers)
    after = settled(client, profile, before, generated)
    if options.engine == "vllm":
        counts, positions = vllm_counts(client, before, after)
        block = positions + 1 if positions else block
    else:
        counts = sglang_counts([a.meta for a in answers], block, f"sglang server at {client.base}")
    if counts.steps == 0:
        raise CountersNotMovingError(
            f"{options.engine} server at {client.base}: {generated} tokens decoded but the "
            "speculative counters did not move (the server decoded without its draft)",
            hint=profile.metrics_hint,
        )
    check_counts(counts, block, f"{options.engine} server at {client.base}")
    grown = _delta(before, after, profile.metric_generated)
    if grown is not None and options.engine == "vllm" and round(grown) > generated:
        raise SharedServerError(
            f"vllm server at {client.base} generated {round(grown)} tokens during the "
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
        tensor_parallel=info.tensor_parallel or options.tensor_parallel,
        pipeline_parallel=info.pipeline_parallel or options.pipeline_parallel,
        baseline_endpoint=baseline.base if baseline is not None else None,
    )
    return SmokeReport(
        device=options.engine,
        dtype="as served",
        block_size=block,
        temperature=temperature,
        min_acceptance=min_acceptance,
        cases=tuple(cases),
        engine=run,
        counts=counts,
        prompts_note=prompts_note,
    )


def no_chat_template(err: EngineError) -> bool:
    """Return whether a refused chat request says the tokenizer has no chat template."""
    return "chat template" in str(err).lower()


def _complete(
    client: EngineClient, model: str, prompt: str, chat: bool, sampling: Mapping[str, Any]
) -> Completion:
    """Decode one prompt the way ``client``'s engine counts speculation per request."""
    if client.engine == "sglang":
        return complete_sglang(client, prompt, sampling)
    return complete_openai(client, model, prompt, chat, sampling)


# --- the launch flow --------------------------------------------------------------------------


class EngineStartError(EngineError):
    """The engine dflash-check started exited, or was not ready in time."""


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port nothing listens on now (for an engine dflash-check starts itself)."""
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 20) -> list[str]:
    """Return the last non-empty lines of an engine log."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def _why(tail: list[str]) -> str:
    """Return the most telling line of a failed start (an OOM, else the last line)."""
    for line in reversed(tail):
        if "out of memory" in line.lower():
            return f"out of GPU memory: {line.strip()[:200]}"
    return tail[-1].strip()[:200] if tail else "no output"


@contextmanager
def launched(
    argv: Sequence[str],
    engine: str,
    url: str,
    timeout: float,
    log_path: Path,
    on_progress: Callable[[str], None] | None = None,
    poll: float = 0.5,
    ready: threading.Event | None = None,
) -> Iterator[None]:
    """Start the engine, wait until ``/health`` answers 200, and stop it when the block ends.

    The engine's output goes to ``log_path``, which is kept: every error names it. The engine
    runs in its own process group, because both engines start worker processes (one per GPU)
    that must stop with it.
    """
    say = on_progress or (lambda _text: None)
    client = EngineClient(engine, url, timeout=5.0)
    with log_path.open("wb") as log:
        try:
            proc = subprocess.Popen(
                list(argv), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as err:
            raise EngineStartError(
                f"cannot start {engine}: {argv[0]}: {err.strerror or err}",
                hint=f"install {engine} on this machine, or name its executable with "
                "--engine-binary; --print-command shows the command to run elsewhere",
            ) from None
        try:
            start = time.monotonic()
            while True:
                code = proc.poll()
                if code is not None:
                    raise EngineStartError(
                        f"{engine} exited with code {code} before it was ready "
                        f"({_why(log_tail(log_path))}); its log is {log_path}"
                    )
                try:
                    status, _ = client.fetch("/health")
                    if status == 200:
                        if ready is not None:
                            ready.set()
                        break
                except EngineUnreachableError:
                    pass  # not listening yet
                waited = time.monotonic() - start
                if waited > timeout:
                    raise EngineStartError(
                        f"{engine} was not ready after {timeout:g} s; its log is {log_path}",
                        hint="raise --launch-timeout (loading a 400B target takes minutes)",
                    )
                say(f"starting {engine} ({waited:.0f} s; log {log_path})")
                time.sleep(poll)
            yield
        finally:
            stop_process(proc)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Stop an engine we started: SIGTERM to its process group, SIGKILL after ``grace`` s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(grace)
    except ProcessLookupError:
        pass


class EngineRunFailedError(EngineError):
    """The engine dflash-check launched failed at start or at the first decode: a failed smoke
    run (exit 1, the static verdict kept), not a tool error."""

    def __init__(self, failure: EngineFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


# A raised exception's last traceback line, bare or after vLLM's prefixes: the process,
# then for logged tracebacks the ERROR level, date, time and source ("(Worker pid=3176) ERROR
# 12-03 15:34:46 [multiproc_executor.py:1063] ValueError: …"); not an exception named inside
# a message ("WARNING … `OSError: …`").
_EXCEPTION_LINE = re.compile(
    r"^(?:\([^)]*\)\s*)?(?:(?:ERROR|CRITICAL)\s+\S+\s+\S+\s+\[[^\]]*\]\s*)?"
    r"((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)): (\S.*)$"
)
# Lines that only point elsewhere: vLLM's front end re-raises the engine core's failure with
# "See root cause above" / "See stack trace (above) for the root cause".
_WRAPPER = re.compile(r"above|EngineDeadError|EngineGenerateError", re.IGNORECASE)


def root_cause(log_path: Path, limit: int = 300) -> str | None:
    """Return the engine log's first exception line that is not a wrapper pointing above it:
    the engine re-raises the root cause through its workers and front end ("Worker failed
    with error '…'", "EngineDeadError … See stack trace (above)"), each logged after it."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    found = None
    for line in text.splitlines():
        match = _EXCEPTION_LINE.match(line.strip())
        if match and not _WRAPPER.search(line):
            found = f"{match.group(1)}: {match.group(2)}".strip()
            break
    if found is None:
        return None
    return found if len(found) <= limit else found[: limit - 1] + "…"


def launch_failure(
    err: EngineError, engine: str, log_path: Path, ready: bool, url: str
) -> EngineError:
    """Return the error to raise when the engine dflash-check started failed.

    Before /health answered, an exit is a failed start; after it, a failed request (an HTTP
    500, a dropped connection) is a failure at the first decode. Both are smoke-run failures
    with the engine log's root cause quoted. A timeout, a missing executable or an
    out-of-memory exit stays a tool error (exit 3): it says nothing about the pair.
    """
    exited = isinstance(err, EngineStartError) and "exited with code" in str(err)
    if not ready and (not exited or "out of GPU memory" in str(err)):
        return err  # the machine, not the pair: too little memory, no engine, too slow
    # Only an error of the launched server counts (not one of the --baseline-endpoint server).
    crashed = f"server at {url} " in str(err) and (
        isinstance(err, EngineUnreachableError)
        or (isinstance(err, EngineResponseError) and " HTTP 5" in str(err))
    )
    if ready and not crashed:
        return err  # a wrong model, missing metrics…: the server ran; the error says why
    failure = EngineFailure(
        stage="first decode" if ready else "start",
        message=str(err).split("; its log is")[0],
        root_cause=root_cause(log_path),
        log=str(log_path),
    )
    return EngineRunFailedError(failure)
