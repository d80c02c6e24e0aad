"""The bundled smoke run's set-up (``smoke/run.py``), without torch."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_smoke_run_keeps_compiler_caches_in_a_removed_temp_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inductor and Triton caches point into a temporary folder while the smoke run imports
    torch, and the folder is gone afterwards; a cache folder the user chose is left alone."""
    import os

    from dflash_check.errors import MissingExtraError
    from dflash_check.smoke import run as smoke

    seen: dict[str, str | None] = {}

    def fake_import() -> None:
        for name in smoke.COMPILER_CACHE_VARS:
            seen[name] = os.environ.get(name)
        Path(seen["TORCHINDUCTOR_CACHE_DIR"] or "").mkdir(parents=True)  # as Inductor would
        raise MissingExtraError("no torch here")

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", "/user/choice")
    monkeypatch.setattr(smoke, "import_runtime", fake_import)
    with pytest.raises(MissingExtraError):
        smoke.run_smoke(None, None, None)  # type: ignore[arg-type]
    inductor = Path(seen["TORCHINDUCTOR_CACHE_DIR"] or "")
    assert inductor.name == "torchinductor" and inductor.parent.name.startswith("dflash-check-")
    assert not inductor.parent.exists()
    assert seen["TRITON_CACHE_DIR"] == "/user/choice"
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    assert os.environ["TRITON_CACHE_DIR"] == "/user/choice"
