"""speculators 0.9.0's own tests about draft configs, as cases (issue 29, item 1).

``python tools/mine/speculators.py SRC [--results FILE]``, run with a Python where speculators
0.9.0 is installed (its wheel; CPU torch), writes ``conformance/mined/speculators-0.9.0.json``
and its coverage page. SRC is ``tests/`` of ``vllm-project/speculators`` at ``COMMIT`` (the
newest snapshot ``fetch`` has, 2026-08-20; neither the 0.9.0 sdist nor wheel carries the tests,
and the snapshot has no 0.9.0 tag). FILE is ``pytest -rA`` output of those tests run against
the 0.9.0 wheel (``ENGINE_TESTS``): the outcome of each test's own run is recorded.

speculators is no serving engine: its cases are conversions. A case's ``draft`` is the source
checkpoint's config as the test writes it, its ``target`` the verifier (the corpus config the
test names, with the keys the test mocks); ``expect`` is whether the 0.9.0 converter accepts it
(stage ``convert``), and an accepted case records the converter's output as 0.9.0 writes it
(``expect_converted``: this script runs the release's converter with the test's mock), which
``tests/unit/conformance/test_mined_agreement.py`` reads with the tool. A maintainer's tool.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any
from unittest.mock import patch

# The repository root, in place of this folder: tools/mine/speculators.py must not shadow
# the installed package of that name.
sys.path[0] = str(Path(__file__).resolve().parents[2])

from tools.mine.coverage import (  # noqa: E402
    REPO,
    Page,
    all_tests,
    line_of,
    pytest_outcomes,
    relevant_tests,
    write,
)

ENGINE, RELEASE = "speculators", "0.9.0"
COMMIT = "c05b95b303f7d4f21e8d7624e0ffa1c2d9b4d73b"
ENGINE_TESTS = (
    "HF_HUB_OFFLINE=1 python -m pytest -rA -o addopts= tests/unit/convert tests/unit/test_config.py"
    " tests/unit/models/test_dflash_targets.py tests/unit/models/test_dflash_utils.py"
    " tests/unit/models/test_mtp_config.py"
)
"""Run from SRC's parent with speculators 0.9.0 installed (``--results`` reads its output)."""
RELEVANT = re.compile(
    r"aux_hidden_state_layer_ids|target_layer_ids|draft_vocab_size|target_vocab_size"
    r"|VerifierConfig|verifier_config|speculative_tokens|mask_token_id"
)
"""A test is listed when its source names a key that ties a draft to its target (the aux
layers, the vocabularies, the verifier, the draft length, the mask token)."""
QWEN3_8B = "tests/fixtures/targets/Qwen--Qwen3-8B"
LLAMA_31_8B = "tests/fixtures/hub/meta-llama/Llama-3.1-8B-Instruct"
DFLASH = "tests/unit/convert/test_dflash_converter.py"
EAGLE3 = "tests/unit/convert/test_eagle3_converter.py"
CONVERTER = "speculators==0.9.0:speculators/convert/dflash/converter.py"
EAGLE3_CONVERTER = "speculators==0.9.0:speculators/convert/eagle/eagle3_converter.py"


def _source(**overrides: Any) -> dict[str, Any]:
    # _source_config() of test_dflash_converter.py, written out: z-lab's Qwen3-8B-DFlash-b16.
    config = {
        "model_type": "qwen3", "architectures": ["DFlashDraftModel"],
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"}, "block_size": 16,
        "num_target_layers": 36,
        "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288,
        "num_hidden_layers": 5, "num_attention_heads": 32, "num_key_value_heads": 8,
        "head_dim": 128,
    }  # fmt: skip
    config.update(overrides)
    return config


def _verifier(path: str, mocked: dict[str, Any]) -> dict[str, Any]:
    """The corpus config the test names, with the keys its mock returns (the test mocks only
    what the converter reads)."""
    return {**json.loads((REPO / path / "config.json").read_text()), **mocked}


DFLASH_ROWS: tuple[tuple[str, str, dict[str, Any], dict[str, Any], list[int] | None, str | None,
                         str], ...] = (
    ("test_happy_path", "dflash-convert-qwen3-8b", _source(),
     {"hidden_size": 4096, "num_hidden_layers": 36, "architectures": ["Qwen3ForCausalLM"]},
     None, None, f"{CONVERTER}:110-126"),
    ("test_excludes_last_verifier_layer", "dflash-convert-drops-id-at-last-layer", _source(),
     {"hidden_size": 4096, "num_hidden_layers": 34, "architectures": ["Qwen3ForCausalLM"]},
     None, None, f"{CONVERTER}:123-126"),
    ("test_explicit_aux_layer_ids_override", "dflash-convert-explicit-aux-ids", _source(),
     {"hidden_size": 4096}, [3, 11, 19], None, f"{CONVERTER}:110"),
    ("test_hidden_size_mismatch_raises", "dflash-convert-hidden-size-mismatch", _source(),
     {"hidden_size": 2048}, None, "Architecture mismatch", f"{CONVERTER}:101-108"),
    ("test_missing_target_layer_ids_raises", "dflash-convert-no-target-layer-ids",
     _source(dflash_config={"mask_token_id": 151669}),
     {"hidden_size": 4096, "num_hidden_layers": 36}, None, "target_layer_ids",
     f"{CONVERTER}:111-116"),
)  # fmt: skip
"""(test of ``TestBuildConfig``, case id, source config, the verifier config the test mocks,
the ``aux_hidden_state_layer_ids`` argument, the message ``pytest.raises`` matches, where 0.9.0
gives the verdict). The verifier is Qwen3-8B (the test names ``Qwen/Qwen3-8B``; the two tests
naming ``some/model`` or mocking only ``hidden_size`` get Qwen3-8B with the mocked keys)."""

_EAGLE3_SOURCE = {"target_vocab_size": 128000, "hidden_size": 4096, "draft_vocab_size": 32000}
EAGLE3_ROWS: tuple[tuple[str, str, list[int] | None], ...] = (
    ("test_eagle_aux_hidden_state_layer_ids_parameter", "eagle3-convert-no-aux-ids", None),
    ("test_eagle_aux_hidden_state_layer_ids_in_config_serialization",
     "eagle3-convert-aux-ids-1-23-44", [1, 23, 44]),
)  # fmt: skip
"""(test of ``TestEagle3ConverterFixes``, case id, ``eagle_aux_hidden_state_layer_ids``): the
test's minimal EAGLE-3 config converted for ``meta-llama/Llama-3.1-8B-Instruct`` (the verifier
mock returns only ``max_position_embeddings``). ``[1, 23, 44]`` names a layer the 32-layer
Llama does not have: the converter checks no range."""


def _convert_dflash(source: dict, mocked: dict, aux: list[int] | None) -> dict[str, Any]:
    """The 0.9.0 converter's config for the test's inputs (its mock, as the test patches it)."""
    from speculators.convert.dflash.converter import DFlashConverter

    target = "speculators.convert.dflash.converter.PretrainedConfig.get_config_dict"
    with patch(target, return_value=(copy.deepcopy(mocked), None)):
        return (
            DFlashConverter()._build_config(copy.deepcopy(source), "Qwen/Qwen3-8B", aux).to_dict()
        )


def _convert_eagle3(aux: list[int] | None) -> dict[str, Any]:
    from speculators.convert.eagle.eagle3_converter import Eagle3Converter

    target = "speculators.convert.eagle.eagle3_converter.PretrainedConfig.get_config_dict"
    with patch(target, return_value=({"max_position_embeddings": 131072}, None)):
        config = Eagle3Converter()._build_eagle3_speculator_config(
            dict(_EAGLE3_SOURCE), "meta-llama/Llama-3.1-8B-Instruct",
            norm_before_residual=False, eagle_aux_hidden_state_layer_ids=aux,
        )  # fmt: skip
    return config.to_dict()


def _cite(src: Path, path: str, test: str) -> str:
    return f"vllm-project/speculators@{COMMIT[:9]}:{path}:{line_of(src, path, test)}"


def _case(**fields: Any) -> dict[str, Any]:
    return {
        "method": "dflash", "num_speculative_tokens": 15, "expect_stage": None,
        "expect_match": None, **fields,
    }  # fmt: skip


def cases(src: Path) -> list[dict[str, Any]]:
    """The converter cases, each with 0.9.0's output where it accepts."""
    out = []
    for name, case_id, source, mocked, aux, match, check in DFLASH_ROWS:
        test = f"TestBuildConfig::{name}"
        refused = match is not None
        out.append(
            _case(
                id=case_id, test=f"{DFLASH}::{test}",
                source=_cite(src, DFLASH, test),
                release_check=check, target=_verifier(QWEN3_8B, mocked), draft=source,
                convert_args={"aux_hidden_state_layer_ids": aux},
                expect="refused" if refused else "accepted",
                expect_stage="convert" if refused else None, expect_match=match,
                expect_converted=None if refused else _convert_dflash(source, mocked, aux),
            )
        )  # fmt: skip
    for name, case_id, aux in EAGLE3_ROWS:
        test = f"TestEagle3ConverterFixes::{name}"
        out.append(
            _case(
                id=case_id, test=f"{EAGLE3}::{test}",
                source=_cite(src, EAGLE3, test),
                release_check=f"{EAGLE3_CONVERTER}:118-146",
                method="eagle3", num_speculative_tokens=3,
                target=_verifier(LLAMA_31_8B, {}), draft=dict(_EAGLE3_SOURCE),
                convert_args={"eagle_aux_hidden_state_layer_ids": aux}, expect="accepted",
                expect_converted=_convert_eagle3(aux),
            )
        )  # fmt: skip
    return out


_NO_PAIR = "no draft/target config verdict: "
FILE_REASONS: dict[str, str] = {
    "tests/unit/convert/test_dflash_converter.py": _NO_PAIR
    + "weight remapping and rope parameters of the converted draft (tiny stand-in sizes)",
    "tests/unit/convert/test_eagle3_converter.py": _NO_PAIR
    + "the converted head's transformer config (max_position_embeddings, layer count, rope) "
    "and its structure",
    "tests/unit/convert/test_eagle_utils.py": _NO_PAIR
    + "checkpoint download, config and weight loading helpers",
    "tests/unit/convert/test_mtp_converter.py": _NO_PAIR
    + "MTP extraction from a verifier checkpoint (weights and their names)",
    "tests/unit/convert/test_entrypoints.py": _NO_PAIR + "the convert command's dispatch",
    "tests/unit/test_config.py": _NO_PAIR
    + "speculators' own config classes (registry, marshalling, verifier architectures)",
    "tests/unit/models/test_mtp_config.py": _NO_PAIR
    + "the MTP speculator config's construction and serialisation",
    **dict.fromkeys(
        (
            "tests/e2e/hs_connectors/test_mooncake_online_training.py",
            "tests/e2e/regression/test_eagle3_conversion_acceptance.py",
            "tests/e2e/regression/test_mtp_online_acceptance.py",
            "tests/e2e/regression/test_training_only_acceptance.py",
            "tests/e2e/smoke/test_mtp_conversion_roundtrip.py",
            "tests/e2e/smoke/test_mtp_finetuning.py",
            "tests/e2e/smoke/test_offline_training.py",
        ),
        _NO_PAIR + "GPU training or vLLM serving of Hub checkpoints; no config written out",
    ),
    "tests/integration/test_config.py": _NO_PAIR + "a verifier config read from the Hub",
    "tests/unit/models/test_dspark_model_definitions.py": _NO_PAIR
    + "the training model's Markov head arguments (rank, head type)",
    "tests/unit/models/test_sample_from_anchor.py": _NO_PAIR
    + "the draft length a newly trained draft's config records (block_size - 1, or block_size "
    "with sample_from_anchor): a training-time default built from a Hub verifier, no "
    "checkpoint to pair",
    "tests/unit/proposals/test_greedy.py": _NO_PAIR + "the proposal config's marshalling",
    "tests/unit/test_model.py": _NO_PAIR + "the speculator model registry",
    "tests/unit/train/test_draft_config_init.py": _NO_PAIR
    + "the training draft's initialisation from a stand-in verifier",
    "tests/unit/train/test_rope_config.py": _NO_PAIR + "rope parameters of the training draft",
    "tests/unit/train/test_setup_model.py": _NO_PAIR + "vocabulary mapping files of training",
}
"""A reason for every listed test of a file whose tests were read and found not applicable
(tests of other files are "not reviewed"). The cases' tests are reviewed by their case."""


def reviewed(tests: list[Any]) -> dict[str, str]:
    """The not-applicable tests, by the reason of their file."""
    return {t.node: FILE_REASONS[t.path] for t in tests if t.path in FILE_REASONS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mine/speculators.py")
    parser.add_argument("src", type=Path, help="the repository's tests/ parent, at COMMIT")
    parser.add_argument("--results", type=Path, help="pytest -rA output of ENGINE_TESTS")
    args = parser.parse_args(argv)
    found = cases(args.src)
    # The keyword filter lists the tests naming a config key; a case's test is listed however
    # it is written (the hidden-size test names no key, only the mismatch).
    with_cases = {c["test"].split("[")[0] for c in found}
    relevant = {t.node for t in relevant_tests(args.src, "tests", RELEVANT)}
    tests = [t for t in all_tests(args.src, "tests") if t.node in relevant | with_cases]
    run = pytest_outcomes(args.results, ENGINE_TESTS) if args.results else None
    outcome = {r["test"]: r["outcome"] for r in (run or {}).get("records", [])}
    counts: dict[str, int] = {}
    for test in tests:
        key = outcome.get(test.node, "not run")
        counts[key] = counts.get(key, 0) + 1
    passed = [c["id"] for c in found if outcome.get(c["test"]) == "passed"]
    read = (
        f"Read from `vllm-project/speculators` at `{COMMIT[:9]}` (2026-08-20, the newest "
        "snapshot `fetch` has; the 0.9.0 sdist and wheel carry no tests and the snapshot has no "
        "0.9.0 tag). Those tests run against the 0.9.0 wheel "
        f"(`{ENGINE_TESTS}`): "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        + f" of the tests listed (`engine_tests` in the cases file); the tests of {len(passed)} "
        f"of the {len(found)} cases passed."
    )
    not_read = (
        "- The tests as tagged for 0.9.0 (2026-10-15): not in any source the tools reach; the "
        "index holds later versions of some files (e.g. `tests/unit/convert/"
        "test_dspark_converter.py`, not in the snapshot), not read.",
        "- `tests/e2e/` and `tests/integration/`: listed where relevant but not run (GPU, Hub "
        "or vLLM needed).",
    )
    page = Page(
        ENGINE, RELEASE, "python tools/mine/speculators.py SRC --results FILE", read, not_read
    )
    for path in write(page, found, tests, reviewed(tests), run):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
