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
from tests.support.paths import REPO

DRIVERS = REPO / "conformance" / "drivers"


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


# --- reading llama.cpp's output (shortened from the 0c1e57098 run) -----------------------------

TREE = "/cache/build/llama.cpp"
GDB_DECODE = """#1  0x7f in ggml_print_backtrace () from libggml-base.so.0
#3  0x7f in llm_graph_result::set_outputs(llm_graph_params const&) () from libllama.so.0
#6  0x7f in llama_context::sched_reserve() () from libllama.so.0
#7  0x7f in llama_context::decode(llama_batch_ext const&) () from libllama.so.0
#8  0x55 in main ()"""
GDB_ATTACH = """#3  0x7f in llama_context::set_embeddings_layer_inp(unsigned int, bool) () from lib
#4  0x7f in common_speculative_impl_draft_dflash::common_speculative_impl_draft_dflash(\
common_params_speculative const&, unsigned int, common_speculative_type) () from libllama-common
#5  0x7f in common_speculative_init(common_params_speculative&, unsigned int) () from libllama-c
#6  0x55 in main ()"""
GDB_DRAFT = """#3  0x7f in common_batch::get_sub_batch(int, int) () from libllama-common.so.0
#4  0x7f in common_speculative_impl_draft_dflash::draft(std::vector<…>&) () from libllama-common
#5  0x7f in common_speculative_draft(common_speculative*) () from libllama-common.so.0
#6  0x55 in main ()"""
SYMBOLS_ATTACH = (
    "libllama-common.so.0(_Z23common_speculative_initR25common_params_speculativej+0x53) [0x7f]"
)
SYMBOLS_DECODE = "libllama.so.0(_ZN13llama_context6decodeERK15llama_batch_ext+0x2b4) [0x7f]"


@pytest.fixture(scope="module")
def llamacpp_driver():
    """The driver as the engine's Python runs it: its folder first on sys.path."""
    sys.path.insert(0, str(DRIVERS))
    try:
        spec = importlib.util.spec_from_file_location(
            "llamacpp_driver", DRIVERS / "llamacpp_driver.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(DRIVERS))
    return module


@pytest.mark.parametrize(
    ("backtrace", "stage"),
    [
        (GDB_DECODE, "first decode"),  # id N-1: the graph of the first decode
        (GDB_ATTACH, "load"),  # id N: the capture turned on when the draft is attached
        (GDB_DRAFT, "first decode"),  # no mask token: the first draft block
        (SYMBOLS_ATTACH, "load"),  # glibc's backtrace_symbols, mangled names
        (SYMBOLS_DECODE, "first decode"),
    ],
)
def test_abort_stage_from_the_backtrace(llamacpp_driver, backtrace: str, stage: str) -> None:
    assert llamacpp_driver._abort_stage("<bos> 1 2 3\n" + backtrace) == stage


def test_the_line_that_says_why(llamacpp_driver) -> None:
    """The assertion first, then a refused file, else the last error line; the log prefix and
    the tree's own path dropped."""
    noise = (
        "0.00.010.357 E llama_init_from_model: failed to initialize the context: dflash requires "
        "ctx_other to be set (this warning is normal during memory fitting)"
    )
    assert_line = f"{TREE}/src/llama-graph.cpp:1384: GGML_ASSERT(t_layer_inp[il] != nullptr) failed"
    why = llamacpp_driver._last_error(f"{noise}\n{assert_line}\n30\tNo such file", Path(TREE))
    assert why == "src/llama-graph.cpp:1384: GGML_ASSERT(t_layer_inp[il] != nullptr) failed"
    refused = (
        "0.00.010.922 E llama_model_load: error loading model: check_tensor_dims: tensor "
        "'fc.weight' has wrong shape"
    )
    text = f"{noise}\n{refused}\n0.00.170.718 E failed to initialize speculative decoding"
    assert llamacpp_driver._last_error(text).startswith("llama_model_load: error loading model")
    assert llamacpp_driver._last_error(f"{noise}\nplain") == noise.split(" E ", 1)[1]
    assert llamacpp_driver._last_error("") == "no output"


def test_generated_words_and_totals(llamacpp_driver) -> None:
    """The words after the prompt, cut at max_tokens (speculative-simple commits a few past
    it); tau's counters from its totals."""
    out = "\n\n<bos> 1 2 3 4 5 6 7\n\n\n\n"
    assert llamacpp_driver.generated(out, "1 2 3", 3) == ["4", "5", "6"]
    assert llamacpp_driver.generated("<bos> 7 9 11 0\n", "7 9", 40) == ["11", "0"]
    with pytest.raises(ValueError, match="not in the tool's output"):
        llamacpp_driver.generated("<bos> 1 2", "5 10", 4)
    log = "I n_draft   = 7\nI n_predict = 48\nI n_drafted = 60\nI n_accept  = 39\n"
    assert llamacpp_driver._totals(log) == (48, 39)
    assert llamacpp_driver._totals("I n_draft   = 7\n") is None
