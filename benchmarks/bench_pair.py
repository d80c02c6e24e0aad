"""Start-up of `dflash-check pair` on two local directories: against a bare-Python floor and
against a transformers-based check.

Every side runs as fresh processes, as a user or CI step would run them, on the same pair
(examples/Qwen3-4B-DFlash-b16 with examples/Qwen3.5-4B), interleaved, several times each; the
median wall time and the median CPU time (user + system, of the child alone, so that other work
on a shared machine counts less) of each side are printed, with the ratios.

The floor is what no Python CLI can beat: `python -c` reading the same two config.json files
with json.load. The issue's budget is `pair` CPU time <= 4x the floor's. A second floor adds
what the design (typer, frozen dataclasses) imports before the package's first line, so that
the share of the budget left to the package is measured, not guessed. The package is
byte-compiled first, so that no run pays for compiling. The alternative is the obvious
hand-written check: load both configs with transformers.AutoConfig, compare layer ids, hidden and
vocab sizes (``--no-transformers`` leaves it out: it takes seconds per run).

The default table is also timed through the installed console script (``dflash-check pair
DRAFT TARGET``), the way users run it, with its own ratio to the floor. A line reports what that
run imports (the package's modules, all modules, the dataclasses the package defines): on
Python 3.11 each frozen dataclass costs about half a millisecond to define, the bulk of the
start-up after typer's own import, so the counts say where a change moved it.

Run: python benchmarks/bench_pair.py [--runs 9] [--baseline DIR] [--no-transformers]

``--baseline DIR`` also times the same ``pair`` commands (the console script's table too) from
another checkout of the project (e.g. ``git worktree add --detach ../base main``), interleaved
with this one, and prints the ratio: start-up must not get slower from one change to the next.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
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


CONSOLE_SCRIPT = Path(sys.executable).with_name("dflash-check")
"""The installed entry point of the interpreter running the benchmark (its environment's)."""

FLOOR = """
import json, sys
for path in sys.argv[1:]:
    with open(path) as f:
        json.load(f)
"""


DESIGN_FLOOR = "import dataclasses, typer, typer.main" + FLOOR
"""The floor plus what the design puts under every run before the package's first line: typer
(the CLI framework) and dataclasses (the frozen values), imported, not used."""

FOOTPRINT = """
import dataclasses, os, sys, time
defining = [0.0]
define = dataclasses._process_class

def timed_define(*args, **kwargs):
    start = time.perf_counter()
    try:
        return define(*args, **kwargs)
    finally:
        defining[0] += time.perf_counter() - start

dataclasses._process_class = timed_define
sys.argv = ["dflash-check", "pair", *sys.argv[1:]]
sys.stdout = open(os.devnull, "w")
from dflash_check.cli import main
try:
    main()
except SystemExit:
    pass
ours = [m for name, m in sys.modules.items() if name.startswith("dflash_check")]
classes = sum(
    1
    for m in ours
    for v in vars(m).values()
    if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == m.__name__
)
print(len(ours), len(sys.modules), classes, round(defining[0] * 1000, 1), file=sys.stderr)
"""
"""What a run of the default table imports: the package's modules, all modules, the dataclasses
the package defines on the way and the milliseconds spent defining them (each costs ~0.6 ms on
Python 3.11 and 3.13, mostly compiling its generated methods: the bulk of start-up after typer's
own import). Timed with a wrapper around dataclasses' class processing: the one figure here
measured inside a process rather than across processes."""


def footprint(env: dict[str, str]) -> str:
    """Return the import footprint of one ``pair`` run (the default table) from the checkout
    ``env`` imports, as a phrase."""
    proc = subprocess.run(
        [sys.executable, "-c", FOOTPRINT, str(DRAFT), str(TARGET)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=env["PYTHONPATH"],
    )
    ours, everything, classes, ms = proc.stderr.split()[-4:]
    return (
        f"{ours} dflash_check modules ({everything} in all), {classes} dataclasses defined "
        f"in {ms} ms"
    )


def checkout_env(root: Path) -> dict[str, str]:
    """Return an environment that imports ``dflash_check`` from the checkout at ``root``."""
    return {**os.environ, "PYTHONPATH": str(root)}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``cmd`` once from the checkout ``env`` imports (``python -m`` puts the working
    directory first on sys.path: run from another checkout, a baseline would time this one's
    code) and return its wall time and its CPU time (user + system), in seconds."""
    # Runs are sequential, so the growth of the waited-for children's usage is this one's.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env=env,
        cwd=env["PYTHONPATH"],
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> None:
    """Time both checks and print medians and the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument(
        "--no-transformers", action="store_true", help="leave out the transformers check"
    )
    args = parser.parse_args()

    def ours(draft: Path, target: Path) -> list[str]:
        return [sys.executable, "-m", "dflash_check", "pair", str(draft), str(target), "-f", "json"]

    floor = "bare python: json.load of both configs"
    design = "floor + import typer, dataclasses (the design's)"
    alternative = "transformers.AutoConfig check"
    table = "dflash-check pair, default table (console script)"
    commands = {
        "dflash-check pair, DFlash (local dirs)": ours(DRAFT, TARGET),
        "dflash-check pair, EAGLE-3 (local dirs)": ours(EAGLE3_HEAD, EAGLE3_TARGET),
        # As users run it: the installed entry point, the default table format.
        table: [str(CONSOLE_SCRIPT), "pair", str(DRAFT), str(TARGET)],
        floor: [
            sys.executable,
            "-c",
            FLOOR,
            str(DRAFT / "config.json"),
            str(TARGET / "config.json"),
        ],
        design: [
            sys.executable,
            "-c",
            DESIGN_FLOOR,
            str(DRAFT / "config.json"),
            str(TARGET / "config.json"),
        ],
    }
    if not CONSOLE_SCRIPT.is_file():
        print(f"no console script at {CONSOLE_SCRIPT} (pip install -e .): table not timed")
        del commands[table]
    if not args.no_transformers:
        commands[alternative] = [sys.executable, "-c", ALTERNATIVE, str(DRAFT), str(TARGET)]
    envs = {name: checkout_env(ROOT) for name in commands}
    checkouts = [ROOT]
    if args.baseline is not None:
        # The same pairs from the other checkout (its own code, this checkout's models).
        checkouts.append(args.baseline.resolve())
        for name in [n for n in commands if n.startswith("dflash-check pair")]:
            commands[f"{name}, baseline"] = commands[name]
            envs[f"{name}, baseline"] = checkout_env(args.baseline.resolve())
    for checkout in checkouts:  # no run pays for compiling the package
        compileall.compile_dir(checkout / "dflash_check", quiet=1)
    for name, cmd in commands.items():
        timed(cmd, envs[name])  # warm the OS file cache
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved, so load changes hit every side alike
        for name, cmd in commands.items():
            wall, cpu = timed(cmd, envs[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
    wall_med = {name: statistics.median(values) for name, values in walls.items()}
    cpu_med = {name: statistics.median(values) for name, values in cpus.items()}
    for name in commands:
        print(
            f"{name:60s} median wall {wall_med[name] * 1000:5.0f} ms, "
            f"CPU {cpu_med[name] * 1000:5.0f} ms over {args.runs} runs"
        )
    for checkout in checkouts:
        print(f"table's imports from {checkout.name}: {footprint(checkout_env(checkout))}")
    print(
        f"{design}: {cpu_med[design] / cpu_med[floor]:.1f}x the floor's CPU time, spent "
        "before the package's first line"
    )
    for name in [n for n in commands if n.startswith("dflash-check pair")]:
        print(
            f"{name}: {cpu_med[name] / cpu_med[floor]:.1f}x the floor's CPU time "
            f"({wall_med[name] / wall_med[floor]:.1f}x its wall time; budget 4x)"
        )
        if alternative in wall_med:
            print(f"speed-up of {name}: {wall_med[alternative] / wall_med[name]:.1f}x")
        base = f"{name}, baseline"
        if base in wall_med:
            print(
                f"{name}: {cpu_med[name] / cpu_med[base]:.2f}x the baseline's CPU time "
                f"({wall_med[name] / wall_med[base]:.2f}x its wall time)"
            )


if __name__ == "__main__":
    main()
