"""Test-wide guards: no internet, a private HF cache, plain deterministic output."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    """Refuse connections anywhere but the loopback interface."""
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not (
        host.startswith("127.") or host in ("::1", "localhost") or self.family == socket.AF_UNIX
    ):
        raise OSError(f"tests must not touch the network (tried {host})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _isolate(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Block the network, point HF_HOME at a temp dir, and pin the terminal."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    hf_home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_HUB_CACHE", str(Path(hf_home) / "hub"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    # One torch thread: on a small shared machine, OpenMP threads contending for the same cores
    # make the tiny smoke-run models 10-20x slower (subprocesses inherit this).
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("DFLASH_CHECK_DEBUG", raising=False)
    yield


SMOKE = Path(__file__).resolve().parent / "smoke"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m "not smoke"`` (the inner loop), leave tests/smoke/ unimported: every test there
    is deselected anyway, and importing its modules imports torch (seconds of CPU)."""
    if " ".join(config.option.markexpr.split()) == "not smoke" and collection_path == SMOKE:
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/smoke/ ``smoke`` (torch): ``-m "not smoke"`` leaves them out."""
    for item in items:
        if SMOKE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.smoke)
