"""The table report's answer: the counts line names what the pair was judged for and with."""

from __future__ import annotations

import pytest

from dflash_check.render.table import render_text
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


@pytest.mark.parametrize(
    ("runtime", "engine_args", "line"),
    [
        ("portable", (), "no findings; portable check (every runtime)."),
        ("sglang", (), "no findings; checked for sglang==0.5.23."),
        (
            "sglang",
            ("--dp-size=2", "--enable-dp-attention", "--speculative-num-draft-tokens=16"),
            "no findings; checked for sglang==0.5.23, with sglang --attn-dp-size 2 "
            "--speculative-num-draft-tokens 16.",
        ),
        (
            "portable",
            ("--speculative-num-draft-tokens", "8"),
            "0 errors, 1 warning; portable check (every runtime), with sglang "
            "--speculative-num-draft-tokens 8.",
        ),
    ],
    ids=["portable", "sglang", "sglang-settings", "portable-settings"],
)
def test_the_counts_line_names_the_engine_settings(
    runtime: str, engine_args: tuple[str, ...], line: str
) -> None:
    """Given engine settings are named beside the runtimes, in the engine's own flags; without
    them the line is as it was."""
    cfg = draft_config()
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)),
        files("target", qwen3_4b_config()),
        runtime,
        engine_args=engine_args,
    )
    text = " ".join(render_text(report, 200).split())
    assert line in text
