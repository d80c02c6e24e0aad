"""Wall time of `dflash-check pair` on two local directories vs a transformers-based check.

Both sides run as fresh processes, as a user or CI step would run them, on the same pair
(examples/Qwen3-4B-DFlash-b16 with examples/Qwen3.5-4B), alternating, several times each; the
medians and their ratio are printed. The alternative is the obvious hand-written check: load
both configs with transformers.AutoConfig, compare layer ids, hidden and vocab sizes.

Run: python benchmarks/bench_pair.py [--runs 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRAFT = ROOT / "examples" / "Qwen3-4B-DFlash-b16"
TARGET = ROOT / "examples" / "Qwen3.5-4B"

ALTERNATIVE = """
import sys
from transformers import AutoConfig
draft = AutoConfig.from_pretrained(sys.argv[1])
target = AutoConfig.from_pretrained(sys.argv[2])
text = getattr(target, "text_config", None) or target
ids = (getattr(draft, "dflash_config", None) or {}).get("target_layer_ids")
ok = max(ids) <= text.num_hidden_layers - 2
ok = ok and draft.hidden_size == text.hidden_size and draft.vocab_size == text.vocab_size
sys.exit(0 if ok else 1)
"""


def timed(cmd: list[str]) -> float:
    """Run ``cmd`` once and return its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    """Time both checks and print medians and the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    ours_cmd = [
        sys.executable,
        "-m",
        "dflash_check",
        "pair",
        str(DRAFT),
        str(TARGET),
        "--format",
        "json",
    ]
    alt_cmd = [sys.executable, "-c", ALTERNATIVE, str(DRAFT), str(TARGET)]
    timed(ours_cmd), timed(alt_cmd)  # warm the OS file cache for both
    ours, alt = [], []
    for _ in range(args.runs):
        ours.append(timed(ours_cmd))
        alt.append(timed(alt_cmd))
    m_ours, m_alt = statistics.median(ours), statistics.median(alt)
    print(f"dflash-check pair (local dirs): median {m_ours * 1000:.0f} ms over {args.runs} runs")
    print(f"transformers.AutoConfig check : median {m_alt * 1000:.0f} ms over {args.runs} runs")
    print(f"speed-up: {m_alt / m_ours:.1f}x")


if __name__ == "__main__":
    main()
