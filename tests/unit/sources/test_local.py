"""Local folders (``sources/local.py``): an unreadable file is one line naming it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dflash_check.errors import ConfigError
from tests.support.helpers import SEED_DRAFT


def test_permission_denied_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unreadable config or tokenizer: one line naming the file (simulated: tests may run
    as root, who reads anything)."""
    from dflash_check.sources import local
    from dflash_check.sources.interface import parse_model_ref

    real_open = os.open

    def deny(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith(("config.json", "tokenizer.json")):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(local.os, "open", deny)
    with pytest.raises(ConfigError, match=r"config.json: cannot read \(permission denied\)"):
        local.LocalSource().fetch(parse_model_ref(str(SEED_DRAFT)), "draft")
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"tokenizer.json: cannot read \(permission denied\)"):
        local.read_capped(tmp_path / "tokenizer.json", "tokenizer.json", "draft d")
