"""Tokens per second of the smoke run's speculative decode vs the plain decode, and vs the
reference `dflash_generate` (z-lab's `dflash` package) where it is installed.

Same pair (the tiny trained pair in tests/fixtures/tiny), same prompts, same device, in one
process; each decoder runs every prompt several times and the median total time is reported.
The reference must produce the same output tokens and acceptance lengths.

Then, with ``--matrix``, the same three decoders on every architecture of the test matrix
(tests/support/archs.py: sliding windows, shared KV, MLA, hybrid linear attention, MoE), with a
random
draft in z-lab's format loaded into both runtimes: tok/s side by side, and whether each output
equals the plain decode (the reference is not lossless on recurrent targets: its column says so).
Last, the peak memory of a whole ``--smoke-run`` on the tiny pair (a child process's peak RSS on
the CPU; the CUDA allocator's peak on a GPU).

Run: python benchmarks/bench_smoke.py [--runs 5] [--device cpu|cuda] [--dtype bfloat16] [--matrix]
(`pip install --no-deps dflash==0.1.0` adds the reference column.) The GPU check is
``python benchmarks/bench_smoke.py --device cuda --dtype bfloat16 --matrix``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash_check.smoke.decode import plain_decode, speculative_decode  # noqa: E402
from dflash_check.smoke.run import load_draft  # noqa: E402

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
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--matrix", action="store_true", help="also every test architecture")
    args = parser.parse_args()
    tiny_pair(args)
    if args.matrix:
        matrix(args)
    peak_memory(args)


def tiny_pair(args: argparse.Namespace) -> None:
    """Time the three decoders on the tiny trained pair."""
    from transformers import AutoModelForCausalLM

    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    target = AutoModelForCausalLM.from_pretrained(str(TINY / "target"), dtype=dtype)
    target = target.to(device).eval()
    draft, block, mask = load_draft(TINY / "draft", torch, device, dtype, None)
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
        ref_model = reference.DFlashDraftModel.from_pretrained(str(TINY / "draft"), dtype=dtype)
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


def median_time(fn: Callable[[], object], runs: int) -> float:
    """Return the median wall time of ``fn`` over ``runs`` runs, after one warm-up."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matrix(args: argparse.Namespace) -> None:
    """Ours vs plain vs the reference on every architecture of the test matrix."""
    import tempfile

    from transformers import Qwen3Config

    from tests.support.archs import MATRIX, build_target, draft_config, text_config

    try:
        import dflash.model as reference

        reference._cuda_time = time.perf_counter
    except ImportError:
        reference = None
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    n, block = args.max_new_tokens, 8
    prompt = [2, 7, 9, 11, 20, 30, 31, 5]
    import transformers

    print(
        f"\narchitecture matrix: 1 prompt x {n} tokens, block {block}, {device}, {args.dtype}, "
        f"transformers {transformers.__version__}"
    )
    print(f"{'arch':18s} {'ours':>9s} {'plain':>9s} {'ref':>9s}  ours/ref  lossless ours/ref")
    for arch in MATRIX:
        model = build_target(arch).to(device=device, dtype=dtype)
        layers = text_config(model).num_hidden_layers
        cfg = draft_config(model, [1, layers - 2], block)
        torch.manual_seed(3)
        with tempfile.TemporaryDirectory() as tmp:
            if reference is None:
                from dflash_check.smoke.draft_model import DFlashDraft, DraftConfig

                ref_model = None
                ours = DFlashDraft(DraftConfig.from_dict(cfg)).to(device=device, dtype=dtype)
            else:
                ref_model = reference.DFlashDraftModel(Qwen3Config(**cfg))
                ref_model = ref_model.to(device=device, dtype=dtype).eval()
                ref_model.save_pretrained(tmp)
                ours, _, _ = load_draft(Path(tmp), torch, device, dtype, None)
        base = plain_decode(model, prompt, n, set())
        spec = speculative_decode(model, ours, prompt, n, set(), block, 4)
        t_ours = median_time(
            partial(speculative_decode, model, ours, prompt, n, set(), block, 4), args.runs
        )
        t_plain = median_time(partial(plain_decode, model, prompt, n, set()), args.runs)
        ref_cell, ratio, ref_ok = "-", "-", "-"
        if ref_model is not None:
            ids = torch.tensor([prompt], device=device)
            ref_run = partial(reference.dflash_generate, ref_model, model, ids, n, None)
            try:
                out = ref_run()[0, len(prompt) :].tolist()
            except Exception as err:  # noqa: BLE001 - the reference's own failure on this release
                ref_cell, ref_ok = "raises", type(err).__name__
            else:
                t_ref = median_time(ref_run, args.runs)
                ref_cell, ratio = f"{n / t_ref:9.1f}", f"{t_ref / t_ours:8.2f}x"
                ref_ok = str(out == base.output_ids)
        rollback = ", ".join(sorted({r.method for r in spec.rollbacks.values()}))
        print(
            f"{arch.name:18s} {n / t_ours:9.1f} {n / t_plain:9.1f} {ref_cell:>9s}  {ratio:>8s}  "
            f"{spec.output_ids == base.output_ids}/{ref_ok} (replays {spec.replays}; {rollback})"
        )


def peak_memory(args: argparse.Namespace) -> None:
    """Print the peak memory of one whole --smoke-run of the tiny pair, in a child process."""
    import resource
    import subprocess

    command = [
        sys.executable,
        "-m",
        "dflash_check",
        "pair",
        str(TINY / "draft"),
        str(TINY / "target"),
        "--smoke-run",
        "--device",
        args.device,
        "-f",
        "json",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\nwhole --smoke-run of the tiny pair (exit {proc.returncode}): peak RSS {rss:.0f} MiB")
    if args.device == "cuda" and proc.returncode in (0, 1):
        import json

        peak = json.loads(proc.stdout)["smoke"]["peak_memory_bytes"]
        print(f"CUDA allocator peak during the decodes: {peak / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
