"""vLLM releases named by what a test needs of them, read from the engine model.

A test that needs "a release that checks the requested method" or "the last release with Model
Runner V1" takes it from here instead of writing its version: adding a release (a row and its
facts file) then edits no test, and a release leaving the list fails here, by name.
"""

from __future__ import annotations

from dflash_check.knowledge.engines import VLLM, Release


def _first(what: str, releases: list[Release]) -> Release:
    if not releases:
        raise LookupError(f"no known vLLM release {what}")
    return releases[0]


CHECKS_METHOD = _first("checks the method", [r for r in VLLM.releases if r.checks_method])
"""The oldest release that checks the requested method against the draft's class (DF054)."""
BEFORE_METHOD_CHECK = _first(
    "before the method check",
    [r for r in reversed(VLLM.releases) if r.checks_method is None],
)
"""The newest release that does not check it."""
WITHOUT_V1 = _first("without Model Runner V1", [r for r in VLLM.releases if not r.has_runner("V1")])
"""The oldest release that removed Model Runner V1 (``-r vllm-v1==`` it is refused)."""
LAST_V1 = _first("with Model Runner V1", [r for r in reversed(VLLM.releases) if r.has_runner("V1")])
"""The newest release that still has Model Runner V1 (what ``-r vllm-v1`` selects)."""
