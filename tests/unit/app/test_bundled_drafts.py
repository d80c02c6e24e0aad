"""Which drafts the bundled runtime decodes (``app/bundled_drafts.py``)."""

from __future__ import annotations

from dflash_check.app.bundled_drafts import unsupported
from dflash_check.check.report import CheckReport
from tests.support.helpers import check_files, fc_tensors, files, qwen3_4b_config, seed_draft_config
from tests.unit.check.test_eagle3 import LLAMA_31, LLAMA_HEAD, config, header


def seed_pair() -> CheckReport:
    """The seed DFlash draft against Qwen3-4B."""
    draft = seed_draft_config()
    return check_files(files("draft", draft, fc_tensors(draft)), files("target", qwen3_4b_config()))


def test_the_bundled_runtime_refuses_an_eagle3_draft_before_any_fetch() -> None:
    assert unsupported(seed_pair(), "org/draft") is None
    eagle3 = check_files(
        files("draft", config(LLAMA_HEAD), header(LLAMA_HEAD)), files("target", config(LLAMA_31))
    )
    err = unsupported(eagle3, "org/draft")
    assert err is not None and "a eagle3 draft" in str(err) and "org/draft" in str(err)
