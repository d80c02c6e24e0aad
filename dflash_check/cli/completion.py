"""Shell completion of option values that name table rows: runtimes and rule ids.

Each reads its table only when the shell asks (``_DFLASH_CHECK_COMPLETE``), never at start-up.
"""

from __future__ import annotations


def complete_runtime(incomplete: str) -> list[str]:
    """Shell completion of ``--runtime``: the runtime names (after a comma, the next one)."""
    from dflash_check.knowledge.selection import runtime_names

    head, _, last = incomplete.rpartition(",")
    prefix = f"{head}," if head else ""
    return [prefix + n for n in runtime_names() if n.startswith(last.lower())]


def complete_rule(incomplete: str) -> list[str]:
    """Shell completion of a rule id (``--ignore``, ``explain``): every id of the rule table."""
    from dflash_check.check.rules import ALL_RULES

    return [r.id for r in ALL_RULES if r.id.startswith(incomplete.upper())]
