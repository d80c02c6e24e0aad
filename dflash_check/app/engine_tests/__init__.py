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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from dflash_check.errors import ConfigError, RegistryError
from dflash_check.knowledge.engines import SGLANG, VLLM
from dflash_check.sanitize import data
from dflash_check.sources.local import read_capped

Kind = str
"""``pairs``, or the engine whose test file it is (``ENGINE_TEST_FILES``)."""
PAIRS: Kind = "pairs"
"""The kind of a pairs file (``app/pairs_run.py``), the one kind that is no engine's."""

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


def first_change(
    statements: Iterable[ast.stmt], named: Callable[[str], bool], *, mutable: bool
) -> tuple[int, str] | None:
    """Return (line, name) of the first node in ``statements`` (the top-level statements a
    reader did not evaluate) that could change a value ``named`` picks: a binding or ``del``
    of the name, a ``global``/``nonlocal`` of it, and for a ``mutable`` value (a dict) also a
    method call or an item set or deleted (reading it, in a loop or a call, changes nothing).
    None: nothing changes one. Both engines' readers refuse such a file: guessing would let an
    entry go unchecked, or check one the engine never runs."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Global | ast.Nonlocal):
                found = next((n for n in node.names if named(n)), None)
            elif isinstance(node, ast.Name):
                found = node.id if named(node.id) and not isinstance(node.ctx, ast.Load) else None
            elif mutable and isinstance(node, ast.Attribute | ast.Subscript):
                base = node.value
                stored = isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load)
                found = base.id if isinstance(base, ast.Name) and named(base.id) else None
                found = found if stored else None
            else:
                found = None
            if found is not None:
                return getattr(node, "lineno", statement.lineno), found
    return None


def unevaluated_change(display: str, line: int, what: str) -> RegistryError:
    """The error for a file whose ``what`` is changed at ``line`` by a statement not read."""
    return RegistryError.at(
        display,
        line,
        f"not checked: {what} is changed at line {line} by a statement the reader does not "
        "evaluate; nothing was checked",
    )


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


def _read_vllm(text: str, display: str) -> tuple[EngineEntry, ...]:
    from dflash_check.app.engine_tests.vllm_test_registry import read_vllm_test_registry

    return read_vllm_test_registry(text, display)


def _read_sglang(text: str, display: str) -> tuple[EngineEntry, ...]:
    from dflash_check.app.engine_tests.sglang_constants import read_sglang_constants

    return read_sglang_constants(text, display)


@dataclass(frozen=True)
class EngineTestFile:
    """How one engine keeps its speculative test pairings, and how they are read."""

    engine: str
    """The engine whose tests they are."""
    display: str
    """The file and what of it is read, as ``registry --kind``'s help names it."""
    markers: tuple[str, ...]
    """Text only that file has: any of it tells the file apart."""
    version_files: tuple[tuple[str, ...], ...]
    """Where a checkout (or an unpacked wheel) states its release, relative to the test file.
    Both engines generate ``_version.py`` when built (setuptools-scm), so a git checkout that
    was never built or installed has none: its release is then reported as unknown."""
    read: Callable[[str, str], tuple[EngineEntry, ...]]
    """The reader: the file's text and its display name -> its entries."""
    asks_method: bool
    """Whether an entry's stated method is what the engine's test asks for (vLLM checks it
    against the draft's class at load)."""
    key_methods: Mapping[str, str] | None = None
    """Entry key -> method, matched whole (SGLang's constant suffixes); None: the method is
    read from the key's name (vLLM's draft architectures)."""


ENGINE_TEST_FILES: tuple[EngineTestFile, ...] = (
    EngineTestFile(
        VLLM.name,
        "tests/models/registry.py",
        (VLLM_TABLE, "_HfExamplesInfo"),
        (("..", "..", "vllm", "_version.py"),),
        _read_vllm,
        asks_method=True,
    ),
    EngineTestFile(
        SGLANG.name,
        "test_utils.py constants",
        (SGLANG_MARKER,),
        (("..", "_version.py"), ("..", "version.py")),
        _read_sglang,
        asks_method=False,
        # EAGLE is SGLang's EAGLE-2 scenario; a suffix not listed (EAGLE_DP_ATTN) leaves the
        # method to the draft's own config.
        key_methods=MappingProxyType(
            {
                "EAGLE": "eagle",
                "EAGLE3": "eagle3",
                "DFLASH": "dflash",
                "STANDALONE": "draft_model",
                "NGRAM": "ngram",
            }
        ),
    ),
)
"""Each engine whose test file ``registry`` reads, in the order its content is tried."""


def engine_test_file(engine: str) -> EngineTestFile:
    """Return how ``engine``'s test file is read (KeyError: an engine without one)."""
    found = next((k for k in ENGINE_TEST_FILES if k.engine == engine), None)
    if found is None:
        raise KeyError(engine)
    return found


def detect_kind(path: Path, text: str) -> Kind:
    """Tell an engine's test file (``ENGINE_TEST_FILES``) and ``pairs.yaml`` apart by their content
    (a ``.yaml`` file is always a pairs file: its comments may name anything)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return PAIRS
    found = next((k for k in ENGINE_TEST_FILES if any(m in text for m in k.markers)), None)
    return found.engine if found is not None else PAIRS


def load_engine_file(path: Path, display: str, kind: Kind, text: str) -> EngineFile:
    """Read an engine's test file of ``kind`` (an engine of ``ENGINE_TEST_FILES``)."""
    reader = engine_test_file(kind)
    return EngineFile(kind, checkout_version(path, kind), reader.read(text, display))


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
