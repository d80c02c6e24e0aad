"""Reports of a target asked about alone (``dflash-check pair TARGET``): text and JSON."""

from __future__ import annotations

import json
from typing import Any

from dflash_check.check.report import Verdict
from dflash_check.check.target_alone import MtpReport, MtpStated, fill
from dflash_check.knowledge.engines import ENGINES_BY_NAME, EngineMtp
from dflash_check.knowledge.mtp_layers import ClassDefault
from dflash_check.render.diagnostics import wrap
from dflash_check.render.json import SCHEMA_VERSION, finding_dict, target_dict


def summary_line(report: MtpReport) -> str:
    """Return the one-line answer (also the stderr summary)."""
    t, s = report.target, report.stated
    if s.layers == 0:
        return f"target {t.name} has no MTP layers: nothing to draft with (exit 1)"
    where = report.layer_names
    if report.verdict is Verdict.INCOMPATIBLE:
        return f"target {t.name}: {s.layers} MTP layer(s) stated ({s.source}) but not servable"
    held = "weights present" if report.tensors else "weights not checked"
    at = f"at {where}" if report.family else "their place not known for this family"
    return f"target {t.name}: {s.layers} MTP layer(s) ({s.source}) {at}, {held}"


def engine_dict(row: EngineMtp, stated: MtpStated, n: int) -> dict[str, Any]:
    """Return one engine's row as plain JSON data, its text filled with the k it reads."""
    own = stated.layers_of(row.engine)
    k = stated.layers if own is None else own
    d = stated.default_of(row.engine)
    return {
        "engine": row.engine,
        # The k this engine reads (null: stated nowhere and its config class not read), and
        # the class default it comes from where the config states none.
        "layers": own,
        "class_default": None if d is None else _default_dict(d),
        "draft": fill(row.draft, k, n),
        "request": fill(row.request, k, n),
        "tokens": row.tokens,
        "on_missing_weights": fill(row.on_missing, k, n),
        "citation": row.citation,
        "verified": row.verified,
    }


def _default_dict(d: ClassDefault) -> dict[str, Any]:
    return {
        "engine": d.engine,
        "class": d.config_class,
        "key": d.key,
        "value": d.default,
        "citation": d.citation,
    }


def render_mtp_json(report: MtpReport) -> str:
    """Return the JSON report (``"kind": "mtp"``)."""
    return json.dumps(mtp_dict(report), indent=2) + "\n"


def mtp_dict(report: MtpReport) -> dict[str, Any]:
    """Return the report as one JSON object (also a registry entry's ``report``)."""
    t, s, k, n = report.target, report.stated, report.stated.layers, report.target.num_hidden_layers
    tensors = report.tensors
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "mtp",
        "verdict": report.verdict.value,
        "verdict_text": summary_line(report),
        "strict": report.strict,
        "num_speculative_tokens": report.num_speculative_tokens,
        "engine_settings": report.engine_settings.stated(),
        # N null where a keyed MTP target states no layer count (its draft needs none)
        "target": target_dict(t) | ({} if t.layers_key else {"num_hidden_layers": None}),
        "mtp": {
            "layers": k,
            "key": s.key,
            "stated": {key: value for key, value in s.all_keys},
            # k from the engines' config classes when the file states no key (key null): the
            # largest of their defaults (each engine's own is in its row)
            "class_defaults": [_default_dict(d) for d in s.defaults],
            "family": report.family,
            "layer_names": report.layer_names if k else None,
        },
        "tensors": None
        if tensors is None
        else {
            "location": tensors.location,
            "expected": tensors.expected,
            "found": list(tensors.found),
            "missing": list(tensors.missing),
        },
        "tensors_note": report.tensors_note,
        "engines": [engine_dict(r, s, n) for r in report.engines],
        "findings": [finding_dict(f) for f in report.findings],
    }


def render_mtp_text(report: MtpReport, width: int = 100) -> str:
    """Return the plain-text report: the answer, what the config states, each engine, findings."""
    t, s, k, n = report.target, report.stated, report.stated.layers, report.target.num_hidden_layers
    mark = "✓" if report.verdict is Verdict.COMPATIBLE else "✗"
    lines = [f"{mark} {summary_line(report)}", ""]
    shown_n = n if t.layers_key else "not stated"
    lines.append(
        f"Target      {t.name} ({', '.join(t.architectures) or t.model_type}), N = {shown_n}"
    )
    # The flags a finding was judged with (DF045, DF060, DF061 read SGLang's own).
    settings = report.engine_settings.text()
    if settings:
        lines.append(f"Settings    {settings}")
    if s.all_keys:
        stated = ", ".join(f"{key} = {value}" for key, value in s.all_keys)
        lines.append(f"MTP config  {stated}")
    elif s.defaults:
        lines.append(f"MTP config  {s.defaults[0].key} not stated: each engine's config class")
        lines.append("            defaults it (its row below)")
    if k:
        lines.append(f"MTP layers  {report.layer_names}  ({report.family or 'family not known'})")
        tensors = report.tensors
        if tensors is None:
            lines.append(f"Weights     {report.tensors_note}")
        elif tensors.missing:
            lines.append(
                f"Weights     missing from {tensors.location} (expected {tensors.expected})"
            )
        else:
            lines.append(f"Weights     present in {tensors.location}")
    for row in report.engines:
        # Each engine titled as the engine table titles it (a new MTP row needs no title here).
        title = ENGINES_BY_NAME[row.engine].title
        lines += ["", f"{title}{'' if row.verified else ' (not verified)'}"]
        own = s.layers_of(row.engine)
        k_row = k if own is None else own
        if s.defaults:  # k is no stated count: say which this engine reads, and why
            d = s.default_of(row.engine)
            said = (
                f"{own}: {d.config_class}'s default ({d.citation})"
                if d is not None
                else "not read: its config class for this model type was not read"
            )
            lines.append(f"  layers    {said}")
        lines.append(f"  draft     {fill(row.draft, k_row, n)}")
        lines.append(f"  ask with  {fill(row.request, k_row, n)}")
        lines.append(f"  tokens    {row.tokens}")
        lines.append(f"  missing   {fill(row.on_missing, k_row, n)}")
        lines.append(f"  source    {row.citation}")
    for f in report.findings:  # the pair report's layout: severity[ID]: message, = help: fix
        engine = ENGINES_BY_NAME.get(f.runtime or "")
        where = f" ({engine.title})" if engine is not None else ""
        lines.append("")
        lines += wrap(f"{f.severity.value}[{f.rule}]{where}: {f.message}", width, "", "  ")
        lines += wrap(f"= help: {f.hint}", width, "   ", "     ")
    out: list[str] = []
    for line in lines:  # any line past the width wraps at spaces, under its own indent
        indent = " " * (len(line) - len(line.lstrip()))
        out += wrap(line.strip(), width, indent, indent + "  ") if len(line) > width else [line]
    return "\n".join(out) + "\n"
