"""JUnit XML: one test case per pair, as CI test-report widgets read it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from typing import TYPE_CHECKING

from dflash_check.check.outcome import PairOutcome, RunResult
from dflash_check.check.report import Severity
from dflash_check.render.annotations import collect_annotations
from dflash_check.render.locations import expectation_text, smoke_text
from dflash_check.sanitize import xml_text

if TYPE_CHECKING:
    from dflash_check.render import Page


def case_name(outcome: PairOutcome, seen: Counter[str]) -> str:
    """Return a test case's name: the pair, and for a pair listed more than once (one entry
    per runtime) its runtimes and line too, so that test-report widgets keep them apart."""
    spec = outcome.spec
    if seen[outcome.label] < 2 or spec is None:
        return outcome.label
    return f"{outcome.label} [{', '.join(spec.runtimes)}] (line {spec.line})"


def render_junit(result: RunResult, page: Page | None = None) -> str:
    """Render a run as a JUnit XML document (no timings: output is reproducible).

    A document: ``page`` (a width) is not used; it is there to be a ``Renderer``.
    """
    name = xml_text(result.file or "dflash-check pair")
    failures = result.count("mismatch") + (
        sum(
            1
            for o in result.outcomes
            if o.status == "ok"
            and o.report is not None
            and result.strict
            and o.report.count(Severity.WARNING)
        )
    )
    errors = result.count("error") + len(result.problems)
    tests = str(len(result.outcomes) + len(result.skipped) + len(result.problems))
    suites = ET.Element(
        "testsuites",
        name="dflash-check",
        tests=tests,
        failures=str(failures),
        errors=str(errors),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=name,
        tests=tests,
        failures=str(failures),
        errors=str(errors),
        skipped=str(len(result.skipped)),
    )
    by_outcome: dict[int, list[str]] = {}
    for a in collect_annotations(result):
        level = f"{a.level.value} (ignored)" if a.suppressed else a.level.value
        by_outcome.setdefault(id(a.outcome), []).append(f"{a.rule} {level}: {a.text}")
    for p in result.problems:  # a broken input file: one error case per mistake, at its line
        attrs = {"classname": name, "name": xml_text(f"{p.where}: invalid input"), "file": p.file}
        if p.line is not None:
            attrs["line"] = str(p.line)
        case = ET.SubElement(suite, "testcase", attrs)
        ET.SubElement(case, "error", message=xml_text(p.message), type="invalid input")
    seen = Counter(o.label for o in result.outcomes)
    for outcome in result.outcomes:
        attrs = {"classname": name, "name": xml_text(case_name(outcome, seen))}
        if outcome.spec is not None and result.file is not None:
            attrs.update(file=name, line=str(outcome.spec.line))
        case = ET.SubElement(suite, "testcase", attrs)
        settings = outcome.engine_settings.text()
        if settings is not None:
            # A test case's own properties (as pytest's record_property writes them): the
            # engine settings its verdict was judged with.
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="engine_settings", value=xml_text(settings))
        details = xml_text("\n".join(by_outcome.get(id(outcome), [])))
        if outcome.status == "error":
            node = ET.SubElement(
                case, "error", message=xml_text(expectation_text(outcome)), type="DF091"
            )
            node.text = details
        elif outcome.status == "mismatch" or (
            result.strict and outcome.report is not None and outcome.report.count(Severity.WARNING)
        ):
            rule = "DF092" if smoke_text(outcome) is not None else "DF090"
            node = ET.SubElement(
                case, "failure", message=xml_text(expectation_text(outcome)), type=rule
            )
            node.text = details
        elif details:
            ET.SubElement(case, "system-out").text = details
    for k in result.skipped:  # an engine test entry the tool does not check
        attrs = {"classname": name, "name": f"{k.key}: {k.label}"}
        if result.file is not None:
            attrs.update(file=result.file, line=str(k.line))
        case = ET.SubElement(suite, "testcase", attrs)
        ET.SubElement(case, "skipped", message=f"not checked: {k.reason}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
