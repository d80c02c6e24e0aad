"""Bytes and wall time of `dflash-check pair` on Hub repos: cold cache, warm cache, offline.

A loopback Hub (tests/support/hubserver.py) serves the seed pair with the real-size draft header
(examples/Qwen3-4B-DFlash-b16: 58 tensors, fc.weight 2560 x 12800). Each mode runs several
times as a fresh process; medians are printed, next to a check of the same pair from local
directories.

Run: python benchmarks/bench_hub.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.hubserver import serve  # noqa: E402

DRAFT, TARGET = "z-lab/Qwen3-4B-DFlash-b16", "Qwen/Qwen3-4B"


def run(args: list[str], env: dict[str, str]) -> tuple[float, dict]:
    """Run the CLI once; return wall seconds and the JSON report."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_check", "pair", *args, "-f", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    elapsed = time.perf_counter() - start
    return elapsed, json.loads(proc.stdout)


def main() -> None:
    """Measure each mode and print a table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with serve() as hub:
        hub.add(DRAFT, ROOT / "examples" / "Qwen3-4B-DFlash-b16")
        hub.add(TARGET, ROOT / "examples" / "Qwen3-4B")
        rows: dict[str, list[float]] = {"cold": [], "warm": [], "offline": [], "local": []}
        sent: list[int] = []
        reported: list[int] = []
        for _ in range(args.runs):
            home = Path(tempfile.mkdtemp())
            env = hub.env(home)
            before = hub.bytes_sent()
            t, report = run([DRAFT, TARGET], env)
            rows["cold"].append(t)
            sent.append(hub.bytes_sent() - before)
            reported.append(report["draft"]["fetched_bytes"] + report["target"]["fetched_bytes"])
            rows["warm"].append(run([DRAFT, TARGET], env)[0])
            rows["offline"].append(run([DRAFT, TARGET, "--offline"], env)[0])
            rows["local"].append(
                run(
                    [
                        str(ROOT / "examples" / "Qwen3-4B-DFlash-b16"),
                        str(ROOT / "examples" / "Qwen3-4B"),
                    ],
                    env,
                )[0]
            )
    print(
        f"bytes per pair, cold cache: {statistics.median(sent)} sent by the Hub, "
        f"{statistics.median(reported)} reported as fetched_bytes"
    )
    local = statistics.median(rows["local"])
    for mode, times in rows.items():
        m = statistics.median(times)
        print(f"{mode:8s} median {m * 1000:6.0f} ms  ({m / local:.2f}x local)")


if __name__ == "__main__":
    main()
