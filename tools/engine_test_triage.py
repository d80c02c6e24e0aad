"""Which of an engine's keyword-relevant tests cannot concern a draft/target pairing, read from
the test's syntax tree, with the reason.

``tools/mine_engine_tests.py`` lists every test whose source names speculative decoding (a
broad keyword filter). Most of them assert something else: a kernel's numerics, the
scheduler's bookkeeping of draft tokens, the text a model generates. ``reason`` reads what the
test builds and what its assertions name (``assert`` statements, ``pytest.raises`` /
``pytest.warns`` blocks, ``assert_*`` / ``.called`` calls, the fixtures it takes and those
defined beside it) and gives a not-applicable reason where one rule holds; ``None`` leaves the
test to a reviewer (``conformance/mined/handwritten.py``).

A test that builds a config (``SpeculativeConfig``, ``EngineArgs``, ``VllmConfig``, an
``hf_config`` ...) and asserts something about the draft, the target, the method or a
speculative setting is never triaged here: it is either a case or reviewed by hand.
"""

from __future__ import annotations

import ast
import re

KEYWORDS = re.compile(
    r"speculat|dflash|dspark|eagle|\bmtp\b|draft_model|aux_hidden|target_layer_ids|layer_ids"
    r"|num_speculative_tokens|medusa|ngram",
    re.IGNORECASE,
)
"""What makes a test keyword-relevant (the miner's filter)."""

PAIRING = re.compile(
    r"speculat|draft|dflash|dspark|eagle|\bmtp|nextn|medusa|aux_|layer_ids|vocab|method"
    r"|num_speculative|hf_config|hf_text_config|architectures|target_hidden|n_predict",
    re.IGNORECASE,
)
"""What an assertion about a draft/target pairing names (the draft, the target's config, the
method, the aux layers, the vocabularies, a speculative setting)."""

BUILDS_CONFIG = re.compile(
    r"SpeculativeConfig|EngineArgs|VllmConfig|ModelConfig|create_engine_config|hf_config"
    r"|speculative_config|Pre[Tt]rainedConfig|AutoConfig|get_config\b|config\.json"
    r"|\w+ForCausalLM|\w+Config\("
)
"""What building a draft or target config (or reading one) looks like in a test."""

RUNNERS = re.compile(r"(^|_)(runner|server|client|llm)(_|$)")
"""Fixtures that start a model with weights (``vllm_runner``, ``server_qwen35_fp8_mtp_tp2``)."""
RUNS_MODEL = re.compile(r"^(LLM|RemoteOpenAIServer|\w+\.generate|\w+\.chat|run_server)$")

SCHEDULER_CALLS = r"schedul|kv_cache_manager|^manager\.|BlockPool|make_request"
NO_DRAFT_METHODS = frozenset({"ngram", "ngram_gpu", "suffix"})
DRAFT_METHODS = re.compile(r"eagle|dflash|dspark|mtp|medusa|draft_model|mlp_speculator|nextn")

COMMENT_ONLY = "names speculative decoding only in a comment or docstring"
RUNS_A_MODEL = (
    "runs a model with weights (an accelerator): asserts generated text, acceptance or "
    "throughput, not a config"
)
NGRAM = "n-gram / suffix speculation only (no draft model): no draft/target pair to check"
NUMERICS = (
    "asserts tensor numerics (kernels, sampling, rejection) under speculative decoding; "
    "builds no draft or target config"
)
SCHEDULER = (
    "asserts scheduler / KV-cache bookkeeping of draft tokens; builds no draft or target config"
)
ATTENTION = "asserts attention-backend metadata for draft tokens; builds no draft or target config"
OTHER_ASSERTS = (
    "its assertions name no draft, target config, method, aux layer, vocabulary or "
    "speculative setting (they check {what})"
)
NOTHING_PAIRED = (
    "builds no draft or target config, and its assertions name no draft, method, aux layer, "
    "vocabulary or speculative setting"
)
DRAFT_TOKENS = (
    "asserts the runtime's handling of draft tokens or draft inputs; builds no draft or "
    "target config"
)


def _without_docstring(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function's code (decorators included) with its docstring and comments dropped."""
    copy = ast.parse(ast.unparse(func)).body[0]
    assert isinstance(copy, ast.FunctionDef | ast.AsyncFunctionDef)
    first = copy.body[0] if copy.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        copy.body = copy.body[1:] or [ast.Pass()]
    return ast.unparse(copy)


def _is_check_block(node: ast.AST) -> bool:
    """A ``with pytest.raises(...)`` / ``pytest.warns(...)`` block."""
    return isinstance(node, ast.With | ast.AsyncWith) and any(
        re.search(r"\b(raises|warns)\b", ast.unparse(item.context_expr)) for item in node.items
    )


def _is_check_call(node: ast.AST) -> bool:
    """An ``assert_*`` / ``.called`` / ``expect`` call (mocks, torch.testing)."""
    return isinstance(node, ast.Call) and bool(
        re.search(r"assert|\.called|expect", ast.unparse(node.func))
    )


def asserted(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The text of everything the test asserts."""
    parts = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            parts.append(ast.unparse(node.test))
        elif _is_check_block(node) or _is_check_call(node):
            parts.append(ast.unparse(node))
    return "\n".join(parts)


def _calls(func: ast.AST) -> set[str]:
    return {ast.unparse(n.func) for n in ast.walk(func) if isinstance(n, ast.Call)}


def _area(calls: set[str], path: str) -> str | None:
    """The subsystem a test without a pairing assertion exercises, by what it calls."""
    if any(re.search(SCHEDULER_CALLS, c) for c in calls):
        return SCHEDULER
    if any(re.search(r"attn_metadata|builder\.build|BatchSpec", c) for c in calls):
        return ATTENTION
    if path.startswith("tests/kernels/") or any(
        c.startswith(("torch.testing", "torch.equal", "torch.allclose")) for c in calls
    ):
        return NUMERICS
    return None


def _methods(code: str) -> set[str]:
    """The string constants of the test that name a speculative method."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.lower()
            if value in NO_DRAFT_METHODS or DRAFT_METHODS.search(value):
                found.add(value)
    return found


def reason(
    func: ast.FunctionDef | ast.AsyncFunctionDef, path: str, fixtures: dict[str, str]
) -> str | None:
    """A mechanical not-applicable reason for the test ``func`` of ``path`` (its file's
    fixtures by name, as source), or None: it needs a reviewer."""
    code = _without_docstring(func)
    args = {a.arg for a in func.args.args}
    calls = _calls(func)
    if "pytest.raises" not in code and (
        any(RUNNERS.search(a) for a in args) or any(RUNS_MODEL.match(c) for c in calls)
    ):
        return RUNS_A_MODEL
    if not KEYWORDS.search(code):
        return COMMENT_ONLY
    used = code + "".join(fixtures.get(a, "") for a in args)
    if not BUILDS_CONFIG.search(used):
        if PAIRING.search(asserted(func)):
            return _area(calls, path) or DRAFT_TOKENS
        return _area(calls, path) or NOTHING_PAIRED
    methods = _methods(code)
    if methods and methods <= NO_DRAFT_METHODS:
        return NGRAM
    what = asserted(func)
    if what and not PAIRING.search(what):
        area = _area(calls, path)
        return area or OTHER_ASSERTS.format(what=_summary(what))
    return None


def _summary(what: str) -> str:
    """The attributes the assertions read, a few of them, as the reason's detail."""
    names = sorted(set(re.findall(r"\.(\w+)", what)) - {"raises", "warns", "called"})
    return ", ".join(names[:4]) if names else "return values"


def fixtures_of(tree: ast.Module) -> dict[str, str]:
    """The file's pytest fixtures by name, as source (what a test taking them builds)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            "fixture" in ast.unparse(d) for d in node.decorator_list
        ):
            found[node.name] = ast.unparse(node)
    return found
