"""How dflash-check talks to each serving engine: the HTTP profile of each drivable engine.

Each engine module (``knowledge/engines/vllm.py``, ``sglang.py``) holds its own profile
(``HttpProfile``: info endpoints, metric names, where the run's counts come from), with the
engine's code it was read from; this module looks them up and holds the ``--engine`` options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dflash_check.knowledge.engines import registered
from dflash_check.knowledge.engines.serving import HttpProfile

EngineName = str
"""A drivable engine's name (a key of ``profiles()``)."""
EngineProfile = HttpProfile
"""What dflash-check needs to know about one engine's HTTP surface (``serving.py``)."""


def profiles() -> dict[str, HttpProfile]:
    """Return each drivable engine's HTTP profile by name (from the engines listed in
    ``knowledge.engines.registered``)."""
    return {e.name: e.http() for e in registered() if e.drivable and e.http is not None}


def profile(name: str) -> HttpProfile:
    """Return engine ``name``'s HTTP profile (KeyError: not a drivable engine)."""
    return profiles()[name]


ENGINES = profiles()
"""The registered engines' profiles at import; readers that must see a test's added engine
call ``profiles()``."""


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
    compare_bundled: bool = False
    """``--compare-bundled``: decode the pair in the bundled runtime first, and take the
    floor from its tau (``knowledge.acceptance.bundled_floor``)."""
