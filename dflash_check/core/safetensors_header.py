"""Parse a safetensors header from its first bytes, without the tensor data.

The format is an 8-byte little-endian length followed by that many bytes of JSON mapping tensor
names to ``{dtype, shape, data_offsets}``. The check needs shapes only (``fc.weight``), so the
header is all that is ever read: the same bytes a ranged Hub request returns.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from dflash_check.errors import ConfigError

# The safetensors format itself refuses headers above 100 MB.
MAX_HEADER_BYTES = 100_000_000


@dataclass(frozen=True)
class TensorInfo:
    """What the header says about one tensor."""

    dtype: str
    """Storage dtype, e.g. ``BF16``."""
    shape: tuple[int, ...]
    """Tensor shape, outermost first (``(out_features, in_features)`` for a linear weight)."""


def header_length(prefix: bytes, who: str, where: str) -> int:
    """Return the JSON header length announced by the first 8 bytes of a safetensors file."""
    if len(prefix) < 8:
        raise ConfigError(f"{who}: {where}: not a safetensors file (only {len(prefix)} bytes)")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length == 0 or length > MAX_HEADER_BYTES:
        raise ConfigError(f"{who}: {where}: not a safetensors file (header length {length})")
    return int(length)


def parse_header(header_json: bytes, who: str, where: str) -> dict[str, TensorInfo]:
    """Parse the JSON part of a safetensors header into tensor infos."""
    bad = f"{who}: {where}: invalid safetensors header"
    try:
        data = json.loads(header_json.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ConfigError(f"{bad}: not valid JSON") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{bad}: expected a JSON object")
    tensors: dict[str, TensorInfo] = {}
    for name, entry in data.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise ConfigError(f"{bad}: entry '{name}' is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str):
            raise ConfigError(f"{bad}: tensor '{name}' has no dtype")
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise ConfigError(f"{bad}: tensor '{name}' has an invalid shape")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]
        ):
            raise ConfigError(f"{bad}: tensor '{name}' has invalid data_offsets")
        tensors[name] = TensorInfo(dtype=dtype, shape=tuple(shape))
    return tensors


def parse_file_prefix(prefix: bytes, who: str, where: str) -> dict[str, TensorInfo]:
    """Parse a header from the first bytes of a file (length prefix included)."""
    length = header_length(prefix, who, where)
    if len(prefix) < 8 + length:
        raise ConfigError(
            f"{who}: {where}: safetensors header truncated ({len(prefix) - 8} of {length} bytes)"
        )
    return parse_header(prefix[8 : 8 + length], who, where)


def find_fc_weight(tensors: Mapping[str, TensorInfo]) -> tuple[str, TensorInfo] | None:
    """Return the draft's ``fc.weight`` entry (possibly under a module prefix), if any."""
    if "fc.weight" in tensors:
        return "fc.weight", tensors["fc.weight"]
    for name in sorted(tensors):
        if name.endswith(".fc.weight"):
            return name, tensors[name]
    return None


DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I8": 1, "U8": 1}


def encode_header(tensors: Mapping[str, TensorInfo]) -> bytes:
    """Return a header-only safetensors prefix (length + JSON) describing ``tensors``.

    Used to write test fixtures and examples: the check reads headers only, so a file with the
    header and no data section describes a real-size checkpoint in a few kilobytes.
    """
    entries: dict[str, object] = {}
    offset = 0
    for name, info in tensors.items():
        size = DTYPE_BYTES[info.dtype]
        for dim in info.shape:
            size *= dim
        entries[name] = {
            "dtype": info.dtype,
            "shape": list(info.shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    body = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    body += b" " * (-len(body) % 8)  # the format pads the header to 8-byte alignment
    return struct.pack("<Q", len(body)) + body


def dflash_draft_tensors(
    hidden: int,
    num_ids: int,
    target_hidden: int,
    layers: int,
    intermediate: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    dtype: str = "BF16",
) -> dict[str, TensorInfo]:
    """Return the tensor layout of a DFlash draft (the reference model's parameter names)."""
    t: dict[str, TensorInfo] = {
        "fc.weight": TensorInfo(dtype, (hidden, num_ids * target_hidden)),
        "hidden_norm.weight": TensorInfo(dtype, (hidden,)),
        "norm.weight": TensorInfo(dtype, (hidden,)),
    }
    for i in range(layers):
        p = f"layers.{i}."
        t[p + "input_layernorm.weight"] = TensorInfo(dtype, (hidden,))
        t[p + "post_attention_layernorm.weight"] = TensorInfo(dtype, (hidden,))
        t[p + "self_attn.q_proj.weight"] = TensorInfo(dtype, (heads * head_dim, hidden))
        t[p + "self_attn.k_proj.weight"] = TensorInfo(dtype, (kv_heads * head_dim, hidden))
        t[p + "self_attn.v_proj.weight"] = TensorInfo(dtype, (kv_heads * head_dim, hidden))
        t[p + "self_attn.o_proj.weight"] = TensorInfo(dtype, (hidden, heads * head_dim))
        t[p + "self_attn.q_norm.weight"] = TensorInfo(dtype, (head_dim,))
        t[p + "self_attn.k_norm.weight"] = TensorInfo(dtype, (head_dim,))
        t[p + "mlp.gate_proj.weight"] = TensorInfo(dtype, (intermediate, hidden))
        t[p + "mlp.up_proj.weight"] = TensorInfo(dtype, (intermediate, hidden))
        t[p + "mlp.down_proj.weight"] = TensorInfo(dtype, (hidden, intermediate))
    return t


def header_for_draft_config(config: Mapping[str, object]) -> bytes:
    """Return a header-only safetensors prefix matching a DFlash draft config.

    The fc width follows the config's own ids (``len(ids) x hidden_size``), as a checkpoint
    trained with that config would have it. Used for examples and test fixtures.
    """

    def num(key: str, default: int) -> int:
        value = config.get(key, default)
        return value if isinstance(value, int) else default

    dflash = config.get("dflash_config")
    ids = (dflash.get("target_layer_ids") if isinstance(dflash, dict) else None) or config.get(
        "target_layer_ids"
    )
    hidden = num("hidden_size", 1)
    heads = num("num_attention_heads", 1)
    tensors = dflash_draft_tensors(
        hidden=hidden,
        num_ids=len(ids) if isinstance(ids, list) else 1,
        target_hidden=hidden,
        layers=num("num_hidden_layers", 1),
        intermediate=num("intermediate_size", 4 * hidden),
        heads=heads,
        kv_heads=num("num_key_value_heads", heads),
        head_dim=num("head_dim", hidden // heads),
    )
    return encode_header(tensors)
