"""Run one conformance case in llama.cpp (``llama-speculative-simple --spec-type draft-dflash``).

Usage: python llamacpp_driver.py SPEC.json OUT.json (see vllm_driver.py for both files), with
``LLAMACPP_DIR`` naming the llama.cpp source tree (the one vendored in the llama-cpp-python
sdist) whose ``build/bin`` holds the built tools. The pair is converted with that tree's own
``convert_hf_to_gguf.py`` (the draft with ``--target-model-dir``: ``conversion/qwen.py:664``,
``DFlashModel``), then each prompt is decoded greedily. A failed conversion is a refusal at
config; an exit before the prompt was encoded is a refusal at load; an abort after it (e.g.
``GGML_ASSERT`` in the graph) is a failure at the first decode. llama-speculative-simple prints
its totals (``examples/speculative-simple/speculative-simple.cpp:350-357``): each verify step
adds its accepted drafts plus one to ``n_predict`` and the accepted drafts to ``n_accept``, so
the steps are ``n_predict - n_accept``.

Its converter recognises only known tokenizers: a word-level ``tokenizer.json`` is refused, a
SentencePiece ``tokenizer.model`` works (docs/conformance.md says what that means for the tiny
pairs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from _record import Recording


def _convert(src: Path, out: Path, target: Path | None) -> subprocess.CompletedProcess:
    tree = Path(os.environ["LLAMACPP_DIR"])
    argv = [sys.executable, str(tree / "convert_hf_to_gguf.py"), str(src)]
    argv += ["--outfile", str(out), "--outtype", "f32"]
    if target is not None:
        argv += ["--target-model-dir", str(target)]
    return subprocess.run(argv, capture_output=True, text=True)


def _last_error(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.search(r"Error|error:|GGML_ASSERT|GGML_ABORT|failed", line):
            return line.strip()
    return lines[-1].strip() if lines else "no output"


def main(spec_path: str, out_path: str) -> int:
    """Run the case in ``spec_path``; write what happened to ``out_path``."""
    spec = json.loads(Path(spec_path).read_text())
    with Recording(out_path, "config") as record:
        run(spec, Path(out_path).parent, record)
    return 0


def run(spec: dict, work: Path, record: dict) -> None:
    """Convert the pair, decode each prompt; fill in ``record``."""
    tree = Path(os.environ["LLAMACPP_DIR"])
    target = Path(spec["target"])
    t_gguf, d_gguf = work / "target.gguf", work / "draft.gguf"
    done = _convert(target, t_gguf, None)
    if done.returncode == 0 and spec.get("draft"):
        done = _convert(Path(spec["draft"]), d_gguf, target)
    if done.returncode != 0:
        record["error"] = {"type": "ConversionError", "message": _last_error(done.stderr)}
        return
    record["stage"] = "load"
    drafts = predicted = accepted = 0
    for prompt in spec["prompts"]:
        if spec.get("draft"):
            tool = tree / "build" / "bin" / "llama-speculative-simple"
            argv = [str(tool), "-m", str(t_gguf), "-md", str(d_gguf)]
            argv += ["--spec-type", "draft-dflash"]
        else:
            argv = [str(tree / "build" / "bin" / "llama-simple"), "-m", str(t_gguf)]
        argv += ["-p", prompt, "-n", str(spec["max_tokens"]), "--temp", "0", "-c", "128"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        text = proc.stdout + proc.stderr
        if proc.returncode != 0:
            encoded = "encoded" in text or "prompt eval" in text
            record["stage"] = "first decode" if encoded else "load"
            record["error"] = {"type": "Abort", "message": _last_error(text)}
            return
        record["stage"] = "first decode"
        found = {k: re.search(rf"{k}\s*=\s*(\d+)", text) for k in ("n_predict", "n_accept")}
        if spec.get("draft") and all(found.values()):
            n_predict, n_accept = (int(m.group(1)) for m in found.values() if m)
            predicted += n_predict
            accepted += n_accept
            drafts += n_predict - n_accept
        record["outputs"].append(proc.stdout.strip())
    record["stage"] = "done"
    if spec.get("draft"):
        record["counters"] = {"drafts": drafts, "accepted": accepted}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
