"""Every serve command the tool prints, parsed by its engine's own parser
(``python -m conformance.oracle sglang 0.5.23 --commands``).

For every pair of the real-config corpus (``CORPUS``, every method it holds: DFlash, DFlash 2,
DSpark, EAGLE-3) and each parallel layout of ``LAYOUTS``, runs ``dflash-check pair DRAFT TARGET
-r ENGINE==RELEASE --engine ENGINE --print-command`` in this process, then hands the printed
line to the engine's launcher parser and start-up resolution in the release's own environment
(``conformance/drivers/sglang_config_driver.py``: ``prepare_server_args``, ``resolve_once``,
``check_server_args``, the model runner's config resolution). Writes
``conformance/results/oracle/commands/ENGINE-RELEASE.json``: per command, the printed argv
(repository paths as ``REPO``), the engine's outcome and stage, and the speculative settings it
parsed and resolved. ``tests/unit/test_oracle_commands.py`` checks that the tool still prints
what was recorded and that the engine read it as the tool meant.

A target alone (its own MTP layers) gets no command: ``pair TARGET --engine`` is a usage error.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.oracle import CORPUS, REPO, RESULTS, Pair, run_driver, write_results
from conformance.oracle import scrub as _scrub
from conformance.oracle_sglang import ALGORITHMS, NO_DEPS, SKIP, scrubbed

COMMANDS = RESULTS / "commands"
"""Apart from the pair results (another schema: ``conformance.agreement`` reads those)."""
LAUNCHERS = {"sglang": ("python3", "-m", "sglang.launch_server"), "vllm": ("vllm",)}
"""What each engine's printed line starts with; the rest is the engine parser's input."""
LAYOUTS: tuple[tuple[str, ...], ...] = ((), ("--tensor-parallel-size", "2"))
"""The tool's parallelism flags each pair is printed with: one GPU, and tensor parallelism
(its own flag in each engine's command)."""


@dataclass(frozen=True)
class Printed:
    """One command the tool printed for a corpus pair."""

    id: str
    pair: Pair
    flags: tuple[str, ...]
    """The tool's flags beyond the pair's own (``LAYOUTS``)."""
    argv: tuple[str, ...] | None
    """The printed command split as a shell splits it; None: no command (``why``)."""
    why: str | None = None


def tool_args(pair: Pair, engine: str, release: str, flags: tuple[str, ...]) -> list[str]:
    """``dflash-check`` arguments that print the serve command for ``pair``."""
    return [
        "pair", str(REPO / pair.draft), str(REPO / pair.target), "-r", f"{engine}=={release}",
        "--engine", engine, "--print-command", *flags,
    ]  # fmt: skip


def printed(pair: Pair, engine: str, release: str, flags: tuple[str, ...] = ()) -> Printed:
    """The command the tool prints for ``pair`` (run in this process, offline)."""
    from typer.testing import CliRunner

    from dflash_check.cli import app

    result = CliRunner().invoke(
        app, tool_args(pair, engine, release, flags), env={"HF_HUB_OFFLINE": "1"}
    )
    lines = result.stdout.strip().splitlines()
    ident = pair.id + "".join(f" {f}" for f in flags)
    argv = tuple(shlex.split(lines[-1])) if lines else ()
    if argv[: len(LAUNCHERS[engine])] != LAUNCHERS[engine]:
        why = (result.stderr.strip().splitlines() or [f"exit {result.exit_code}"])[-1]
        return Printed(ident, pair, flags, None, why.strip())
    return Printed(ident, pair, flags, argv)


def repo_relative(argv: tuple[str, ...]) -> list[str]:
    """``argv`` with the repository's folder named ``REPO`` (recorded data holds no paths)."""
    return [a.replace(str(REPO), "REPO") for a in argv]


def every_command(engine: str, release: str) -> list[Printed]:
    """The tool's command for every corpus pair and layout."""
    return [printed(pair, engine, release, flags) for pair in CORPUS for flags in LAYOUTS]


@dataclass(frozen=True)
class EngineParser:
    """How one engine's printed commands are parsed: its driver and its environment."""

    driver: str
    """The driver script under ``conformance/drivers/``."""
    install: tuple[tuple[str, ...], tuple[str, ...]] | None
    """``oracle.install``'s ``skip`` and ``no_deps`` (None: its defaults, vLLM's)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment the driver needs beyond ``run_driver``'s."""


def parsers() -> dict[str, EngineParser]:
    """Each engine's command parser."""
    return {
        "sglang": EngineParser("sglang_config_driver.py", (SKIP, NO_DEPS)),
        "vllm": EngineParser("vllm_command_driver.py", None, (("VLLM_TARGET_DEVICE", "cpu"),)),
    }


def run_commands(engine: str, release: str) -> Path:
    """Parse every printed command with the release's own code; write and return the file."""
    from conformance.oracle import install
    from conformance.runner import home

    parser = parsers()[engine]
    commands = every_command(engine, release)
    python = (
        install(engine, release, *parser.install) if parser.install else install(engine, release)
    )
    skip = len(LAUNCHERS[engine])
    jobs = [{"id": c.id, "argv": list(c.argv[skip:])} for c in commands if c.argv]
    driver = REPO / "conformance" / "drivers" / parser.driver
    with tempfile.TemporaryDirectory(dir=home()) as tmp:
        work = Path(tmp)
        env = {**dict(parser.env), "VLLM_CACHE_ROOT": str(work / "vllm-cache")}
        out, seconds = run_driver(python, jobs, work, driver, env)
        by_id = {r["id"]: r for r in out["records"]}
        records = [_record(c, by_id.get(c.id), work) for c in commands]
    data = {
        "engine": engine,
        "release": out["release"],
        "parser": f"the launcher's own parser and start-up validation "
        f"(conformance/drivers/{parser.driver})",
        "seconds": seconds,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "records": records,
    }
    return write_results(COMMANDS / f"{engine}-{release}.json", data)


def _record(command: Printed, ran: dict[str, Any] | None, work: Path) -> dict[str, Any]:
    """One command's row: what the tool printed and what the engine made of it."""
    row: dict[str, Any] = {
        "id": command.id,
        "pair": command.pair.id,
        "method": command.pair.method,
        "flags": list(command.flags),
        "command": repo_relative(command.argv) if command.argv else None,
    }
    if ran is None:
        return {**row, "no_command": command.why}
    error = ran["error"]
    row.update(outcome=ran["outcome"], stage=ran["stage"])
    row["engine_error"] = None if error is None else _scrub(error["message"], work)
    for key in ("parsed", "resolved"):
        row[key] = scrubbed(ran.get(key), work)
    return row


VLLM_METHODS = {"dflash": "dflash", "dflash2": "dflash", "dspark": "dspark", "eagle3": "eagle3"}
"""A pair's method -> vLLM's ``speculative_config.method``, written out here (not taken from
the tool's table) for the same reason as ``oracle_sglang.ALGORITHMS``."""


def meant(engine: str, row: dict[str, Any]) -> dict[str, Any]:
    """The settings the tool meant by a recorded command, named as the engine's driver records
    them after resolution: the pair's method, its draft, the printed draft length and
    tensor-parallel size."""
    (pair,) = [p for p in CORPUS if p.id == row["pair"]]
    draft, command = f"REPO/{pair.draft}", row["command"]
    if engine == "vllm":
        spec = json.loads(_flag(command, "--speculative-config") or "{}")
        tp = int(_flag(command, "--tensor-parallel-size") or 1)
        return {"method": VLLM_METHODS[row["method"]], "draft": draft,
                "num_speculative_tokens": spec.get("num_speculative_tokens"),
                "tensor_parallel_size": tp}  # fmt: skip
    wanted = {"speculative_algorithm": ALGORITHMS[row["method"]],
              "speculative_draft_model_path": draft,
              "tp_size": int(_flag(command, "--tp-size") or 1)}  # fmt: skip
    tokens = _flag(command, "--speculative-num-draft-tokens")
    if tokens is not None:
        wanted["speculative_num_draft_tokens"] = int(tokens)
    return wanted


def misread(engine: str, row: dict[str, Any]) -> list[str]:
    """How the engine's reading of a recorded command differs from what the tool meant
    (``meant``; pure): refused, or a setting resolved otherwise. Empty: read as meant."""
    if row["command"] is None:
        return []
    if row["outcome"] != "accepted":
        return [f"refused at {row['stage']}: {row['engine_error']}"]
    resolved = row["resolved"]
    return [
        f"{key}: engine {resolved.get(key)!r}, meant {value!r}"
        for key, value in meant(engine, row).items()
        if resolved.get(key) != value
    ]


def _flag(argv: list[str], flag: str) -> str | None:
    """The value after ``flag`` in ``argv``, None where it is absent."""
    return argv[argv.index(flag) + 1] if flag in argv else None
