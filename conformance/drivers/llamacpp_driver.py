"""Run one conformance case in llama.cpp (``llama-speculative-simple --spec-type draft-dflash``).

Usage: python llamacpp_driver.py SPEC.json OUT.json (see vllm_driver.py for both files), with
``LLAMACPP_DIR`` naming the llama.cpp source tree (the one vendored in the llama-cpp-python
sdist) whose ``build/bin`` holds the built tools. Citations are to that tree
(``llama-cpp-python==0.3.36:vendor/llama.cpp/...``).

The pair is converted with the tree's own ``convert_hf_to_gguf.py`` (the draft with
``--target-model-dir``, ``conversion/qwen.py:664-700``, ``DFlashModel``): a failed conversion
is a refusal at config. Each prompt is then decoded greedily, the draft length set to the
spec's (``--spec-draft-n-max``, default 3, which the DFlash implementation clamps to
block - 1: ``common/speculative.cpp:1014-1022``); the target alone runs in ``llama-simple``
(the lossless baseline).

Stages. A tool that exits with an error message never decoded (the model or draft failed to
load): a refusal at load. An abort (``GGML_ASSERT``, ``GGML_ABORT``) prints a backtrace (ggml
runs gdb, else glibc's ``backtrace_symbols``, ``ggml/src/ggml.c:158-230``): one that passes
through what a server runs before it reports healthy (loading the models, creating the
speculative implementation: ``tools/server/server-context.cpp:1242``, as
``speculative-simple.cpp:119`` does before its first decode) is at load; any other abort came
from the first request's decoding or drafting: the first decode.

Counters: llama-speculative-simple prints its totals (``speculative-simple.cpp:354-356``); each
verify step adds its accepted drafts plus one to ``n_predict`` and the accepted drafts to
``n_accept`` (``:296-297``), so the steps are ``n_predict - n_accept``. Outputs: both tools print
the prompt's pieces and then each generated piece to stdout (``speculative-simple.cpp:92-96,
:319``; ``examples/simple/simple.cpp``); every piece of the tiny pairs' vocabulary is one
space-led word, so the words after the prompt, cut at ``max_tokens`` (speculative-simple may
commit a few past it), are the generated tokens.

Its converter recognises only known tokenizers: a word-level ``tokenizer.json`` is refused, so
the runner writes a SentencePiece ``tokenizer.model`` with the same ids next to the target's
(``conformance/build.py``, ``sentencepiece_model``).
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


_TIMESTAMP = re.compile(r"^\d+\.\d+\.\d+\.\d+ [A-Z] ")
"""llama.cpp's log prefix (time and level), dropped from quoted lines."""
_WHY = (
    # (pattern, which match): an assertion names the exact check that failed; a refused file
    # or an uncaught exception says why at its first line; else the last error line (the
    # first ones include "failed to initialize the context … normal during memory fitting").
    (r"GGML_ASSERT|GGML_ABORT", 0),
    (r"error loading model|terminate called|what\(\)", 0),
    (r"\bE |Error|error:|failed", -1),
)


def _last_error(text: str, tree: Path | None = None) -> str:
    """Return the line that says why the tool stopped, its log prefix and the tree's own path
    dropped."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[-1] if lines else "no output"
    for pattern, pick in _WHY:
        found = [x for x in lines if re.search(pattern, x)]
        if found:
            line = found[pick]
            break
    line = _TIMESTAMP.sub("", line)
    return line.replace(f"{tree}/", "") if tree is not None else line


LOADING = ("common_speculative_init", "common_init_from_params", "llama_model_load")
"""Functions that run while the engine loads (a server runs them before it reports healthy)."""


def _abort_stage(text: str) -> str:
    """Return the stage of an abort from its backtrace (see the module docstring): at load when
    it passes through what a server runs at load, else at the first decode."""
    # gdb names frames as they are declared, backtrace_symbols by their mangled names: both
    # contain the function's plain name.
    frames = [line for line in text.splitlines() if line.startswith("#") or "(_Z" in line]
    loading = any(name in line for line in frames for name in LOADING)
    return "load" if loading else "first decode"


def generated(stdout: str, prompt: str, max_tokens: int) -> list[str]:
    """Return the generated words: what follows the prompt's words, cut at ``max_tokens``."""
    words, asked = stdout.split(), prompt.split()
    for at in range(len(words) - len(asked) + 1):
        if words[at : at + len(asked)] == asked:
            return words[at + len(asked) :][:max_tokens]
    raise ValueError(f"the prompt {prompt!r} is not in the tool's output")


TRIES = 5
"""Runs of llama-speculative-simple per prompt until its log reaches the end (see _run_tool)."""


def _totals(text: str) -> tuple[int, int] | None:
    """Return (n_predict, n_accept) from llama-speculative-simple's log (None: not printed)."""
    found = [re.search(rf"{k}\s*=\s*(\d+)", text) for k in ("n_predict", "n_accept")]
    return (int(found[0].group(1)), int(found[1].group(1))) if found[0] and found[1] else None


def _run_tool(argv: list[str], speculative: bool) -> tuple[subprocess.CompletedProcess, str]:
    """Run one tool; return it and its stdout + stderr.

    llama-speculative-simple prints the generated text and its totals through llama.cpp's
    asynchronous logger, which is never flushed at exit (``common/log.cpp:453-458``: the logger
    is leaked on purpose, "logs may be lost if not flushed before the program exits"), so a run
    that succeeded sometimes loses the tail of its output, totals included: greedy decoding is
    deterministic, so such a run is repeated.
    """
    for _ in range(TRIES):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        text = proc.stdout + proc.stderr
        if proc.returncode != 0 or not speculative or _totals(text) is not None:
            break
    return proc, text


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
        record["error"] = {"type": "ConversionError", "message": _last_error(done.stderr, tree)}
        return
    record["stage"] = "load"
    predicted = accepted = 0
    for prompt in spec["prompts"]:
        n = str(spec["max_tokens"])
        if spec.get("draft"):
            argv = [str(tree / "build" / "bin" / "llama-speculative-simple")]
            argv += ["-m", str(t_gguf), "-md", str(d_gguf), "--spec-type", "draft-dflash"]
            argv += ["--spec-draft-n-max", str(spec["num_speculative_tokens"])]
            argv += ["-p", prompt, "-n", n, "--temp", "0", "-c", "128"]
        else:  # llama-simple: greedy, its own arguments, the prompt last
            argv = [str(tree / "build" / "bin" / "llama-simple"), "-m", str(t_gguf), "-n", n]
            argv += [prompt]
        proc, text = _run_tool(argv, bool(spec.get("draft")))
        if proc.returncode != 0:
            aborted = proc.returncode < 0 or "GGML_ASSERT" in text or "GGML_ABORT" in text
            record["stage"] = _abort_stage(text) if aborted else "load"
            kind = "Abort" if aborted else "Exit"
            record["error"] = {"type": kind, "message": _last_error(proc.stderr, tree)}
            return
        record["stage"] = "first decode"
        if spec.get("draft"):
            totals = _totals(text)
            if totals is None:
                raise RuntimeError(f"llama-speculative-simple printed no totals {TRIES} times")
            predicted, accepted = predicted + totals[0], accepted + totals[1]
        record["outputs"].append(generated(proc.stdout, prompt, spec["max_tokens"]))
    record["stage"] = "done"
    if spec.get("draft"):
        # Verify steps are n_predict - n_accept (see the module docstring).
        record["counters"] = {"drafts": predicted - accepted, "accepted": accepted}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
