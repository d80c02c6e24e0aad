"""SGLang's own start-up code as the oracle (``python -m conformance.oracle sglang 0.5.23``).

As ``conformance/oracle.py`` does for vLLM: installs SGLang's wheel ``--no-deps`` into its own
virtual environment (it pins another transformers than vLLM) beside the CPU torch and its
pure-Python dependencies, and runs ``conformance/drivers/sglang_config_driver.py`` over every
mined SGLang case (``conformance/mined/sglang-<release>.json``, where it exists) and every pair
of the real-config corpus (``CORPUS``); writes ``conformance/results/oracle/sglang-<release>
.json`` in the vLLM oracle's schema, so that ``conformance.agreement`` reads both alike.

Each pair is started as a user starts it: ``--model-path TARGET --speculative-algorithm ALGO
--speculative-draft-model-path DRAFT`` and nothing else, SGLang deriving the draft length from
the draft (``ALGORITHMS``); a mined case may add its test's own server arguments
(``server_args``, a list).

``python -m conformance.oracle sglang 0.5.23 --engine-tests SRC`` runs SGLang's own tests
(``ENGINE_TESTS``) against the installed wheel and adds what each did to the results file
(``engine_tests``); a later oracle run keeps them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.oracle import (
    CORPUS,
    MINED,
    NOT_INSTALLED,
    REPO,
    RESULTS,
    TEST_TOOLS,
    Pair,
    _scrub_model,
    config_folder,
    install,
    merged,
    result_row,
    run_driver,
    write_results,
)
from conformance.oracle import scrub as _scrub
from conformance.runner import home, niced

DRIVER = REPO / "conformance" / "drivers" / "sglang_config_driver.py"
TESTS_DRIVER = REPO / "conformance" / "drivers" / "sglang_tests_driver.py"
ENGINE_TESTS: tuple[str, ...] = (
    "test/registered/unit/spec/test_dflash_domino_config.py",
    "test/registered/unit/spec/test_dflash_utils.py",
    "test/registered/unit/spec/test_dflash_domino.py",
    "test/registered/unit/model_executor/model_runner_components/test_spec_aux_hidden_state.py",
    "test/registered/unit/spec/test_dspark_checkpoint.py",
)
"""SGLang's own speculative-decoding tests run against the installed wheel: the files the mined
cases come from (``READ`` in ``tools/mine/sglang.py``, the index's stored versions, not the
0.5.23 tag's), which SGLang's CI registers for CPU (``register_cpu_ci``). The other files read
(``LISTED`` there) are not run: they need a GPU server, CUDA kernels or platform set-up, or
test code 0.5.23 does not have (the coverage page gives each reason). test_dspark_checkpoint.py
does not import on 0.5.23; it is run for the record its case made from one assertion checks
(``part``)."""
SKIP = (
    *NOT_INSTALLED,
    "timm",  # requires torchvision (the driver's stand-in instead); not on the config path
    "flash-attn-4",
    "nvidia-mathdx",
    "nvshmem4py-cu13",
    "sgl-deep-ep",
    "sgl-deep-gemm",
    "sgl-flash-mla",
    "sglang-kernel",
    "cuda-python",
    "torch-memory-saver",
    "kernels",
    "deepseek-recipe",
    "tml-renderers",
    "py-spy",
    "numba",
)
"""SGLang's dependencies left out: vLLM's list (GPU kernels, media stack) and SGLang's own
GPU kernels and tools, none of which the resolution path imports."""
NO_DEPS = ("triton",)
"""Installed without dependencies: SGLang imports Triton at module level (it imports on a CPU,
no kernel runs); its own dependencies would pull the GPU torch."""
ALGORITHMS = {
    "dflash": "DFLASH",
    "dflash2": "DFLASH",
    "dspark": "DSPARK",
    "eagle3": "EAGLE3",
    "eagle": "EAGLE",
    "mtp": "NEXTN",
}
"""A pair's method -> the ``--speculative-algorithm`` the oracle starts it with, written out
here rather than taken from the tool's command table (``dflash_check/engines/command.py``), so
that a wrong entry there shows as a difference (``oracle_commands``), not as agreement."""


def argv_for(target: Path, draft: Path, method: str, extra: list[str] = ()) -> list[str]:
    """The serve arguments that start ``target`` with ``draft`` as a user would."""
    return [
        "--model-path", str(target), "--speculative-algorithm", ALGORITHMS[method],
        "--speculative-draft-model-path", str(draft), *extra,
    ]  # fmt: skip


def corpus_settings(pair: Pair) -> list[str]:
    """The tool's arguments that state what ``argv_for`` starts SGLang with for a corpus pair:
    the method alone. SGLang resolves the draft length itself (from the draft's block size),
    so the tool must not be handed the vLLM oracle's ``num_speculative_tokens`` here: given
    15, it would judge ``--speculative-num-draft-tokens 16``, a server nobody started."""
    return ["--speculative-method", pair.method]


def jobs_for(release: str, work: Path) -> tuple[list[dict], dict[str, dict]]:
    """The driver's jobs for every mined case and corpus pair, and each row's description."""
    mined_path = MINED / f"sglang-{release}.json"
    mined = json.loads(mined_path.read_text())["cases"] if mined_path.exists() else []
    jobs, rows = [], {}
    for i, case in enumerate(mined):
        target = config_folder(case["target"], work / f"case{i}" / "target")
        draft = config_folder(case["draft"], work / f"case{i}" / "draft")
        extra = [str(a) for a in case.get("server_args", ())]
        jobs.append({"id": case["id"], "argv": argv_for(target, draft, case["method"], extra)})
        rows[case["id"]] = {"kind": "mined", **{k: case[k] for k in ("test", "source")}}
        rows[case["id"]].update({k: v for k, v in case.items() if k.startswith("expect")})
    for pair in CORPUS:
        argv = argv_for(REPO / pair.target, REPO / pair.draft, pair.method)
        jobs.append({"id": pair.id, "argv": argv})
        rows[pair.id] = {"kind": "corpus", "draft": pair.draft, "target": pair.target}
    return jobs, rows


def scrubbed(value: Any, work: Path) -> Any:
    """``value`` (JSON) with this run's folders and the repository named by role."""
    return json.loads(_scrub(json.dumps(value), work) or "null")


def aux_layers(load: dict[str, Any] | None) -> list[int] | None:
    """The target layer ids SGLang resolved for the draft (before its models' +1 for capture
    before layer i), DFlash family or EAGLE-3."""
    if not load:
        return None
    ids = load.get("dflash_target_layer_ids") or load.get("eagle_aux_hidden_state_layer_ids")
    return list(ids) if ids is not None else None


def run(release: str, only: tuple[str, ...] = ()) -> Path:
    """Run the oracle over one SGLang release; write and return its results file. With
    ``only``, run the cases whose id starts with one of them and merge their rows into the
    results file, as ``conformance.oracle.run`` does."""
    python = install("sglang", release, SKIP, NO_DEPS)
    with tempfile.TemporaryDirectory(dir=home()) as tmp:
        work = Path(tmp)
        jobs, rows = jobs_for(release, work)
        if only:
            jobs = [job for job in jobs if job["id"].startswith(only)]
        out, seconds = run_driver(python, jobs, work, DRIVER)
        results = [
            {
                **result_row(record, rows, work),
                "aux_layers": aux_layers(record.get("load")),
                "resolved": scrubbed(record.get("resolved"), work),
                "load": scrubbed(record.get("load"), work),
                "model": _scrub_model(record.get("model"), work),
            }
            for record in out["records"]
        ]
    path = RESULTS / f"sglang-{release}.json"
    data = {
        "engine": "sglang",
        "release": out["release"],
        "oracle": "prepare_server_args(argv) with --device cuda, resolve_once(), "
        "check_server_args(), then the model runner's config resolution "
        "(resolve_spec_aux_hidden_state_config) and the DSpark / DFlash workers' mask-token "
        "checks, the DFlash worker's start-up guards, then (DFLASH, TP 1) draft and target "
        "built on the meta device with the target's aux capture set up "
        "(conformance/drivers/sglang_config_driver.py)",
        "stages": {
            "parse": "the launcher's argument parser (prepare_server_args)",
            "config": "ServerArgs.resolve_once and check_server_args",
            "load": "the model runner's and the draft worker's config resolution, and the "
            "DFlash worker's start-up guards",
            "model": "recorded as data under 'model' (captured layers, fc input width), or "
            "the error that stopped it there; not an outcome",
        },
        "seconds": seconds,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "results": results,
    }
    if path.exists():  # its own tests are run apart (--engine-tests): keep them
        last = json.loads(path.read_text())
        if last.get("engine_tests") is not None:
            data["engine_tests"] = last["engine_tests"]
        if only:  # the other cases keep the last full run's rows, date and time
            data.update(seconds=last["seconds"], date=last["date"])
            data["results"] = merged(last["results"], results)
    return write_results(path, data)


def _site(text: str) -> str:
    """A test's message with the venv's path to the wheel cut (``sglang/srt/...`` stays)."""
    return re.sub(r"[^\s(]*/site-packages/", "", text)


def run_engine_tests(release: str, src: Path) -> Path:
    """Run ``ENGINE_TESTS`` (at their paths under ``src``) against the release's installed
    wheel; add what each test did to the release's results file (needs a run first)."""
    python = install("sglang", release, SKIP, NO_DEPS)
    niced([str(python), "-m", "pip", "install", "-q", *TEST_TOOLS], check=True)
    present = [path for path in ENGINE_TESTS if (src / path).exists()]
    with tempfile.TemporaryDirectory(dir=home()) as tmp:
        out = Path(tmp) / "out.json"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        niced([str(python), str(TESTS_DRIVER), str(src), str(out), "--", *present],
              check=True, env=env)  # fmt: skip
        records = json.loads(out.read_text())["records"]
    for record in records:
        if "message" in record:
            record["message"] = _site(_scrub(record["message"], src) or "")
    path = RESULTS / f"sglang-{release}.json"
    data = json.loads(path.read_text())
    data["engine_tests"] = {
        "run": list(ENGINE_TESTS),
        "versions": "the index's stored versions read by tools/mine/sglang.py (READ), not the "
        "0.5.23 tag's",
        "stubs": "conformance/drivers/sglang_tests_driver.py (torchvision stand-in)",
        "records": records,
    }
    return write_results(path, data)
