"""The safetensors header parser (``sources/safetensors_header.py``)."""

from __future__ import annotations

import pytest

from dflash_check.errors import ConfigError
from dflash_check.sources.safetensors_header import parse_header


def test_duplicate_tensor_names_are_refused() -> None:
    entry = '{"dtype":"U8","shape":[1],"data_offsets":[%d,%d]}'
    raw = ('{"a":' + entry % (0, 1) + ',"a":' + entry % (1, 2) + "}").encode()
    with pytest.raises(ConfigError, match="tensor 'a' appears twice"):
        parse_header(raw, "draft", "model.safetensors")
