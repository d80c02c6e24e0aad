"""Run the conformance cases in one real engine and record how dflash-check's verdicts compare.

``conformance/run ENGINE [--cases a,b] [--report-only]``:

1. installs the engine into its own virtual environment under ``$DFLASH_CONFORMANCE_HOME``
   (default ``~/.cache/dflash-check-conformance``), never into the project's;
2. builds the tiny pairs at run time (``conformance/build.py``) in a temporary folder there,
   and, when an EAGLE-3 case runs, trains the tiny EAGLE-3 head (``conformance/eagle3.py``,
   about 3 minutes);
3. runs each case in the engine through its driver (``conformance/drivers/``), niced, with a
   time limit, plus the target alone once (the lossless baseline);
4. asks ``dflash-check pair DRAFT TARGET -r RUNTIME --format json`` for the runtime that models
   the engine release and runner that ran (``conformance/engines.py``);
5. writes ``conformance/results/<distribution>-<release>.json`` and regenerates
   ``docs/conformance.md``.

Runs with the project's Python and its ``smoke`` extra (the pairs are built with torch).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.build import REPO, build_case, widen, write_sentencepiece_model
from conformance.cases import CASES, Case
from conformance.classify import (
    Result,
    classify,
    compare,
    compare_stage,
    tool_stage,
    tool_summary,
)
from conformance.engines import ENGINES, Engine

RESULTS = REPO / "conformance" / "results"
DRIVERS = REPO / "conformance" / "drivers"
PROMPTS = ("1 2 3", "5 10 15", "7 9", "2 4 6 8")
MAX_TOKENS = 40
CASE_LIMIT = 900
"""Seconds one case may run (a vLLM case takes about 45 s on 2 cores)."""


def home() -> Path:
    """Return the folder that holds the engines' environments and the built pairs."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return Path(os.environ.get("DFLASH_CONFORMANCE_HOME", default / "dflash-check-conformance"))


def venv_python(engine: Engine) -> Path:
    """Install ``engine`` in its own virtual environment (once) and return its Python."""
    venv = home() / "venvs" / engine.slug
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists():
        return python
    print(f"installing {engine.distribution} {engine.release} into {venv} ({engine.size})")
    # A clean environment: the engine pins its own torch and transformers.
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    for requirement in engine.install:
        niced([str(python), "-m", "pip", "install", "-q", requirement], check=True)
    if engine.remove:
        niced([str(python), "-m", "pip", "uninstall", "-y", "-q", *engine.remove], check=True)
    marker.write_text(" ".join(engine.install) + "\n")
    return python


def built_source(engine: Engine, python: Path) -> dict[str, str]:
    """Build an engine that comes as source (llama.cpp from the llama-cpp-python sdist) once;
    return the environment its driver needs."""
    if not engine.source:
        return {}
    root = home() / "build" / engine.slug
    tools = ("llama-speculative-simple", "llama-simple")
    found = list(root.glob("*/vendor/llama.cpp"))
    tree = found[0] if found else None
    if tree is None or not all((tree / "build" / "bin" / t).exists() for t in tools):
        root.mkdir(parents=True, exist_ok=True)
        print(f"building {engine.distribution} {engine.release} in {root} ({engine.size})")
        pip = [str(python), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        niced([*pip, "-d", str(root), engine.source], check=True)
        (archive,) = root.glob("*.tar.gz")
        subprocess.run(["tar", "-xzf", str(archive), "-C", str(root)], check=True)
        (tree,) = root.glob("*/vendor/llama.cpp")
        configure = ["cmake", "-S", str(tree), "-B", str(tree / "build"), "-DGGML_NATIVE=ON"]
        niced([*configure, "-DLLAMA_CURL=OFF", "-DCMAKE_BUILD_TYPE=Release"], check=True)
        niced(["cmake", "--build", str(tree / "build"), "-j2", "--target", *tools], check=True)
    return {"LLAMACPP_DIR": str(tree)}


def niced(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """Run ``argv`` at a low priority (the machine is shared)."""
    return subprocess.run(["nice", "-n", "10", *argv], **kwargs)


def edit_for(engine: Engine, case: Case) -> Callable[[dict[str, Any]], None]:
    """Return the case's draft edit after the engine's own (``Engine.draft_edit``)."""

    def edit(config: dict[str, Any]) -> None:
        if engine.draft_edit is not None:
            engine.draft_edit(config)
        case.edit(config)

    return edit


def run_driver(
    engine: Engine, python: Path, spec: dict[str, Any], folder: Path, extra: dict[str, str]
) -> dict:
    """Run one case (or the baseline) through the engine's driver; return its record."""
    folder.mkdir(parents=True, exist_ok=True)
    spec_path, out_path, log = folder / "spec.json", folder / "record.json", folder / "engine.log"
    spec_path.write_text(json.dumps(spec))
    # One vLLM cache for the run's cases: vLLM inspects each architecture (target, draft) in a
    # subprocess that imports vLLM again (about a minute each on 2 loaded cores) and caches
    # the answer there; a case's config does not change it (no torch.compile: enforce_eager).
    cache = folder.parent / "vllm-cache"
    env = {**os.environ, "VLLM_CACHE_ROOT": str(cache), "OMP_NUM_THREADS": "2"}
    env.update(extra)
    driver = DRIVERS / f"{engine.name.replace('-', '_')}_driver.py"
    with log.open("wb") as out:
        try:
            niced(
                [str(python), str(driver), str(spec_path), str(out_path)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                timeout=CASE_LIMIT,
                cwd=folder,
            )
        except subprocess.TimeoutExpired:
            return {"stage": "first decode", "error": {"type": "Timeout", "message": "hung"}}
    if not out_path.exists():  # the driver itself died (a native abort, an OOM kill)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return {"stage": "first decode", "error": {"type": "Crash", "message": " / ".join(tail)}}
    return json.loads(out_path.read_text())


def tool_verdict(engine: Engine, case: Case, draft: Path, target: Path) -> dict[str, Any]:
    """Return dflash-check's JSON report for the pair and the engine's runtime."""
    argv = [sys.executable, "-m", "dflash_check", "pair", str(draft), str(target)]
    argv += ["-r", engine.tool_runtime, "--format", "json"]
    if case.num_speculative_tokens:
        argv += ["--num-speculative-tokens", str(case.num_speculative_tokens)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    return json.loads(proc.stdout)


def scrub(text: str | None, work: Path) -> str | None:
    """Return ``text`` with this run's folders named by role (no machine paths in results)."""
    if text is None:
        return None
    for folder, name in sorted(
        [(p, f"{c}/{p.name}") for c in os.listdir(work) for p in (work / c).glob("*")],
        key=lambda item: -len(str(item[0])),
    ):
        text = text.replace(str(folder), name)
    return text.replace(str(work), "WORK").replace(str(home()), "CACHE")


def spec_for(engine: Engine, case: Case | None, target: Path, draft: Path | None) -> dict:
    """Return the driver spec of a case (``case`` None: the target alone)."""
    block = 8  # the base draft's block size
    default = block - 1
    if case is not None and case.method == "eagle3":
        from conformance.eagle3 import STEPS

        default = STEPS  # the draft steps the head was trained for
    return {
        "target": str(target),
        "draft": str(draft) if draft else None,
        "method": case.method if case else "dflash",
        "num_speculative_tokens": (case.num_speculative_tokens if case else None) or default,
        "prompts": list(PROMPTS),
        "max_tokens": MAX_TOKENS,
    }


def run(
    engine: Engine,
    case_ids: list[str] | None,
    records: Path | None = None,
    baseline_run: bool = True,
    keep: bool = False,
) -> Path:
    """Run the engine's cases (or, with ``records``, reuse the records of an earlier run's
    folder); write each row to the results file as it comes."""
    cases = [c for c in CASES if engine.name in c.engines and (not case_ids or c.id in case_ids)]
    if records is None:
        python = venv_python(engine)
        extra = built_source(engine, python)
        work = Path(tempfile.mkdtemp(prefix=f"{engine.slug}-", dir=home()))
        print(f"building the tiny pairs in {work}")
        base_target, base_draft = widen(work / "base")
        if engine.sentencepiece:
            write_sentencepiece_model(base_target)
        base_head = None
        if any(c.method == "eagle3" for c in cases):
            from conformance.eagle3 import build_head

            base_head = build_head(base_target, work / "base" / "eagle3")
        baseline: dict[str, Any] = {}
        if baseline_run and any(c.trained for c in cases):  # compared only where trained
            plain_spec = spec_for(engine, None, base_target, None)
            baseline = run_driver(engine, python, plain_spec, work / "plain", extra)
    else:
        work, base_target, base_draft = records, records / "base/target", records / "base/draft"
        kept = work / "plain/record.json"
        baseline = json.loads(kept.read_text()) if kept.exists() else {}
        cases = [c for c in cases if (work / c.id / "record.json").exists()]
    plain = baseline.get("outputs") if baseline.get("stage") == "done" else None
    if case_ids is None and records is None:
        write_results(engine, [], replace=True)  # a full run starts a fresh file
    path = RESULTS / f"{engine.slug}.json"
    for case in cases:
        started = time.monotonic()
        if records is None:
            if case.method == "eagle3":
                from conformance.eagle3 import build_head_case

                assert base_head is not None
                target = base_target
                draft = build_head_case(
                    base_head, work / case.id, case.edit, case.reshape, case.weights
                )
            else:
                target, draft = build_case(
                    base_target,
                    base_draft,
                    work / case.id,
                    edit_for(engine, case),
                    case.reshape,
                    case.weights,
                    case.target,
                )
            spec = spec_for(engine, case, target, draft)
            record = run_driver(engine, python, spec, work / case.id, extra)
        else:
            target = Path(json.loads((work / case.id / "spec.json").read_text())["target"])
            draft = work / case.id / "draft"
            record = json.loads((work / case.id / "record.json").read_text())
        row = result_row(engine, case, record, plain, draft, target, work)
        path = write_results(engine, [row], replace=False)
        print(
            f"{case.id}: {row.outcome} tau={row.tau} ({time.monotonic() - started:.0f} s); "
            f"dflash-check: {row.tool_verdict}; agree={row.agree}",
            flush=True,
        )
    if records is None and not keep:
        shutil.rmtree(work, ignore_errors=True)
    elif records is None:
        print(f"kept the records for --from-records: {work}")
    return path


def result_row(
    engine: Engine,
    case: Case,
    record: dict[str, Any],
    plain: Any,
    draft: Path,
    target: Path,
    work: Path,
) -> Result:
    """Return one results row: the engine's outcome next to dflash-check's verdict."""
    got = classify(record, case.trained)
    report = tool_verdict(engine, case, draft, target)
    verdict, finding = tool_summary(report, engine.tool_runtime)
    stage = tool_stage(report, engine.tool_runtime)
    outputs = record.get("outputs")
    lossless = outputs == plain if plain and got.outcome in ("generates", "collapsed") else None
    return Result(
        engine=engine.name,
        release=engine.release,
        runner=engine.runner,
        case=case.id,
        rule=case.rule,
        outcome=got.outcome,
        tau=got.tau,
        lossless=lossless,
        engine_error=scrub(got.error, work),
        tool_runtime=engine.tool_runtime,
        tool_verdict=verdict,
        tool_finding=scrub(finding, work),
        agree=compare(got.outcome, verdict),
        tool_stage=stage,
        stage_agree=compare_stage(got.outcome, verdict, stage),
    )


def write_results(engine: Engine, rows: list[Result], replace: bool) -> Path:
    """Write the results file (merging rows into an existing one for a partial rerun)."""
    import fcntl

    path = RESULTS / f"{engine.slug}.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    # Partial runs may go in parallel (--cases): one read-merge-write at a time.
    with (RESULTS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _merge(engine, path, rows, replace)


def _merge(engine: Engine, path: Path, rows: list[Result], replace: bool) -> Path:
    """Merge ``rows`` into the results file (replacing it when ``replace``)."""
    old = json.loads(path.read_text())["results"] if path.exists() and not replace else []
    fresh = {r.case for r in rows}
    order = [c.id for c in CASES]
    merged = [r for r in old if r["case"] not in fresh] + [r.as_dict() for r in rows]
    merged.sort(key=lambda r: order.index(r["case"]) if r["case"] in order else len(order))
    data = {
        "engine": engine.name,
        "distribution": engine.distribution,
        "release": engine.release,
        "runner": engine.runner,
        "tool_runtime": engine.tool_runtime,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{platform.machine()} CPU, {os.cpu_count()} cores, {platform.system()}",
        "results": merged,
    }
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run, regenerate the page."""
    parser = argparse.ArgumentParser(prog="conformance/run")
    parser.add_argument("engine", choices=sorted(ENGINES))
    parser.add_argument("--cases", help="comma-separated case ids (default: all)")
    parser.add_argument(
        "--report-only", action="store_true", help="only regenerate docs/conformance.md"
    )
    parser.add_argument(
        "--from-records",
        type=Path,
        help="reclassify the engine records kept in an earlier run's folder (no engine run)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the target-alone run (lossless is then not compared)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the run's folder (its records can be reclassified with --from-records)",
    )
    args = parser.parse_args(argv)
    if not args.report_only:
        cases = args.cases.split(",") if args.cases else None
        run(ENGINES[args.engine], cases, args.from_records, not args.no_baseline, args.keep)
    from conformance.report import write_page

    write_page()
    return 0


if __name__ == "__main__":
    sys.exit(main())
