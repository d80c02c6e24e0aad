"""The error tree and the exit codes: one place for both.

Everything that stops a check before it can give a verdict is a ``CheckError``. The CLI turns
it into one line on stderr and exit code 3; nothing below the CLI prints or exits. The values an
error may carry (``SharedCause``, ``FileProblem``) are in ``problems.py``: every run loads this
module, and only a registry run or a Hub failure builds one (each frozen class costs start-up
time to define, benchmarks/bench_pair.py); ``RegistryError`` imports ``FileProblem`` when it
builds one.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_check.problems import FileProblem, SharedCause


class ExitCode(IntEnum):
    """Process exit codes, documented in the README."""

    COMPATIBLE = 0
    """Every selected runtime accepts the pair (warnings allowed unless ``--strict``)."""
    INCOMPATIBLE = 1
    """At least one error finding, or a registry verdict that differs from its ``expect``."""
    USAGE = 2
    """Bad command line (typer's own code for usage errors)."""
    NOT_CHECKED = 3
    """A model could not be read: not found, gated, offline miss, malformed, network failure."""


class CheckError(Exception):
    """A problem that prevents a verdict. ``str(err)`` is the one line shown to the user."""

    hint: str | None = None
    shared: SharedCause | None = None
    """How it reads when several pairs fail the same way (the registry table groups them)."""

    def __init__(
        self, message: str, hint: str | None = None, shared: SharedCause | None = None
    ) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint
        if shared is not None:
            self.shared = shared


class ConfigError(CheckError):
    """A config file or header is missing, malformed or has a field of the wrong type."""


class NotADraftError(ConfigError):
    """The model given as the draft is not a DFlash draft."""

    method: str | None = None
    """The speculative method the draft uses, when it is one the tool names but does not check
    (EAGLE-1/2, P-EAGLE, MTP): an engine's test registry lists such entries as not checked."""


class HubError(CheckError):
    """Base class of everything that went wrong while talking to the Hub or its cache."""


class RepoNotFoundError(HubError):
    """The repository does not exist, or is private and the caller is not authorised."""


class RevisionNotFoundError(HubError):
    """The repository exists but not the requested branch, tag or commit."""


class FileNotFoundOnHubError(HubError):
    """The repository exists but lacks a file the check needs."""


class GatedRepoError(HubError):
    """The repository is gated and the caller has not been granted access."""


class UnauthorizedError(HubError):
    """The token was rejected or lacks the right to read the repository."""


class NotCachedError(HubError):
    """Offline mode is on and a needed file is not in the Hugging Face cache."""


class NetworkError(HubError):
    """The Hub could not be reached, timed out or kept failing with server errors."""

    retryable: bool = True
    """Whether another attempt could help (False when the client already retried)."""


class MissingExtraError(CheckError):
    """An optional dependency group is not installed."""


class RegistryError(CheckError):
    """``pairs.yaml`` is unreadable or does not follow its schema."""

    problems: tuple[FileProblem, ...] = ()
    """Every mistake found, each at its line (empty: only the message is known)."""

    @classmethod
    def at(cls, file: str, line: int | None, message: str) -> RegistryError:
        """Build the error of one mistake at ``file:line``."""
        from dflash_check.problems import FileProblem

        problem = FileProblem(file, line, message)
        err = cls(problem.text)
        err.problems = (problem,)
        return err

    @classmethod
    def collected(cls, problems: list[FileProblem]) -> RegistryError:
        """Build one error of all the mistakes of a file (the first one is its message), so
        that a file with three mistakes takes one run to fix, not three."""
        more = len(problems) - 1
        suffix = f" (and {more} more mistake{'s' if more > 1 else ''} in this file)" if more else ""
        err = cls(problems[0].text + suffix)
        err.problems = tuple(problems)
        return err

    def problems_in(self, file: str) -> tuple[FileProblem, ...]:
        """Return the mistakes, or the message as one mistake of ``file`` (line unknown)."""
        from dflash_check.problems import FileProblem

        return self.problems or (FileProblem(file, None, str(self).removeprefix(f"{file}: ")),)
