"""Run a vLLM release's own tests against its installed wheel, inside vLLM's environment.

Usage: python vllm_tests_driver.py SRC OUT.json -- PYTEST_ARGS... (SRC: the release's unpacked
source archive, whose ``tests/`` is run; the wheel installed in this Python is what they
import). OUT gets one record per test: its id and ``passed`` / ``failed`` / ``skipped`` /
``error``. The stubs are ``vllm_config_driver``'s (the Triton flag, the torchvision
stand-in), for the same reasons; pytest runs in this process so that they hold.
Imports vLLM: never imported by the project.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from vllm_config_driver import TRITON_HELPERS, stand_in_torchvision


def main(src: str, out_path: str, args: list[str]) -> int:
    """Run the tests; write what each did."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    out = Path(out_path).resolve()
    stand_in_torchvision(out.parent / "stand-in")
    import contextlib
    import importlib

    import pytest
    import vllm
    import vllm.triton_utils

    # As vllm_config_driver.start_vllm: the modules that bind the flag at import first, with
    # the real flag, or the model modules with a Triton kernel fail to import (test files that
    # import a model class: test_muse_spark_config.py, the K3 DSpark registry inspection).
    for name in TRITON_HELPERS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    vllm.triton_utils.HAS_TRITON = True
    os.chdir(src)
    sys.path.insert(0, src)
    junit = out.parent / "junit.xml"
    pytest.main(["-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *args])
    out.write_text(json.dumps({"release": vllm.__version__, "records": outcomes(junit)}, indent=1))
    return 0


def _node(classname: str, name: str) -> str:
    """pytest's node id from JUnit's dotted ``classname`` (module, then any classes) and
    ``name``, the module found as a file under the working folder (the tests' root); a file
    pytest could not collect is named by its module, with no class."""
    if not classname:
        return name.replace(".", "/") + ".py"
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        if Path(*parts[:end]).with_suffix(".py").exists():
            return "::".join(["/".join(parts[:end]) + ".py", *parts[end:], name])
    return f"{classname.replace('.', '/')}.py::{name}"


def outcomes(junit: Path) -> list[dict[str, str]]:
    """One record per test case of pytest's JUnit file: its id and what it did (a file that
    failed to import is one ``error`` case named after the file, pytest's message kept)."""
    records = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                detail = (child.text or child.get("message") or "").strip()
        classname, name = case.get("classname", ""), case.get("name", "")
        test = _node(classname, name)
        record = {"test": test, "outcome": outcome}
        if outcome in ("failed", "error") and detail:
            # The exception's last line (E   ...): why the release does not do what was tested.
            lines = [x for x in detail.splitlines() if x.startswith("E ")] or detail.splitlines()
            record["message"] = lines[-1].removeprefix("E").strip()[:300]
        records.append(record)
    return records


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[4:] if sys.argv[3:4] == ["--"] else []))
