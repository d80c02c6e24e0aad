"""Generate docs/conformance.md from conformance/results/*.json (``--report-only`` reruns it).

The page is data plus the notes below: every disagreement between an engine and dflash-check
needs a note (the generator marks one without it as unexplained), and notes may add what a
matching verdict hides (a different failure stage, a silent collapse).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.cases import CASES
from conformance.classify import COLLAPSED_TAU
from conformance.engines import ENGINES

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "conformance" / "results"
PAGE = REPO / "docs" / "conformance.md"

NOTES_FILE = REPO / "conformance" / "notes.json"
_NOTES = json.loads(NOTES_FILE.read_text())
NOTES: dict[tuple[str, str], str] = {
    (engine, case): text
    for engine, cases in _NOTES["cases"].items()
    for case, text in cases.items()
}
"""(engine, case) -> what the row means beyond its verdict: every disagreement's explanation,
and stage details a matching verdict hides. Written from what the recorded runs showed."""
NOT_RUN: dict[str, str] = _NOTES["not_run"]
MISSING_CASES: str = _NOTES["missing_cases"]
"""engine -> why it has no recorded results."""

OUTCOME_TEXT = {
    "generates": "generates",
    "collapsed": "runs, acceptance collapsed",
    "refused": "refused at config/load",
    "first-decode": "fails at the first decode",
}


def load_results(folder: Path = RESULTS) -> list[dict[str, Any]]:
    """Return every real-engine results file's data, sorted by engine (``bundled-tau.json``,
    the bundled runtime's taus on the same cases, is not an engine's run)."""
    data = (json.loads(p.read_text()) for p in folder.glob("*.json"))
    return sorted((d for d in data if "engine" in d), key=lambda d: (d["engine"], d["release"]))


def _cell(text: Any) -> str:
    """Return a table cell: no pipes or newlines, long errors shortened."""
    value = "" if text is None else str(text)
    value = value.replace("|", "\\|").replace("\n", " ")
    return value if len(value) <= 160 else value[:159] + "…"


def engine_section(data: Mapping[str, Any], notes: Mapping[tuple[str, str], str]) -> list[str]:
    """Return the page section of one results file."""
    rows: Sequence[Mapping[str, Any]] = data["results"]
    agreed = sum(1 for r in rows if r["agree"])
    staged = [r for r in rows if r.get("stage_agree") is not None]
    stages = (
        f" Stages agree on **{sum(1 for r in staged if r['stage_agree'])} of {len(staged)}** "
        "cases where both verdicts say incompatible (the tool's earliest error stage against "
        "the one the engine showed: refused = load, failed request = first-decode, decoded = "
        "silent)."
        if staged
        else ""
    )
    lines = [
        f"## {data['distribution']} {data['release']}",
        "",
        f"Ran {data['date']} on {data['machine']}; runner: {data['runner']}; compared with "
        f"`dflash-check pair DRAFT TARGET -r {data['tool_runtime']} --format json`. "
        f"Verdicts agree on **{agreed} of {len(rows)}** cases.{stages}",
        "",
        "| case | varied | engine did | tau | lossless | engine error | dflash-check | agree "
        "| tool stage | stage agrees |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    yes_no = {True: "yes", False: "**no**", None: "n/a"}
    for r in rows:
        lossless = {True: "yes", False: "no", None: ""}[r["lossless"]]
        lines.append(
            f"| {r['case']} | {_cell(r['rule'])} | {OUTCOME_TEXT[r['outcome']]} | "
            f"{'' if r['tau'] is None else r['tau']} | {lossless} | {_cell(r['engine_error'])} | "
            f"{r['tool_verdict']}{': ' + _cell(r['tool_finding']) if r['tool_finding'] else ''}"
            f" | {yes_no[r['agree']]} | {r.get('tool_stage') or ''} | "
            f"{yes_no[r.get('stage_agree')] if 'stage_agree' in r else ''} |"
        )
    explained = [
        (r["case"], notes.get((data["engine"], r["case"])))
        for r in rows
        if r["agree"] is False
        or r.get("stage_agree") is False
        or (data["engine"], r["case"]) in notes
    ]
    if explained:
        lines += ["", "Notes:", ""]
        for case, note in explained:
            lines.append(f"* **{case}**: {note or 'UNEXPLAINED disagreement.'}")
    return [*lines, ""]


SERVED = RESULTS / "served"
"""The engine smoke run against real servers (``python -m conformance.served``)."""


def load_served(folder: Path = SERVED) -> list[dict[str, Any]]:
    """Return every served-run results file's data, sorted by engine."""
    return sorted(
        (json.loads(p.read_text()) for p in folder.glob("*.json")),
        key=lambda d: (d["engine"], d["release"]),
    )


def served_section(data: Mapping[str, Any]) -> list[str]:
    """Return the page section of one served run: per step, what was judged and decided."""
    lines = [
        f"## {data['distribution']} {data['release']} as a server",
        "",
        f"Ran {data['date']} on {data['machine']} with `python -m conformance.served`: the "
        f"target alone (the lossless baseline) and the pair served with the printed command "
        f"`{data['printed_command']}` (plus `{' '.join(data['engine_args'])}`, dev mode), then "
        "`--launch`. *other*: the same config with other weights; *twin*: that draft in a "
        "folder named like the served one. *judged as*: the vLLM rows of the verdict (the "
        "server's release and runner are the pinned row; a `vllm` row at the newest release "
        "beside it is what the default selection kept before the served row replaced the "
        "engine's default row, app/served.py).",
        "",
        "| step | dflash-check in | exit (expected) | judged as | smoke run | tau (server's) "
        "| lossless | served draft known by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["steps"]:
        judged = ", ".join(
            f"{name}: {rel} {runner}"
            for name, (rel, runner) in r.get("runners", {}).items()
            if runner
        )
        passed = {True: "passed", False: "FAILED", None: ""}[r.get("smoke_passed")]
        tau = "" if r.get("tau") is None else f"{r['tau']:.2f}"
        if r.get("server_tau") is not None:
            tau += f" ({r['server_tau']})"
        lossless = {True: "yes", False: "no", None: ""}[r.get("lossless")]
        said = "" if r.get("smoke_passed") is not None else _cell(" / ".join(r.get("stderr", [])))
        lines.append(
            f"| {r['step']} | {r['environment']} | {r['exit']} ({r['expect_exit']}) | "
            f"{judged} | {passed or said} | {tau} | {lossless} | {r.get('draft_evidence') or ''} |"
        )
    return [*lines, ""]


def render_page(results: Sequence[Mapping[str, Any]], notes: Mapping[tuple[str, str], str]) -> str:
    """Return docs/conformance.md."""
    ran = {d["engine"] for d in results}
    out = [
        "# Conformance: dflash-check's verdicts against real engines",
        "",
        "<!-- Generated by `conformance/run ENGINE` (or `--report-only`) from "
        "conformance/results/*.json; do not edit. -->",
        "",
        "Each case is a tiny pair built at run time from the project's trained pair "
        "(tests/fixtures/tiny: a 6-layer Qwen3 target, N = 6, and a DFlash draft trained on its "
        "layers 1 and 3, block 8), widened to head_dim 32 (vLLM's CPU attention has no head_dim "
        "16 kernel) without changing what it computes. Each case changes one thing "
        "(conformance/cases.py). The engine runs it; the outcome is classified from what it "
        "did: *generates* (tau from the engine's own counters), *runs, acceptance collapsed* "
        f"(a case that keeps the trained layers' meaning, below tau {COLLAPSED_TAU:g}), "
        "*refused at config/load*, or *fails at the first decode* (a server would already "
        "report healthy). dflash-check agrees when it says compatible exactly for the pairs "
        "that generate. *lossless*: the same greedy tokens as the target alone in the same "
        "engine (only meaningful where the draft is served as trained).",
        "",
        "Run one engine with `conformance/run vllm` (or "
        + ", ".join(f"`{name}`" for name in sorted(ENGINES) if name != "vllm")
        + "): it installs the engine into its own virtual environment under "
        "`$DFLASH_CONFORMANCE_HOME` (default "
        "`~/.cache/dflash-check-conformance`), builds the pairs there, runs every case niced "
        "and rewrites its results file and this page. It is not part of `.ci/run` or the "
        "default tests; `tests/unit/conformance/test_classify.py` checks the classification, the "
        "comparison and this page against the recorded results without any engine. The runtime "
        "rows a run confirmed say so in `dflash-check runtimes` and docs/runtimes.md "
        "(`dflash_check/knowledge/verified.py`, checked against these results by "
        "`tests/unit/knowledge/test_verified.py`). A run kept with `--keep` leaves each case's "
        "pair behind; `python -m conformance.recorded_pairs FOLDER...` copies their configs and "
        "safetensors headers (no weights) to tests/fixtures/conformance, and "
        "`tests/unit/conformance/test_recorded_pairs.py` re-judges every recorded row with "
        "today's tool: a change of knowledge that moves a verdict, its first rule or its stage "
        "away from what the engine did fails there.",
        "",
        "`dflash-mlx` is bstnxbt's runtime for Apple Silicon; it imports and runs on Linux with "
        "`mlx[cpu]`, so its cases run here on the CPU through its own `dflash generate` code "
        "path (`conformance/drivers/dflash_mlx_driver.py`). It reads `block_size` at the top "
        "level only, so its base draft gets one there and `block-size-nested` tests the draft "
        "as z-lab's Qwen3.5 drafts state it.",
        "",
        "`llamacpp` builds `llama-speculative-simple` and `llama-simple` with cmake from the "
        "llama.cpp vendored in the llama-cpp-python 0.3.36 sdist (`0c1e57098`) and converts each "
        "pair with that tree's own `convert_hf_to_gguf.py`. The converter refuses the tiny "
        "pair's word-level `tokenizer.json`, so the run writes a SentencePiece `tokenizer.model` "
        "with exactly the same ids next to the target (`conformance/build.py`, "
        "`sentencepiece_model`), which the converter prefers for Qwen models. An abort's stage "
        "comes from its backtrace: at load when it passes through what a server runs before it "
        "reports healthy (creating the speculative implementation), else at the first decode "
        "(`conformance/drivers/llamacpp_driver.py`).",
        "",
        MISSING_CASES,
        "",
        "| engine | release | install | status |",
        "|---|---|---|---|",
    ]
    for name, engine in sorted(ENGINES.items()):
        done = next((d for d in results if d["engine"] == name), None)
        status = (
            f"ran {done['date']} ({len(done['results'])} cases)"
            if done
            else f"not run (below); the command is in place: `conformance/run {name}`"
        )
        out.append(
            f"| {name} | {engine.distribution} {engine.release} | {engine.size} | {status} |"
        )
    out.append("")
    for data in results:
        out += engine_section(data, notes)
    for data in load_served():
        out += served_section(data)
    missing = sorted(set(ENGINES) - ran)
    if missing:
        out += ["## Not run", ""]
        for m in missing:
            cases = ", ".join(c.id for c in CASES if m in c.engines)
            why = NOT_RUN.get(m, "not run yet.")
            out += [f"* **{ENGINES[m].distribution} {ENGINES[m].release}**: {why} Cases: {cases}."]
        out.append("")
    return "\n".join(out)


def write_page() -> Path:
    """Regenerate docs/conformance.md from the recorded results."""
    PAGE.write_text(render_page(load_results(), NOTES))
    print(f"wrote {PAGE.relative_to(REPO)}")
    return PAGE
