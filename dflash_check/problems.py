"""Values that describe failures beyond one error line: a cause several pairs share, a mistake
at a line of an input file.

Apart from ``errors.py`` (which every run loads) because only a Hub failure or a registry run
builds one: each frozen class costs start-up time to define (benchmarks/bench_pair.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SharedCause:
    """How an error reads when several pairs of one run failed the same way.

    A registry run offline with an empty cache fails every pair on one cause; the table then
    gives each pair a few words (``brief``) and the cause's remedy once, with the distinct
    commands (``remedy``) that fix each pair, instead of the whole error and hint per pair.
    """

    brief: str
    """The error in a few words, without the repository (the pair's line names it)."""
    hint: str
    """How to get past it, for every pair at once."""
    remedy: str | None = None
    """The command that fixes this pair alone (``hf download REPO FILE``)."""


@dataclass(frozen=True)
class FileProblem:
    """One mistake in an input file (pairs.yaml, an overrides file, an engine's test file)."""

    file: str
    """The file, as the user named it."""
    line: int | None
    """1-based line, when known."""
    message: str
    """What is wrong there (without the ``file:line:`` prefix)."""

    @property
    def where(self) -> str:
        """Return ``file:line`` (``file`` when the line is not known)."""
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    @property
    def text(self) -> str:
        """Return ``file:line: message``, as every error line reads."""
        return f"{self.where}: {self.message}"
