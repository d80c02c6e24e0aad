"""Tokens per second of the smoke run's speculative decode vs the plain decode, and vs the
reference `dflash_generate` (z-lab's `dflash` package) where it is installed.

Same pair (the tiny trained pair in tests/fixtures/tiny), same prompts, same device, in one
process; each decoder runs every prompt several times and the median total time is reported.
The reference must produce the same output tokens and acceptance lengths.

Run: python benchmarks/bench_smoke.py [--runs 5] [--device cpu]
(`pip install --no-deps dflash==0.1.0` adds the reference column.)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash_check.runtime.decode import plain_decode, speculative_decode  # noqa: E402
from dflash_check.runtime.smoke import load_draft  # noqa: E402

TINY = ROOT / "tests" / "fixtures" / "tiny"
STOP = {3}


def prompts(n: int) -> list[list[int]]:
    """Return token ids of ``n`` progression prompts (<bos> + three terms)."""
    rng = random.Random(7)
    out = []
    for _ in range(n):
        a, d = rng.randrange(1, 59), rng.randrange(1, 7)
        out.append([2, *[5 + (a + k * d) % 59 for k in range(3)]])
    return out


def main() -> None:
    """Time the decoders and print tokens per second."""
    from transformers import AutoModelForCausalLM

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    device = torch.device(args.device)
    target = AutoModelForCausalLM.from_pretrained(str(TINY / "target"), dtype=torch.float32)
    target = target.to(device).eval()
    draft, block, mask = load_draft(TINY / "draft", torch, device, torch.float32, None)
    cases = prompts(16)
    n = args.max_new_tokens

    def ours() -> tuple[int, list[list[int]], list[list[int]]]:
        results = [speculative_decode(target, draft, p, n, STOP, block, mask) for p in cases]
        return (
            sum(len(r.output_ids) for r in results),
            [r.output_ids for r in results],
            [r.acceptance_lengths for r in results],
        )

    def plain() -> tuple[int, list[list[int]], list[list[int]]]:
        results = [plain_decode(target, p, n, STOP) for p in cases]
        return sum(len(r.output_ids) for r in results), [r.output_ids for r in results], []

    decoders = {"dflash-check speculative": ours, "plain target decode": plain}
    try:
        import dflash.model as reference

        reference._cuda_time = time.perf_counter  # CPU-safe clock for its stats
        ref_model = reference.DFlashDraftModel.from_pretrained(
            str(TINY / "draft"), dtype=torch.float32
        )
        ref_model = ref_model.to(device).eval()

        def ref() -> tuple[int, list[list[int]], list[list[int]]]:
            outs, lens = [], []
            for p in cases:
                r = reference.dflash_generate(
                    ref_model,
                    target,
                    torch.tensor([p], device=device),
                    n,
                    list(STOP),
                    return_stats=True,
                )
                outs.append(r.output_ids[0, len(p) :].tolist())
                lens.append(list(r.acceptance_lengths))
            return sum(len(o) for o in outs), outs, lens

        decoders["reference dflash_generate"] = ref
    except ImportError:
        print("(dflash not installed: reference column skipped)")

    timings: dict[str, list[float]] = {name: [] for name in decoders}
    outputs = {}
    for fn in decoders.values():
        fn()  # warm-up
    for _ in range(args.runs):
        for name, fn in decoders.items():
            start = time.perf_counter()
            tokens, outs, lens = fn()
            timings[name].append(time.perf_counter() - start)
            outputs[name] = (tokens, outs, lens)
    ours_out = outputs["dflash-check speculative"]
    print(f"{len(cases)} prompts x {n} new tokens, {args.device}, median of {args.runs} runs")
    for name, times in timings.items():
        tokens = outputs[name][0]
        print(f"{name:28s} {tokens / statistics.median(times):8.1f} tok/s")
    print("plain output == speculative output:", outputs["plain target decode"][1] == ours_out[1])
    if "reference dflash_generate" in outputs:
        ref_out = outputs["reference dflash_generate"]
        print(
            "reference tokens == ours:",
            ref_out[1] == ours_out[1],
            "| acceptance lengths == ours:",
            ref_out[2] == ours_out[2],
        )
        ratio = statistics.median(timings["reference dflash_generate"]) / statistics.median(
            timings["dflash-check speculative"]
        )
        print(f"ours vs reference tokens/s: {ratio:.2f}x")
    steps = [a for lens in ours_out[2] for a in lens]
    print(f"tau (ours): {sum(steps) / len(steps):.2f}")


if __name__ == "__main__":
    main()
