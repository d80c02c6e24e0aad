"""What vLLM reads that other runtimes do not: the legacy ``layer_ids`` keys, which its Model
Runner V2 takes as aux ids (vllm 0.34.0 ``v1/worker/gpu/spec_decode/eagle/eagle3_utils.py``
:131-137, pinned by its ``tests/v1/spec_decode/test_dflash_causality.py:119-126``)."""

from __future__ import annotations

import pytest

from dflash_check.check.report import CheckReport, Verdict
from dflash_check.knowledge.engines import VLLM
from dflash_check.views import TensorInfo
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


def _legacy_pair(section: str, runtime: str) -> CheckReport:
    """The seed draft with its ids moved to ``SECTION.layer_ids`` as aux ids (t + 1)."""
    cfg = draft_config()
    ids = cfg["dflash_config"].pop("target_layer_ids")
    cfg.setdefault(section, {})["layer_ids"] = [t + 1 for t in ids]
    tensors = fc_tensors({**cfg, "dflash_config": {"target_layer_ids": ids}})
    return check_files(files("draft", cfg, tensors), files("target", qwen3_4b_config()), runtime)


@pytest.mark.parametrize("section", ["dflash_config", "eagle_config"])
@pytest.mark.parametrize("release", [r.spec for r in VLLM.releases])
def test_v2_takes_legacy_layer_ids_as_aux_ids(section: str, release: str) -> None:
    """No DF001 on the runner that reads the key, and the ids it resolves are the aux ids
    minus one (layer outputs), as vLLM's own test expects."""
    report = _legacy_pair(section, release)
    assert report.verdict is Verdict.COMPATIBLE, [f.message for f in report.findings]
    (res,) = [r for r in report.resolutions if r.runtime.name == "vllm"]
    assert res.key == f"{section}.layer_ids"
    assert res.capture_indices == (2, 10, 18, 26, 34)
    assert res.layer_ids == (1, 9, 17, 25, 33)


def test_runtimes_that_do_not_read_legacy_ids_still_fail() -> None:
    """V1 and SGLang read no ``layer_ids`` key: DF001 names them, and only them."""
    report = _legacy_pair("dflash_config", "vllm-v1,sglang,vllm")
    named = {f.runtime for f in report.findings if f.rule == "DF001"}
    assert named == {"vllm-v1", "sglang"}


def test_llamacpp_takes_the_vocabulary_from_the_tensors() -> None:
    """A config that alone declares another vocabulary, with a header that matches: llama.cpp
    (0c1e57098) converts from the tensors and runs it like the right pair; vLLM still reads
    the config."""
    cfg = draft_config(vocab_size=32000)
    target = files("target", qwen3_4b_config())
    tensors = fc_tensors(cfg) | {"lm_head.weight": TensorInfo("BF16", (151936, 2560))}
    report = check_files(files("draft", cfg, tensors), target, "llamacpp,vllm")
    named = {f.runtime for f in report.findings if f.rule == "DF007"}
    assert named == {"vllm"}
    # No vocabulary tensor: nothing shows the vocabularies agree.
    borrowed = check_files(files("draft", cfg, fc_tensors(cfg)), target, "llamacpp")
    assert "DF007" in {f.rule for f in borrowed.findings}
