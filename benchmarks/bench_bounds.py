"""Time and memory of the largest inputs under the caps (the README's "Bounded work" figures).

* ``pair TARGET`` on a config stating ``num_nextn_predict_layers: 200000`` with an index of
  200,000 layer names: wall time of a fresh process;
* the parse of a safetensors header of 200,000 tensors (~16 MB, under the cap): tracemalloc's
  peak for the parse alone, and the peak resident size (VmHWM, Linux) of a whole
  ``pair TARGET`` run on it, next to a run on a tiny checkpoint.

Run: python benchmarks/bench_bounds.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash_check.sources.safetensors_header import (  # noqa: E402
    encode_header,
    parse_file_prefix,
)
from dflash_check.views import TensorInfo  # noqa: E402

CONFIG = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 129280,
    "max_position_embeddings": 163840,
}
COUNT = 200_000
PROBE = (
    "import atexit, runpy, sys\n"
    "hwm = lambda: int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))"
    ".split()[1])\n"
    "atexit.register(lambda: print('HWM', hwm(), file=sys.stderr))\n"
    "sys.argv = ['dflash-check', 'pair', sys.argv[1]]\n"
    "runpy.run_module('dflash_check', run_name='__main__')\n"
)


def run_pair(folder: Path) -> tuple[float, int | None]:
    """Run ``pair FOLDER`` in a fresh process; return wall seconds and VmHWM in MB."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder)], capture_output=True, text=True, cwd=ROOT
    )
    seconds = time.perf_counter() - start
    hwm = proc.stderr.split("HWM ")[1].split()[0] if "HWM " in proc.stderr else None
    return seconds, int(hwm) // 1024 if hwm else None


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mtp = base / "mtp"
        mtp.mkdir()
        (mtp / "config.json").write_text(json.dumps(CONFIG | {"num_nextn_predict_layers": COUNT}))
        weight_map = {f"model.layers.{i}.w": "model-1.safetensors" for i in range(COUNT)}
        index = json.dumps({"metadata": {}, "weight_map": weight_map})
        (mtp / "model.safetensors.index.json").write_text(index)
        seconds, _ = run_pair(mtp)
        print(f"pair TARGET, k={COUNT}, index of {len(index) >> 20} MB: {seconds:.2f} s")

        header = base / "header"
        header.mkdir()
        (header / "config.json").write_text(json.dumps(CONFIG | {"num_nextn_predict_layers": 1}))
        tensors = {f"model.layers.{i}.w": TensorInfo("U8", (1,)) for i in range(COUNT)}
        blob = encode_header(tensors)
        del tensors
        (header / "model.safetensors").write_bytes(blob)
        tracemalloc.start()
        parse_file_prefix(blob, "target", "model.safetensors")
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"header of {COUNT} tensors ({len(blob) / 2**20:.1f} MB): parse peak "
            f"{peak / 2**20:.1f} MB (tracemalloc)"
        )
        seconds, hwm = run_pair(header)
        tiny = base / "tiny"
        tiny.mkdir()
        (tiny / "config.json").write_text(json.dumps(CONFIG | {"num_nextn_predict_layers": 1}))
        _s, tiny_hwm = run_pair(tiny)
        print(
            f"pair TARGET on it: {seconds:.2f} s, peak RSS {hwm} MB (a tiny target: {tiny_hwm} MB)"
        )


if __name__ == "__main__":
    main()
