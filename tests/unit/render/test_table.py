"""The table report's answer: the counts line names what the pair was judged for and with."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dflash_check.knowledge.engines import VLLM
from dflash_check.render.table import render_text
from tests.support.helpers import (
    FIXTURES,
    check_files,
    draft_config,
    fc_tensors,
    files,
    qwen3_4b_config,
)


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


_DFLASH2 = FIXTURES / "drafts" / "z-lab--Qwen3.8-27B-DFlash2"
_QWEN36 = FIXTURES / "targets" / "Qwen--Qwen3.6-27B"


def _config(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "config.json").read_text()))


def _xpress(**top: Any) -> dict[str, Any]:
    cfg = {**_config(_DFLASH2), "architectures": ["Qwen3XPressModel"], "xpress_rank": 256, **top}
    cfg["dflash_config"] = {
        k: v
        for k, v in cfg["dflash_config"].items()
        if k not in ("conv_kernel_size", "conv_group_size", "selector_top_k", "selector_rank")
    }
    return cfg


def _beam_without_cap() -> dict[str, Any]:
    return {**_config(_DFLASH2), "architectures": ["DFlash2BeamDraftModel"]}


def _vocab() -> int:
    return int(_config(_QWEN36)["text_config"]["vocab_size"])


@pytest.mark.parametrize(
    ("draft", "has", "rule", "kind"),
    [
        (lambda: _xpress(vocab_size=_vocab() + 512), "xpress", "DF007", "XPress"),
        (lambda: _xpress(sample_from_anchor=True), "xpress", "DF021", "XPress"),
        (lambda: _xpress(xpress_topc=10**9), "xpress", "DF050", "XPress"),
        (_beam_without_cap, "beam_dflash2_contract", "DF018", "DFlash 2 Beam"),
        (
            lambda: {**_config(_DFLASH2), "no_rope_layers": [1, 3]},
            "dflash2_nope",
            "DF018",
            "DFlash 2",
        ),
    ],
    ids=["xpress-vocab", "xpress-anchor", "xpress-topc", "beam", "no-rope"],
)
def test_a_kind_before_the_draft_reads_whole_in_the_table(
    draft: Any, has: str, rule: str, kind: str
) -> None:
    """A message that names the draft's kind reads "the draft (KIND)" once the table shortens
    the draft's name, never "KIND the draft's"."""
    release = next(r for r in VLLM.releases if getattr(r, has) is not None)
    report = check_files(files("draft", draft()), files("target", _config(_QWEN36)), release.spec)
    assert rule in {f.rule for f in report.findings}, report.findings
    out = " ".join(render_text(report, 120).split())
    assert f"the draft ({kind})" in out, out
    # A kind before "draft NAME" came out as "XPress the draft's vocab_size ...".
    assert not re.search(rf"\b{re.escape(kind)} the (draft|target)\b", out), out
