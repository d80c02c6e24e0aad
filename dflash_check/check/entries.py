"""The entries of a file of pairs, as ``registry`` reads them: a ``pairs.yaml`` entry
(``PairSpec``) and an engine test registry's entry that is listed, not checked (``SkippedEntry``).

Apart from ``outcome.py`` (which ``pair`` loads on every run) because only ``registry`` builds
them: each frozen class costs start-up time to define (benchmarks/bench_pair.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.check.report import Verdict
from dflash_check.knowledge.selection import DEFAULT, Selection
from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings


@dataclass(frozen=True)
class PairSpec:
    """One entry of ``pairs.yaml``."""

    draft: str
    """Draft repo id or directory (relative to the file)."""
    target: str
    """Target repo id or directory (relative to the file)."""
    expect: Verdict
    """``compatible`` or ``incompatible``."""
    line: int
    """1-based line of the entry in the file."""
    index: int
    """0-based position in the file's list."""
    selection: Selection = DEFAULT
    """Runtimes the pairing is meant for (``runtimes:``, parsed)."""
    draft_revision: str | None = None
    """Pinned draft revision."""
    target_revision: str | None = None
    """Pinned target revision."""
    draft_subfolder: str | None = None
    """Folder inside the draft's repo that holds the draft."""
    target_subfolder: str | None = None
    """Folder inside the target's repo that holds the target."""
    reason: str | None = None
    """Why the pair is expected to be (in)compatible."""
    source: str | None = None
    """Where the pairing is documented."""
    num_speculative_tokens: int | None = None
    """The engine's draft tokens per step the pairing is served with (DF019), if stated."""
    method: str | None = None
    """The ``method`` the engine is asked for (vLLM's ``speculative_config.method``), if stated."""
    strict: bool = False
    """Warnings and rules not checked make the pair incompatible (``registry --strict``)."""
    ignore: tuple[str, ...] = ()
    """Rule ids this pair does not count (``ignore:``); reported as suppressed, like
    ``--ignore``."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The engine settings of the entry's ``engine_args`` (as ``--engine-arg``), parsed."""

    @property
    def runtimes(self) -> tuple[str, ...]:
        """The runtimes as the entry names them (``portable``, ``vllm==0.34.0``), for display."""
        return self.selection.texts

    @property
    def label(self) -> str:
        """Return ``draft -> target`` (with revisions) for messages and test names."""
        draft = (
            self.draft
            + (f":{self.draft_subfolder}" if self.draft_subfolder else "")
            + (f"@{self.draft_revision}" if self.draft_revision else "")
        )
        target = (
            self.target
            + (f":{self.target_subfolder}" if self.target_subfolder else "")
            + (f"@{self.target_revision}" if self.target_revision else "")
        )
        return f"{draft} -> {target}"


@dataclass(frozen=True)
class SkippedEntry:
    """An entry of an engine's test registry that is listed, not checked, and why."""

    line: int
    """1-based line of the entry."""
    key: str
    """The entry's name in the file (vLLM architecture key, SGLang constant suffix)."""
    label: str
    """``draft -> target`` as far as the entry names them."""
    reason: str
    """Why it is not checked (``method medusa``, ``commented out``, …)."""
