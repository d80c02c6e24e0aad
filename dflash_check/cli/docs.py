"""``docs``: the documentation pages shipped with the package, listed or printed."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

PageArg = Annotated[
    str | None,
    typer.Argument(
        help="The page to print, as listed with no PAGE (runtimes, engine-reading/vllm).",
        show_default=False,
    ),
]


def docs(page: PageArg = None) -> None:
    """Print a documentation page (Markdown), or list them: what messages cite as
    'dflash-check docs PAGE'."""
    from dflash_check import manual

    if page is None:
        names = manual.pages()
        width = max(map(len, names))
        for name in names:
            text = manual.read(name) or ""
            sys.stdout.write(f"{name:<{width}}  {manual.title(text)}\n")
        return
    text = manual.read(page)
    if text is None:
        raise typer.BadParameter(
            f"no page {page!r}; the pages: {', '.join(manual.pages())}", param_hint="PAGE"
        )
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
