"""Read a model from a local directory: config.json and safetensors headers, never weights."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dflash_check.core.fields import parse_json_object
from dflash_check.core.model import ModelFiles
from dflash_check.core.safetensors_header import (
    TensorInfo,
    header_length,
    parse_header,
)
from dflash_check.core.tokenizers import TOKENIZER_FILE, vocab_from_tokenizer_json
from dflash_check.errors import ConfigError
from dflash_check.hub.interface import (
    CONFIG_FILE,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    ModelRef,
    Role,
)


def read_header_bytes(path: Path, who: str) -> bytes:
    """Read only the JSON header of a safetensors file on disk (never the tensor data)."""
    try:
        with path.open("rb") as f:
            length = header_length(f.read(8), who, path.name)
            header = f.read(length)
    except OSError as err:
        raise ConfigError(f"{who}: {path.name}: cannot read ({err.strerror})") from err
    if len(header) < length:
        raise ConfigError(
            f"{who}: {path.name}: safetensors header truncated ({len(header)} of {length} bytes)"
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
    if "fc.weight" in weight_map:
        return str(weight_map["fc.weight"])
    for name in sorted(weight_map):
        if name.endswith(".fc.weight"):
            return str(weight_map[name])
    return None


def _safe_child(directory: Path, name: str, who: str, where: str) -> Path:
    """Return ``directory / name``, refusing names that escape the directory."""
    candidate = (directory / name).resolve()
    if directory.resolve() not in candidate.parents:
        raise ConfigError(f"{who}: {where}: shard name {name!r} points outside the model folder")
    return candidate


class LocalSource:
    """A model stored in a directory (a snapshot, a checkout, or files written by hand)."""

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Read ``config.json`` and, for a draft, the header that holds ``fc.weight``."""
        assert ref.path is not None  # the caller dispatches local refs here
        who = f"{role} {ref.spec}"
        directory = ref.path
        if not directory.exists():
            raise ConfigError(f"{who}: directory not found")
        if not directory.is_dir():
            raise ConfigError(f"{who}: not a directory")
        config_path = directory / CONFIG_FILE
        if not config_path.is_file():
            raise ConfigError(f"{who}: {CONFIG_FILE} not found in {directory}")
        try:
            raw = config_path.read_bytes()
        except OSError as err:
            raise ConfigError(f"{who}: {config_path}: cannot read ({err.strerror})") from err
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
                "tokenizer": str(tokenizer) if tokenizer.is_file() else None,
            },
        )

    def tokenizer_fingerprint(self, files: ModelFiles) -> str:
        """Return the sha256 of the model's ``tokenizer.json``."""
        import hashlib  # only when both models ship a tokenizer

        digest = hashlib.sha256()
        with Path(files.extras["tokenizer"]).open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()

    def tokenizer_vocab(self, files: ModelFiles) -> dict[int, str]:
        """Return the id -> token map of the model's ``tokenizer.json``."""
        path = Path(files.extras["tokenizer"])
        return vocab_from_tokenizer_json(path.read_bytes(), files.who, str(path))

    def _draft_tensors(
        self, directory: Path, who: str
    ) -> tuple[dict[str, TensorInfo] | None, str | None]:
        """Find the safetensors header that describes ``fc.weight``."""
        single = directory / SAFETENSORS_FILE
        if single.is_file():
            return read_header_file(single, who), str(single)
        index_path = directory / SAFETENSORS_INDEX
        if index_path.is_file():
            index = parse_json_object(index_path.read_bytes(), who, str(index_path))
            shard = shard_for_fc(index, who, str(index_path))
            if shard is None:
                return {}, str(index_path)
            shard_path = _safe_child(directory, shard, who, str(index_path))
            if not shard_path.is_file():
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


def card_base_models(readme: Path) -> tuple[str, ...]:
    """Return ``base_model`` from a model card's YAML front matter, if any."""
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    if not text.startswith("---"):
        return ()
    end = text.find("\n---", 3)
    if end < 0:
        return ()
    import yaml  # only when a card exists

    try:
        meta: Any = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return ()  # a broken card is not the pair's problem
    value = meta.get("base_model") if isinstance(meta, dict) else None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()
