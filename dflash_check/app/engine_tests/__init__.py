"""Serving engines' own test pairings, read as the registry reads ``pairs.yaml``.

vLLM keeps its speculative examples in ``tests/models/registry.py``
(``_SPECULATIVE_DECODING_EXAMPLE_MODELS``), SGLang in ``python/sglang/test/test_utils.py``
(``DEFAULT_DRAFT_MODEL_X`` / ``DEFAULT_TARGET_MODEL_X`` constants). Both files are Python; they
are parsed with ``ast`` and never imported or run, so a checkout of any age can be gated
without installing the engine. Each reader yields ``EngineEntry`` values; ``plan.py`` decides
which are checked (and how) and which are listed as not checked with their reason. Which
engines have such a file, and how it is told apart and read, is the engine module's
``Engine.test_file``: an engine's one registration.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

# parse_python is the readers' parser, named here for the tests of the readers.
from dflash_check.app.engine_tests.parsing import EngineEntry, parse_python
from dflash_check.errors import ConfigError, RegistryError
from dflash_check.knowledge.engines import engines_with_test_files
from dflash_check.knowledge.engines.test_files import EngineTestFile
from dflash_check.sanitize import data
from dflash_check.sources.local import read_capped

Kind = str
"""``pairs``, or the engine whose test file it is (``Engine.test_file``)."""
PAIRS: Kind = "pairs"
"""The kind of a pairs file (``app/pairs_run.py``), the one kind that is no engine's."""


@dataclass(frozen=True)
class EngineFile:
    """An engine's test file, read."""

    engine: str
    """Which engine wrote it."""
    version: str | None
    """The engine release the checkout belongs to, when the checkout says so."""
    entries: tuple[EngineEntry, ...]
    """Every speculative entry, in file order (commented-out ones included)."""


def read_text(path: Path, display: str) -> str:
    """Read a registry file (bounded like ``pairs.yaml``) as UTF-8, one clear error otherwise."""
    try:
        data = read_capped(path, "pairs.yaml", "registry", display)
    except ConfigError as err:
        raise RegistryError(str(err).removeprefix("registry: ")) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RegistryError(f"{display}: not UTF-8 text (byte {err.start})") from None


def engine_test_file(engine: str) -> EngineTestFile:
    """Return how ``engine``'s test file is read (KeyError: an engine without one)."""
    found = next((e.test_file for e in engines_with_test_files() if e.name == engine), None)
    if found is None:
        raise KeyError(engine)
    return found


def read_entries(engine: str, text: str, display: str) -> tuple[EngineEntry, ...]:
    """Read ``engine``'s test file with the reader its engine module names
    (``EngineTestFile.reader``), imported when a file of that engine is read."""
    module, function = engine_test_file(engine).reader.split(":")
    reader: Callable[[str, str], tuple[EngineEntry, ...]] = getattr(import_module(module), function)
    return reader(text, display)


def detect_kind(path: Path, text: str) -> Kind:
    """Tell an engine's test file (``Engine.test_file``) and ``pairs.yaml`` apart by their content
    (a ``.yaml`` file is always a pairs file: its comments may name anything)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return PAIRS
    found = next(
        (e for e in engines_with_test_files() if any(m in text for m in e.test_file.markers)),
        None,
    )
    return found.name if found is not None else PAIRS


def load_engine_file(path: Path, display: str, kind: Kind, text: str) -> EngineFile:
    """Read an engine's test file of ``kind`` (an engine with a ``test_file``)."""
    return EngineFile(kind, checkout_version(path, kind), read_entries(kind, text, display))


# ``__version__ = version = '0.34.0'`` (setuptools-scm) or ``__version__ = "0.5.23"``.
_VERSION = re.compile(
    r"""^__version__\s*=\s*(?:version\s*=\s*)?["']([0-9][^"']*)["']""", re.MULTILINE
)


def checkout_version(path: Path, engine: str) -> str | None:
    """Return the release the checkout's version file states (read as text, never imported)."""
    folder = path.resolve().parent
    for parts in engine_test_file(engine).version_files:
        candidate = folder.joinpath(*parts)
        try:
            text = read_capped(candidate, "config.json", "registry")
        except (ConfigError, OSError):
            continue
        found = _VERSION.search(text.decode("utf-8", "replace"))
        if found:
            # Shown in every format's messages: one line, cut (a 3 MB or multi-line "version"
            # from a pull request must not reach the CI log as it is).
            return data(found.group(1))
    return None


__all__ = [
    "PAIRS",
    "EngineEntry",
    "EngineFile",
    "EngineTestFile",
    "Kind",
    "checkout_version",
    "detect_kind",
    "engine_test_file",
    "load_engine_file",
    "parse_python",
    "read_entries",
    "read_text",
]
