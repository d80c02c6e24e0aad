"""The locked test environment: the lock file, the declared ranges, .ci/run and the README."""

from __future__ import annotations

import re
import shlex
import sys

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.support.helpers import REPO
from tools.lock import REFERENCE, TORCH, lock_lines

LOCK = (REPO / "requirements" / "lock.txt").read_text()
if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the lock is written and checked on 3.11+
    tomllib = pytest.importorskip("tomli")

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _locked() -> dict[str, Version]:
    pins = {}
    for line in LOCK.splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[_norm(name)] = Version(version)
    return pins


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> list[Requirement]:
    """Every requirement pyproject declares: the dependencies and every extra."""
    lists = [PYPROJECT["dependencies"], *PYPROJECT["optional-dependencies"].values()]
    return [Requirement(r) for block in lists for r in block]


def test_every_lock_line_is_one_exact_version() -> None:
    """Exact pins, no local labels (`+cpu` cannot be met from the index), sorted, no URLs."""
    lines = [line for line in LOCK.splitlines() if line and not line.startswith("#")]
    assert lines == sorted(lines, key=str.lower)
    for line in lines:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.]*", line), line


def test_every_declared_requirement_is_locked_inside_its_range() -> None:
    """The lock holds what pyproject asks for, each version inside the declared range."""
    pins = _locked()
    declared = _declared()
    assert {"typer", "transformers", "torch", "pytest"} <= {_norm(r.name) for r in declared}
    for req in declared:
        assert _norm(req.name) in pins, f"{req.name} is declared but not locked"
        assert req.specifier.contains(pins[_norm(req.name)], prereleases=True), req


def test_the_lock_holds_the_torch_and_reference_the_script_installs() -> None:
    """tools/lock.py installs torch and the dflash reference by name; the lock pins the same."""
    pins = _locked()
    for pin in (TORCH, REFERENCE):
        name, version = pin.split("==")
        assert pins[_norm(name)] == Version(version)


def test_no_cuda_build_is_locked() -> None:
    """torch comes first, as a CPU build: nothing of a CUDA build may be in the lock."""
    for name in _locked():
        assert not name.startswith(("nvidia-", "triton", "cuda-")), name


def test_ci_runs_the_readme_command_through_the_lock() -> None:
    """.ci/run is the README's command verbatim; torch first; every install constrained."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Development", 1)[1]
    install = next(line[2:] for line in block.splitlines() if line.startswith("$ pip install"))
    ci = (REPO / ".ci" / "run").read_text()
    last = ci.strip().splitlines()[-1]
    assert last.replace("python3 -m pip install -q ", "pip install ").startswith(install)
    assert last.endswith("python3 -m pytest -q -n auto")
    steps = [shlex.split(step) for step in install.split("&&")]
    assert steps[0][-1] == "torch"  # before the extras
    for step in steps:
        assert step[:4] == ["pip", "install", "-c", "requirements/lock.txt"], step


def test_lock_lines_from_a_freeze() -> None:
    """Local labels dropped, the package itself and editable lines skipped, sorted by name."""
    freeze = "\n".join(
        [
            "typer==0.24.1",
            "torch==2.13.0+cpu",
            "-e git+https://example.invalid/x#egg=dflash_check",
            "dflash_check==0.1.0",
            "# comment",
            "Jinja2==3.1.6",
        ]
    )
    assert lock_lines(freeze) == ["Jinja2==3.1.6", "torch==2.13.0", "typer==0.24.1"]
