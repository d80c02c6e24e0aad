"""The serve commands the tool prints, against what each engine's own parser made of them
(``conformance/oracle_commands.py``, ``conformance/results/oracle/commands/*.json``): no engine
is imported. Regenerate with ``python -m conformance.oracle sglang 0.5.23 --commands`` after
changing ``dflash_check/engines/command.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conformance.oracle import CORPUS
from conformance.oracle_commands import COMMANDS, misread, printed, repo_relative


def _recorded() -> list[tuple[str, str, dict[str, Any]]]:
    rows = []
    for path in sorted(COMMANDS.glob("*.json")):
        data = json.loads(path.read_text())
        rows += [(data["engine"], data["release"], r) for r in data["records"]]
    return rows


ROWS = _recorded()
EXPLAINED = {
    "sglang:mimo-v2.5-pro": "the command passes --trust-remote-code (the target names its own "
    "code); the config-only fixture carries no code file, which transformers then cannot find "
    "(transformers==5.19.0:transformers/utils/hub.py:471, reached from "
    "sglang==0.5.23:sglang/srt/utils/hf_transformers/config.py:228): not the command's fault",
    "vllm:mimo-v2.5-pro": "the command passes --trust-remote-code (the target names its own "
    "code); the config-only fixture carries no code file, which transformers then cannot find "
    "(transformers==5.22.2:transformers/utils/hub.py:471, reached from "
    "vllm==0.34.0:vllm/transformers_utils/config.py:351-358): not the command's fault",
    "sglang:muse-glimmer-assistant": "SGLang reads the target's layer_types for Muse Glimmer "
    "targets before any speculative setting (sglang==0.5.23:sglang/srt/configs/model_config.py"
    ":2764); the corpus's abridged target config omits them: not the command's fault",
}
"""Commands the engine refuses for a reason that is not the command's, by ENGINE:PAIR."""

AWAITING_RERUN: dict[str, tuple[str, str, str]] = {}
"""Commands changed since the engine parsed them, by ENGINE:PAIR: (recorded text, printed text,
why). The printed command must be the recorded one with that one edit; remove the entry when
``python -m conformance.oracle ENGINE RELEASE --commands`` has re-run them."""


def _id(row: tuple[str, str, dict[str, Any]]) -> str:
    return f"{row[0]}-{row[1]}:{row[2]['id']}"


def test_commands_are_recorded() -> None:
    assert ROWS, "no parsed commands under conformance/results/oracle/commands"
    for path in COMMANDS.glob("*.json"):
        assert not re.search(r"/(tmp|home|root|work)/", path.read_text()), path.name


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_tool_still_prints_the_parsed_command(row: tuple[str, str, dict[str, Any]]) -> None:
    """What the engine parsed is what the tool prints today (else: regenerate the file)."""
    engine, release, record = row
    (pair,) = [p for p in CORPUS if p.id == record["pair"]]
    now = printed(pair, engine, release, tuple(record["flags"]))
    expected = record["command"]
    pending = AWAITING_RERUN.get(f"{engine}:{record['pair']}")
    if pending is not None and expected is not None:
        was, becomes, _ = pending
        edited = [a.replace(was, becomes) for a in expected]
        expected = edited
    assert (repo_relative(now.argv) if now.argv else None) == expected, now.why


def test_a_pending_rerun_names_a_recorded_command() -> None:
    """Every entry of AWAITING_RERUN edits some recorded command (else: remove it)."""
    for key, (was, _, why) in AWAITING_RERUN.items():
        engine, pair = key.split(":", 1)
        commands = [r["command"] for e, _, r in ROWS if e == engine and r["pair"] == pair]
        assert any(was in a for c in commands if c for a in c), key
        assert why


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_engine_reads_the_command_as_meant(row: tuple[str, str, dict[str, Any]]) -> None:
    engine, _, record = row
    note = EXPLAINED.get(f"{engine}:{record['pair']}")
    if note is not None:
        assert misread(engine, record), f"explained refusal no longer refused: remove {engine}"
        assert re.search(r"==[\w.]+:\S+:\d+", note), "an explanation cites the engine"
        return
    assert misread(engine, record) == []


def test_every_method_of_the_corpus_has_a_parsed_command() -> None:
    for engine in {e for e, _, _ in ROWS}:
        parsed = {r["method"] for e, _, r in ROWS if e == engine and r["command"]}
        assert {p.method for p in CORPUS} <= parsed, engine


def test_misread_can_fail() -> None:
    """An EAGLE-3 head served as DFLASH, a refusal, another draft length: each is named."""
    row: dict[str, Any] = {
        "pair": "eagle3-llama3.1-8b",
        "method": "eagle3",
        "command": ["--speculative-num-draft-tokens", "4"],
        "outcome": "accepted",
        "resolved": {
            "speculative_algorithm": "DFLASH",
            "speculative_draft_model_path": "REPO/tests/fixtures/eagle3/"
            "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B",
            "speculative_num_draft_tokens": 8,
            "tp_size": 1,
        },
    }
    assert [m.split(":")[0] for m in misread("sglang", row)] == [
        "speculative_algorithm",
        "speculative_num_draft_tokens",
    ]
    refused = {**row, "outcome": "refused", "stage": "parse", "engine_error": "bad"}
    assert misread("sglang", refused) == ["refused at parse: bad"]


def test_a_command_is_printed_offline() -> None:
    """``printed`` reads the command off the CLI's stdout, offline."""
    (pair,) = [p for p in CORPUS if p.id == "zlab-qwen3-8b"]
    argv = printed(pair, "sglang", "0.5.23").argv
    assert argv is not None and argv[:3] == ("python3", "-m", "sglang.launch_server")
