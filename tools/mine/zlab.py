"""z-lab dflash's own tests, as cases for its reference runtime (issue 29, item 1).

``python tools/mine/zlab.py SRC [--results FILE]``, with a Python where ``dflash`` 0.1.0 is
installed (the package the tool's ``reference==0.1.0`` runtime was read from), writes
``conformance/mined/reference-0.1.0.json`` and its coverage page. Neither the 0.1.0 sdist nor
the ``fetch`` snapshot of ``z-lab/dflash`` (``44947fb``, 2026-04-26) has tests; the index holds
a later ``tests/`` (``READ``), kept in SRC. FILE is ``pytest -rA`` output of SRC's
``tests/test_model.py`` against the installed 0.1.0. The ids a case expects are computed by
0.1.0's own ``build_target_layer_ids`` (the function the test calls). A maintainer's tool.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# The repository root, in place of this folder, as the other miners do.
sys.path[0] = str(Path(__file__).resolve().parents[2])

from tools.mine.coverage import (  # noqa: E402
    REPO,
    Page,
    line_of,
    pytest_outcomes,
    tests_in,
    write,
)

ENGINE, RELEASE = "reference", "0.1.0"
"""The tool's runtime name for z-lab dflash (transformers), and the package release."""
TESTS = "tests/test_model.py"
READ = {TESTS: "71b113c1963622310efbd551e0d4151d2e0a17ef"}
ZLAB_DRAFT = "tests/fixtures/hub/z-lab/Qwen3-8B-DFlash-b16"
QWEN3_8B = "tests/fixtures/targets/Qwen--Qwen3-8B"
MODEL = "dflash==0.1.0:dflash/model.py"
FORMULA: tuple[tuple[str, str, int, int], ...] = (
    ("test_build_target_layer_ids_single_draft_layer", "zlab-no-ids-1-layer-of-24", 24, 1),
    ("test_build_target_layer_ids_endpoints_for_two_draft_layers", "zlab-no-ids-2-layers-of-64",
     64, 2),
    ("test_build_target_layer_ids_evenly_interpolates", "zlab-no-ids-4-layers-of-64", 64, 4),
)  # fmt: skip
"""(test, case id, num_target_layers, num_draft_layers): the test's numbers for a draft
without ids, which 0.1.0 then guesses (``DFlashDraftModel.__init__``, model.py:560-564)."""


def _draft(**edit: Any) -> dict[str, Any]:
    """The z-lab Qwen3-8B b16 draft with the test's numbers: its ids dropped where the test
    has none, its layers cut to the test's draft depth."""
    draft = json.loads((REPO / ZLAB_DRAFT / "config.json").read_text())
    layers = edit.pop("num_hidden_layers", None)
    if layers is not None:
        draft["num_hidden_layers"] = layers
        draft["layer_types"] = draft["layer_types"][:1] * layers
    ids = edit.pop("target_layer_ids", None)
    if ids is None:
        del draft["dflash_config"]["target_layer_ids"]
    else:
        draft["dflash_config"]["target_layer_ids"] = ids
    return {**draft, **edit}


def _target(layers: int | None = None) -> dict[str, Any]:
    # Qwen3-8B (hidden 4096, as the draft) with the test's layer count where it gives one.
    target = json.loads((REPO / QWEN3_8B / "config.json").read_text())
    return target if layers is None else {**target, "num_hidden_layers": layers}


def cases(src: Path) -> list[dict[str, Any]]:
    """The cases, with the ids 0.1.0's ``build_target_layer_ids`` returns for the test's
    numbers."""
    from dflash.model import build_target_layer_ids

    source = f"z-lab/dflash@{READ[TESTS][:9]}:{TESTS}"
    common = {"method": "dflash", "num_speculative_tokens": 15, "expect": "accepted",
              "expect_stage": None, "expect_match": None}  # fmt: skip
    out = []
    for name, case_id, target_layers, draft_layers in FORMULA:
        out.append(
            {
                "id": case_id, "test": f"{TESTS}::{name}",
                "source": f"{source}:{line_of(src, TESTS, name)}",
                "release_check": f"{MODEL}:25-34, 560-564", **common,
                "target": _target(target_layers),
                "draft": _draft(num_hidden_layers=draft_layers, num_target_layers=target_layers),
                "expect_target_layer_ids": build_target_layer_ids(target_layers, draft_layers),
            }
        )  # fmt: skip
    name = "test_extract_context_feature_concatenates_offset_layers"
    out.append(
        {
            "id": "zlab-ids-0-2-4-read-hidden-states-1-3-5", "test": f"{TESTS}::{name}",
            "source": f"{source}:{line_of(src, TESTS, name)}",
            "release_check": f"{MODEL}:37-43", **common,
            "target": QWEN3_8B, "draft": _draft(target_layer_ids=[0, 2, 4]),
            # hidden_states[t + 1] for each id t: the aux layers in vLLM's numbering.
            "expect_aux_layers": [1, 3, 5],
        }
    )  # fmt: skip
    return out


REVIEWED = {
    f"{TESTS}::{t}": "token sampling, no draft/target config"
    for t in (
        "test_sample_temperature_zero_is_argmax",
        "test_sample_with_temperature_returns_in_range",
    )
} | {
    f"{TESTS}::{t}": "the generate loop's stop-token scan, with helpers the test defines (no "
    "dflash code): no draft/target config"
    for t in (
        "test_stop_token_check_does_not_scan_uninitialized_buffer",
        "test_stop_token_check_detects_real_stop_after_cursor_advance",
    )
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mine/zlab.py")
    parser.add_argument("src", type=Path, help="holds tests/test_model.py at READ's commit")
    parser.add_argument("--results", type=Path, help="pytest -rA output of it against 0.1.0")
    args = parser.parse_args(argv)
    # The two stop-token tests are left out: SRC elides their bodies (they call no dflash code).
    command = f"python -m pytest -rA {TESTS}"
    run = pytest_outcomes(args.results, command, skip="stop_token") if args.results else None
    outcome = {r["test"]: r["outcome"] for r in (run or {}).get("records", [])}
    found = cases(args.src)
    passed = sum(outcome.get(c["test"]) == "passed" for c in found)
    read = (
        f"Read from the index's `z-lab/dflash` `{TESTS}` @ `{READ[TESTS][:9]}` (neither the "
        "0.1.0 sdist nor the `fetch` snapshot `44947fb` has tests). Run against the installed "
        f"dflash 0.1.0: the tests of {passed} of the {len(found)} cases passed "
        "(`engine_tests` in the cases file)."
    )
    not_read = (
        "- `tests/test_muse_glimmer_adapter.py`, `tests/test_benchmark.py`, "
        "`tests/test_package.py` (the index's versions): not read; 0.1.0's `dflash/model.py` "
        "has no Muse adapter.",
    )
    page = Page(ENGINE, RELEASE, "python tools/mine/zlab.py SRC --results FILE", read, not_read)
    for path in write(page, found, list(tests_in(args.src, TESTS)), REVIEWED, run):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
