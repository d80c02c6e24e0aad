"""An output format is one renderer and one row of ``OUTPUT_FORMATS``: a fake format added to
the table alone is offered by ``--format``, listed in ``--help`` and used by ``pair`` and
``registry`` (each command dispatches through the table, never on a format's name)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from dflash_check.cli import app
from dflash_check.render import OUTPUT_FORMATS, OutputFormat, Page
from tests.support.helpers import REPO

if TYPE_CHECKING:
    from dflash_check.check.outcome import RunResult

SEED = (str(REPO / "examples" / "Qwen3-4B-DFlash-b16"), str(REPO / "examples" / "Qwen3-4B"))


def render_counts(result: RunResult, page: Page) -> str:
    """The fake format: one line of counts (a ``Renderer``)."""
    return f"counts: {len(result.outcomes)} pair(s), {result.count('ok')} ok, file={result.file}\n"


@pytest.fixture
def counts_format(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the fake format: one row, nothing else."""
    row = OutputFormat("counts", __name__, "render_counts")
    monkeypatch.setitem(OUTPUT_FORMATS, row.name, row)


def invoke(*args: str) -> tuple[int, str]:
    """Run the app in-process; return its exit code and stdout with stderr."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})
    return result.exit_code, result.output


def test_an_unregistered_format_is_refused() -> None:
    """Without its row the name is a usage error: the tests below can fail."""
    code, text = invoke("pair", *SEED, "--format", "counts")
    assert code == 2 and "'counts' is not one of" in text


@pytest.mark.usefixtures("counts_format")
def test_pair_renders_through_the_table() -> None:
    code, text = invoke("pair", *SEED, "--format", "counts")
    assert code == 0, text
    assert "counts: 1 pair(s), 1 ok, file=None" in text


@pytest.mark.usefixtures("counts_format")
def test_registry_renders_through_the_table(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.yaml"
    pairs.write_text(
        f"version: 1\npairs:\n  - draft: {SEED[0]}\n    target: {SEED[1]}\n    expect: compatible\n"
    )
    out = tmp_path / "report.txt"
    code, text = invoke("registry", str(pairs), "--format", "counts", "--output", str(out))
    assert code == 0, text
    assert out.read_text() == f"counts: 1 pair(s), 1 ok, file={pairs}\n"


@pytest.mark.usefixtures("counts_format")
def test_help_lists_the_format() -> None:
    code, text = invoke("pair", "--help")
    assert code == 0 and "markdown, counts" in text


@pytest.mark.usefixtures("counts_format")
def test_one_model_refuses_a_format_that_is_not_its_report() -> None:
    """A target alone has an MTP report in table or JSON only: a new format is refused."""
    code, text = invoke("pair", SEED[1], "--format", "counts")
    assert code == 2 and "--format counts needs a DRAFT and a TARGET" in text
