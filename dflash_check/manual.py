"""The documentation pages, shipped with the package: ``dflash-check docs PAGE`` prints one.

Messages and rule texts cite a page as ``dflash-check docs NAME`` (``cite``), never as a path
in the repository: an installed package has no ``docs/`` folder beside it, and the pages are
the same ones the repository keeps in ``docs/`` (setup.py maps them into the wheel as
``dflash_check/docs``). A checkout or an editable install reads the repository's ``docs/``.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

SUFFIX = ".md"


def _root() -> Path:
    """Return the folder of the pages: the wheel's ``dflash_check/docs``, else the checkout's
    ``docs/`` (an editable install does not map a folder outside the package)."""
    # find_spec, not importlib.resources: the folder is a namespace package (no __init__.py),
    # which resources.files reads only from Python 3.11 on.
    spec = find_spec("dflash_check.docs")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parent.parent / "docs"


def pages() -> tuple[str, ...]:
    """Return every page's name (``runtimes``, ``engine-reading/vllm``), sorted."""
    root = _root()
    return tuple(
        sorted(p.relative_to(root).as_posix()[: -len(SUFFIX)] for p in root.rglob(f"*{SUFFIX}"))
    )


def read(name: str) -> str | None:
    """Return the page ``name`` (with or without ``.md`` and a leading ``docs/``), or None
    when there is no such page."""
    name = name.removeprefix("docs/").removesuffix(SUFFIX)
    if name not in pages():  # never a path of the caller's choosing: only a listed page
        return None
    return (_root() / f"{name}{SUFFIX}").read_text(encoding="utf-8")


def title(text: str) -> str:
    """Return a page's title: its first Markdown heading, else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return lines[0] if lines else ""


def cite(name: str) -> str:
    """Return how a message cites the page ``name``: the command that prints it."""
    return f"dflash-check docs {name}"
