"""The conformance suite's helpers that need no engine: the drivers' shared record, and the
SentencePiece tokenizer written for llama.cpp's converter.

The drivers run as scripts with an engine's own Python; here one runs with the project's Python,
where its engine is not installed, so the record it writes is the import failure: that checks
the script finds its sibling ``_record`` module the way it does in the engine's environment.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.build import TINY, sentencepiece_model, write_sentencepiece_model
from conformance.drivers._record import MESSAGE_CHARS, Recording

DRIVERS = Path(__file__).resolve().parents[2] / "conformance" / "drivers"


def test_recording_writes_what_the_driver_filled_in(tmp_path: Path) -> None:
    out = tmp_path / "record.json"
    with Recording(str(out), "config") as record:
        record["stage"] = "done"
        record["outputs"].append([1, 2])
    assert json.loads(out.read_text()) == {
        "stage": "done",
        "error": None,
        "outputs": [[1, 2]],
        "counters": {},
    }


def test_recording_keeps_the_failure_and_stops_it(tmp_path: Path) -> None:
    """An exception is the case's outcome: recorded (message cut, traceback's end), not raised,
    and the stage is the one reached when it happened."""
    out = tmp_path / "record.json"

    def engine_call() -> None:
        raise ValueError("x" * (MESSAGE_CHARS + 50))

    with Recording(str(out), "config") as record:
        record["stage"] = "load"
        engine_call()
        record["stage"] = "done"  # never reached
    got = json.loads(out.read_text())
    assert got["stage"] == "load"
    assert got["error"] == {"type": "ValueError", "message": "x" * MESSAGE_CHARS}
    assert "in engine_call" in got["traceback"]
    assert got["traceback"].rstrip().endswith("x" * 10)


def test_recording_writes_on_an_early_return(tmp_path: Path) -> None:
    out = tmp_path / "record.json"

    def driver() -> int:
        with Recording(str(out), "config") as record:
            record["error"] = {"type": "ConversionError", "message": "refused"}
            return 0
        raise AssertionError("unreachable")

    assert driver() == 0
    assert json.loads(out.read_text())["error"]["type"] == "ConversionError"


@pytest.mark.parametrize(
    ("driver", "module", "stage"),
    [
        ("vllm_driver.py", "vllm", "config"),
        ("mlx_driver.py", "mlx_lm", "load"),
        ("dflash_mlx_driver.py", "dflash_mlx", "load"),
    ],
)
def test_driver_scripts_import_the_shared_record(
    tmp_path: Path, driver: str, module: str, stage: str
) -> None:
    """Run as a script (as the runner does), each driver writes its record through
    ``_record``: here the engine is missing, so the record says so at the driver's first stage."""
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    spec = {"target": "t", "draft": "d", "method": "dflash", "num_speculative_tokens": 7}
    spec |= {"prompts": ["1 2 3"], "max_tokens": 4}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "record.json"
    argv = [sys.executable, str(DRIVERS / driver), str(tmp_path / "spec.json"), str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["stage"] == stage
    assert record["error"]["type"] == "ModuleNotFoundError"
    assert list(record)[:4] == ["stage", "error", "outputs", "counters"]


# --- the SentencePiece model -------------------------------------------------------------------


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, object]]:
    """Decode one protobuf message's fields (number, value) in order: a reader written from
    the wire format, independent of the writer."""
    out: list[tuple[int, object]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        elif wire == 5:
            value, at = struct.unpack("<f", data[at : at + 4])[0], at + 4
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, value))
    return out


def test_sentencepiece_model_has_the_tiny_tokenizers_ids(tmp_path: Path) -> None:
    """Piece i is token i of the word-level tokenizer.json: the special tokens by name (the
    unknown one UNKNOWN, the others CONTROL), every word with the "▁" llama.cpp's SPM
    tokenizer puts before it, so "1 2 3" reaches the ids the pair was trained on."""
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(TINY / "target" / name, tmp_path / name)
    path = write_sentencepiece_model(tmp_path)
    assert path == tmp_path / "tokenizer.model"
    model = _fields(path.read_bytes())
    pieces = [dict(_fields(v)) for n, v in model if n == 1 and isinstance(v, bytes)]
    vocab = json.loads((tmp_path / "tokenizer.json").read_text())["model"]["vocab"]
    assert len(pieces) == len(vocab) == 64
    by_id = {i: (p[1].decode(), p[3]) for i, p in enumerate(pieces)}
    assert [by_id[i] for i in range(5)] == [
        ("<pad>", 3),
        ("<unk>", 2),
        ("<bos>", 3),
        ("<eos>", 3),
        ("<mask>", 3),
    ]
    for word, i in vocab.items():
        if i >= 5:
            assert by_id[i] == ("\u2581" + word, 1)
            # Every longer word merges from a one-digit prefix that is itself a piece.
            assert len(word) == 1 or ("\u2581" + word[:-1]) in {p for p, _ in by_id.values()}
    (trainer,) = [dict(_fields(v)) for n, v in model if n == 2 and isinstance(v, bytes)]
    assert (trainer[4], trainer[40], trainer[41], trainer[42], trainer[43]) == (64, 1, 2, 3, 0)
    assert (trainer[45], trainer[46], trainer[47]) == (b"<unk>", b"<bos>", b"<eos>")


def test_sentencepiece_model_refuses_another_tokenizer_kind(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": {}}}))
    (tmp_path / "tokenizer_config.json").write_text("{}")
    with pytest.raises(SystemExit, match="WordLevel"):
        sentencepiece_model(tmp_path)
