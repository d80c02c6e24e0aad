"""The engines' mined tests (issue 29): every keyword-relevant test of a release is settled on
its coverage page, and the mechanical triage gives a reason only where its rule holds."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from conformance.mined import vllm_review
from tests.support.paths import REPO
from tools import engine_test_triage as triage

MINED = REPO / "conformance" / "mined"
PAGES = sorted(MINED.glob("vllm-*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relevant_test_is_settled(page: Path) -> None:
    rows = [line for line in page.read_text().splitlines() if line.startswith("| `tests/")]
    assert rows, f"{page.name}: no tests listed"
    unsettled = [row for row in rows if row.endswith("| not reviewed |")]
    assert not unsettled, f"{page.name}: {len(unsettled)} not reviewed, e.g. {unsettled[0]}"
    summary = re.search(r"(\d+) relevant tests: .* (\d+) not reviewed\.", page.read_text())
    assert summary and summary.group(2) == "0" and int(summary.group(1)) == len(rows)


def test_a_test_is_reviewed_once() -> None:
    assert not set(vllm_review.REVIEWED) & set(vllm_review.PENDING)


def _reason(source: str, path: str = "tests/v1/test_x.py") -> str | None:
    tree = ast.parse(textwrap.dedent(source))
    (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    return triage.reason(func, path, triage.fixtures_of(tree))


def test_a_config_with_a_pairing_assertion_goes_to_a_reviewer() -> None:
    assert (
        _reason(
            """
            def test_ids():
                config = SpeculativeConfig(method="dflash", model="d", num_speculative_tokens=3)
                assert config.draft_model_config.hf_config.target_layer_ids == [1, 2]
            """
        )
        is None
    )


def test_a_pytest_raises_on_a_config_goes_to_a_reviewer() -> None:
    source = """
        def test_refused(vllm_runner):
            args = EngineArgs(model="t", speculative_config={"method": "eagle3"})
            with pytest.raises(ValueError, match="eagle"):
                args.create_engine_config()
        """
    assert _reason(source) is None


def test_a_keyword_only_in_the_docstring() -> None:
    source = '''
        def test_mask():
            """Used by the speculators."""
            assert torch.equal(mask(), expected)
        '''
    assert _reason(source) == triage.COMMENT_ONLY


def test_a_model_run_without_a_refusal() -> None:
    source = """
        def test_acceptance(vllm_runner):
            with vllm_runner("m", speculative_config={"method": "eagle3"}) as llm:
                assert llm.generate(["hi"])
        """
    assert _reason(source) == triage.RUNS_A_MODEL


def test_tensor_numerics_without_a_config() -> None:
    source = """
        def test_rejection():
            num_speculative_tokens = 3
            draft_probs = torch.rand(num_speculative_tokens)
            torch.testing.assert_close(rejection_sample(draft_probs), draft_probs)
        """
    assert _reason(source) == triage.NUMERICS


def test_a_config_fixture_counts_as_building_one() -> None:
    source = """
        @pytest.fixture
        def spec():
            return SpeculativeConfig(method="eagle3", model="d")

        def test_aux(spec):
            assert spec.draft_model_config.hf_config.eagle_aux_hidden_state_layer_ids
        """
    assert _reason(source) is None


def test_ngram_only_configs() -> None:
    source = """
        def test_ngram():
            config = SpeculativeConfig(method="ngram", num_speculative_tokens=3)
            assert config.num_speculative_tokens == 3
        """
    assert _reason(source) == triage.NGRAM


def test_assertions_about_something_else() -> None:
    source = """
        def test_sizes():
            config = VllmConfig(speculative_config=SpeculativeConfig(method="eagle3", model="d"))
            assert config.compilation_config.cudagraph_capture_sizes == [1, 2]
        """
    reason = _reason(source)
    assert reason is not None and "cudagraph_capture_sizes" in reason
