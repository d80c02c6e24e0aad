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
    [
        ("dflash", "DFLASH"),
        ("dflash2", "DFLASH"),
        ("dspark", "DSPARK"),
        ("eagle3", "EAGLE3"),
        # NEXTN resolves to EAGLE only after DeepSeek V4's hook compared the raw string.
        ("mtp", "EAGLE"),
    ],
)
def test_sglang_algorithm_per_method(method: str, algorithm: str) -> None:
    """sglang==0.5.23 spec_info.py:39-43: DFLASH, DSPARK, EAGLE and EAGLE3 are its algorithms."""
    block = None if method in ("eagle3", "mtp") else 16
    argv = build_command(_spec("sglang", method, block))
    assert _flag(argv, "--speculative-algorithm") == algorithm


STEPS, TOPK = "--speculative-num-steps", "--speculative-eagle-topk"


def _steps(argv: tuple[str, ...]) -> tuple[str | None, str | None, str | None]:
    return _flag(argv, STEPS), _flag(argv, TOPK), _flag(argv, TOKENS)


def test_an_eagle3_head_leaves_sglang_all_three_or_gives_a_chain() -> None:
    """SGLang 0.5.23 asserts that draft tokens or a topk come with steps
    (arg_groups/speculative_hook.py:1159-1163): without a draft length the command leaves all
    three to SGLang's choice, with one it gives the chain k, topk 1, k + 1."""
    assert _steps(build_command(_spec("sglang", "eagle3", None))) == (None, None, None)
    given = LaunchSpec("sglang", "T", "D", None, method="eagle3", num_speculative_tokens=3)
    assert _steps(build_command(given)) == ("3", "1", "4")


def test_a_nextn_checkpoint_gets_a_chain_on_sglang() -> None:
    """DeepSeek V4's hook asserts topk 1 before SGLang would choose one: the command always
    gives the chain, one step by default (the MTP default, DEFAULT_DRAFT_TOKENS)."""
    assert _steps(build_command(_spec("sglang", "mtp", None))) == ("1", "1", "2")
    given = LaunchSpec("sglang", "T", "D", None, method="mtp", num_speculative_tokens=2)
    assert _steps(build_command(given)) == ("2", "1", "3")


@pytest.mark.parametrize(
    "args",
    [
        (STEPS, "5", TOPK, "4", TOKENS, "8"),
        (STEPS, "2", TOPK, "1"),
    ],
)
def test_sglang_passes_the_users_steps_as_given(args: tuple[str, ...]) -> None:
    """The user's own EAGLE flags (judged by DF060) are the command's, none added beside."""
    spec = LaunchSpec(
        "sglang", "T", "D", None, method="eagle3", num_speculative_tokens=3,
        engine_args=args, engine_settings=parse_engine_args(args),
    )  # fmt: skip
    argv = build_command(spec)
    for flag in (STEPS, TOPK, TOKENS):
        assert argv.count(flag) == (1 if flag in args else 0), flag
    assert _steps(argv) == tuple(
        args[args.index(f) + 1] if f in args else None for f in (STEPS, TOPK, TOKENS)
    )


@pytest.mark.parametrize(("method", "tokens"), [("eagle3", 2), ("mtp", 1)])
def test_vllm_uses_the_methods_default_draft_length(method: str, tokens: int) -> None:
    """No block size: the method's default (DEFAULT_DRAFT_TOKENS, vLLM's own examples), not a
    DFlash block's 15."""
    default = build_command(_spec("vllm", method, None))
    assert (
        json.loads(_flag(default, "--speculative-config") or "{}")["num_speculative_tokens"]
        == tokens
    )
    given = LaunchSpec("vllm", "T", "D", None, method=method, num_speculative_tokens=4)
    config = json.loads(_flag(build_command(given), "--speculative-config") or "{}")
    assert config["num_speculative_tokens"] == 4


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("dflash", "dflash"),
        ("dflash2", "dflash"),
        ("dspark", "dspark"),
        ("eagle3", "eagle3"),
        ("mtp", "mtp"),
    ],
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
