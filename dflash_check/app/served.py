"""The release an engine the smoke run decodes on actually is: a server's, or the one launched.

The static verdict must be for the engine that will decode, so ``--endpoint`` pins the engine
to the release (and runner) its server reports, and ``--launch`` to the release installed
here, which is the one it starts. A selection that already pins the engine is kept; a server
that says no version, or one this tool does not know, keeps the selection (said on stderr).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from dflash_check.errors import CheckError
from dflash_check.knowledge.selection import (
    Selection,
    SelectionError,
    installed_choice,
    served_choice,
)

if TYPE_CHECKING:
    from dflash_check.engines.profiles import EngineOptions


def endpoint_selection(
    selection: Selection, engine: str, endpoint: str, api_key: str | None, timeout: float
) -> Selection:
    """Return ``selection`` with ``engine`` pinned to what the server at ``endpoint`` reports
    (vLLM ``/version``, SGLang server info): its release, and the runner its build runs."""
    from dflash_check.engines.client import EngineClient, server_info
    from dflash_check.engines.profiles import profile

    if selection.pins(engine):
        return selection
    try:
        info = server_info(EngineClient(engine, endpoint, api_key, timeout), profile(engine))
    except CheckError:
        return selection  # the smoke run reports the unreachable server in its own words
    if info.version is None:
        return selection
    try:
        choice = served_choice(engine, info.version)
    except SelectionError as err:
        from dflash_check.sanitize import one_line

        # The version is the server's (already one line); the error quotes it too.
        line = f"dflash-check: the server reports {engine} {info.version}: {err}"
        sys.stderr.write(one_line(line) + "\n")
        return selection
    return selection.pinned(choice)


def launch_selection(selection: Selection, engine: str) -> Selection:
    """Return ``selection`` with ``engine`` pinned to the release installed here, the one
    ``--launch`` starts (an engine not installed as a package keeps the selection)."""
    if selection.pins(engine):
        return selection
    try:
        choice = installed_choice(engine)
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
        return launch_selection(selection, engine.engine)
    if not engine.endpoint:
        return selection
    return endpoint_selection(
        selection, engine.engine, engine.endpoint, engine.api_key, engine.timeout
    )
