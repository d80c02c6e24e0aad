"""The registry's own reports: a summary table for people and a JSON document for machines."""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dflash_check.core.outcome import RunResult
from dflash_check.core.report import Severity
from dflash_check.render.json import SCHEMA_VERSION, report_dict
from dflash_check.render.locations import expectation_text, message

STATUS_TEXT = {
    "ok": Text("✓ as expected", style="green"),
    "mismatch": Text("✗ NOT as expected", style="bold red"),
    "error": Text("? not checked", style="bold yellow"),
}


def render_registry_table(result: RunResult) -> RenderableType:
    """Return the summary table and, under it, what went wrong with each failing pair."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in ("line", "draft", "target", "runtimes", "expect", "verdict", "status"):
        table.add_column(col, overflow="fold")
    details: list[RenderableType] = []
    for o in result.outcomes:
        spec = o.spec
        assert spec is not None
        table.add_row(
            Text(str(spec.line)),
            Text(spec.draft + (f"@{spec.draft_revision}" if spec.draft_revision else "")),
            Text(spec.target + (f"@{spec.target_revision}" if spec.target_revision else "")),
            Text(", ".join(spec.runtimes)),
            Text(o.expect.value),
            Text(o.verdict.value),
            STATUS_TEXT[o.status],
        )
        if o.status == "ok":
            continue
        details.append(Text(f"{result.file}:{spec.line}: {expectation_text(o)}", style="bold"))
        if o.report is not None:
            seen: set[str] = set()
            for f in o.report.findings:
                if f.severity is Severity.ERROR and f.message not in seen:
                    seen.add(f.message)
                    details.append(Text(f"  {f.rule} {message(f)}"))
        elif o.error_hint:
            details.append(Text(f"  hint: {o.error_hint}"))
    summary = Text(
        f"{len(result.outcomes)} pairs: {result.count('ok')} as expected, "
        f"{result.count('mismatch')} not as expected, {result.count('error')} not checked"
    )
    parts: list[RenderableType] = [table]
    if details:
        parts += [Text(""), *details]
    parts += [Text(""), summary]
    return Group(*parts)


def registry_dict(result: RunResult) -> dict[str, Any]:
    """Return the registry run as one JSON object."""
    pairs = []
    for o in result.outcomes:
        spec = o.spec
        assert spec is not None
        pairs.append(
            {
                "line": spec.line,
                "draft": spec.draft,
                "target": spec.target,
                "draft_revision": spec.draft_revision,
                "target_revision": spec.target_revision,
                "runtimes": list(spec.runtimes),
                "expect": o.expect.value,
                "verdict": o.verdict.value,
                "status": o.status,
                "reason": spec.reason,
                "source": spec.source,
                "error": None if o.error is None else {"message": o.error, "hint": o.error_hint},
                "report": report_dict(o.report) if o.report is not None else None,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "file": result.file,
        "summary": {
            "pairs": len(result.outcomes),
            "as_expected": result.count("ok"),
            "not_as_expected": result.count("mismatch"),
            "not_checked": result.count("error"),
        },
        "pairs": pairs,
    }


def render_registry_json(result: RunResult) -> str:
    """Render the registry run as JSON: one compact line (a registry can hold 1,000 reports;
    ``jq .`` pretty-prints it)."""
    return json.dumps(registry_dict(result), separators=(",", ":")) + "\n"
