"""Mine an engine release's own tests for what they assert about speculative decoding.

``python tools/mine_engine_tests.py vllm 0.34.0 SRC`` (SRC: the unpacked source archive that
``tools/fetch_engine_source.py`` writes) writes

- ``conformance/mined/vllm-0.34.0.json``: the cases extracted mechanically (configs written
  out as the test builds them, the expected outcome and the test's file:line at that release),
  followed by the hand-written cases of ``conformance/mined/handwritten.py`` for tests that
  build their configs procedurally;
- ``conformance/mined/vllm-0.34.0.md``: the coverage page, every relevant test id with its
  case(s), "not applicable" with the reason (mechanical: ``tools/engine_test_triage.py``;
  by hand: ``conformance/mined/vllm_review.py``), "case pending", or "not reviewed".

A test is listed when its source names speculative decoding (``RELEVANT``); whether it
concerns a draft/target pairing is then read from what it builds and asserts. Engine code is
read with ``ast``; the one helper executed is a config builder made only of ``SimpleNamespace``
calls and literals (``_make_qwen3_omni_dspark_configs``), run with no imports and no builtins
beyond ``SimpleNamespace``. A maintainer's tool: the tests read only what it wrote.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MINED = REPO / "conformance" / "mined"
sys.path.insert(0, str(REPO))

from tools.engine_test_triage import KEYWORDS as RELEVANT  # noqa: E402
from tools.engine_test_triage import fixtures_of, reason  # noqa: E402
from tools.mine.coverage import cases_by_test, write_page  # noqa: E402


@dataclass(frozen=True)
class TestRef:
    """One test function of the release (parametrized ones once)."""

    path: str
    line: int
    name: str
    triage: str | None = None
    """A mechanical not-applicable reason (``tools/engine_test_triage.py``), None if none."""

    @property
    def node(self) -> str:
        return f"{self.path}::{self.name}"


def relevant_tests(src: Path) -> Iterator[TestRef]:
    """Yield every test function under ``src/tests`` whose source names speculative decoding."""
    for file in sorted((src / "tests").rglob("test_*.py")):
        text = file.read_text(errors="replace")
        if not RELEVANT.search(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        fixtures = fixtures_of(tree)
        path = str(file.relative_to(src))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                body = ast.get_source_segment(text, node) or ""
                if RELEVANT.search(body):
                    yield TestRef(path, node.lineno, node.name, reason(node, path, fixtures))


def _plain(value: Any) -> Any:
    """A SimpleNamespace tree as JSON data (callables, the test's getters, are dropped)."""
    if isinstance(value, SimpleNamespace):
        return {k: _plain(v) for k, v in vars(value).items() if not callable(v)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _run_builder(text: str, tree: ast.Module, name: str) -> Any:
    """Execute the config builder ``name`` (SimpleNamespace calls and literals only)."""
    (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id == "SimpleNamespace"
        ):
            raise SystemExit(f"{name}: calls {ast.unparse(node.func)}; review it by hand")
    namespace: dict[str, Any] = {"SimpleNamespace": SimpleNamespace, "__builtins__": {}}
    exec(compile(ast.Module([func], []), name, "exec"), namespace)
    return namespace[name]()


def _parametrize(func: ast.FunctionDef) -> list[dict[str, Any]]:
    """The rows of ``@pytest.mark.parametrize`` (one empty row when there is none)."""
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize"):
            names = ast.literal_eval(deco.args[0])
            names = [names] if isinstance(names, str) else list(names)
            if len(names) == 1 and "," in names[0]:
                names = [n.strip() for n in names[0].split(",")]
            rows = []
            for row in deco.args[1].elts:  # type: ignore[attr-defined]
                values = ast.literal_eval(row)
                values = values if len(names) > 1 else (values,)
                rows.append(dict(zip(names, values, strict=True)))
            return rows
    return [{}]


def _value(node: ast.expr, row: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in row:
        return row[node.id]
    return ast.literal_eval(node)


def _draft_edits(func: ast.FunctionDef, row: dict[str, Any]) -> tuple[list, str | None]:
    """The test's edits of the draft's hf_config and the message pytest.raises matches."""
    edits: list[tuple[list[str], Any]] = []
    match = None
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            target = ast.unparse(node.targets[0])
            m = re.fullmatch(r"draft_config\.hf_config\.(\w+)(?:\[('|\")(\w+)\2\])?", target)
            if m:
                path = [m.group(1)] + ([m.group(3)] if m.group(3) else [])
                edits.append((path, _value(node.value, row)))
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr":
            if ast.unparse(node.args[0]) == "draft_config.hf_config":
                edits.append(([_value(node.args[1], row)], _value(node.args[2], row)))
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.raises":
            for kw in node.keywords:
                if kw.arg == "match":
                    match = _value(kw.value, row)
    return edits, match


def omni_dspark_cases(src: Path, engine: str, release: str) -> list[dict[str, Any]]:
    """The Qwen3-Omni DSpark contract tests of ``tests/test_config.py`` as cases."""
    path = "tests/test_config.py"
    text = (src / path).read_text()
    tree = ast.parse(text)
    if "_make_qwen3_omni_dspark_configs" not in text:
        return []
    target_ns, draft_ns = _run_builder(text, tree, "_make_qwen3_omni_dspark_configs")
    hf = _plain(target_ns.hf_config)
    # The test builds ModelConfig stand-ins; on disk the target is the checkpoint's config.json,
    # whose loader puts the decoder under thinker_config.text_config as the test's hf_config does.
    target = {
        "architectures": hf["architectures"],
        "model_type": hf["model_type"],
        "thinker_config": hf["thinker_config"],
    }
    base_draft = _plain(draft_ns.hf_config)
    cases = []
    for func in tree.body:
        if not (
            isinstance(func, ast.FunctionDef) and func.name.startswith("test_qwen3_omni_dspark")
        ):
            continue
        for i, row in enumerate(_parametrize(func)):
            edits, match = _draft_edits(func, row)
            draft = copy.deepcopy(base_draft)
            for keys, value in edits:
                holder = draft
                for key in keys[:-1]:
                    holder = holder[key]
                holder[keys[-1]] = value
            suffix = f"[{i}]" if row else ""
            cases.append(
                {
                    "id": f"{func.name.removeprefix('test_')}{suffix}",
                    "test": f"{path}::{func.name}{suffix}",
                    "source": f"{engine}=={release}:{path}:{func.lineno}",
                    "method": "dspark",
                    "num_speculative_tokens": 7,  # the test's _validate_qwen3_omni_dspark(..., 7)
                    "target": target,
                    "draft": draft,
                    "expect": "refused" if match else "accepted",
                    "expect_stage": "config" if match else None,
                    "expect_match": match,
                }
            )
    return cases


def write(engine: str, release: str, src: Path) -> tuple[Path, Path]:
    """Write the cases and the coverage page of one release."""
    from conformance.mined.handwritten import cases_for, pending_for, reviewed_for

    cases = omni_dspark_cases(src, engine, release) + cases_for(engine, release, src)
    MINED.mkdir(parents=True, exist_ok=True)
    data = MINED / f"{engine}-{release}.json"
    data.write_text(json.dumps({"engine": engine, "release": release, "cases": cases}, indent=1))
    by_test = cases_by_test(cases)
    reviewed = reviewed_for(engine, release)
    pending = pending_for(engine, release)
    tests = list(relevant_tests(src))
    lines = [
        f"# {engine} {release}: its own tests about speculative decoding, and the cases",
        "",
        f"Generated by `python tools/mine_engine_tests.py {engine} {release} SRC` from the",
        "release's source archive; do not edit. A test is listed when its source names",
        "speculative decoding; each has its case(s) in "
        f"`conformance/mined/{engine}-{release}.json`, or a reason it is not applicable:",
        "mechanical (read from the test's syntax tree by `tools/engine_test_triage.py`) or",
        '"(reviewed)" by hand (`conformance/mined/vllm_review.py`, `handwritten.py`); "case',
        'pending" marks a reviewed test that calls for a case not written yet; "not reviewed"',
        "a test nobody has read.",
        "",
    ]
    counts = {"cases": 0, "not applicable": 0, "case pending": 0, "not reviewed": 0}
    rows = []
    for t in tests:
        if t.node in by_test:
            what = "cases: " + ", ".join(f"`{c}`" for c in by_test[t.node])
            counts["cases"] += 1
        elif t.node in reviewed:
            what = f"not applicable (reviewed): {reviewed[t.node]}"
            counts["not applicable"] += 1
        elif t.node in pending:
            what = f"case pending: {pending[t.node]}"
            counts["case pending"] += 1
        elif t.triage is not None:
            what = f"not applicable: {t.triage}"
            counts["not applicable"] += 1
        else:
            what = "not reviewed"
            counts["not reviewed"] += 1
        rows.append(f"| `{t.path}:{t.line}` `{t.name}` | {what} |")
    summary = (
        f"{len(tests)} relevant tests: {counts['cases']} with cases ({len(cases)} cases), "
        f"{counts['not applicable']} not applicable, {counts['case pending']} with a case "
        f"pending, {counts['not reviewed']} not reviewed."
    )
    return data, write_page(MINED / f"{engine}-{release}.md", lines, summary, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mine_engine_tests.py")
    parser.add_argument("engine", choices=["vllm"])
    parser.add_argument("release")
    parser.add_argument("src", type=Path, help="the unpacked source archive")
    args = parser.parse_args(argv)
    for path in write(args.engine, args.release, args.src):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
