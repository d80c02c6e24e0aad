"""Serving engines' own test pairings, read as the registry reads ``pairs.yaml``.

vLLM keeps its speculative examples in ``tests/models/registry.py``
(``_SPECULATIVE_DECODING_EXAMPLE_MODELS``), SGLang in ``python/sglang/test/test_utils.py``
(``DEFAULT_DRAFT_MODEL_X`` / ``DEFAULT_TARGET_MODEL_X`` constants). Both files are Python; they
are parsed with ``ast`` and never imported or run, so a checkout of any age can be gated
without installing the engine. Each reader yields ``EngineEntry`` values; ``plan.py`` decides
which are checked (and how) and which are listed as not checked with their reason.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dflash_check.errors import ConfigError, RegistryError
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.sanitize import data
from dflash_check.sources.local import read_capped

Kind = Literal["pairs", "vllm", "sglang"]

VLLM_TABLE = "_SPECULATIVE_DECODING_EXAMPLE_MODELS"
"""The vLLM table of speculative examples (one ``_HfExamplesInfo`` per draft architecture)."""
SGLANG_MARKER = "DEFAULT_DRAFT_MODEL_"
"""The prefix of SGLang's draft constants."""


MAX_SOURCE = 4_000_000
"""Characters of an engine test file read at most (vLLM's registry is ~100 kB)."""
MAX_DEPTH = 200
"""How deep the file's syntax tree may nest (the engines' files stay under 20): deeper, the
readers' walks and Python's own would recurse past their limits."""


def parse_python(text: str, display: str) -> ast.Module:
    """Parse an engine's test file (never run it); a file that is not Python, too large or too
    deeply nested is one line (exit 3). A UTF-8 byte order mark is read as Python reads it."""
    text = text.removeprefix("\ufeff")
    if len(text) > MAX_SOURCE:
        raise RegistryError(
            f"{display}: {len(text):,} characters, more than the {MAX_SOURCE:,} an engine test "
            "file is read up to; nothing was checked"
        )
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as err:
        raise RegistryError.at(
            display, err.lineno or 1, f"not valid Python ({err.msg}); nothing was checked"
        ) from None
    except ValueError as err:  # e.g. a NUL byte
        raise RegistryError(f"{display}: not valid Python ({err})") from None
    except (RecursionError, MemoryError):
        raise RegistryError(f"{display}: {TOO_DEEP}") from None
    check_depth(tree, display)
    return tree


TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels; nothing was checked"


def check_depth(tree: ast.AST, display: str) -> None:
    """Refuse a tree nested deeper than ``MAX_DEPTH`` (walked without recursion)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            line = getattr(node, "lineno", None)
            raise RegistryError.at(display, line, TOO_DEEP)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


@dataclass(frozen=True)
class EngineEntry:
    """One speculative example of an engine's test file, as written there."""

    key: str
    """The entry's name: vLLM's architecture key, or SGLang's constant suffix (``EAGLE3``)."""
    line: int
    """1-based line of the entry in the file."""
    target: str | None
    """The target model, if the entry names one."""
    draft: str | None
    """The draft (vLLM ``speculative_model``), if named; an MTP entry often names none."""
    method: str | None = None
    """The speculative method as stated (vLLM ``speculative_method``), lower case."""
    tokenizer: str | None = None
    """The tokenizer the engine's test loads, if stated."""
    revision: str | None = None
    """The target's revision, if pinned."""
    available_online: bool = True
    """False for vLLM's ``is_available_online=False``: the engine's tests skip the entry."""
    commented_out: bool = False
    """The entry is in a comment: listed, never checked."""


@dataclass(frozen=True)
class EngineFile:
    """An engine's test file, read."""

    engine: Literal["vllm", "sglang"]
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


def detect_kind(path: Path, text: str) -> Kind:
    """Tell a vLLM registry, SGLang test constants and ``pairs.yaml`` apart by their content
    (a ``.yaml`` file is always a pairs file: its comments may name anything)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return "pairs"
    if VLLM_TABLE in text or "_HfExamplesInfo" in text:
        return VLLM.name
    if SGLANG_MARKER in text:
        return SGLANG.name
    return "pairs"


def load_engine_file(path: Path, display: str, kind: Kind, text: str) -> EngineFile:
    """Read an engine's test file of ``kind`` (``vllm`` or ``sglang``)."""
    if kind == VLLM.name:
        from dflash_check.app.engine_tests.vllm_test_registry import read_vllm_test_registry

        return EngineFile(
            VLLM.name, checkout_version(path, VLLM.name), read_vllm_test_registry(text, display)
        )
    from dflash_check.app.engine_tests.sglang_constants import read_sglang_constants

    return EngineFile(
        SGLANG.name, checkout_version(path, SGLANG.name), read_sglang_constants(text, display)
    )


# Where a checkout (or an unpacked wheel) states its release, relative to the test file. Both
# engines generate ``_version.py`` when built (setuptools-scm), so a git checkout that was
# never built or installed has none: its release is then reported as unknown.
_VERSION_FILES = {
    VLLM.name: (("..", "..", "vllm", "_version.py"),),
    SGLANG.name: (("..", "_version.py"), ("..", "version.py")),
}
# ``__version__ = version = '0.34.0'`` (setuptools-scm) or ``__version__ = "0.5.23"``.
_VERSION = re.compile(
    r"""^__version__\s*=\s*(?:version\s*=\s*)?["']([0-9][^"']*)["']""", re.MULTILINE
)


def checkout_version(path: Path, engine: str) -> str | None:
    """Return the release the checkout's version file states (read as text, never imported)."""
    folder = path.resolve().parent
    for parts in _VERSION_FILES[engine]:
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
