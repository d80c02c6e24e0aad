"""Run SGLang's own tests against its installed wheel, inside SGLang's environment.

Usage: python sglang_tests_driver.py SRC OUT.json -- PYTEST_ARGS... (SRC: a folder holding the
test files at the paths they have in ``sgl-project/sglang``; the wheel installed in this Python
is what they import). OUT gets one record per test, as ``vllm_tests_driver`` writes them; a
file that does not import against the wheel (it names what the release lacks) is one ``error``
record with pytest's message. Collection errors do not stop the other files.

The one stub is ``vllm_config_driver``'s stand-in ``torchvision`` (as ``sglang_config_driver``
uses it): ``sglang/srt/configs/__init__.py`` imports multimodal configs that import it at
module level, and the index's torchvision does not load against the CPU torch. No platform is
overridden: the tests run as SGLang's CPU CI would run them. pytest runs in this process so
that the stub holds. Imports SGLang: never imported by the project.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from vllm_config_driver import stand_in_torchvision
from vllm_tests_driver import outcomes


def main(src: str, out_path: str, args: list[str]) -> int:
    """Run the tests; write what each did."""
    out = Path(out_path).resolve()
    stand_in_torchvision(out.parent / "stand-in")
    import pytest
    import sglang

    os.chdir(src)
    junit = out.parent / "junit.xml"
    pytest.main(
        ["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
         f"--junitxml={junit}", *args]
    )  # fmt: skip
    records = outcomes(junit)
    out.write_text(json.dumps({"release": sglang.__version__, "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[4:] if sys.argv[3:4] == ["--"] else []))
