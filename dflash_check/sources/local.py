"""Read a model from a local directory: config.json and safetensors headers, never weights."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from dflash_check.errors import ConfigError
from dflash_check.fields import parse_json_object
from dflash_check.sources.interface import (
    CONFIG_FILE,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    TOKENIZER_FILE,
    ModelRef,
    Role,
    closest_name,
)
from dflash_check.sources.limits import MB, limit_for
from dflash_check.sources.names import BadName, check_repo_file
from dflash_check.sources.safetensors_header import header_length, parse_header
from dflash_check.views import ModelFiles, TensorInfo

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def _why(err: OSError) -> str:
    """Return a short reason for an OS error (permission denied, name too long …)."""
    return (err.strerror or type(err).__name__).lower()


@contextmanager
def open_regular(path: Path, who: str, display: str | None = None) -> Iterator[BinaryIO]:
    """Open ``path`` for reading only if it is a regular file, never blocking.

    The file type is checked before opening (a FIFO named config.json would block ``open``
    forever) and again on the open descriptor (O_NONBLOCK), so a file swapped in between
    cannot block either. Symlinks are followed: the HF cache's snapshots are symlinks.
    """
    name = display or str(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise ConfigError(f"{who}: {name}: is {kind}, not a regular file; refused")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ConfigError(f"{who}: {name}: file not found") from None
    except OSError as err:
        raise ConfigError(f"{who}: {name}: cannot read ({_why(err)})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{who}: {name}: is not a regular file; refused")
        yield f


def read_capped(path: Path, kind: str, who: str, display: str | None = None) -> bytes:
    """Read a whole small file (config, index, card, tokenizer), refusing one above its cap."""
    name = display or str(path)
    cap = limit_for(kind)
    with open_regular(path, who, name) as f:
        try:
            data = f.read(cap + 1)
        except OSError as err:
            raise ConfigError(f"{who}: {name}: cannot read ({_why(err)})") from None
    if len(data) > cap:
        raise ConfigError(
            f"{who}: {name}: larger than the {cap // MB} MB limit for {kind}; refused"
        )
    return data


def is_regular_file(path: Path) -> bool:
    """Return whether ``path`` exists as a regular file (following links, never raising)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists(path: Path) -> bool:
    """Return whether anything exists at ``path`` (never raising on odd names)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def read_header_bytes(path: Path, who: str, display: str | None = None) -> bytes:
    """Read only the JSON header of a safetensors file on disk (never the tensor data)."""
    name = display or path.name
    with open_regular(path, who, name) as f:
        try:
            length = header_length(f.read(8), who, name)
            header = f.read(length)
        except OSError as err:
            raise ConfigError(f"{who}: {name}: cannot read ({_why(err)})") from None
    if len(header) < length:
        raise ConfigError(
            f"{who}: {name}: safetensors header truncated ({len(header)} of {length} bytes)"
        )
    return header


def read_header_file(path: Path, who: str) -> dict[str, TensorInfo]:
    """Read and parse the header of a safetensors file on disk."""
    return parse_header(read_header_bytes(path, who), who, path.name)


def shard_for_fc(index: dict[str, object], who: str, where: str) -> str | None:
    """Return the shard file holding ``fc.weight`` according to a safetensors index."""
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()
    ):
        raise ConfigError(f"{who}: {where}: field 'weight_map' must map tensor names to files")
    shard: str | None = weight_map.get("fc.weight")
    if shard is None:
        # One pass, no sort: an index may list hundreds of thousands of tensors.
        prefixed = [name for name in weight_map if name.endswith(".fc.weight")]
        shard = weight_map[min(prefixed)] if prefixed else None
    if shard is None:
        return None
    try:
        return check_repo_file(shard)
    except BadName:
        raise ConfigError(
            f"{who}: {where}: shard name {shard[:100]!r} points outside the model folder"
        ) from None


def _safe_child(directory: Path, name: str, who: str, where: str) -> Path:
    """Return ``directory / name``, refusing names that escape the directory."""
    candidate = (directory / name).resolve()
    if directory.resolve() not in candidate.parents:
        raise ConfigError(f"{who}: {where}: shard name {name!r} points outside the model folder")
    return candidate


def _near_folder(missing: Path) -> str | None:
    """Return "did you mean ...?" naming the folder closest to a mistyped one: each component
    that does not exist is replaced by its closest sibling (``exmaples/Qwen3-4B`` ->
    ``examples/Qwen3-4B``), and the result is named only if it exists."""
    fixed = Path(missing.anchor) if missing.is_absolute() else Path()
    try:  # a name the file system refuses (too long, ...) has no suggestion
        for part in missing.parts[1:] if missing.is_absolute() else missing.parts:
            if not (fixed / part).exists():
                close = closest_name(part, fixed if str(fixed) else Path("."), cutoff=0.6)
                if close is None:
                    return None
                part = close
            fixed = fixed / part
        return f"did you mean {fixed}?" if fixed != missing and fixed.is_dir() else None
    except OSError:
        return None


class LocalSource:
    """A model stored in a directory (a snapshot, a checkout, or files written by hand)."""

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Read ``config.json`` and, for a draft, the header that holds ``fc.weight``."""
        assert ref.path is not None  # the caller dispatches local refs here
        who = f"{role} {ref.spec}"
        directory = ref.path
        if not exists(directory):
            raise ConfigError(f"{who}: directory not found", hint=_near_folder(directory))
        if not directory.is_dir():
            raise ConfigError(f"{who}: not a directory")
        config_path = directory / CONFIG_FILE
        if not exists(config_path):
            raise ConfigError(f"{who}: {CONFIG_FILE} not found in {directory}")
        raw = read_capped(config_path, CONFIG_FILE, who)
        location = str(config_path)
        config = parse_json_object(raw, who, location)
        tensors, tensors_location = (None, None)
        if role == "draft":
            tensors, tensors_location = self._draft_tensors(directory, who)
        tokenizer = directory / TOKENIZER_FILE
        return ModelFiles(
            role=role,
            name=ref.spec,
            config=config,
            config_location=location,
            tensors=tensors,
            tensors_location=tensors_location,
            extras={
                "base_model": card_base_models(directory / "README.md"),
                "tokenizer": str(tokenizer) if exists(tokenizer) else None,
            },
        )

    def tokenizer_fingerprint(self, files: ModelFiles) -> str:
        """Return the sha256 of the model's ``tokenizer.json``."""
        import hashlib  # here: most pairs have no tokenizer.json to compare (OpenSSL's load)

        path = Path(files.extras["tokenizer"])
        return hashlib.sha256(read_capped(path, TOKENIZER_FILE, files.who)).hexdigest()

    def tokenizer_vocab(self, files: ModelFiles) -> dict[int, str]:
        """Return the id -> token map of the model's ``tokenizer.json``."""
        # Here, as in pipeline.compare_tokenizers: only a pair with two tokenizers reads one.
        from dflash_check.check.tokenizers import vocab_from_tokenizer_json

        path = Path(files.extras["tokenizer"])
        raw = read_capped(path, TOKENIZER_FILE, files.who)
        return vocab_from_tokenizer_json(raw, files.who, str(path))

    def _draft_tensors(
        self, directory: Path, who: str
    ) -> tuple[dict[str, TensorInfo] | None, str | None]:
        """Find the safetensors header that describes ``fc.weight``."""
        single = directory / SAFETENSORS_FILE
        if exists(single):
            return read_header_file(single, who), str(single)
        index_path = directory / SAFETENSORS_INDEX
        if exists(index_path):
            raw = read_capped(index_path, SAFETENSORS_INDEX, who)
            index = parse_json_object(raw, who, str(index_path))
            shard = shard_for_fc(index, who, str(index_path))
            if shard is None:
                return {}, str(index_path)
            shard_path = _safe_child(directory, shard, who, str(index_path))
            if not exists(shard_path):
                raise ConfigError(f"{who}: {index_path.name} names shard {shard}, which is missing")
            return read_header_file(shard_path, who), str(shard_path)
        # Unconventional single-file names: read every header until fc.weight shows up.
        files = sorted(directory.glob("*.safetensors"))
        merged: dict[str, TensorInfo] = {}
        for path in files:
            merged.update(read_header_file(path, who))
            if any(n == "fc.weight" or n.endswith(".fc.weight") for n in merged):
                return merged, str(path)
        return (merged, str(files[-1])) if files else (None, None)


def tensor_names(directory: Path, who: str) -> tuple[frozenset[str] | None, str]:
    """Return every tensor name a local checkpoint holds, and where they were read.

    The index's ``weight_map`` names every tensor without opening a shard; a single file's
    header does the same. None (with the reason) when the directory has no safetensors.
    """
    index_path = directory / SAFETENSORS_INDEX
    if exists(index_path):
        raw = read_capped(index_path, SAFETENSORS_INDEX, who)
        index = parse_json_object(raw, who, str(index_path))
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict):
            raise ConfigError(f"{who}: {index_path}: field 'weight_map' must map tensor names")
        return frozenset(str(name) for name in weight_map), str(index_path)
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        return None, f"no safetensors file in {directory}"
    names: set[str] = set()
    for path in files:
        names.update(read_header_file(path, who))
    return frozenset(names), str(files[0]) if len(files) == 1 else f"{directory}/*.safetensors"


def card_base_models(readme: Path) -> tuple[str, ...]:
    """Return ``base_model`` from a model card's YAML front matter, if any."""
    if not exists(readme):
        return ()
    try:
        raw = read_capped(readme, "README.md", "model card")
    except ConfigError:
        return ()  # an unreadable card is not the pair's problem
    text = raw.decode("utf-8", errors="replace")
    if not text.startswith("---"):
        return ()
    end = text.find("\n---", 3)
    if end < 0:
        return ()
    import yaml  # only when a card exists

    try:
        meta: Any = yaml.safe_load(text[3:end])
    except (yaml.YAMLError, RecursionError, ValueError):
        return ()  # a broken (or absurdly nested) card is not the pair's problem
    value = meta.get("base_model") if isinstance(meta, dict) else None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()
