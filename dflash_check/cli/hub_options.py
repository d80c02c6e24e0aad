"""The Hub options of ``pair`` and ``registry`` (the "Hub" panel) and the groups they are read
into: ``HubFlags`` (how models are fetched) and ``ModelFlags`` (which revision and folder of each
model). Split from ``cli/options.py`` by panel, as ``cli/smoke.py`` and ``cli/engine.py`` are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from dflash_check.cli.engine import finite_timeout
from dflash_check.cli.options import HUB, panel_option
from dflash_check.sources.limits import DEADLINE_FACTOR

if TYPE_CHECKING:
    from collections.abc import Callable

    from dflash_check.sources.hub import HubOptions
    from dflash_check.sources.interface import ModelRef, ModelSource

TokenOpt = Annotated[
    str | None,
    panel_option(
        "--token",
        panel=HUB,
        metavar="TOKEN",
        help="Hugging Face token (default: HF_TOKEN or the saved login).",
        show_default=False,
    ),
]
RevisionOpt = Annotated[
    str | None,
    panel_option(
        "--revision",
        panel=HUB,
        metavar="REV",
        help="Revision (branch, tag, commit) for both models.",
    ),
]
DraftRevisionOpt = Annotated[
    str | None,
    panel_option("--draft-revision", panel=HUB, metavar="REV", help="Revision of the draft."),
]
TargetRevisionOpt = Annotated[
    str | None,
    panel_option("--target-revision", panel=HUB, metavar="REV", help="Revision of the target."),
]
DraftSubfolderOpt = Annotated[
    str | None,
    panel_option(
        "--draft-subfolder",
        panel=HUB,
        metavar="DIR",
        help="Folder in the draft's repo (as DRAFT ORG/NAME:SUBFOLDER).",
    ),
]
TargetSubfolderOpt = Annotated[
    str | None,
    panel_option(
        "--target-subfolder",
        panel=HUB,
        metavar="DIR",
        help="Folder in the target's repo.",
    ),
]
OfflineOpt = Annotated[
    bool,
    panel_option(
        "--offline", panel=HUB, help="Use the Hugging Face cache only (as HF_HUB_OFFLINE=1)."
    ),
]
TimeoutOpt = Annotated[
    float,
    panel_option(
        "--timeout",
        panel=HUB,
        metavar="SECONDS",
        help=f"Seconds per Hub response (a model's whole fetch: {DEADLINE_FACTOR}x this).",
        min=0.1,
        callback=finite_timeout,
    ),
]


def pick_revision(flag: str | None, both: str | None, other_flag: str) -> str | None:
    """Return the revision for one side, refusing two flags that disagree."""
    if flag is not None and both is not None and flag != both:
        raise typer.BadParameter(
            f"--revision {both!r} conflicts with {other_flag} {flag!r}; use one of them",
            param_hint=other_flag,
        )
    return flag if flag is not None else both


@dataclass(frozen=True, eq=False)
class HubFlags:
    """``--token``, ``--offline``, ``--timeout``: how models are fetched from the Hub."""

    token: str | None
    offline: bool
    timeout: float

    @classmethod
    def parse(
        cls, token: TokenOpt = None, offline: OfflineOpt = False, timeout: TimeoutOpt = 10.0
    ) -> HubFlags:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(token, offline, timeout)

    def options(self, on_retry: Callable[[str], None] | None = None) -> HubOptions:
        """Return the Hub options, with retries announced on stderr (one line each, unless
        ``on_retry`` shows them some other way)."""
        from dflash_check.cli.output import redact, stderr_console
        from dflash_check.sources.hub import HubOptions

        def announce(text: str) -> None:
            stderr_console().print(f"Hub: {redact(text)}", markup=False, style="yellow")

        return HubOptions(
            token=self.token,
            offline=self.offline,
            timeout=self.timeout,
            on_retry=on_retry or announce,
        )

    def factory(self, on_retry: Callable[[str], None] | None = None) -> Callable[[], ModelSource]:
        """Return what builds the Hub source, so that local checks never import it."""

        def build() -> ModelSource:
            from dflash_check.sources.hub import HubSource

            return HubSource(self.options(on_retry))

        return build


@dataclass(frozen=True, eq=False)
class ModelFlags:
    """``--revision``, ``--draft-/--target-revision`` and ``--draft-/--target-subfolder``."""

    revision: str | None
    draft_revision: str | None
    target_revision: str | None
    draft_subfolder: str | None
    target_subfolder: str | None

    @classmethod
    def parse(
        cls,
        revision: RevisionOpt = None,
        draft_revision: DraftRevisionOpt = None,
        target_revision: TargetRevisionOpt = None,
        draft_subfolder: DraftSubfolderOpt = None,
        target_subfolder: TargetSubfolderOpt = None,
    ) -> ModelFlags:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(revision, draft_revision, target_revision, draft_subfolder, target_subfolder)

    def draft(self, spec: str) -> ModelRef:
        """Return the draft's reference (a bad spec is a usage error)."""
        rev = pick_revision(self.draft_revision, self.revision, "--draft-revision")
        return model_ref(spec, rev, self.draft_subfolder)

    def target(self, spec: str) -> ModelRef:
        """Return the target's reference (a bad spec is a usage error)."""
        rev = pick_revision(self.target_revision, self.revision, "--target-revision")
        return model_ref(spec, rev, self.target_subfolder)


def model_ref(spec: str, revision: str | None, subfolder: str | None) -> ModelRef:
    """Return the reference of a model as typed; a bad spec is a usage error (exit 2)."""
    from dflash_check.sources.interface import BadModelSpec, parse_model_ref

    try:
        return parse_model_ref(spec, revision, subfolder)
    except BadModelSpec as err:
        raise typer.BadParameter(str(err)) from None
