"""Wall time of `dflash-check pair` on two local directories vs a transformers-based check.

Every side runs as fresh processes, as a user or CI step would run them, on the same pair
(examples/Qwen3-4B-DFlash-b16 with examples/Qwen3.5-4B), alternating, several times each; the
medians and their ratio are printed. The alternative is the obvious hand-written check: load
both configs with transformers.AutoConfig, compare layer ids, hidden and vocab sizes.

Run: python benchmarks/bench_pair.py [--runs 9] [--baseline DIR]

``--baseline DIR`` also times the same ``pair`` commands from another checkout of the project
(e.g. ``git worktree add --detach ../base main``), interleaved with this one, and prints the
ratio: start-up must not get slower from one change to the next.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRAFT = ROOT / "examples" / "Qwen3-4B-DFlash-b16"
TARGET = ROOT / "examples" / "Qwen3.5-4B"
# An EAGLE-3 head and its target (the shipped fixtures): the same start-up budget must hold.
EAGLE3_HEAD = ROOT / "tests" / "fixtures" / "eagle3" / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
EAGLE3_TARGET = ROOT / "tests" / "fixtures" / "targets" / "meta-llama--Meta-Llama-3.1-8B"

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


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Run ``cmd`` once and return its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    return time.perf_counter() - start


def checkout_env(root: Path) -> dict[str, str]:
    """Return an environment that imports ``dflash_check`` from the checkout at ``root``."""
    return {**os.environ, "PYTHONPATH": str(root)}


def main() -> None:
    """Time both checks and print medians and the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    args = parser.parse_args()

    def ours(draft: Path, target: Path) -> list[str]:
        return [sys.executable, "-m", "dflash_check", "pair", str(draft), str(target), "-f", "json"]

    commands = {
        "dflash-check pair, DFlash (local dirs)": ours(DRAFT, TARGET),
        "dflash-check pair, EAGLE-3 (local dirs)": ours(EAGLE3_HEAD, EAGLE3_TARGET),
        "transformers.AutoConfig check": [
            sys.executable,
            "-c",
            ALTERNATIVE,
            str(DRAFT),
            str(TARGET),
        ],
    }
    envs = {name: checkout_env(ROOT) for name in commands}
    if args.baseline is not None:
        # The same pairs from the other checkout (its own code, this checkout's models).
        for name in list(commands)[:2]:
            commands[f"{name}, baseline"] = commands[name]
            envs[f"{name}, baseline"] = checkout_env(args.baseline.resolve())
    for name, cmd in commands.items():
        timed(cmd, envs[name])  # warm the OS file cache
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved, so load changes hit every side alike
        for name, cmd in commands.items():
            times[name].append(timed(cmd, envs[name]))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:42s} median {median * 1000:.0f} ms over {args.runs} runs")
    alt = medians["transformers.AutoConfig check"]
    for name in list(commands)[:2]:
        print(f"speed-up of {name}: {alt / medians[name]:.1f}x")
        if f"{name}, baseline" in medians:
            ratio = medians[name] / medians[f"{name}, baseline"]
            print(f"{name}: {ratio:.2f}x the baseline's time")


if __name__ == "__main__":
    main()
