"""The engine command names each engine's own method for the draft's method."""

from __future__ import annotations

import json

import pytest

from dflash_check.engines.command import LaunchSpec, build_command
from dflash_check.knowledge.settings import DRAFT_LENGTH_FLAGS, parse_engine_args

TOKENS, GAMMA = "--speculative-num-draft-tokens", "--speculative-dspark-block-size"


def _spec(engine: str, method: str, block: int | None) -> LaunchSpec:
    return LaunchSpec(engine=engine, target="T", draft="D", block_size=block, method=method)


def _flag(argv: tuple[str, ...], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize(
    ("method", "algorithm"),
    [("dflash", "DFLASH"), ("dflash2", "DFLASH"), ("dspark", "DSPARK"), ("eagle3", "EAGLE3")],
)
def test_sglang_algorithm_per_method(method: str, algorithm: str) -> None:
    """sglang==0.5.23 spec_info.py:39-43: DFLASH, DSPARK and EAGLE3 are its algorithms."""
    block = None if method == "eagle3" else 16
    argv = build_command(_spec("sglang", method, block))
    assert _flag(argv, "--speculative-algorithm") == algorithm


def test_an_eagle3_head_leaves_sglang_its_draft_length() -> None:
    """No block to derive one from: no --speculative-num-draft-tokens unless the user gave it."""
    argv = build_command(_spec("sglang", "eagle3", None))
    assert "--speculative-num-draft-tokens" not in argv
    given = LaunchSpec("sglang", "T", "D", None, method="eagle3", num_speculative_tokens=3)
    assert _flag(build_command(given), "--speculative-num-draft-tokens") == "4"


@pytest.mark.parametrize(
    ("method", "expected"),
    [("dflash", "dflash"), ("dflash2", "dflash"), ("dspark", "dspark"), ("eagle3", "eagle3")],
)
def test_vllm_method_per_method(method: str, expected: str) -> None:
    argv = build_command(_spec("vllm", method, 16))
    config = json.loads(_flag(argv, "--speculative-config") or "{}")
    assert config["method"] == expected


def test_a_dspark_block_counts_draft_tokens() -> None:
    """vLLM derives num_speculative_tokens = block_size for DSpark (0.34.0 dspark/config.py
    :78-85; the Qwen3-Omni contract refuses another); a DFlash block keeps a bonus slot."""
    dspark = json.loads(_flag(build_command(_spec("vllm", "dspark", 7)), "--speculative-config"))
    assert dspark["num_speculative_tokens"] == 7
    dflash = json.loads(_flag(build_command(_spec("vllm", "dflash", 16)), "--speculative-config"))
    assert dflash["num_speculative_tokens"] == 15
    assert _flag(build_command(_spec("sglang", "dspark", 7)), "--speculative-num-draft-tokens") == (
        "8"
    )


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_target_with_its_own_code_is_trusted_in_the_command(engine: str) -> None:
    """Both engines refuse a config that names its own code without --trust-remote-code
    (conformance/results/oracle/commands/: MiMo-V2.5-Pro, refused at config by each)."""
    plain = build_command(_spec(engine, "dflash", 16))
    assert "--trust-remote-code" not in plain
    trusted = LaunchSpec(engine, "T", "D", 16, trust_remote_code=True)
    assert "--trust-remote-code" in build_command(trusted)


@pytest.mark.parametrize(
    ("method", "args", "written"),
    [
        ("dflash", ("--speculative-dflash-block-size=12",), [(TOKENS, "12")]),
        ("dflash2", (TOKENS, "12"), [(TOKENS, "12")]),
        # SGLang ignores the DFLASH alias for DSpark: the command derives gamma + 1 from the block.
        ("dspark", ("--speculative-dflash-block-size=12",), [(TOKENS, "8")]),
        # DSpark's gamma flag stays itself, so SGLang does not also read gamma from the draft.
        ("dspark", (GAMMA, "5"), [(GAMMA, "5")]),
    ],
)  # fmt: skip
def test_sglang_writes_the_users_draft_length_once(
    method: str, args: tuple[str, ...], written: list[tuple[str, str]]
) -> None:
    """The parsed settings are the one source: the user's copy is not passed on beside it."""
    spec = LaunchSpec(
        "sglang", "T", "D", 7, method=method, engine_args=(*args, "--mem-fraction-static=0.8"),
        engine_settings=parse_engine_args(args),
    )  # fmt: skip
    argv = build_command(spec)
    lengths = [(a, argv[i + 1]) for i, a in enumerate(argv) if a in DRAFT_LENGTH_FLAGS]
    assert lengths == written
    assert not any("=" in a and a.partition("=")[0] in DRAFT_LENGTH_FLAGS for a in argv)
    assert argv[-1] == "--mem-fraction-static=0.8"


def test_vllm_passes_every_engine_argument_on() -> None:
    """vLLM's command writes no SGLang flag: what the user gave reaches it as given."""
    args = ("--speculative-num-draft-tokens=12", "--enforce-eager")
    settings = parse_engine_args(args)
    spec = LaunchSpec("vllm", "T", "D", 16, engine_args=args, engine_settings=settings)
    assert build_command(spec)[-2:] == args
