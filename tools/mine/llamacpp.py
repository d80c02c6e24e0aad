"""llama.cpp's own tests about speculative decoding, as vendored by llama-cpp-python 0.3.36
(llama.cpp ``0c1e57098``): the coverage page (issue 29, item 1).

``python tools/mine/llamacpp.py SRC`` (SRC: the unpacked ``llama_cpp_python-0.3.36`` sdist,
``pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36``) writes
``conformance/mined/llamacpp-0c1e57098.json`` and its coverage page. None of these tests builds
an EAGLE-3 or DFlash draft against a target: the architecture tests skip both
(``test-llama-archs.cpp``), the batch tests check input widths with stand-in hyper-parameters,
and the server tests run a plain small draft model (``draft-simple``). So there are no cases
here; llama.cpp's cases are the real runs of ``conformance/results/llama.cpp-0c1e57098.json``
(built by ``conformance/build.py``). A maintainer's tool.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# The repository root, in place of this folder, as the other miners do.
sys.path[0] = str(Path(__file__).resolve().parents[2])

from tools.mine.coverage import REPO, Page, TestId, relevant_tests, write  # noqa: E402

ENGINE, RELEASE = "llamacpp", "0c1e57098"
VENDOR = "vendor/llama.cpp"
RELEVANT = re.compile(r"draft|speculat|eagle|dflash|nextn|\bmtp\b", re.IGNORECASE)
"""A Python test is listed when its source names speculative decoding."""
_WIDTH = "input-width bookkeeping with stand-in hyper-parameters; no draft/target config"
CPP: tuple[tuple[str, str, str, str], ...] = (
    ("tests/test-llama-archs.cpp", r"arch == LLM_ARCH_EAGLE3 \|\| arch == LLM_ARCH_DFLASH",
     "save/load of every architecture", "skips EAGLE3 and DFLASH (no fixture for a draft)"),
    ("tests/test-batch-alloc.cpp", r't\.test\("encoder_width"', "encoder_width", _WIDTH),
    ("tests/test-batch-alloc.cpp", r't\.test\("embd_row_width_override"',
     "embd_row_width_override", _WIDTH),
    ("tests/test-batch-alloc.cpp", r't\.test\("mtp_uses_n_embd_out"', "mtp_uses_n_embd_out",
     _WIDTH),
    ("tests/test-batch-alloc.cpp", r't\.test\("mtp_falls_back_to_n_embd_when_no_override"',
     "mtp_falls_back_to_n_embd_when_no_override", _WIDTH),
    ("tests/test-batch-alloc.cpp", r't\.test\("dflash_uses_n_embd_inp_enc"',
     "dflash_uses_n_embd_inp_enc", _WIDTH + " (a DFlash draft's input is the encoder width)"),
    ("tests/test-arg-parser.cpp", r"common_speculative_get_output_limits",
     "speculative output limits and synthetic rates", "command-line parsing of the draft "
     "length and synthetic acceptance rates; no draft/target config"),
    ("tests/test-model-resolution.cpp", r"mtp-model-BF16\.gguf", "model file resolution",
     "which GGUF file of a repository is the MTP head; no config read"),
)  # fmt: skip
"""C++ tests (no test ids): the file, the line's pattern, a name, the reason."""
PY_REASONS: dict[str, str] = {
    f"{VENDOR}/tools/server/tests/unit/test_speculative.py": "a server with a plain small "
    "draft model (draft-simple, Hub GGUFs): draft length, synthetic rates, context; no EAGLE-3 "
    "or DFlash draft and no config",
    f"{VENDOR}/tools/server/tests/unit/test_router.py": "the model router's handling of a "
    "draft's cache entry; no pair verdict",
    f"{VENDOR}/tools/server/tests/unit/test_metrics.py": "the server's speculative metrics' "
    "names; no pair verdict",
    "tests/test_llama_speculative.py": "llama-cpp-python's prompt-lookup decoding (n-grams); "
    "no draft model",
}


def _cpp_tests(src: Path) -> list[str]:
    rows = []
    for path, pattern, name, _ in CPP:
        text = (src / VENDOR / path).read_text(errors="replace").splitlines()
        lines = [i + 1 for i, line in enumerate(text) if re.search(pattern, line)]
        if not lines:
            raise SystemExit(f"{path}: /{pattern}/ not found; review the table")
        rows.append(f"{VENDOR}/{path}:{','.join(map(str, lines))}::{name}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mine/llamacpp.py")
    parser.add_argument("src", type=Path, help="the unpacked llama-cpp-python 0.3.36 sdist")
    args = parser.parse_args(argv)
    py: list[TestId] = [
        *relevant_tests(args.src, f"{VENDOR}/tools/server/tests", RELEVANT),
        *relevant_tests(args.src, "tests", RELEVANT),
    ]
    cpp = _cpp_tests(args.src)
    reviewed = {t.node: PY_REASONS[t.path] for t in py if t.path in PY_REASONS}
    reviewed |= {row: reason for row, (*_, reason) in zip(cpp, CPP, strict=True)}
    read = (
        "Read from the llama-cpp-python 0.3.36 sdist (the package index's archive; its "
        "vendored llama.cpp is `0c1e57098`): `vendor/llama.cpp/tests/` (C++, listed by file:line "
        "where speculative decoding is named), the server's Python tests and the package's own "
        "tests. No test builds an EAGLE-3 or DFlash draft against a target, so there are no "
        "cases; llama.cpp's cases are the real runs of "
        "`conformance/results/llama.cpp-0c1e57098.json`."
    )
    not_read = (
        "- The converter's behaviour (`convert_hf_to_gguf.py`, DFlash and EAGLE-3 drafts): "
        "the vendored tree has no test of it.",
    )
    page = Page(ENGINE, RELEASE, "python tools/mine/llamacpp.py SRC", read, not_read)
    for path in write(page, [], [*cpp, *py], reviewed):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
