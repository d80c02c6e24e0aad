"""Builders for test models: DFlash drafts and targets as dicts or directories."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from unittest import mock

from dflash_check.check.check import check_views, run_check
from dflash_check.check.report import CheckReport
from dflash_check.check.request import CheckSettings
from dflash_check.check.tokenizers import TokenizerComparison
from dflash_check.knowledge.selection import parse_selection
from dflash_check.knowledge.settings import parse_engine_args
from dflash_check.sources.safetensors_header import dflash_draft_tensors, encode_header
from dflash_check.views import DraftView, ModelFiles, TargetView
from tests.support.paths import REPO

FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"
SEED_DRAFT = EXAMPLES / "Qwen3-4B-DFlash-b16"
QWEN3_4B = EXAMPLES / "Qwen3-4B"
QWEN35_4B = EXAMPLES / "Qwen3.5-4B"


def seed_draft_config() -> dict[str, Any]:
    """Return the seed draft's config (z-lab/Qwen3-4B-DFlash-b16)."""
    return json.loads((SEED_DRAFT / "config.json").read_text())


def qwen3_4b_config() -> dict[str, Any]:
    """Return Qwen/Qwen3-4B's config."""
    return json.loads((QWEN3_4B / "config.json").read_text())


def draft_config(**overrides: Any) -> dict[str, Any]:
    """Return a copy of the seed draft config with top-level keys replaced (None deletes)."""
    cfg = copy.deepcopy(seed_draft_config())
    for key, value in overrides.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    return cfg


def fc_tensors(cfg: dict[str, Any], fc_in: int | None = None, target_hidden: int = 2560) -> dict:
    """Return header tensors for a draft config, with fc taking ``fc_in`` inputs."""
    ids = (
        cfg.get("dspark_target_layer_ids")
        or (cfg.get("dflash_config") or {}).get("target_layer_ids")
        or cfg.get("target_layer_ids")
        or [0]
    )
    tensors = dflash_draft_tensors(
        hidden=cfg["hidden_size"],
        num_ids=len(ids),
        target_hidden=target_hidden,
        layers=1,
        intermediate=64,
        heads=2,
        kv_heads=1,
        head_dim=8,
    )
    if fc_in is not None:
        from dflash_check.views import TensorInfo

        tensors["fc.weight"] = TensorInfo("BF16", (cfg["hidden_size"], fc_in))
    return tensors


def files(role: str, config: dict[str, Any], tensors: dict | None = None) -> ModelFiles:
    """Return ModelFiles for an in-memory config."""
    return ModelFiles(
        role=role,  # type: ignore[arg-type]
        name=f"mem/{role}",
        config=config,
        config_location="config.json",
        tensors=tensors,
    )


def write_model(folder: Path, config: dict[str, Any] | str, tensors: dict | None = None) -> Path:
    """Write a model directory (config.json, and a header-only model.safetensors)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    (folder / "config.json").write_text(text)
    if tensors is not None:
        (folder / "model.safetensors").write_bytes(encode_header(tensors))
    return folder


def write_draft(folder: Path, config: dict[str, Any], fc_in: int | None = None) -> Path:
    """Write a draft directory whose header matches ``config`` unless ``fc_in`` is given."""
    return write_model(folder, config, fc_tensors(config, fc_in))


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m dflash_check`` in a subprocess, as a user would."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "dflash_check", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
    )


def invoke_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (typer's CliRunner), with ``run_cli``'s environment.

    For tests about what the CLI says and its exit code, not about its process: a subprocess
    costs a Python start-up and every import again (~0.3 s of CPU each). huggingface_hub is
    pointed at the environment's Hub and cache as a new process would be (``hf_environment``),
    so ``env=hub.env(home)`` works as with ``run_cli``; ``cwd`` is the working directory during
    the run. An exception the CLI does not turn into an exit code is raised here, not hidden in
    the result.
    """
    from typer.testing import CliRunner

    from dflash_check.cli import app
    from tests.support.hfenv import hf_environment

    full_env = {"NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    before = os.getcwd()
    # tempfile reads TMPDIR once per process: forget its choice so that this run's TMPDIR counts.
    fresh_tempdir = (
        mock.patch.object(tempfile, "tempdir", None) if "TMPDIR" in full_env else nullcontext()
    )
    with hf_environment(full_env), fresh_tempdir:
        try:
            if cwd is not None:
                os.chdir(cwd)
            result = CliRunner().invoke(
                app,
                list(args),
                env=full_env,
                prog_name="python -m dflash_check",  # what click names the program with -m
            )
        finally:
            os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(
        ["dflash_check", *args], result.exit_code, result.stdout, result.stderr
    )


def settings(
    runtime: str = "portable",
    ignore: frozenset[str] = frozenset(),
    strict: bool = False,
    num_speculative_tokens: int | None = None,
    speculative_method: str | None = None,
    engine_args: tuple[str, ...] = (),
) -> CheckSettings:
    """Return check settings with ``runtime`` parsed as ``--runtime`` parses it, and
    ``engine_args`` as ``--engine-arg`` values."""
    return CheckSettings(
        parse_selection([runtime]),
        ignore,
        strict,
        num_speculative_tokens,
        speculative_method,
        parse_engine_args(engine_args),
    )


def check_files(
    draft: ModelFiles,
    target: ModelFiles,
    runtime: str = "portable",
    ignore: frozenset[str] = frozenset(),
    tokenizers: TokenizerComparison | None = None,
    **given: Any,
) -> CheckReport:
    """Check a pair of built files for ``runtime`` (a ``--runtime`` value)."""
    return run_check(draft, target, settings(runtime, ignore, **given), tokenizers)


def check_pair_views(
    draft: DraftView,
    target: TargetView,
    runtime: str = "portable",
    ignore: frozenset[str] = frozenset(),
    tokenizers: TokenizerComparison | None = None,
    **given: Any,
) -> CheckReport:
    """Check a pair of normalised views for ``runtime`` (a ``--runtime`` value)."""
    return check_views(draft, target, settings(runtime, ignore, **given), tokenizers)


def installed_distribution(folder: Path, name: str, version: str) -> Path:
    """Write the metadata of distribution ``name`` ``version`` under ``folder`` and return it:
    on ``PYTHONPATH`` it is what ``importlib.metadata`` finds installed (an engine's package,
    for ``--launch --engine-binary`` and ``ENGINE=installed``, without the engine)."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder
