"""What a non-editable install (`pip install .`, the GitHub Action) ships.

An editable install reads the source tree, so a data file missing from the package data goes
unnoticed in the tests and CI, and only a wheel built for a user lacks it (the engine facts per
release did: `knowledge/data/*.json` sat outside the `package-data` patterns).
"""

from __future__ import annotations

from fnmatch import fnmatch

import pytest

from tests.support.paths import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the package itself needs 3.10

PACKAGE = REPO / "dflash_check"


def test_every_data_file_of_the_package_is_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["dflash_check"]
    data = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "the package ships no data files at all: the walk is wrong"
    missing = [f for f in data if not any(fnmatch(f, pattern) for pattern in patterns)]
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
    stale = [p for p in patterns if not any(fnmatch(f, p) for f in data)]
    assert not stale, f"package-data patterns that match no file: {stale}"


def test_every_documentation_page_is_shipped() -> None:
    """setup.py maps docs/ into the wheel as dflash_check/docs ('dflash-check docs PAGE'), and
    the package-data patterns take every file there."""
    import ast

    setup = ast.parse((REPO / "setup.py").read_text())
    calls = [
        n
        for n in ast.walk(setup)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup"
    ]
    keywords = {
        k.arg: ast.literal_eval(k.value) for k in calls[0].keywords if k.arg == "package_dir"
    }
    assert keywords["package_dir"] == {"dflash_check.docs": "docs"}
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["dflash_check.docs"]
    docs = REPO / "docs"
    files = [p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file()]
    assert "runtimes.md" in files
    missing = [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)]
    assert not missing, f"docs/ files the wheel would not ship: {missing}"
