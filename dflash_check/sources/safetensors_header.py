"""Parse a safetensors header from its first bytes, without the tensor data.

The format is an 8-byte little-endian length followed by that many bytes of JSON mapping tensor
names to ``{dtype, shape, data_offsets}``. The check needs shapes only (``fc.weight``), so the
header is all that is ever read: the same bytes a ranged Hub request returns.
"""

from __future__ import annotations

import json
import json.decoder
import math
import re
import struct
from array import array
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from dflash_check.errors import ConfigError
from dflash_check.sources.limits import limit_for
from dflash_check.views import TensorInfo

FORMAT_MAX_HEADER_BYTES = 100_000_000
"""The safetensors format itself refuses headers above 100 MB."""
MAX_HEADER_BYTES = limit_for("safetensors header")
"""Largest JSON header read (the format allows 100 MB; a draft's is a few KB)."""

# Bits per element of every dtype the safetensors library accepts (safetensors 0.8's Dtype
# enum); a name outside this table is refused, as the library refuses it.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}


def header_length(prefix: bytes, who: str, where: str) -> int:
    """Return the JSON header length announced by the first 8 bytes of a safetensors file."""
    if len(prefix) < 8:
        raise ConfigError(f"{who}: {where}: not a safetensors file (only {len(prefix)} bytes)")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length == 0 or length > FORMAT_MAX_HEADER_BYTES:
        raise ConfigError(f"{who}: {where}: not a safetensors file (header length {length})")
    if length > MAX_HEADER_BYTES:
        raise ConfigError(
            f"{who}: {where}: safetensors header of {length} bytes is larger than the "
            f"{MAX_HEADER_BYTES >> 20} MB limit; refused"
        )
    return int(length)


class _Invalid(Exception):
    """One reason a header is invalid (turned into a ``ConfigError`` naming the file)."""


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def parse_header(header_json: bytes | memoryview, who: str, where: str) -> dict[str, TensorInfo]:
    """Parse the JSON part of a safetensors header into tensor infos.

    As strict as the safetensors library's own loader (``Metadata::validate``): known dtype
    names, integer shapes, ``data_offsets`` that tile the data section from 0 without gaps or
    overlaps, each tensor's byte size equal to shape x dtype, ``__metadata__`` a string map.
    A test runs generated headers through the library to keep the two in agreement.

    Bounded memory: the top-level object is walked entry by entry (each entry parsed by the
    json module's own scanner and validated at once), so that a 16 MB header of 200,000
    tensors never exists as 200,000 dicts; equal (dtype, shape) pairs share one ``TensorInfo``
    and the offsets are kept in two machine-word arrays.
    """
    bad = f"{who}: {where}: invalid safetensors header"
    try:
        text = str(header_json, "utf-8")  # bytes or a memoryview (no copy of a 16 MB slice)
    except UnicodeDecodeError as err:
        raise ConfigError(f"{bad}: not valid JSON") from err
    try:
        return _parse_entries(text)
    except _Invalid as err:
        raise ConfigError(f"{bad}: {err}") from None
    except (ValueError, RecursionError, IndexError) as err:
        # ValueError also covers integers of thousands of digits (int_max_str_digits).
        raise ConfigError(f"{bad}: not valid JSON") from err


def _top_level(text: str) -> Iterator[tuple[str, Any]]:
    """Yield the (key, value) pairs of the JSON object ``text``, one at a time.

    Raises ``ValueError`` for text that is not one JSON object, ``_Invalid`` for JSON that is
    another value.
    """
    decoder = json.JSONDecoder()
    scan = decoder.scan_once
    pos = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]
    if pos >= len(text) or text[pos] != "{":
        decoder.decode(text)  # raises ValueError for what is not JSON at all
        raise _Invalid("expected a JSON object")
    pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos] == "}":
        pos += 1
    else:
        while True:
            if text[pos] != '"':
                raise ValueError("expected a key")
            key, pos = json.decoder.scanstring(text, pos + 1)
            pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] != ":":
                raise ValueError("expected ':'")
            pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            try:
                value, pos = scan(text, pos)
            except StopIteration:
                raise ValueError("expected a value") from None
            yield key, value
            pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] == ",":
                pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                continue
            if text[pos] != "}":
                raise ValueError("expected ',' or '}'")
            pos += 1
            break
    if _WHITESPACE.match(text, pos).end() != len(text):  # type: ignore[union-attr]
        raise ValueError("extra data after the object")


def _shown(name: str) -> str:
    """Return a tensor name shortened for a message."""
    return name if len(name) <= 80 else name[:77] + "..."


def _parse_entries(text: str) -> dict[str, TensorInfo]:
    """Validate every entry of the header ``text``; return the tensors (see ``parse_header``)."""
    tensors: dict[str, TensorInfo] = {}
    infos: dict[tuple[str, tuple[int, ...]], TensorInfo] = {}
    starts, stops = array("Q"), array("Q")
    for name, entry in _top_level(text):
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise _Invalid("'__metadata__' must map names to strings")
            continue
        shown = _shown(name)
        if name in tensors:
            raise _Invalid(f"tensor '{shown}' appears twice")
        if not isinstance(entry, dict):
            raise _Invalid(f"entry '{shown}' is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str):
            raise _Invalid(f"tensor '{shown}' has no dtype")
        if dtype not in DTYPE_BITS:
            raise _Invalid(f"tensor '{shown}' has unknown dtype {dtype[:20]!r}")
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**64 for d in shape
        ):
            raise _Invalid(f"tensor '{shown}' has an invalid shape")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] < 2**64
        ):
            raise _Invalid(f"tensor '{shown}' has invalid data_offsets")
        bits = DTYPE_BITS[dtype] * math.prod(shape)
        if bits % 8 or bits // 8 != offsets[1] - offsets[0]:
            raise _Invalid(
                f"tensor '{shown}' spans {offsets[1] - offsets[0]} bytes, but shape "
                f"{shape} of {dtype} needs {bits / 8:g}"
            )
        key = (dtype, tuple(shape))
        info = infos.get(key)
        if info is None:
            info = infos[key] = TensorInfo(dtype=dtype, shape=key[1])
        tensors[name] = info
        starts.append(offsets[0])
        stops.append(offsets[1])
    end = 0
    names = list(tensors)  # in entry order, as the offsets (pointers only: the names are shared)
    # Checkpoints list tensors in offset order as a rule: sort only when they are not.
    order: Iterable[int] = range(len(starts))
    # (Ties on the start count too: an empty tensor at [0, 0] goes before one at [0, 1].)
    if any((starts[i], stops[i]) > (starts[i + 1], stops[i + 1]) for i in range(len(starts) - 1)):
        order = sorted(order, key=lambda i: (starts[i], stops[i], names[i]))
    for i in order:
        start = starts[i]
        if start != end:
            problem = "overlaps another tensor" if start < end else "leaves a gap before it"
            raise _Invalid(f"tensor '{_shown(names[i])}' {problem} (data_offsets start {start})")
        end = stops[i]
    return tensors


def parse_file_prefix(prefix: bytes, who: str, where: str) -> dict[str, TensorInfo]:
    """Parse a header from the first bytes of a file (length prefix included)."""
    length = header_length(prefix, who, where)
    if len(prefix) < 8 + length:
        raise ConfigError(
            f"{who}: {where}: safetensors header truncated ({len(prefix) - 8} of {length} bytes)"
        )
    return parse_header(memoryview(prefix)[8 : 8 + length], who, where)


def encode_header(tensors: Mapping[str, TensorInfo]) -> bytes:
    """Return a header-only safetensors prefix (length + JSON) describing ``tensors``.

    Used to write test fixtures and examples: the check reads headers only, so a file with the
    header and no data section describes a real-size checkpoint in a few kilobytes.
    """
    entries: dict[str, object] = {}
    offset = 0
    for name, info in tensors.items():
        size = DTYPE_BITS[info.dtype] * math.prod(info.shape) // 8
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


def dflash2_draft_tensors(
    hidden: int,
    layers: int,
    kernel: int,
    group: int,
    rank: int,
    vocab: int,
    dtype: str = "BF16",
) -> dict[str, TensorInfo]:
    """Return the tensors DFlash 2 adds to a DFlash draft (the reference's names, as
    ``dflash_check/smoke/draft_model.py`` loads them): per layer a convolution pair around
    the attention and around the MLP, and the candidate selector's codebooks (stored bare)
    and hidden projection."""
    t: dict[str, TensorInfo] = {}
    for i in range(layers):
        for conv in ("attention_conv", "mlp_conv"):
            p = f"layers.{i}.{conv}."
            t[p + "base_kernel"] = TensorInfo(dtype, (2, kernel, hidden))
            t[p + "kernel_projection.weight"] = TensorInfo(
                dtype, (2 * kernel * (hidden // group), hidden)
            )
    t["candidate_selector.predecessor_codebook"] = TensorInfo(dtype, (vocab, rank))
    t["candidate_selector.successor_codebook"] = TensorInfo(dtype, (vocab, rank))
    t["candidate_selector.hidden_projection.weight"] = TensorInfo(dtype, (rank, hidden))
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
    architectures = config.get("architectures")
    if isinstance(architectures, list) and "DFlash2DraftModel" in architectures:
        dfc = dflash if isinstance(dflash, dict) else {}

        def key(name: str) -> int:
            value = dfc.get(name)
            return value if isinstance(value, int) and value > 0 else 1

        tensors |= dflash2_draft_tensors(
            hidden=hidden,
            layers=num("num_hidden_layers", 1),
            kernel=key("conv_kernel_size"),
            group=key("conv_group_size"),
            rank=key("selector_rank"),
            vocab=num("vocab_size", 1),
        )
    return encode_header(tensors)
