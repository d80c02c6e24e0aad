"""`dflash-check registry` on 1,000 synthetic pairs over 200 distinct models, on a loopback Hub.

100 synthetic targets (Qwen3-style configs, 24-64 layers) and 100 drafts (header-only
safetensors) are served by tests/support/hubserver.py with an added per-request latency that stands
in
for a real network. Each draft is paired with 10 targets (1,000 pairs, most compatible, some
not, all with the right `expect`). Measured, as fresh processes: a cold cache, a warm cache
(online: each model's commit is still checked), and offline; then 200 pairs over the same 200
models, cold, to show that cold time follows the models and the workers, not the pairs.

Run: python benchmarks/bench_registry.py [--latency 0.02] [--workers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash_check.sources.safetensors_header import header_for_draft_config  # noqa: E402
from dflash_check.views import build_target_layer_ids  # noqa: E402
from tests.support.hubserver import serve  # noqa: E402

HIDDEN, VOCAB = 2048, 151936


def target_config(n: int) -> bytes:
    """Return a Qwen3-style target config with ``n`` layers."""
    return json.dumps(
        {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "num_hidden_layers": n,
            "hidden_size": HIDDEN,
            "vocab_size": VOCAB,
            "max_position_embeddings": 40960,
        }
    ).encode()


def draft_config(n: int) -> dict:
    """Return a DFlash draft config trained for an ``n``-layer target."""
    return {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "vocab_size": VOCAB,
        "num_hidden_layers": 1,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 6144,
        "num_target_layers": n,
        "max_position_embeddings": 40960,
        "dflash_config": {
            "target_layer_ids": list(build_target_layer_ids(n, 5)),
            "mask_token_id": 151669,
            "block_size": 16,
        },
    }


def write_registry(path: Path, pairs: list[tuple[str, str, bool]]) -> None:
    """Write a pairs.yaml."""
    lines = ["version: 1", "pairs:"]
    for draft, target, ok in pairs:
        expect = "compatible" if ok else "incompatible"
        lines += [
            f"  - draft: {draft}",
            f"    target: {target}",
            f"    expect: {expect}",
            "    source: synthetic",
        ]
    path.write_text("\n".join(lines) + "\n")


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """Run the CLI once; return wall seconds and the exit code."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_check", "registry", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
    )
    return time.perf_counter() - start, proc.returncode


def main() -> None:
    """Build the synthetic Hub, run the modes, print a table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    layer_counts = [24 + (i % 41) for i in range(100)]
    work = Path(tempfile.mkdtemp())
    with serve() as hub:
        for i, n in enumerate(layer_counts):
            hub.add(f"bench/target-{i:03d}", {"config.json": target_config(n)})
            cfg = draft_config(n)
            hub.add(
                f"bench/draft-{i:03d}",
                {
                    "config.json": json.dumps(cfg).encode(),
                    "model.safetensors": header_for_draft_config(cfg),
                },
            )
        pairs = []
        for d, n in enumerate(layer_counts):
            for k in range(10):
                t = (d + k * 7) % 100
                # the z-lab formula ends at N-3, so the portable rule needs N >= n
                ok = layer_counts[t] == n
                pairs.append((f"bench/draft-{d:03d}", f"bench/target-{t:03d}", ok))
        write_registry(work / "pairs-1000.yaml", pairs)
        write_registry(
            work / "pairs-200.yaml",
            [p for i, p in enumerate(pairs) if i % 10 == 0]
            + [(f"bench/draft-{i:03d}", f"bench/target-{i:03d}", True) for i in range(100)][:100],
        )
        hub.state.latency = args.latency
        w = ["-j", str(args.workers), "-f", "json", "-o", os.devnull]
        rows = []
        home = work / "home-1000"
        rows.append(
            ("1000 pairs, cold cache", *timed(["pairs-1000.yaml", *w], hub.env(home), work))
        )
        rows.append(
            ("1000 pairs, warm cache", *timed(["pairs-1000.yaml", *w], hub.env(home), work))
        )
        rows.append(
            (
                "1000 pairs, offline",
                *timed(["pairs-1000.yaml", *w, "--offline"], hub.env(home), work),
            )
        )
        rows.append(
            (
                "200 pairs, cold cache",
                *timed(["pairs-200.yaml", *w], hub.env(work / "home-200"), work),
            )
        )
        rows.append(
            (
                "1000 pairs, cold, 16 workers",
                *timed(
                    ["pairs-1000.yaml", "-j", "16", "-f", "json", "-o", os.devnull],
                    hub.env(work / "home-16"),
                    work,
                ),
            )
        )
        requests = len(hub.state.log)
    print(f"200 models, {args.latency * 1000:.0f} ms added per request, {args.workers} workers")
    for name, seconds, code in rows:
        print(f"{name:30s} {seconds:6.2f} s  (exit {code})")
    print(f"requests served in all runs: {requests}")


if __name__ == "__main__":
    main()
