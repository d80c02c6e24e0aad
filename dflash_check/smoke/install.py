"""How this copy of dflash-check was installed, for install hints that work where it runs.

The package is not on the package index: ``pip install 'dflash-check[smoke]'`` fails with "No
matching distribution" for a user who installed from a clone. PEP 610's ``direct_url.json``
says where an installed distribution came from; a copy run from a source tree (``PYTHONPATH``)
has no distribution at all and is found by its ``pyproject.toml``.
"""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DIST = "dflash-check"


def _source_tree() -> Path | None:
    """Return the source checkout this module is imported from, if it is one."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def extra_install_hint(extra: str) -> str:
    """Return the pip command that adds ``extra`` to this installation."""
    tree = _source_tree()
    if tree is not None:  # an editable install or a checkout on PYTHONPATH
        return _pip(tree, extra, editable=True)
    try:
        direct = json.loads(metadata.distribution(DIST).read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError):
        direct = None
    url = str(direct.get("url", "")) if isinstance(direct, dict) else ""
    if url.startswith("file://"):  # `pip install .` from a clone: reinstall from there
        return _pip(Path(unquote(urlparse(url).path)), extra, editable=False)
    return f"pip install '{DIST}[{extra}]'"


def _pip(path: Path, extra: str, editable: bool) -> str:
    """Return ``pip install [-e] 'PATH[extra]'`` (``.`` when PATH is the working directory)."""
    try:
        shown = "." if path.resolve() == Path.cwd().resolve() else str(path)
    except OSError:
        shown = str(path)
    return f"pip install {'-e ' if editable else ''}{shlex.quote(f'{shown}[{extra}]')}"
