"""The pairs a real-engine run judged, as the tool reads them: each case's draft and target
config and the draft's safetensors header (names, dtypes, shapes; no weights), so that the unit
tests can re-judge every recorded row with today's tool and fail when a verdict or stage moves
away from what the engine was recorded doing (``tests/unit/conformance/test_recorded_pairs.py``).

``python -m conformance.recorded_pairs FOLDER...`` reads the folders a run kept (``conformance/run
ENGINE --keep``: one sub-folder per case with ``spec.json`` and ``draft/``) and writes
``tests/fixtures/conformance/<distribution>-<release>.json`` for the engine (default vllm). A
later folder's case replaces an earlier one's, as a partial rerun replaces its rows.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import Any

from conformance.build import REPO
from conformance.engines import ENGINES

FIXTURES = REPO / "tests" / "fixtures" / "conformance"


def header(path: Path) -> dict[str, list[Any]]:
    """Return a safetensors file's tensors as name -> [dtype, shape] (the header alone)."""
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        entries = json.loads(f.read(size))
    return {
        name: [entry["dtype"], entry["shape"]]
        for name, entry in sorted(entries.items())
        if name != "__metadata__"
    }


def config(folder: Path) -> dict[str, Any]:
    """Return a model folder's config.json."""
    return json.loads((folder / "config.json").read_text())


def record_case(case: Path) -> dict[str, Any]:
    """Return one kept case folder as the tool reads it."""
    spec = json.loads((case / "spec.json").read_text())
    draft = case / "draft"
    return {
        "draft": config(draft),
        "draft_tensors": header(draft / "model.safetensors"),
        "target": config(Path(spec["target"])),
        "num_speculative_tokens": spec["num_speculative_tokens"],
    }


def collect(folders: list[Path]) -> dict[str, dict[str, Any]]:
    """Return case id -> its recorded pair, the later folders' cases winning."""
    cases: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for case in sorted(p.parent for p in folder.glob("*/spec.json")):
            if (case / "draft" / "model.safetensors").exists():
                cases[case.name] = record_case(case)
    return cases


def main(argv: list[str] | None = None) -> int:
    """Write the fixture of the engine's recorded pairs from kept run folders."""
    parser = argparse.ArgumentParser(prog="python -m conformance.recorded_pairs")
    parser.add_argument("folders", nargs="+", type=Path, help="folders kept by run --keep")
    parser.add_argument("--engine", default="vllm", choices=sorted(ENGINES))
    args = parser.parse_args(argv)
    engine = ENGINES[args.engine]
    cases = collect(args.folders)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path = FIXTURES / f"{engine.slug}.json"
    path.write_text(json.dumps({"engine": engine.name, "cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} pairs to {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
