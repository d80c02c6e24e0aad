"""The malformed-input corpus: every case a user can cause ends with one named line (exit 3,
or 2 for usage) or a verdict, quickly, and never with the catch-all 'unexpected' message."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dflash_check.errors import ConfigError
from dflash_check.sources.safetensors_header import DTYPE_BITS, encode_header, parse_header
from tests.support.helpers import (
    QWEN3_4B,
    SEED_DRAFT,
    draft_config,
    fc_tensors,
    invoke_cli,
    write_model,
)


def copy_model(src: Path, dst: Path) -> Path:
    """Copy a model folder."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def header_with(entries: dict[str, Any]) -> bytes:
    """Return a safetensors prefix whose JSON header is ``entries``."""
    body = json.dumps(entries).encode()
    return struct.pack("<Q", len(body)) + body


def _huge_int_config(tmp: Path) -> list[str]:
    text = json.dumps(draft_config()).replace('"hidden_size": 2560', '"hidden_size": ' + "9" * 5000)
    return ["pair", str(write_model(tmp / "d", text, fc_tensors(draft_config()))), str(QWEN3_4B)]


def _huge_int_header(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    body = (
        b'{"fc.weight": {"dtype": "BF16", "shape": [' + b"9" * 5000 + b'], "data_offsets": [0, 2]}}'
    )
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(body)) + body)
    return ["pair", str(d), str(QWEN3_4B)]


def _nested_config(tmp: Path) -> list[str]:
    return ["pair", str(write_model(tmp / "d", "[" * 100_000)), str(QWEN3_4B)]


def _unknown_dtype(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    entry = {"dtype": "Q4", "shape": [2560, 12800], "data_offsets": [0, 10]}
    (d / "model.safetensors").write_bytes(header_with({"fc.weight": entry}))
    return ["pair", str(d), str(QWEN3_4B)]


def _offsets_disagree(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    entry = {"dtype": "BF16", "shape": [2560, 12800], "data_offsets": [0, 100]}
    (d / "model.safetensors").write_bytes(header_with({"fc.weight": entry}))
    return ["pair", str(d), str(QWEN3_4B)]


def _too_many_ids(tmp: Path) -> list[str]:
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = list(range(100_000))
    return ["pair", str(write_model(tmp / "d", cfg)), str(QWEN3_4B)]


def _long_path(tmp: Path) -> list[str]:
    return ["pair", str(tmp / ("x" * 5000)), str(QWEN3_4B)]


def _empty_pairs(tmp: Path) -> list[str]:
    (tmp / "pairs.yaml").write_text("version: 1\npairs: []\n")
    return ["registry", str(tmp / "pairs.yaml")]


def _shard_escape(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    (d / "model.safetensors").unlink()
    index = {"weight_map": {"fc.weight": "../../etc/model.safetensors"}}
    (d / "model.safetensors.index.json").write_text(json.dumps(index))
    return ["pair", str(d), str(QWEN3_4B)]


def _directory_as_config(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    (d / "config.json").unlink()
    (d / "config.json").mkdir()
    return ["pair", str(d), str(QWEN3_4B)]


def _huge_config(tmp: Path) -> list[str]:
    d = copy_model(SEED_DRAFT, tmp / "d")
    with (d / "config.json").open("r+b") as f:
        f.truncate(5 << 20)  # sparse: 5 MB of NULs, over the 4 MB cap
    return ["pair", str(d), str(QWEN3_4B)]


CORPUS = {
    # name: (builder, exit code, text the error line must hold)
    "5000-digit integer in config": (_huge_int_config, 3, "config.json: malformed JSON"),
    "5000-digit integer in header": (_huge_int_header, 3, "not valid JSON"),
    "deeply nested config": (_nested_config, 3, "nested too deeply"),
    "unknown safetensors dtype": (_unknown_dtype, 3, "unknown dtype 'Q4'"),
    "offsets disagree with shape x dtype": (_offsets_disagree, 3, "spans 100 bytes"),
    "100,000 layer ids": (_too_many_ids, 3, "more than the 1024 accepted"),
    "name longer than the file system allows": (_long_path, 3, "directory not found"),
    "empty pairs list": (_empty_pairs, 3, "'pairs' is empty"),
    "local shard escaping the folder": (_shard_escape, 3, "points outside the model folder"),
    "directory named config.json": (_directory_as_config, 3, "is a directory"),
    "config.json over its cap": (_huge_config, 3, "larger than the 4 MB limit"),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_corpus(tmp_path: Path, case: str) -> None:
    """One named line, the documented exit code, under a few seconds, also with debug on
    (which adds a traceback and changes nothing else)."""
    build, code, needle = CORPUS[case]
    args = build(tmp_path)
    for env in ({}, {"DFLASH_CHECK_DEBUG": "1"}):
        start = time.monotonic()
        proc = invoke_cli(*args, env=env)
        assert time.monotonic() - start < 10
        assert proc.returncode == code, (env, proc.stderr)
        assert "unexpected" not in proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1 and needle in lines[0], proc.stderr
        assert ("Traceback" in proc.stderr) == bool(env), proc.stderr


def test_deeply_nested_model_card_is_ignored(tmp_path: Path) -> None:
    """A model card whose front matter nests 50,000 levels is not the pair's problem."""
    d = copy_model(SEED_DRAFT, tmp_path / "d")
    (d / "README.md").write_text("---\nbase_model: " + "[" * 50_000 + "\n---\n")
    proc = invoke_cli("pair", str(d), str(QWEN3_4B))
    assert proc.returncode == 0, proc.stderr


# -- terminals and output files --------------------------------------------------------------

SEED_ARGS = ("pair", str(SEED_DRAFT), str(QWEN3_4B.parent / "Qwen3.5-4B"))


def test_ascii_terminal_gets_an_ascii_report() -> None:
    """PYTHONIOENCODING=ascii: the report degrades to ASCII instead of failing."""
    proc = subprocess.run(
        [os.sys.executable, "-m", "dflash_check", *SEED_ARGS, "--verbose"],  # type: ignore[attr-defined]
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "200", "NO_COLOR": "1"},
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    proc.stdout.decode("ascii")  # nothing but ASCII
    assert b"\nincompatible on all 6 runtimes:" in proc.stdout  # --verbose: the tables first
    assert b"target layers 0-31 |" in proc.stdout
    assert b"unexpected" not in proc.stderr


@pytest.mark.parametrize("fmt", ["table", "json", "sarif"])
def test_closed_stdout_keeps_the_exit_code(fmt: str) -> None:
    """`>&-`: no crash, no message about stdout, the verdict's exit code."""
    proc = subprocess.run(
        [os.sys.executable, "-m", "dflash_check", *SEED_ARGS, "-f", fmt],  # type: ignore[attr-defined]
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=60,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 1, proc.stderr
    assert "Error" not in proc.stderr and "Traceback" not in proc.stderr


def test_broken_pipe_keeps_the_exit_code() -> None:
    """`| head -c 1`: the reader goes away; the run ends quietly with the verdict's code."""
    proc = subprocess.Popen(
        [os.sys.executable, "-m", "dflash_check", *SEED_ARGS, "-f", "json"],  # type: ignore[attr-defined]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the report is written
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "unexpected" not in err


@pytest.mark.parametrize("args", [("--help",), ("pair", "--help"), ("registry", "--help")])
def test_help_into_a_closed_pipe_ends_quietly(args: tuple[str, ...]) -> None:
    """`--help | head -1`: typer's help reaches click's echo as bytes once the reader is
    gone; the stream takes them as text (guarded) and the run ends with exit 0."""
    proc = subprocess.Popen(
        [os.sys.executable, "-m", "dflash_check", *args],  # type: ignore[attr-defined]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "unexpected" not in err


def test_output_symlink_is_refused(tmp_path: Path) -> None:
    """--output naming a symlink: refused, the link's target untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "report.json"
    link.symlink_to(victim)
    proc = invoke_cli(*SEED_ARGS, "-f", "json", "-o", str(link))
    assert proc.returncode == 3
    assert "symbolic link; refused" in proc.stderr
    assert victim.read_text() == "precious" and link.is_symlink()


# -- absurd sizes are bounded ---------------------------------------------------------------


def test_layer_picture_is_bounded(tmp_path: Path) -> None:
    """An id of 2^31-1, or a target of 2^31-1 layers: a picture of bounded width, at once."""
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = [1, 2**31 - 1]
    huge_id = write_model(tmp_path / "d", cfg, fc_tensors(cfg))
    target = json.loads((QWEN3_4B / "config.json").read_text())
    target["num_hidden_layers"] = 2**31 - 1
    huge_target = write_model(tmp_path / "t", target)
    for args in ((huge_id, QWEN3_4B), (SEED_DRAFT, huge_target)):
        start = time.monotonic()
        proc = invoke_cli("pair", str(args[0]), str(args[1]), "--verbose")  # the picture's view
        assert time.monotonic() - start < 10
        assert proc.returncode == 1, proc.stderr
        (picture,) = [line for line in proc.stdout.splitlines() if "target layers 0" in line]
        assert len(picture) < 160, picture


def test_picture_cells_match_the_full_drawing_when_small() -> None:
    """The bounded picture draws every layer when they fit, eliding only beyond that."""
    from dflash_check.render.grid import MAX_PICTURE_CELLS, picture_cells

    small = "".join(c for c, _ in picture_cells(6, [1, 4, 8], 3))
    assert small == "│·●··✗·│░░✗"
    big = picture_cells(10**9, [5, 10**8], 10**9)
    assert len(big) <= MAX_PICTURE_CELLS
    assert "".join(c for c, _ in big) == "│·…●…●…·│"


def test_duplicate_check_is_linear() -> None:
    """1,024 ids (the most accepted) with duplicates are checked in well under a second."""
    from tests.support.helpers import check_files, files, qwen3_4b_config

    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = [i % 512 for i in range(1024)]
    start = time.monotonic()
    report = check_files(
        files("draft", cfg, fc_tensors(cfg)), files("target", qwen3_4b_config()), "portable"
    )
    assert time.monotonic() - start < 1
    assert any(f.rule == "DF003" for f in report.findings)


# -- safetensors headers: as strict as the library ---------------------------------------------


@st.composite
def headers(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    """Draw a small header (often valid, sometimes subtly not) and its data size."""
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "fc.weight"]), unique=True, max_size=3))
    offset = 0
    entries: dict[str, Any] = {}
    for name in names:
        dtype = draw(st.sampled_from([*DTYPE_BITS, "Q4", "bf16"]))
        shape = draw(st.lists(st.integers(0, 5), max_size=3))
        bits = DTYPE_BITS.get(dtype, 8)
        size = bits
        for dim in shape:
            size *= dim
        nbytes = -(-size // 8)
        start = offset + draw(st.sampled_from([0, 0, 0, 1, -1]))
        stop = start + nbytes + draw(st.sampled_from([0, 0, 0, 1]))
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [start, stop]}
        offset = max(offset, stop)
    if draw(st.booleans()):
        entries["__metadata__"] = draw(st.sampled_from([{"format": "pt"}, {"x": 1}]))
    return entries, max(offset, 0)


@settings(max_examples=400, deadline=None)
@given(headers())
# An empty tensor listed after a non-empty one at the same start: the library sorts by
# (start, stop), so [0, 0] goes first and the data is tiled.
@example(
    (
        {
            "a": {"dtype": "BOOL", "shape": [], "data_offsets": [0, 1]},
            "b": {"dtype": "BOOL", "shape": [0], "data_offsets": [0, 0]},
        },
        1,
    )
)
def test_header_validation_agrees_with_the_safetensors_library(case: Any) -> None:
    """Our header check accepts exactly the headers safetensors.deserialize accepts."""
    from safetensors import deserialize

    entries, data_size = case
    body = json.dumps(entries).encode()
    try:
        deserialize(struct.pack("<Q", len(body)) + body + bytes(data_size))
        theirs = True
    except Exception:  # noqa: BLE001 - the library raises its own error type
        theirs = False
    try:
        parse_header(body, "draft d", "model.safetensors")
        ours = True
    except ConfigError:
        ours = False
    assert ours == theirs, entries


def test_encode_header_round_trips() -> None:
    """Fixtures written by encode_header pass the strict check."""
    parse_header(encode_header(fc_tensors(draft_config()))[8:], "d", "m")


# -- bounded work: linear scans, bounded memory (issue: round two) -----------------------------

DEEPSEEK_MTP = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 129280,
    "max_position_embeddings": 163840,
}


def test_mtp_scan_is_linear_in_k_and_the_index(tmp_path: Path) -> None:
    """k = 200,000 stated, an index of 200,000 layer names (8 MB): one answer, quickly (the
    scan was quadratic in k: hours). A generous limit, not a benchmark."""
    folder = tmp_path / "target"
    folder.mkdir()
    cfg = DEEPSEEK_MTP | {"num_nextn_predict_layers": 200_000}
    (folder / "config.json").write_text(json.dumps(cfg))
    weight_map = {f"model.layers.{i}.w": "model-1.safetensors" for i in range(200_000)}
    index = json.dumps({"metadata": {}, "weight_map": weight_map})
    (folder / "model.safetensors.index.json").write_text(index)
    start = time.monotonic()
    proc = invoke_cli("pair", str(folder), "--format", "json")
    assert time.monotonic() - start < 20
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    # MTP layer i is model.layers.{61 + i}: the index holds up to 199,999, so 61 are missing.
    assert len(data["tensors"]["missing"]) == 61


def test_mtp_layer_numbers_of_thousands_of_digits_are_no_layers() -> None:
    from dflash_check.check.target_alone import find_mtp_tensors
    from dflash_check.knowledge.mtp_layers import family

    names = [f"model.layers.{'9' * 5000}.w", "model.layers.61.w"]
    found = find_mtp_tensors(names, "index", 61, 2, family(("deepseek_v3",)))
    assert found is not None and found.found == (0,) and found.missing == (1,)


# The peak resident size of this process since exec (ru_maxrss would also count the pytest
# process it was forked from). Linux only.
HWM = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
RSS_PROBE = f"""
import sys
from pathlib import Path
from dflash_check.sources.safetensors_header import parse_file_prefix
data = Path(sys.argv[1]).read_bytes()
before = {HWM}
tensors = parse_file_prefix(data, "target", "model.safetensors")
print(len(tensors), ({HWM} - before) // 1024)
"""
needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc")


@pytest.fixture(scope="module")
def big_header() -> bytes:
    """A header-only safetensors file of 200,000 one-byte tensors (~14 MB of JSON), built once
    for the module (building it costs more than either test that reads it)."""
    from dflash_check.views import TensorInfo

    tensors = {f"model.layers.{i}.w": TensorInfo("U8", (1,)) for i in range(200_000)}
    return encode_header(tensors)


@needs_proc
def test_header_of_200k_tensors_parses_in_bounded_memory(tmp_path: Path, big_header: bytes) -> None:
    """The parse of a 14 MB header of 200,000 tensors adds well under 100 MB to the process
    (it added ~150 MB when the header became 200,000 dicts first)."""
    path = tmp_path / "model.safetensors"
    path.write_bytes(big_header)
    assert path.stat().st_size < 16 << 20  # under the cap: it must be read, not refused
    proc = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, str(path)], capture_output=True, text=True, check=True
    )
    count, grown_mb = map(int, proc.stdout.split())
    assert count == 200_000
    assert grown_mb < 70, grown_mb


@needs_proc
def test_pair_target_alone_on_a_200k_tensor_header_stays_under_100_mb(
    tmp_path: Path, big_header: bytes
) -> None:
    """The README's bound, for a whole run: `pair TARGET` on the largest header under the cap."""
    folder = tmp_path / "target"
    folder.mkdir()
    config = DEEPSEEK_MTP | {"num_nextn_predict_layers": 1}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(big_header)
    probe = (
        "import atexit, runpy, sys\n"
        f"atexit.register(lambda: print('RSS', {HWM}, file=sys.stderr))\n"
        "sys.argv = ['dflash-check', 'pair', sys.argv[1]]\n"
        "runpy.run_module('dflash_check', run_name='__main__')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    rss_kb = int(proc.stderr.split("RSS ")[1].split()[0])
    assert rss_kb < 100 * 1024, proc.stderr
