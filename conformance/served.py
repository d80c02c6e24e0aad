"""The engine smoke run against real vLLM servers: which release and runner the tool judges when
it attaches (``--endpoint``), launches (``--launch``) or reads the installed one (``=installed``),
and whether the smoke run passes the right pair and refuses a server drafting with another.

``python -m conformance.served`` (a maintainer's tool, like ``conformance/run``; needs the
``vllm`` engine environment ``conformance/run vllm`` installs, and about 10 minutes on 2
cores) builds the tiny trained pair (``conformance/build.py``), installs dflash-check into the
engine's environment (``--no-deps``: ``=installed`` reads the metadata of the environment it
runs in), serves the target alone (the lossless baseline) and the pair with the command
``--print-command`` prints (in dev mode, so ``/server_info`` names the draft), runs each step
and writes ``conformance/results/served/<distribution>-<release>.json``: per step the command
(paths by role), its exit status, the judged runtime and runner, and the smoke run's outcome,
next to the speculative counters the server itself exported over the run.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.build import REPO, build_case, widen
from conformance.cases import CASES_BY_ID
from conformance.engines import ENGINES, Engine
from conformance.runner import home, niced, venv_python

RESULTS = REPO / "conformance" / "results" / "served"
START_LIMIT = 900
"""Seconds a server may take to answer /health (about 90 s on 2 idle cores, eager mode)."""
ENGINE_ARGS = ("--enforce-eager", "--dtype", "float32", "--max-model-len", "128")
"""What every server here runs with: no torch.compile warm-up (minutes on a CPU), the tiny
pair's dtype and context."""
ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "2"}
"""The CPU build's KV cache in GiB (its default takes a share of the machine's memory)."""
COUNTERS = ("num_drafts", "num_accepted_tokens")


@dataclass(frozen=True)
class Step:
    """One command run against the servers, and what it must show."""

    name: str
    engine_env: bool
    """Run dflash-check in the engine's environment (else the project's)."""
    args: tuple[str, ...]
    expect_exit: int


@contextmanager
def server(python: Path, argv: Sequence[str], log: Path, env: Mapping[str, str]) -> Iterator[str]:
    """Serve ``argv`` (vLLM's serve flags) on a free loopback port until the block ends."""
    from dflash_check.engines.launch import free_port

    port = free_port()
    command = [str(python), "-m", "vllm.entrypoints.openai.api_server", *argv]
    command += [*ENGINE_ARGS, "--host", "127.0.0.1", "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["nice", "-n", "10", *command],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
        )
        try:
            wait_healthy(url, proc)
            yield url
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def wait_healthy(url: str, proc: subprocess.Popen) -> None:
    """Return once ``url/health`` answers 200; raise if the server exits or takes too long."""
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server for {url} exited ({proc.returncode}) before /health")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise SystemExit(f"the server for {url} did not answer /health in {START_LIMIT} s")


def spec_counters(url: str) -> dict[str, float]:
    """Return vLLM's speculative counters from ``/metrics`` (``vllm:spec_decode_*_total``)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        for name in COUNTERS:
            if line.startswith(f"vllm:spec_decode_{name}_total"):
                out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


def tau_between(before: Mapping[str, float], after: Mapping[str, float]) -> float | None:
    """Return tau = (steps + accepted) / steps over the counters' deltas."""
    steps = after.get("num_drafts", 0.0) - before.get("num_drafts", 0.0)
    accepted = after.get("num_accepted_tokens", 0.0) - before.get("num_accepted_tokens", 0.0)
    return round((steps + accepted) / steps, 2) if steps else None


def install_tool(python: Path) -> None:
    """Install this checkout's dflash-check into the engine's environment (its dependencies,
    typer, rich, huggingface_hub, safetensors and PyYAML, are already there with vLLM)."""
    niced([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)], check=True)


def run_tool(python: str, args: Sequence[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """Run ``dflash-check ARGS`` with ``python``; return (exit status, stdout, stderr)."""
    proc = subprocess.run(
        ["nice", "-n", "10", python, "-m", "dflash_check", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "HF_HUB_OFFLINE": "1"},
        timeout=2 * START_LIMIT,
    )
    return proc.returncode, proc.stdout, proc.stderr


def summary(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """Return what one step showed: the judged runtime, release and runner, and the smoke run."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return {"exit": code, "stderr": stderr.strip().splitlines()[-3:]}
    releases = report.get("runtime_releases") or {}
    smoke = report.get("smoke") or {}
    engine = smoke.get("engine") or {}
    return {
        "exit": code,
        "runtime": report.get("runtime"),
        "runners": {k: (v.get("release"), v.get("runner")) for k, v in releases.items()},
        "verdict": report.get("verdict"),
        "smoke_passed": smoke.get("passed"),
        "tau": smoke.get("mean_acceptance_length"),
        "lossless": smoke.get("lossless"),
        "min_acceptance": smoke.get("min_acceptance"),
        "engine_version": engine.get("version"),
        "draft_model": engine.get("draft_model"),
        "draft_evidence": engine.get("draft_evidence"),
        "failure": smoke.get("failure"),
        "error": report.get("error"),
        "stderr": [
            line
            for line in stderr.strip().splitlines()
            if "dflash-check" in line or line.startswith("Error:")
        ][-3:],
    }


def build_pairs(work: Path) -> dict[str, Path]:
    """The target, its trained draft, another draft (the same config, random weights: as
    compatible, but not the draft served) and a copy of it in a folder of the trained draft's
    name (a server names its draft by path)."""
    target, trained = widen(work / "base")
    _, built = build_case(target, trained, work / "other", CASES_BY_ID["ids-in-range"].edit, True)
    other, twin = work / "draft-other", work / "elsewhere" / trained.name
    shutil.copytree(built, other)
    shutil.copytree(built, twin)
    return {"target": target, "draft": trained, "other": other, "twin": twin}


def steps(models: Mapping[str, Path], engine_python: Path, urls: Mapping[str, str]) -> list[Step]:
    """The attach steps (the launch steps need no speculative server running)."""
    t, d = str(models["target"]), str(models["draft"])
    attach = ("--smoke-run", "--engine", "vllm", "--endpoint", urls.get("spec", ""))
    attach += ("--baseline-endpoint", urls["baseline"], "-f", "json")
    launch = ("--smoke-run", "--engine", "vllm", "--launch", "--engine-binary", str(engine_python))
    launch += tuple(f"--engine-arg={a}" for a in ENGINE_ARGS)
    launch += ("--baseline-endpoint", urls["baseline"], "-f", "json")
    if "spec" in urls:
        return [
            Step("endpoint", False, ("pair", d, t, *attach), 0),
            Step("endpoint-other-draft", False, ("pair", str(models["other"]), t, *attach), 3),
            Step("endpoint-twin-draft", False, ("pair", str(models["twin"]), t, *attach), 3),
        ]
    return [
        Step("installed", True, ("pair", d, t, "-r", "vllm=installed", "-f", "json"), 0),
        Step("launch", True, ("pair", d, t, *launch), 0),
        Step("launch-from-another-environment", False, ("pair", d, t, *launch), 0),
    ]


def scrubbed(value: Any, names: Mapping[str, str]) -> Any:
    """Return ``value`` with machine paths named by role (no machine paths in results)."""
    text = json.dumps(value)
    for path, name in sorted(names.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    return json.loads(text)


def run_steps(
    todo: list[Step], engine_python: Path, env: Mapping[str, str], urls: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Run each step; around each attach step read the server's own counters."""
    rows = []
    for step in todo:
        before = spec_counters(urls["spec"]) if "spec" in urls else None
        python = str(engine_python) if step.engine_env else sys.executable
        started = time.monotonic()
        code, out, err = run_tool(python, step.args, env)
        row = {"step": step.name, "args": list(step.args), "environment":
               "engine" if step.engine_env else "project", "expect_exit": step.expect_exit,
               **summary(code, out, err), "seconds": round(time.monotonic() - started)}  # fmt: skip
        if before is not None:
            # The server's own tau over the step (the tool's warm-up request included).
            row["server_tau"] = tau_between(before, spec_counters(urls["spec"]))
        print(f"{step.name}: exit {code} (expected {step.expect_exit})", flush=True)
        rows.append(row)
    return rows


def main(engine: Engine = ENGINES["vllm"]) -> int:
    """Run every step; write the results file."""
    python = venv_python(engine)
    install_tool(python)
    work = Path(tempfile.mkdtemp(prefix="served-", dir=home()))
    models = build_pairs(work)
    env = {**ENV, "VLLM_CACHE_ROOT": str(work / "vllm-cache"), "TMPDIR": str(work)}
    code, printed, _ = run_tool(
        str(python),
        ("pair", str(models["draft"]), str(models["target"]), "--print-command", "--engine",
         "vllm", "-r", "vllm=installed"),
        env,
    )  # fmt: skip
    serve = shlex.split(printed.strip().splitlines()[-1])  # vllm serve TARGET FLAGS…
    flags = serve[3:serve.index("--host")] if "--host" in serve else serve[3:]  # fmt: skip
    rows: list[dict[str, Any]] = []
    with server(python, ["--model", str(models["target"])], work / "baseline.log", env) as base:
        dev = {**env, "VLLM_SERVER_DEV_MODE": "1"}  # /server_info names the served draft
        with server(python, ["--model", serve[2], *flags], work / "spec.log", dev) as spec:
            urls = {"baseline": base, "spec": spec}
            rows += run_steps(steps(models, python, urls), python, env, urls)
        rows += run_steps(steps(models, python, {"baseline": base}), python, env, {})
    names = {str(p): role for role, p in models.items()} | {
        str(work): "WORK", str(python.parent.parent): "ENGINE_VENV", sys.executable: "python",
    }  # fmt: skip
    out = {
        "engine": engine.name,
        "distribution": engine.distribution,
        "release": engine.release,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{os.uname().machine} CPU, {os.cpu_count()} cores",
        "printed_command": scrubbed(printed.strip().splitlines()[-1], names),
        "print_command_exit": code,
        "engine_args": list(ENGINE_ARGS),
        "steps": scrubbed(rows, names),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{engine.slug}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    if all(r["exit"] == r["expect_exit"] for r in rows):
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print(f"a step did not exit as expected: its logs are kept in {work}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
