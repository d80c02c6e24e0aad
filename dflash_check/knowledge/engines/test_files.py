"""How an engine keeps its own speculative test pairings: its engine's test registry.

Filled in the engine's module (``Engine.test_file``), so that ``registry`` learns of an
engine's test registry from the engine's one registration. The reader that parses the file
lives in ``app/engine_tests/`` (it raises the registry's errors); it is named here by its
import path, read when a file of the engine is read, so this room imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineTestFile:
    """How one engine keeps its speculative test pairings, and how they are read."""

    display: str
    """The file and what of it is read, as ``registry --kind``'s help names it."""
    markers: tuple[str, ...]
    """Text only that file has: any of it tells the file apart."""
    version_files: tuple[tuple[str, ...], ...]
    """Where a checkout (or an unpacked wheel) states its release, relative to the test file.
    Both engines generate ``_version.py`` when built (setuptools-scm), so a git checkout that
    was never built or installed has none: its release is then reported as unknown."""
    reader: str
    """The reader, ``module:function``: the file's text and its display name -> its entries
    (``app.engine_tests.parsing.EngineEntry``)."""
    asks_method: bool
    """Whether an entry's stated method is what the engine's test asks for (vLLM checks it
    against the draft's class at load)."""
    key_methods: Mapping[str, str] | None = None
    """Entry key -> method, matched whole (SGLang's constant suffixes); None: the method is
    read from the key's name (vLLM's draft architectures)."""
