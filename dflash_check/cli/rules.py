"""``rules`` and ``explain``: the rule table, whole or one rule."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from dflash_check.cli.completion import complete_rule
from dflash_check.cli.output import listing_width, print_listing


class DocFormat(str, Enum):
    """Formats of ``rules``, ``runtimes`` and ``formats`` (here, not in ``options``: ``pair``
    never builds it)."""

    table = "table"
    json = "json"
    markdown = "markdown"


DocFormatOpt = Annotated[DocFormat, typer.Option("--format", "-f", case_sensitive=False)]
RuleArg = Annotated[
    str | None,
    typer.Argument(
        metavar="RULE",
        help="Explain one rule, by id (DF004) or name.",
        show_default=False,
        autocompletion=complete_rule,
    ),
]


def explain_rule(query: str) -> None:
    """Print one rule's why, runtimes and fix; an unknown id is a usage error (exit 2)."""
    from dflash_check.render.listing.rules import closest_rule, explain_text, find_rule

    found = find_rule(query)
    if found is None:
        close = closest_rule(query)
        suggestion = f" (did you mean {close}?)" if close else ""
        raise typer.BadParameter(
            f"no rule {query!r}{suggestion}; `dflash-check rules` lists them all",
            param_hint="RULE",
        )
    sys.stdout.write(explain_text(found, listing_width()))


def rules(
    rule_id: RuleArg = None,
    output_format: DocFormatOpt = DocFormat.table,
    long: Annotated[
        bool, typer.Option("--long", help="Each rule in full: runtimes, why, how to fix.")
    ] = False,
) -> None:
    """List every rule by id, one line each (--long: why and how to fix too)."""
    if rule_id is not None:
        explain_rule(rule_id)
        return
    if output_format is DocFormat.table and not long:
        from dflash_check.render.listing.rules import rules_short_text

        sys.stdout.write(rules_short_text(listing_width()))
        return
    print_listing("rules", output_format.value)


def explain(
    rule_id: Annotated[
        str,
        typer.Argument(
            metavar="RULE", help="Rule id (DF004) or name.", autocompletion=complete_rule
        ),
    ],
) -> None:
    """Explain one rule: what it checks, the runtimes it concerns, why it exists, how to fix."""
    explain_rule(rule_id)
