"""The engine's own code as the oracle: run a release's start-up validation over every mined
case and every pair of the real-config corpus, and record what it did.

``python -m conformance.oracle vllm 0.34.0`` (from the repository root):

1. installs vLLM's GPU wheel ``--no-deps`` into its own virtual environment under
   ``$DFLASH_CONFORMANCE_HOME`` (as ``conformance/run`` does), beside the CPU torch and the
   release's pure-Python dependencies (``requirements_of``: every ``Requires-Dist`` of the
   wheel except the GPU stack and torch, ``NOT_INSTALLED``);
2. writes each case's configs as config-only folders (``conformance/mined/<engine>-<release>
   .json``, from ``tools/mine_engine_tests.py``; the real-engine conformance cases,
   ``conformance/tiny_pairs.py``) and takes the corpus pairs (``CORPUS``) as they lie in
   ``tests/fixtures``;
3. runs ``conformance/drivers/vllm_config_driver.py`` with that Python over all of them;
4. writes ``conformance/results/oracle/<engine>-<release>.json``: per case, accepted or refused
   with the engine's message and stage, and the aux layers the release computes.

SGLang runs through ``conformance/oracle_sglang.py`` (``python -m conformance.oracle sglang
0.5.23``, its own environment), and ``--commands`` parses every command the tool prints with the
release's own parser and start-up code (``conformance/oracle_commands.py``).

``tests/unit/conformance/test_agreement.py`` compares the tool with these files; nothing at check
time reads them. A maintainer's tool, not part of ``.ci/run`` (network, about 4 GB of disk).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.runner import home, niced
from conformance.tiny_pairs import PREFIX, configs, num_speculative_tokens, oracle_cases

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "conformance" / "results" / "oracle"
"""Beside the real-engine runs, in a folder of their own (another schema)."""
MINED = REPO / "conformance" / "mined"
DRIVER = REPO / "conformance" / "drivers" / "vllm_config_driver.py"
TESTS_DRIVER = REPO / "conformance" / "drivers" / "vllm_tests_driver.py"
ENGINE_TESTS: tuple[tuple[str, ...], ...] = (
    ("tests/test_config.py", "-k", "qwen3_omni_dspark"),
    ("tests/v1/spec_decode/test_dflash_causality.py",),
    ("tests/transformers_utils/test_dspark_mla_config.py", "-k", "config_loads or rejects or "
     "speculative_config_preserves"),
    ("tests/transformers_utils/test_muse_spark_config.py", "-k", "dspark_config_loads or "
     "dspark_speculative_config_preserves"),
    ("tests/models/test_beam_construction.py", "-k", "dflash_target_layers_capture"),
)  # fmt: skip
"""The release's own speculative-decoding tests run against its installed wheel (pytest
arguments, from the source archive's root; a file the release lacks is skipped): the tests the
mined cases come from."""
TEST_TOOLS = ("pytest", "tblib")
"""What the release's ``tests/conftest.py`` imports beyond the wheel's dependencies."""
TORCH = "torch==2.13.0"
"""The CPU torch (``/opt/wheels`` or the CPU index); the wheel asks for its GPU torch, which
pip must never resolve (it pulls the CUDA packages)."""
NOT_INSTALLED = (
    "torch",  # the CPU torch above instead
    "torchaudio",
    "torchvision",  # does not load against the CPU torch: the driver's stand-in instead
    "torchcodec",
    "pynvvideocodec",
    "flashinfer-python",
    "apache-tvm-ffi",
    "tilelang",
    "nvidia-cudnn-frontend",
    "nvtx",
    "fastsafetensors",
    "instanttensor",
    "nvidia-cutlass-dsl",
    "quack-kernels",
    "tokenspeed-mla",
    "humming-kernels",
)
"""The wheel's dependencies left out: the GPU kernels and media stack, none of which the
config path imports."""


@dataclass(frozen=True)
class Pair:
    """One pair of the real-config corpus, as published (documented in the fixtures' READMEs)."""

    id: str
    draft: str
    target: str
    method: str
    num_speculative_tokens: int


CORPUS: tuple[Pair, ...] = (
    Pair("zlab-qwen3-8b", "tests/fixtures/hub/z-lab/Qwen3-8B-DFlash-b16",
         "tests/fixtures/hub/Qwen/Qwen3-8B", "dflash", 15),
    Pair("zlab-qwen3-8b-on-qwen3.5-9b", "tests/fixtures/hub/z-lab/Qwen3-8B-DFlash-b16",
         "tests/fixtures/hub/Qwen/Qwen3.5-9B", "dflash", 15),
    Pair("zlab-qwen3.5-9b", "tests/fixtures/hub/z-lab/Qwen3.5-9B-DFlash",
         "tests/fixtures/hub/Qwen/Qwen3.5-9B", "dflash", 15),
    Pair("zlab-qwen3.5-27b", "tests/fixtures/hub/z-lab/Qwen3.5-27B-DFlash",
         "tests/fixtures/hub/Qwen/Qwen3.5-27B", "dflash", 15),
    Pair("zlab-qwen3.5-35b-a3b", "tests/fixtures/hub/z-lab/Qwen3.5-35B-A3B-DFlash",
         "tests/fixtures/hub/Qwen/Qwen3.5-35B-A3B", "dflash", 15),
    Pair("zlab-qwen3.6-35b-a3b-nvfp4", "tests/fixtures/hub/z-lab/Qwen3.6-35B-A3B-DFlash",
         "tests/fixtures/hub/nvidia/Qwen3.6-35B-A3B-NVFP4", "dflash", 15),
    Pair("speculators-qwen3.6-35b-a3b-nvfp4",
         "tests/fixtures/hub/huaxuan250/dflash_zlab_full_atten_speculators",
         "tests/fixtures/hub/nvidia/Qwen3.6-35B-A3B-NVFP4", "dflash", 15),
    Pair("zlab-gpt-oss-20b", "tests/fixtures/hub/z-lab/gpt-oss-20b-DFlash",
         "tests/fixtures/hub/openai/gpt-oss-20b", "dflash", 15),
    Pair("mimo-v2.5-pro", "tests/fixtures/hub/XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash/dflash",
         "tests/fixtures/hub/XiaomiMiMo/MiMo-V2.5-Pro", "dflash", 15),
    Pair("zlab-qwen3.8-27b-dflash2", "tests/fixtures/drafts/z-lab--Qwen3.8-27B-DFlash2",
         "tests/fixtures/targets/Qwen--Qwen3.6-27B", "dflash", 15),
    Pair("specforge-qwen3-8b-dspark",
         "tests/fixtures/drafts/sgl-project--SpecForge-qwen3-8b-dspark",
         "tests/fixtures/targets/Qwen--Qwen3-8B", "dspark", 15),
    Pair("specforge-qwen3.6-27b-dspark",
         "tests/fixtures/drafts/sgl-project--SpecForge-qwen3.6-27b-dspark-export",
         "tests/fixtures/targets/Qwen--Qwen3.6-27B", "dspark", 15),
    Pair("muse-glimmer-assistant", "tests/fixtures/drafts/meta-models--Muse-Glimmer-30B-assistant",
         "tests/fixtures/targets/meta-models--Muse-Glimmer-30B", "dflash", 15),
    Pair("laguna-dflash", "tests/fixtures/drafts/poolside--Laguna-S-2.1-DFlash",
         "tests/fixtures/targets/poolside--Laguna-S-2.1", "dflash", 15),
    Pair("eagle3-llama3.1-8b", "tests/fixtures/eagle3/yuhuili--EAGLE3-LLaMA3.1-Instruct-8B",
         "tests/fixtures/targets/meta-llama--Meta-Llama-3.1-8B", "eagle3", 3),
    Pair("eagle3-llama3.1-8b-instruct", "tests/fixtures/hub/yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
         "tests/fixtures/hub/meta-llama/Llama-3.1-8B-Instruct", "eagle3", 3),
    Pair("eagle3-gpt-oss-20b", "tests/fixtures/eagle3/specforge--gpt-oss-20B-eagle3",
         "tests/fixtures/hub/openai/gpt-oss-20b", "eagle3", 3),
    Pair("example-qwen3-4b", "examples/Qwen3-4B-DFlash-b16", "examples/Qwen3-4B", "dflash", 15),
    Pair("example-qwen3-4b-on-qwen3.5-4b", "examples/Qwen3-4B-DFlash-b16", "examples/Qwen3.5-4B",
         "dflash", 15),
)  # fmt: skip


def requirements_of(wheel: Path, skip: tuple[str, ...] = NOT_INSTALLED) -> list[str]:
    """The wheel's unconditional ``Requires-Dist`` lines, less ``skip``."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(meta).decode()
    keep = []
    for line in text.splitlines():
        if not line.startswith("Requires-Dist: ") or "extra ==" in line:
            continue
        requirement = line.removeprefix("Requires-Dist: ")
        name = requirement.split(";")[0].split("[")[0]
        name = name.split("<")[0].split(">")[0].split("=")[0].split("!")[0].strip().lower()
        if name.replace("_", "-") not in skip:
            keep.append(requirement)
    return keep


def install(
    engine: str, release: str, skip: tuple[str, ...] = NOT_INSTALLED, no_deps: tuple[str, ...] = ()
) -> Path:
    """Install the release's wheel and the CPU stack into its own venv (once); its Python.
    ``skip``: the wheel's dependencies left out; ``no_deps``: packages installed without
    their own dependencies (which would pull the GPU torch)."""
    venv = home() / "venvs" / f"oracle-{engine}-{release}"
    python = venv / "bin" / "python"
    if (venv / ".installed").exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    niced([*pip, TORCH], check=True)
    wheels = venv / "wheel"
    niced([str(python), "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
           f"{engine}=={release}"], check=True)  # fmt: skip
    (wheel,) = wheels.glob("*.whl")
    niced([*pip, "--no-deps", str(wheel), *no_deps], check=True)
    pinned = venv / "torch-pin.txt"
    pinned.write_text(TORCH + "\n")  # the resolver keeps the CPU torch
    niced([*pip, "-c", str(pinned), *requirements_of(wheel, skip)], check=True)
    (venv / ".installed").write_text(wheel.name + "\n")
    return python


def config_folder(config: dict[str, Any] | str, where: Path) -> Path:
    """A config-only folder for ``config`` (a repository path is used as it lies)."""
    if isinstance(config, str):
        return REPO / config
    where.mkdir(parents=True, exist_ok=True)
    (where / "config.json").write_text(json.dumps(config, indent=1))
    return where


def corpus_settings(pair: Pair) -> list[str]:
    """The tool's arguments that state what ``jobs_for`` starts vLLM with for a corpus pair:
    the method and the pair's ``num_speculative_tokens`` (vLLM's speculative config needs
    one)."""
    return ["--speculative-method", pair.method, "--num-speculative-tokens",
            str(pair.num_speculative_tokens)]  # fmt: skip


def jobs_for(engine: str, release: str, work: Path) -> tuple[list[dict], dict[str, dict]]:
    """The driver's jobs for every mined case and corpus pair, and each row's description."""
    mined = json.loads((MINED / f"{engine}-{release}.json").read_text())["cases"]
    jobs, rows = [], {}
    for i, case in enumerate(mined):
        jobs.append(
            {
                "id": case["id"],
                "target": str(config_folder(case["target"], work / f"case{i}" / "target")),
                "draft": None
                if case["draft"] is None  # MTP: derived from the target
                else str(config_folder(case["draft"], work / f"case{i}" / "draft")),
                "method": case["method"],
                "num_speculative_tokens": case["num_speculative_tokens"],
                # MTP: no aux capture, no fc; a code case may say its target is a stand-in
                "model_stage": case["draft"] is not None and case.get("model_stage", True),
            }
        )
        if case.get("model_outcome"):  # its check runs when the draft is built
            jobs[-1]["model_outcome"] = True
        rows[case["id"]] = {"kind": "mined", **{k: case[k] for k in ("test", "source")}}
        rows[case["id"]].update({k: v for k, v in case.items() if k.startswith("expect")})
    for case in oracle_cases():
        target, draft = configs(case)
        case_id = PREFIX + case.id
        jobs.append(
            {
                "id": case_id,
                "target": str(config_folder(target, work / case_id / "target")),
                "draft": str(config_folder(draft, work / case_id / "draft")),
                "method": case.method,
                "num_speculative_tokens": num_speculative_tokens(case, draft),
                "max_model_len": target["max_position_embeddings"],  # the tiny model's 128
                "model_stage": True,
            }
        )
        rows[case_id] = {"kind": "conformance", "rule": case.rule}
    for pair in CORPUS:
        jobs.append(
            {
                "id": pair.id,
                "target": str(REPO / pair.target),
                "draft": str(REPO / pair.draft),
                "method": pair.method,
                "num_speculative_tokens": pair.num_speculative_tokens,
                "model_stage": True,
            }
        )
        rows[pair.id] = {"kind": "corpus", "draft": pair.draft, "target": pair.target}
    return jobs, rows


def scrub(text: str | None, work: Path) -> str | None:
    """The message with this run's folders and the repository named by role."""
    if text is None:
        return None
    return text.replace(str(work), "WORK").replace(str(REPO), "REPO")


def _message(error: dict[str, str]) -> str:
    return f"{error['type']}: {error['message']}"


def _scrub_model(model: dict[str, Any] | None, work: Path) -> dict[str, Any] | None:
    """The model stage's record with its error message scrubbed of this run's folders."""
    if model is None or "error" not in model:
        return model
    error = model["error"]
    return {"error": scrub(f"{error['type']}: {error['message']}", work)}


def run_driver(
    python: Path,
    jobs: list[dict],
    work: Path,
    driver: Path,
    env: Mapping[str, str] | None = None,
) -> tuple[dict, float]:
    """Run ``driver`` over ``jobs`` with the engine's Python (offline, ``env`` added); its
    output and the seconds it took."""
    (work / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "2", **(env or {})}
    started = time.monotonic()
    niced([str(python), str(driver), str(work / "jobs.json"), str(work / "out.json")],
          check=True, env=env, cwd=work)  # fmt: skip
    seconds = round(time.monotonic() - started, 1)
    return json.loads((work / "out.json").read_text()), seconds


def result_row(record: dict[str, Any], rows: dict[str, dict], work: Path) -> dict[str, Any]:
    """The part of a case's results row every oracle writes alike: the case, what it is
    (``rows``), and the outcome, stage and scrubbed error the driver recorded."""
    error = record["error"]
    return {
        "case": record["id"],
        **rows[record["id"]],
        "outcome": record["outcome"],
        "stage": record["stage"],
        "engine_error": None
        if error is None
        else scrub(f"{error['type']}: {error['message']}", work),
    }


def write_results(path: Path, data: dict[str, Any]) -> Path:
    """Write a results file as every oracle does (one-space indent, a final newline); its
    path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def merged(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``old``'s rows with each of ``new`` in place of the row of the same case (appended when
    ``old`` has none): what a run over some cases (``--case``) leaves of the last full run."""
    fresh = {row["case"]: row for row in new}
    out = [fresh.pop(row["case"], row) for row in old]
    return out + list(fresh.values())


def model_outcome(record: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """The driver's record, with the model stage's error as the outcome (stage ``model``) where
    the job's check runs when the draft is built (``model_outcome``: a code case,
    ``conformance/mined/code_cases.py``); the error stays under ``model`` as data, named by
    ``conformance/model_stage.py`` like every other."""
    error = (record.get("model") or {}).get("error")
    if not job.get("model_outcome") or record["outcome"] != "accepted" or error is None:
        return record
    return {**record, "outcome": "refused", "stage": "model", "error": error}


def run(engine: str, release: str, only: tuple[str, ...] = ()) -> Path:
    """Run the oracle over one release; write and return its results file. With ``only``, run
    the cases whose id starts with one of them and merge their rows into the results file
    (developing cases: a full 0.34 run takes about 15 minutes)."""
    python = install(engine, release)
    with tempfile.TemporaryDirectory(dir=home()) as tmp:
        work = Path(tmp)
        jobs, rows = jobs_for(engine, release, work)
        if only:
            jobs = [job for job in jobs if job["id"].startswith(only)]
        env = {"VLLM_CACHE_ROOT": str(work / "vllm-cache"), "VLLM_TARGET_DEVICE": "cpu"}
        out, seconds = run_driver(python, jobs, work, DRIVER, env)
        by_id = {job["id"]: job for job in jobs}
        out["records"] = [model_outcome(r, by_id[r["id"]]) for r in out["records"]]
        results = [
            {
                **result_row(record, rows, work),
                "aux_layers": record.get("aux_layers"),
                "model": _scrub_model(record.get("model"), work),
                **({"mtp": record["mtp"]} if record.get("mtp") is not None else {}),
                **(
                    {"start_up_stop": scrub(_message(record["start_up_stop"]), work)}
                    if record.get("start_up_stop")
                    else {}
                ),
            }
            for record in out["records"]
        ]
    data = {
        "engine": engine,
        "release": out["release"],
        "oracle": "EngineArgs(..., load_format='dummy', enforce_eager=True, "
        "skip_tokenizer_init=True).create_engine_config(), then the DSpark speculator config, "
        "then target and draft built on the meta device with the runner's aux-layer capture "
        "(conformance/drivers/vllm_config_driver.py)",
        "stages": {
            "config": "create_engine_config",
            "load": "the speculator config set-up",
            "model": "recorded as data under 'model' (captured layers, fc input width), or "
            "the error that stopped it there; an outcome only for a case whose check runs "
            "when the draft is built (model_outcome: conformance/mined/code_cases.py)",
            "mtp": "an MTP case (a target alone): the draft config the release derived "
            "(model type, architecture, n_predict); where start-up stopped outside the MTP "
            "path on this CPU, or vLLM's loader cannot read the config-only target, the MTP "
            "path run alone, that stop kept as 'start_up_stop' (not an outcome)",
        },
        "seconds": seconds,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "results": results,
    }
    path = RESULTS / f"{engine}-{release}.json"
    if path.exists():  # the engine's own tests are run apart (--engine-tests): keep them
        last = json.loads(path.read_text())
        if last.get("engine_tests") is not None:
            data["engine_tests"] = last["engine_tests"]
        if only:  # the other cases keep the last full run's rows, date and time
            data.update(seconds=last["seconds"], date=last["date"])
            data["results"] = merged(last["results"], results)
    return write_results(path, data)


def run_engine_tests(engine: str, release: str, src: Path) -> Path:
    """Run ``ENGINE_TESTS`` of the release (its source archive unpacked at ``src``) against
    its installed wheel; add what each test did to the release's results file."""
    python = install(engine, release)
    niced([str(python), "-m", "pip", "install", "-q", *TEST_TOOLS], check=True)
    from conformance.mined.mtp_cases import engine_tests

    # The MTP cases' tests, by node id (those the release has); one module that cannot be
    # collected on this CPU must not hide the others' outcomes.
    ids = engine_tests(src)
    mtp = ("--continue-on-collection-errors", *ids) if ids else ()
    run = (*ENGINE_TESTS, *((mtp,) if mtp else ()))
    records = []
    for args in run:
        if args is not mtp and not (src / args[0]).exists():
            continue  # a test file a release does not have yet
        with tempfile.TemporaryDirectory(dir=home()) as tmp:
            work = Path(tmp)
            env = {**os.environ, "VLLM_CACHE_ROOT": str(work / "vllm-cache"),
                   "HF_HUB_OFFLINE": "1", "VLLM_TARGET_DEVICE": "cpu"}  # fmt: skip
            out = work / "out.json"
            niced([str(python), str(TESTS_DRIVER), str(src), str(out), "--", *args],
                  check=True, env=env)  # fmt: skip
            records += json.loads(out.read_text())["records"]
    path = RESULTS / f"{engine}-{release}.json"
    data = json.loads(path.read_text())
    data["engine_tests"] = {
        "run": [" ".join(a) for a in run if a is mtp or (src / a[0]).exists()],
        "stubs": "conformance/drivers/vllm_config_driver.py (Triton flag, torchvision stand-in)",
        "records": records,
    }
    return write_results(path, data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.oracle")
    parser.add_argument("engine", choices=["vllm", "sglang"])
    parser.add_argument("release")
    parser.add_argument(
        "--engine-tests",
        type=Path,
        metavar="SRC",
        help="run the release's own tests (ENGINE_TESTS) from its unpacked source archive "
        "against the installed wheel, and add them to the results file (needs a run first)",
    )
    parser.add_argument(
        "--commands",
        action="store_true",
        help="parse every command the tool prints for the corpus with the release's own "
        "launcher parser and start-up resolution (conformance/oracle_commands.py)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="PREFIX",
        help="run only the cases whose id starts with PREFIX (repeatable) and merge their rows "
        "into the release's results file",
    )
    args = parser.parse_args(argv)
    if args.commands:
        from conformance.oracle_commands import run_commands

        path = run_commands(args.engine, args.release)
    elif args.engine_tests and args.engine == "sglang":
        from conformance.oracle_sglang import run_engine_tests as run_sglang_tests

        path = run_sglang_tests(args.release, args.engine_tests.resolve())
    elif args.engine_tests:
        path = run_engine_tests(args.engine, args.release, args.engine_tests.resolve())
    elif args.engine == "sglang":  # its own driver and environment (conformance/oracle_sglang.py)
        from conformance.oracle_sglang import run as run_sglang

        path = run_sglang(args.release, tuple(args.case))
    else:
        path = run(args.engine, args.release, tuple(args.case))
    print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
