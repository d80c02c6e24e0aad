"""Which drafts the bundled runtime decodes: ``pair --smoke-run`` refuses the others before any
weight is fetched, and ``--compare-bundled`` says why it has no floor for them.

Its own module because both ``app/smoke_pair.py`` (which runs ``app/bundled_floor.py``) and
``app/bundled_floor.py`` ask it: held in either, the two would import each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_check.check.report import CheckReport
    from dflash_check.errors import CheckError


def unsupported(report: CheckReport, draft: str) -> CheckError | None:
    """Return why the bundled runtime cannot decode this draft (checked before any weight is
    fetched), or None when it can."""
    # Imported when asked: the smoke runtime's module is not part of a static check.
    from dflash_check.smoke.run import SMOKE_METHODS, SmokeUnsupportedError

    if report.draft.method in SMOKE_METHODS:
        return None
    # The bundled runtime has no EAGLE-3 head.
    return SmokeUnsupportedError(
        f"draft {draft}: a {report.draft.method} draft; the smoke run supports "
        "DFlash and DFlash2 drafts",
        hint="the static check (without --smoke-run) applies to it",
    )
