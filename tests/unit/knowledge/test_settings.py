"""The engine settings a verdict depends on, read from the engine's own flags as SGLang 0.5.23
resolves them (``knowledge/settings.py``): both argparse forms, the deprecated DP-attention
spelling, the DFlash alias of the draft length, and the values SGLang would not start with."""

from __future__ import annotations

import pytest

from dflash_check.knowledge.settings import (
    DRAFT_LENGTH_FLAGS,
    NO_ENGINE_SETTINGS,
    EngineSettings,
    SettingsError,
    SglangSettings,
    parse_engine_args,
    read_flags_text,
    without_flags,
)

TOKENS, GAMMA = "--speculative-num-draft-tokens", "--speculative-dspark-block-size"


def sglang(*args: str) -> SglangSettings:
    return parse_engine_args(args).sglang


def test_no_arguments_are_the_engine_defaults() -> None:
    """Without flags SGLang runs no DP attention and takes the draft's block size."""
    assert parse_engine_args(()) == NO_ENGINE_SETTINGS
    assert not NO_ENGINE_SETTINGS.sglang.dp_attention
    assert NO_ENGINE_SETTINGS.sglang.speculative_num_draft_tokens is None


@pytest.mark.parametrize(
    "args",
    [
        ("--speculative-num-draft-tokens=1",),
        ("--speculative-num-draft-tokens", "1"),
        ("--speculative-dflash-block-size=1",),
        ("--speculative-dflash-block-size", "1", "--speculative-num-draft-tokens=1"),
    ],
)
def test_draft_length_in_either_form(args: tuple[str, ...]) -> None:
    """``--flag=N`` and ``--flag N`` alike; the DFlash alias sets the same value for DFLASH."""
    settings = sglang(*args)
    assert settings.draft_tokens("dflash") == settings.draft_tokens("dflash2") == 1


@pytest.mark.parametrize(
    ("args", "dflash", "dspark", "eagle3"),
    [
        # SGLang reads --speculative-dflash-block-size for DFLASH only
        # (speculative_hook.py:368-386): a DSpark or EAGLE-3 draft takes its own length.
        (("--speculative-dflash-block-size=8",), 8, None, None),
        (("--speculative-dflash-block-size", "8"), 8, None, None),
        # --speculative-dspark-block-size is DSpark's gamma: the window is gamma + 1 (:807-838).
        (("--speculative-dspark-block-size=7",), None, 8, None),
        (("--speculative-dspark-block-size", "7"), None, 8, None),
        # The window itself is every algorithm's.
        (("--speculative-num-draft-tokens=5", "--speculative-dspark-block-size=7"), 5, 5, 5),
    ],
)
def test_each_algorithm_reads_its_own_alias(
    args: tuple[str, ...], dflash: int | None, dspark: int | None, eagle3: int | None
) -> None:
    settings = sglang(*args)
    assert settings.draft_tokens("dflash") == dflash
    assert settings.draft_tokens("dspark") == dspark
    assert settings.draft_tokens("eagle3") == eagle3


@pytest.mark.parametrize(
    ("args", "method", "written"),
    [
        ((), "dflash", []),
        (("--speculative-dflash-block-size=8",), "dflash", ["--speculative-num-draft-tokens", "8"]),
        (("--speculative-dflash-block-size=8",), "dspark", []),
        (("--speculative-num-draft-tokens", "4"), "eagle3", [TOKENS, "4"]),
        # DSpark's gamma stays its own flag, so SGLang does not read gamma from the draft.
        (("--speculative-dspark-block-size=7",), "dspark", [GAMMA, "7"]),
        (
            ("--speculative-dspark-block-size=7", "--speculative-num-draft-tokens=8"),
            "dspark",
            ["--speculative-dspark-block-size", "7", "--speculative-num-draft-tokens", "8"],
        ),
        # Two DFLASH lengths that differ stay both, as judged (DF019: SGLang refuses them).
        (
            ("--speculative-dflash-block-size=16", "--speculative-num-draft-tokens=8"),
            "dflash",
            [TOKENS, "8", "--speculative-dflash-block-size", "16"],
        ),
        ((TOKENS, "8", "--speculative-dflash-block-size=16"), "dspark", [TOKENS, "8"]),
    ],
)  # fmt: skip
def test_the_draft_length_a_command_writes(
    args: tuple[str, ...], method: str, written: list[str]
) -> None:
    assert sglang(*args).draft_length_args(method) == written


@pytest.mark.parametrize(
    "args",
    [
        ("--speculative-num-steps=3", "--speculative-eagle-topk=1"),
        ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1"),
    ],
)
def test_eagle_steps_and_topk_in_either_form(args: tuple[str, ...]) -> None:
    """What an EAGLE-family draft (NEXTN: the target's own MTP layers) runs (fields/spec.py
    :58-65); not a draft length of the DFlash algorithms."""
    settings = sglang(*args)
    assert (settings.speculative_num_steps, settings.speculative_eagle_topk) == (3, 1)
    assert settings.draft_tokens("dflash") is None
    assert (
        parse_engine_args(args).text() == "sglang --speculative-num-steps 3 "
        "--speculative-eagle-topk 1"
    )


def test_without_flags_drops_both_forms_and_keeps_the_rest() -> None:
    args = (
        "--speculative-num-draft-tokens", "8", "--tp-size", "2",
        "--speculative-dflash-block-size=8", "--speculative-dspark-block-size", "7", "--x=1",
    )  # fmt: skip
    assert without_flags(args, DRAFT_LENGTH_FLAGS) == ("--tp-size", "2", "--x=1")
    assert without_flags(args, frozenset()) == args


def test_last_draft_length_wins_as_in_argparse() -> None:
    assert sglang("--speculative-num-draft-tokens=1", "--speculative-num-draft-tokens", "8") == (
        SglangSettings(speculative_num_draft_tokens=8)
    )


@pytest.mark.parametrize(
    ("args", "width"),
    [
        (("--attn-dp-size", "2"), 2),
        (("--attention-data-parallel-size=4",), 4),
        # The deprecated spelling: --dp-size N --enable-dp-attention is --attn-dp-size N.
        (("--enable-dp-attention", "--dp-size", "2", "--tp-size", "2"), 2),
        (("--data-parallel-size=2", "--enable-dp-attention"), 2),
        # Alone, with the default --dp-size 1, the flag leaves attention DP off.
        (("--enable-dp-attention",), 1),
        # Replicas without the flag are not attention DP.
        (("--dp-size", "2"), 1),
    ],
)
def test_dp_attention_width(args: tuple[str, ...], width: int) -> None:
    settings = sglang(*args)
    assert settings.attn_dp_size == width
    assert settings.dp_attention is (width > 1)


def test_unknown_arguments_are_left_alone() -> None:
    """Flags the check does not read, and their values, change nothing."""
    args = ("--enforce-eager", "--max-model-len=128", "--tp-size", "x", "--dtype", "float32")
    assert parse_engine_args(args) == NO_ENGINE_SETTINGS


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--speculative-num-draft-tokens=two",), "--speculative-num-draft-tokens needs a "
         "positive integer, not 'two'"),
        (("--speculative-num-draft-tokens",), "--speculative-num-draft-tokens needs a value"),
        (("--speculative-num-steps=0",), "--speculative-num-steps needs a positive integer"),
        (("--speculative-eagle-topk", "x"), "--speculative-eagle-topk needs a positive integer"),
        (("--dp-size", "0", "--enable-dp-attention"), "--dp-size needs a positive integer"),
        (("--attn-dp-size=-2",), "--attn-dp-size needs a positive integer"),
        (("--enable-dp-attention=true",), "--enable-dp-attention takes no value, not 'true'"),
        (("--attn-dp-size=2", "--dp-size=2"), "--dp-size 2 with --attn-dp-size 2"),
    ],
)  # fmt: skip
def test_values_sglang_would_not_start_with(args: tuple[str, ...], message: str) -> None:
    """One line naming the flag: the CLI makes it exit 2, pairs.yaml an error at its line."""
    with pytest.raises(SettingsError) as info:
        parse_engine_args(args)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("method", "conflict"),
    [("dflash", (8, 16)), ("dflash2", (8, 16)), ("dspark", None), ("eagle3", None), ("mtp", None)],
)
def test_differing_draft_lengths_are_parsed_and_refused_for_dflash_only(
    method: str, conflict: tuple[int, int] | None
) -> None:
    """SGLang refuses --speculative-num-draft-tokens and --speculative-dflash-block-size that
    differ for DFLASH only (speculative_hook.py:374-384): the parser keeps both, and the
    settings say the conflict for the methods SGLang runs as DFLASH (DF019 reports it)."""
    settings = sglang("--speculative-num-draft-tokens=8", "--speculative-dflash-block-size=16")
    assert (settings.speculative_num_draft_tokens, settings.speculative_dflash_block_size) == (
        8,
        16,
    )
    assert settings.dflash_conflict(method) == conflict
    assert sglang("--speculative-dflash-block-size=16").dflash_conflict(method) is None


@pytest.mark.parametrize(
    ("args", "stated", "text"),
    [
        ((), {}, None),
        # A flag at its default changes nothing, so nothing is stated.
        (("--attn-dp-size=1",), {}, None),
        (
            ("--enable-dp-attention", "--dp-size", "2"),
            {"sglang": {"attn_dp_size": 2}},
            "sglang --attn-dp-size 2",
        ),
        (
            ("--speculative-dflash-block-size=8", "--attn-dp-size", "4", "--tp-size", "8"),
            {"sglang": {"attn_dp_size": 4, "speculative_dflash_block_size": 8}},
            "sglang --attn-dp-size 4 --speculative-dflash-block-size 8",
        ),
    ],
    ids=["none", "at-default", "deprecated", "both"],
)
def test_reports_name_what_the_flags_changed(
    args: tuple[str, ...], stated: dict[str, dict[str, int]], text: str | None
) -> None:
    """The reports name the settings that differ from each engine's defaults, in the engine's
    current flag spelling (the deprecated and alias spellings resolve to it)."""
    settings = parse_engine_args(args)
    assert settings.stated() == stated
    assert settings.text() == text


def test_the_dflash_alias_follows_the_engines_algorithms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The methods that read --speculative-dflash-block-size are the ones SGLang's table runs as
    DFLASH (``SGLANG_ALGORITHMS``), not a copy of it: a method added there reads it too, and
    the serve command writes the algorithm from the same table."""
    from types import MappingProxyType

    from dflash_check.knowledge import settings as module
    from dflash_check.knowledge.engines import sglang as engine

    table = MappingProxyType({**module.SGLANG_ALGORITHMS, "dflash3": "DFLASH", "dflash2": "EAGLE3"})
    assert engine.SGLANG_ALGORITHMS is module.SGLANG_ALGORITHMS  # the serve command's, no copy
    monkeypatch.setattr(module, "SGLANG_ALGORITHMS", table)
    settings = sglang("--speculative-dflash-block-size=8", "--speculative-num-draft-tokens=4")
    assert [m for m in ("dflash", "dflash2", "dflash3") if settings.dflash_conflict(m)] == [
        "dflash",
        "dflash3",
    ]
    assert sglang("--speculative-dflash-block-size=8").draft_tokens("dflash3") == 8


def test_every_setting_is_named_by_a_flag_that_reads_it_back() -> None:
    """The reports name each setting by the parser's first flag for it (its current spelling):
    parsed again, every such text gives the same settings."""
    from dataclasses import fields

    values = {f.name: 2 for f in fields(SglangSettings)}
    text = EngineSettings(SglangSettings(**values)).text()
    assert text is not None
    flags = text.split()[1:]
    assert flags[::2] == [
        "--attn-dp-size",
        "--speculative-num-draft-tokens",
        "--speculative-dflash-block-size",
        "--speculative-dspark-block-size",
        "--speculative-num-steps",
        "--speculative-eagle-topk",
    ]
    assert parse_engine_args(flags).sglang == SglangSettings(**values)


def test_the_flags_named_are_the_ones_the_parser_reads() -> None:
    """The help and the pairs.yaml schema name the flags from the parser's tables: each named is
    read (a value SGLang would refuse is refused), and every setting's flag is named."""
    from dflash_check.app.pairs_run import PAIR_KEYS

    text = read_flags_text()
    assert text in PAIR_KEYS["engine_args"][1]
    named = [word.rstrip(",") for word in text.split() if word.startswith("--")]
    for flag in named:
        with pytest.raises(SettingsError):
            parse_engine_args((f"{flag}=0",))
    assert {"--speculative-num-steps", "--speculative-eagle-topk", *DRAFT_LENGTH_FLAGS} <= set(
        named
    )
