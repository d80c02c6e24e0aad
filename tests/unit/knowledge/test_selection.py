"""The typed runtime selection: parsed once, the runner chosen the way the engine chooses it."""

from __future__ import annotations

import pytest

from dflash_check.knowledge.engines import VLLM, VLLM_V1
from dflash_check.knowledge.selection import (
    DEFAULT,
    Choice,
    SelectionError,
    parse_selection,
    served_choice,
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
    choice = served_choice("vllm", f"{CPU_V1.version}+cpu")
    assert (choice.runtime, choice.runner, choice.version) == (VLLM_V1, "V1", CPU_V1.version)
    gpu = served_choice("vllm", CPU_V1.version)
    assert (gpu.runtime, gpu.runner) == ("vllm", "V2")


def test_a_server_replaces_every_choice_of_its_engine() -> None:
    """``-r vllm-v1 --endpoint`` judges the server's release once, not two vLLM releases."""
    sel = parse_selection([f"{VLLM_V1},sglang"]).pinned(served_choice("vllm", CPU_V1.version))
    assert sel.texts == (f"vllm=={CPU_V1.version}", "sglang")
    pinned = parse_selection([f"{VLLM_V1}=={CPU_V1.version}"])
    assert pinned.pinned(served_choice("vllm", VLLM.newest.version)) == pinned
