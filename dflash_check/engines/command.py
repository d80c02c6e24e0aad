"""The engine command line that serves a pair with speculative decoding (``--print-command``).

Each drivable engine's module builds its own serve command (``Engine.serve``, with each flag
named as that engine's argument parser spells it and cited there) and says how ``--launch``
runs it (``Engine.launch``: vLLM through its module entry point). This module looks them up
and adds what every engine takes alike (host and port).

Pure: builds argv tuples, runs nothing.
"""

from __future__ import annotations

import shlex
from pathlib import Path, PurePath

from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.engines.interface import (
    DEFAULT_BLOCK_SIZE,
    Engine,
    ServeCommand,
    draft_tokens,
)
from dflash_check.knowledge.engines.serving import LaunchSpec
from dflash_check.knowledge.engines.vllm import MODULE as VLLM_MODULE
from dflash_check.knowledge.settings import without_flags

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "VLLM_MODULE",
    "LaunchSpec",
    "build_command",
    "draft_tokens",
    "launch_command",
    "shell_line",
]


def _serving(name: str) -> tuple[Engine, ServeCommand]:
    """Return the engine called ``name`` and its serve command (ValueError: none)."""
    found = ENGINES_BY_NAME.get(name)
    if found is None or found.serve is None:
        raise ValueError(f"unknown engine {name!r}")
    return found, found.serve


def build_command(spec: LaunchSpec) -> tuple[str, ...]:
    """Return the argv that starts ``spec.engine`` serving the pair, then the user's engine
    arguments (``spec.engine_args``)."""
    found, serve = _serving(spec.engine)
    # The user's engine arguments come last (argparse keeps the last copy of a flag), less the
    # flags the engine's command already wrote from the parsed settings.
    passed = without_flags(spec.engine_args, found.writes)
    return (*serve(spec), "--host", spec.host, "--port", str(spec.port), *passed)


def shell_line(argv: tuple[str, ...]) -> str:
    """Return ``argv`` as one line a POSIX shell runs unchanged (the JSON config quoted)."""
    return shlex.join(argv)


def launch_command(spec: LaunchSpec, binary: str | None = None) -> tuple[str, ...]:
    """Return the argv ``--launch`` runs: ``build_command``'s, as the engine's module says it
    is launched with ``binary`` (``--engine-binary``; None: the engine's default)."""
    found, _ = _serving(spec.engine)
    return found.launch(build_command(spec), binary)


def launch_python(engine: str, binary: str | None) -> str | None:
    """Return the interpreter whose environment ``--launch`` starts ``engine`` from, when
    ``--engine-binary`` names one: the binary itself (engines run as ``PYTHON -m …``), or the
    ``python`` beside the engine's console script (``Engine.console_script``: a virtual
    environment's ``bin/vllm``); None without a binary, or for a script with no interpreter
    beside it."""
    if not binary:
        return None
    path = PurePath(binary)
    script = ENGINES_BY_NAME[engine].console_script
    if script is None or path.name != script:
        return binary
    beside = Path(path.parent / "python")
    return str(beside) if beside.exists() else None
