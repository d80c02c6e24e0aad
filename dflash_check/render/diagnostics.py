"""Findings as a person reads them: one diagnostic per problem, and the answer sentence.

A rule yields one finding per runtime it concerns, so that each runtime's verdict can be
computed; a person wants each problem once. ``diagnostics()`` merges the findings that differ
only by runtime into one ``Diagnostic`` (listing the runtimes and what differs between them),
and every count the tool prints (table, JSON summary, stderr line) is a count of these.
Everything here is plain strings, shared by the terminal report and the one-line summaries.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dflash_check.check.report import CheckReport, Finding, LayerResolution, Severity, Verdict
from dflash_check.check.rules import fmt_ids
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import method_rows
from dflash_check.knowledge.selection import PORTABLE
from dflash_check.sanitize import visible

if TYPE_CHECKING:
    from dflash_check.check.target_alone import MtpReport

SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
# The findings that say "this is not the target the draft was made for", first among equals:
# the other vocabulary (the clearest sign of another model family), the other width, the other
# layer count it was trained on. A layer id out of range follows from them; read first, it
# invites any target with enough layers.
DECIDING_RULES = ("DF007", "DF006", "DF011")


# The verdict's colours: the report's answer (``table.py``) and the ``--verbose`` grid's
# verdict column (``grid.py``, imported only with ``--verbose``: it loads rich.table).
VERDICT_STYLE = {
    Verdict.COMPATIBLE: "bold green",
    Verdict.INCOMPATIBLE: "bold red",
    Verdict.UNKNOWN: "bold yellow",
}


@dataclass(frozen=True)
class Diagnostic:
    """One problem, as shown once however many runtimes it concerns."""

    rule: str
    """Rule id, e.g. ``DF004``."""
    severity: Severity
    """Error, warning or info."""
    headline: str
    """What is wrong, with the numbers (the part every runtime's message shares)."""
    runtimes: tuple[str, ...]
    """The runtimes it concerns; empty when it concerns every runtime."""
    per_runtime: tuple[tuple[tuple[str, ...], str], ...]
    """(runtimes, what differs for them), when the runtimes' messages differ."""
    hint: str
    """How to fix it."""
    field: str | None
    """The config field it is about."""
    model: str | None
    """``draft`` or ``target``: whose file holds ``field``."""

    def runtime_notes(self) -> list[str]:
        """Return what differs per runtime, each led by its runtimes' names (unless the note
        already starts with them)."""
        notes = []
        for names, tail in self.per_runtime:
            lead = ", ".join(names)
            notes.append(tail if tail.startswith(lead) else f"{lead}: {tail}")
        return notes


def _split_common(messages: list[str]) -> tuple[str, list[str]] | None:
    """Split messages at the last clause boundary (``": "``) they all share, else None."""
    first = messages[0]
    end = 0
    while end < len(first) and all(len(m) > end and m[end] == first[end] for m in messages):
        end += 1
    cut = first.rfind(": ", 0, end + 1)
    if cut <= 0 or not all(m[cut : cut + 2] == ": " for m in messages):
        return None
    return first[:cut], [m[cut + 2 :] for m in messages]


def _name_runtimes(group: list[Finding], names: tuple[str, ...]) -> str | None:
    """Return one message for findings whose messages differ only in the runtime they name
    ("but vllm reads only …" / "but mlx reads only …" -> "but each of vllm and mlx reads
    only …"), or None when they differ otherwise."""
    if not names or len(names) < 2:
        return None
    templates = set()
    for f in group:
        if not f.runtime:
            return None
        parts = re.split(rf"\b{re.escape(f.runtime)}\b", f.message)
        if len(parts) != 2:
            return None
        templates.add(tuple(parts))
    if len(templates) != 1:
        return None
    before, after = templates.pop()
    return f"{before}each of {_and(list(names))}{after}"


def _merge(rule: str, severity: Severity, group: list[Finding]) -> Diagnostic:
    """Merge findings of one rule that differ only by runtime into one diagnostic."""
    every = any(f.runtime is None for f in group)
    names = () if every else tuple(dict.fromkeys(f.runtime or "" for f in group))
    messages = list(dict.fromkeys(f.message for f in group))
    headline, per_runtime = messages[0], ()
    named = _name_runtimes(group, names)
    if len(messages) > 1 and named is not None:
        headline = named
    elif len(messages) > 1:
        split = _split_common(messages)
        tails: dict[str, list[str]] = {}
        for f in group:
            tail = split[1][messages.index(f.message)] if split else f.message
            tails.setdefault(tail, []).append(f.runtime or "all")
        headline = split[0] if split else ""
        per_runtime = tuple((tuple(rts), tail) for tail, rts in tails.items())
    f0 = group[0]
    return Diagnostic(rule, severity, headline, names, per_runtime, f0.hint, f0.field, f0.model)


def grouped(
    report: CheckReport | MtpReport, short: bool = True
) -> tuple[tuple[Diagnostic, tuple[Finding, ...]], ...]:
    """Return each problem once, most severe first, with the per-runtime findings it merges
    (the table prints the diagnostic, the JSON both). ``short``: messages say "the draft" and
    "the target" (for people; the JSON keeps the names, for a message read on its own)."""
    groups: dict[tuple[str, Severity, str | None, str | None, str], list[Finding]] = {}
    findings = report.findings
    if short:
        findings = tuple(replace(f, message=short_names(report, f.message)) for f in findings)
    for f in findings:
        groups.setdefault((f.rule, f.severity, f.field, f.model, f.hint), []).append(f)
    merged = [(_merge(rule, sev, group), tuple(group)) for (rule, sev, *_), group in groups.items()]
    return tuple(sorted(merged, key=lambda p: _order(p[0])))


def _order(d: Diagnostic) -> tuple[int, int, str]:
    """Sort key: severity, then the deciding rules (``DECIDING_RULES``), then rule id."""
    rank = DECIDING_RULES.index(d.rule) if d.rule in DECIDING_RULES else len(DECIDING_RULES)
    return SEVERITY_ORDER[d.severity], rank, d.rule


def short_names(report: CheckReport | MtpReport, message: str) -> str:
    """Return ``message`` with "draft NAME" / "target NAME" said as "the draft" / "the target".

    The report's first line and each block's ``-->`` line already name both models; repeated
    in every message, two long paths push the answer off the first screen.
    """
    # A target's own MTP report (a registry's self-drafting entry) names no draft.
    draft = getattr(report, "draft", None)
    roles = [("target", report.target.name)] + ([] if draft is None else [("draft", draft.name)])
    for role, name in roles[::-1]:
        named = rf"\b{role} {re.escape(name)}"
        # "draft NAME vocab_size" -> "the draft's vocab_size" (a config key follows)
        message = re.sub(named + r"(?= [A-Za-z0-9]*[_.][\w.]*)", f"the {role}'s", message)
        # "draft NAME: fc.weight takes ..." -> "the draft's fc.weight takes ..."
        message = re.sub(named + r": (?=[A-Za-z0-9]*[_.][\w.]* )", f"the {role}'s ", message)
        message = re.sub(named + r"(?=[\s:;,.)]|$)", f"the {role}", message)
    return message.replace("the the ", "the ")


def diagnostics(report: CheckReport | MtpReport) -> tuple[Diagnostic, ...]:
    """Return the report's findings as diagnostics, most severe first, each problem once."""
    return tuple(d for d, _ in grouped(report))


def plural(count: int, noun: str) -> str:
    """Return ``1 error`` / ``2 errors``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts(diags: tuple[Diagnostic, ...]) -> dict[str, int]:
    """Return the problems by severity: ``errors``, ``warnings``, ``notes`` (table and JSON)."""
    return {
        "errors": sum(1 for d in diags if d.severity is Severity.ERROR),
        "warnings": sum(1 for d in diags if d.severity is Severity.WARNING),
        "notes": sum(1 for d in diags if d.severity is Severity.INFO),
    }


def count_text(diags: tuple[Diagnostic, ...]) -> str:
    """Return ``3 errors, 1 warning`` (the one count every output uses)."""
    n = counts(diags)
    parts = [plural(n["errors"], "error"), plural(n["warnings"], "warning")]
    if n["notes"]:
        parts.append(plural(n["notes"], "note"))
    return ", ".join(parts)


def runtime_text(report: CheckReport) -> str:
    """Return the runtime selection as words: ``portable`` or ``vllm==0.34.0 and
    sglang==0.5.23`` (each runtime named with the release its verdict is for); an engine
    ``portable`` leaves out is said (``portable without vllm and vllm-v1==0.32.0``)."""
    names = report.selection.names
    named = [p.label for p in report.profiles if p.name in names]
    if report.selection.portable:
        served = report.selection.served
        head = f"{PORTABLE} without {_and(list(served))}" if served else PORTABLE
        return _and([head, *named])
    return _and(named or list(names))


def labels(report: CheckReport) -> dict[str, str]:
    """Return runtime name -> the name with its release (``vllm==0.34.0``)."""
    return {p.name: p.label for p in report.profiles}


def stage_sentence(report: CheckReport) -> str | None:
    """Say when each failing runtime shows the failure: ``Fails at the first decode on
    vllm==0.34.0; runs with acceptance silently collapsed on llamacpp==0c1e57098.``"""
    by_stage: dict[Stage, list[str]] = {}
    for p in report.profiles:
        stage = report.runtime_stages.get(p.name)
        if stage is not None and report.runtime_verdict(p.name) is not Verdict.COMPATIBLE:
            by_stage.setdefault(stage, []).append(p.label)
    if not by_stage:
        return None
    parts = [f"{s.text} on {_and(by_stage[s])}" for s in Stage if s in by_stage]
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def runner_sentences(report: CheckReport) -> list[str]:
    """Name the runner assumed for each engine release that has several, and in short how the
    engine picks it (the JSON's ``runner_choice`` has the engine's words and the citation). A
    release with one runner (vLLM 0.34) leaves nothing to assume: the JSON still names it."""
    return [
        f"{p.label} assumes Model Runner {p.runner} ({p.release.runner_short})."
        for p in report.profiles
        if p.runner is not None
        and p.release is not None
        and p.release.runner_short
        and len(p.release.runners) > 1
    ]


def summary_line(report: CheckReport) -> str:
    """Return the one-line summary for stderr: ``incompatible (3 errors, 1 warning)``."""
    if report.verdict_text != report.verdict.value:
        return report.verdict_text  # the strict reason already carries the counts
    return f"{report.verdict.value} ({count_text(diagnostics(report))})"


def _and(items: list[str]) -> str:
    """Join ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def layer_sentence(report: CheckReport) -> str | None:
    """Return the sentence with the numbers that decide the layer check, or None."""
    if not report.resolutions:
        return None
    t, d = report.target, report.draft
    read = [r for r in report.resolutions if not r.guessed]
    if not read:
        return None
    first = read[0]
    top = max(max(r.layer_ids) for r in read)
    by_need: dict[int, list[str]] = {}
    for res in read:
        by_need.setdefault(res.layers_needed, []).append(res.runtime.name)
    needs = [f"≥ {need} layers for {', '.join(names)}" for need, names in sorted(by_need.items())]
    text = (
        f"target has {first.layers_present} layers ({t.layers_key}); "
        f"the draft taps up to layer {top}, so it needs {_and(needs)}"
    )
    if report.selection.portable_only and len(by_need) > 1:
        text += f" (≥ {max(by_need)} to run on every runtime)"
    if d.num_target_layers is not None:
        text += f"; it was trained on a {d.num_target_layers}-layer target (num_target_layers"
        text += f", base_model {', '.join(d.base_model)})" if d.base_model else ")"
    return text + "."


def strictest(report: CheckReport) -> LayerResolution | None:
    """Return the resolution with the smallest valid range (what ``portable`` must satisfy)."""
    read = (r for r in report.resolutions if not r.guessed)
    return min(read, key=lambda r: r.max_valid_id, default=None)


def where_it_works(report: CheckReport) -> str:
    """Say on which runtimes the pair works: all, none, or which ones each way.

    ``portable`` checks the runtimes that load the draft's format, so a draft that only some
    runtimes load is said to work on those, by name, not on "every runtime"."""
    t = report.target
    verdicts = report.runtime_verdicts
    named = labels(report)
    good = [named[name] for name, v in verdicts.items() if v is Verdict.COMPATIBLE]
    bad = [named[name] for name, v in verdicts.items() if v is not Verdict.COMPATIBLE]
    portable = report.selection.portable
    rows = method_rows(report.draft.method)
    everyone = portable and len(verdicts) >= len([p for p in rows if p.portable])
    # The verdict's scope ("on all 6 runtimes") leads the line (``verdict_scope``); "them" refers
    # back to it (and keeps a path from ending the sentence, glued to its full stop).
    if report.verdict is Verdict.COMPATIBLE:
        if everyone:
            return f"works with target {t.name} on each of them"
        where = f"on {_and(good)}" + (" (the runtimes that load it)" if portable else "")
        return f"works with target {t.name} {where}"
    if not good or not bad:  # none works, or --strict failed the pair on warnings
        where = "any of them" if everyone else runtime_text(report)
        return f"does not work with target {t.name} on {where}"
    return f"does not work with target {t.name} on {_and(bad)} (it works on {_and(good)})"


def verdict_scope(report: CheckReport) -> str:
    """Return how many runtimes the verdict holds on: ``on all 6 runtimes``, ``on 2 of 6
    runtimes`` (incompatible on some only); empty for one runtime, which the sentence names."""
    verdicts = list(report.runtime_verdicts.values())
    if len(verdicts) < 2:
        return ""
    bad = sum(1 for v in verdicts if v is not Verdict.COMPATIBLE)
    if report.verdict is Verdict.COMPATIBLE or bad == len(verdicts):
        return f"on all {len(verdicts)} runtimes"
    return f"on {bad} of {len(verdicts)} runtimes"


def headline_verdict(report: CheckReport) -> str:
    """Return the verdict with its scope: ``incompatible on all 6 runtimes``, ``compatible on
    all 6 runtimes (3 rules ignored: DF004, DF007, DF011)``."""
    word, text = report.verdict.value, report.verdict_text
    scope = verdict_scope(report)
    return f"{word} {scope}{text[len(word) :]}" if scope else text


def answer(report: CheckReport) -> tuple[str, list[str]]:
    """Return the verdict with its scope and the sentences that say why, for the report's
    first lines."""
    d = report.draft
    lines = [f"draft {d.name} {where_it_works(report)}."]
    # An EAGLE-3 head has no list shared by every runtime: each one's is in the feeds block.
    sentence = layer_sentence(report) if d.method != "eagle3" else None
    if d.method == "eagle3":
        if d.target_layer_ids is None:
            lines.append("The head states no layer ids; each runtime guesses.")
    elif sentence is not None:
        lines.append(sentence[0].upper() + sentence[1:])
    elif d.target_layer_ids is not None:
        lines.append(f"Draft target_layer_ids {fmt_ids(list(d.target_layer_ids))}.")
    if d.layer_ids_conversion:
        lines.append(f"In the {d.format} format, {d.layer_ids_conversion}.")
    stage = stage_sentence(report)
    if stage is not None:
        lines.append(stage)
    lines += runner_sentences(report)
    # Under --strict the verdict may rest on warnings: say so where the verdict is printed.
    return headline_verdict(report), lines


# textwrap splits at ASCII whitespace only: a no-break space keeps a short id list
# ("[1, 9, 17, 25, 33]") or a bound ("≥ 35") on one line; it is turned back into a space after.
NBSP = "\u00a0"
_GLUED = re.compile(r"\[[^\[\]]{0,40}\]|[≥≤<>=] \d|\d+ x \d+")


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """Wrap ``text`` at spaces only: no word, id, path or number is ever split.

    A token longer than the line stays whole on its own line (the terminal may fold it, but
    copy-paste and search still see it intact).
    """
    # Data is made visible before layout, so that an escaped control character is measured.
    text = _GLUED.sub(lambda m: m.group(0).replace(" ", NBSP), visible(text))
    wrapper = textwrap.TextWrapper(
        width=max(width, len(first) + 1, len(rest) + 1),
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(NBSP, " ") for line in wrapper.wrap(text)] or [first.rstrip()]
