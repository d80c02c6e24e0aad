"""The pre-commit hook: ``registry`` on every file pre-commit passes it.

pre-commit appends the staged files that match the hook's ``files:`` pattern after the hook's
``args:`` (``pass_filenames``), so ``sub/pairs.yaml`` and ``pairs.yml`` are checked where they
are, never a ``./pairs.yaml`` that may not exist. Each file is its own ``registry`` run (one
report each, in a child process: a run ends by exiting); the hook's exit code is the most
severe of theirs, by the registry's own rule.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dflash_check.cli.output import most_severe


def value_options() -> frozenset[str]:
    """Return the ``registry`` options that take a value (``-o``, ``--format`` ...), read from
    the command itself so that a new option needs no edit here."""
    from typer.main import get_command

    from dflash_check.cli.main import build_app

    command = get_command(build_app("registry")).commands["registry"]  # type: ignore[attr-defined]
    return frozenset(
        name
        for param in command.params
        if param.param_type_name == "option" and not getattr(param, "is_flag", False)
        for name in param.opts
    )


def split_args(
    argv: list[str], takes_value: frozenset[str] | None = None
) -> tuple[list[str], list[str]]:
    """Return (the options from ``args:``, the files pre-commit appended): the files are the
    trailing arguments that are files (pre-commit passes only files that exist) and not the
    value of an option before them (``args: [-o, out.sarif]`` with ``out.sarif`` on disk)."""
    if takes_value is None:
        takes_value = value_options()
    cut = len(argv)
    while (
        cut > 0
        and not argv[cut - 1].startswith("-")
        and Path(argv[cut - 1]).is_file()
        and not (cut > 1 and argv[cut - 2] in takes_value)
    ):
        cut -= 1
    return argv[:cut], argv[cut:]


def main(argv: list[str] | None = None) -> int:
    """Check each file; return the most severe exit code (0 when no file was passed)."""
    options, files = split_args(sys.argv[1:] if argv is None else argv)
    codes = [
        # `--` before the path: a file named like an option stays a file.
        subprocess.run(
            [sys.executable, "-m", "dflash_check", "registry", *options, "--", file],
            check=False,
        ).returncode
        for file in files
    ]
    return most_severe(codes)


if __name__ == "__main__":
    sys.exit(main())
