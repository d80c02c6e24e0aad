"""Option groups: typer sees the flat options, the command gets one value per group."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Annotated

import typer
from typer.testing import CliRunner

from dflash_check.cli.groups import grouped
from dflash_check.cli.pair import pair


@dataclass(frozen=True)
class Knobs:
    size: int
    loud: bool

    @classmethod
    def parse(
        cls,
        size: Annotated[int, typer.Option("--size")] = 3,
        loud: Annotated[bool, typer.Option("--loud")] = False,
    ) -> Knobs:
        return cls(size, loud)


def test_a_group_is_built_from_its_flat_options() -> None:
    seen: list[Knobs] = []

    @grouped
    def command(name: Annotated[str, typer.Argument()] = "x", *, knobs: Knobs) -> None:
        seen.append(knobs)

    assert list(inspect.signature(command).parameters) == ["name", "size", "loud"]
    app = typer.Typer()
    app.command()(command)
    app.command("other")(lambda: None)  # two commands: the first is called by name
    result = CliRunner().invoke(app, ["command", "n", "--size", "5", "--loud"])
    assert result.exit_code == 0, result.output
    assert seen == [Knobs(5, True)]


def test_pair_shows_typer_every_option_once() -> None:
    names = list(inspect.signature(pair).parameters)
    assert len(names) == len(set(names)) > 30
    assert {"runtime", "output_format", "token", "smoke_run", "engine"} <= set(names)
