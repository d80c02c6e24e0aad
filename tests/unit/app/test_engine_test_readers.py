"""The engine test-file readers follow Python's module-level evaluation order, or refuse.

vLLM's ``tests/models/registry.py`` and SGLang's ``test_utils.py`` are read, never run: what
the reader reports must be what Python would hold after the module ran, else an entry goes
unchecked (exit 0) or one the engine never runs is checked.
"""

from __future__ import annotations

import pytest

from dflash_check.app.engine_tests import parse_python
from dflash_check.app.engine_tests.sglang_constants import read_sglang_constants
from dflash_check.app.engine_tests.vllm_test_registry import read_vllm_test_registry
from dflash_check.errors import RegistryError

TABLE = "_SPECULATIVE_DECODING_EXAMPLE_MODELS"
BASE = f"""from x import _HfExamplesInfo
M = "org/draft"
{TABLE} = {{
    "A": _HfExamplesInfo("org/t", speculative_model=M),
}}
"""


def entries(text: str) -> dict[str, tuple[str | None, str | None, int]]:
    """Return each entry's (target, draft, line) by key."""
    return {e.key: (e.target, e.draft, e.line) for e in read_vllm_test_registry(text, "r.py")}


def info(target: str, draft: str) -> str:
    return f'_HfExamplesInfo("{target}", speculative_model="{draft}")'


@pytest.mark.parametrize(
    "later",
    [
        f'{TABLE}["B"] = {info("org/t2", "org/d2")}',
        f'{TABLE}.update({{"B": {info("org/t2", "org/d2")}}})',
        f'{TABLE} |= {{"B": {info("org/t2", "org/d2")}}}',
        f'EXTRA = {{"B": {info("org/t2", "org/d2")}}}\n{TABLE}.update(EXTRA)',
    ],
)
def test_entries_added_after_the_table_are_checked(later: str) -> None:
    found = entries(BASE + later + "\n")
    assert found["B"][:2] == ("org/t2", "org/d2")
    assert found["A"][:2] == ("org/t", "org/draft")


def test_del_removes_an_entry() -> None:
    assert "A" not in entries(BASE + f'{TABLE}["B"] = {info("t", "d")}\ndel {TABLE}["A"]\n')


def test_a_constant_rebound_after_the_table_does_not_change_it() -> None:
    assert entries(BASE + 'M = "org/other"\n')["A"][1] == "org/draft"


def test_a_duplicate_key_is_the_last_one() -> None:
    text = BASE.replace("}\n", f'    "A": {info("org/t3", "org/d3")},\n}}\n', 1)
    assert entries(text)["A"] == ("org/t3", "org/d3", 5)


def test_tables_merged_by_name_are_taken_as_they_were() -> None:
    text = (
        f'OLD = {{"A": {info("t1", "d1")}}}\n{TABLE} = {{**OLD}}\nOLD["B"] = {info("t2", "d2")}\n'
    )
    assert set(entries(text)) == {"A"}


@pytest.mark.parametrize(
    ("later", "needle"),
    [
        (f"{TABLE} = {{k: v for k, v in {TABLE}.items() if k != 'A'}}", "not a dict literal"),
        (f"{TABLE}.update(make())", "line 6"),
        (f"{TABLE}.pop('A')", "line 6"),
        (f"for k in list({TABLE}):\n    {TABLE}.pop(k)", "line 7"),
        (f"def f():\n    global {TABLE}\n    {TABLE} = {{}}", "line 7"),
        (f"{TABLE}[name()] = {info('t', 'd')}", "line 6"),
        ("M += suffix()", "line 6"),
        (f"{TABLE}, X = make()", "line 6"),
    ],
)
def test_a_change_the_reader_cannot_evaluate_is_refused(later: str, needle: str) -> None:
    with pytest.raises(RegistryError) as err:
        read_vllm_test_registry(BASE + later + "\n", "r.py")
    assert needle in str(err.value)


def test_reading_the_table_is_no_change() -> None:
    text = BASE + f"ALL = {{**{TABLE}}}\nfor k in {TABLE}:\n    print(k)\n"
    assert set(entries(text)) == {"A"}


def test_a_commented_entry_inside_a_string_is_not_listed() -> None:
    text = BASE.replace(
        "speculative_model=M)",
        'speculative_model=M, doc="""\n'
        '    # "Z": _HfExamplesInfo("x", speculative_model="y"),\n""")',
    )
    assert set(entries(text)) == {"A"}


def test_a_paren_in_a_commented_string_does_not_swallow_the_next_entry() -> None:
    text = BASE.replace(
        "}\n",
        '    # "P": _HfExamplesInfo("org/t(", speculative_model="org/d"),\n'
        '    # "Q": _HfExamplesInfo("org/q", speculative_model="org/dq"),\n}\n',
        1,
    )
    found = entries(text)
    assert found["P"][:2] == ("org/t(", "org/d")
    assert found["Q"][:2] == ("org/q", "org/dq")


def test_a_huge_commented_entry_is_read_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the characters the reader hands to the parser and to the parenthesis
    counter stay within a small multiple of the file (uncommenting line by line and re-reading
    the growing entry each time was quadratic: seconds on a large entry)."""
    import ast

    from dflash_check.app.engine_tests import vllm_test_registry as reader

    seen = {"chars": 0}
    parse, depth = ast.parse, reader._depth

    def counted_parse(source: str, *args: object, **kwargs: object) -> ast.AST:
        seen["chars"] += len(source)
        return parse(source, *args, **kwargs)  # type: ignore[arg-type]

    def counted_depth(text: str) -> int:
        seen["chars"] += len(text)
        return depth(text)

    monkeypatch.setattr(ast, "parse", counted_parse)
    monkeypatch.setattr(reader, "_depth", counted_depth)
    body = "".join('    #     "x",\n' for _ in range(20_000))
    text = BASE.replace("}\n", f'    # "L": _HfExamplesInfo(\n{body}    # ),\n}}\n', 1)
    found = entries(text)
    assert "L" in found
    assert 0 < seen["chars"] < 4 * len(text)


def test_a_byte_order_mark_is_python() -> None:
    assert set(entries("\ufeff" + BASE)) == {"A"}


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "1+" * 200_000 + "1",
        "x = " + "not " * 100_000 + "1",
        "x = a" + ".b" * 100_000,
        "x = a" + "()" * 100_000,
        "x = a" + "[0]" * 100_000,
    ],
)
def test_deep_nesting_is_one_error(source: str) -> None:
    with pytest.raises(RegistryError, match="nested deeper than"):
        parse_python(source, "r.py")


def test_a_long_chain_of_merges_is_read_without_recursion() -> None:
    chain = [f'T0 = {{"A": {info("t", "d")}}}']
    chain += [f"T{i} = {{**T{i - 1}}}" for i in range(1, 3000)]
    chain.append(f"{TABLE} = {{**T2999}}")
    assert set(entries("\n".join(chain) + "\n")) == {"A"}


# -- SGLang's constants -------------------------------------------------------------------------


def sglang(text: str) -> dict[str, tuple[str | None, str | None]]:
    return {e.key: (e.target, e.draft) for e in read_sglang_constants(text, "t.py")}


def test_sglang_tuple_unpacking_and_augmented_strings() -> None:
    text = (
        'DEFAULT_DRAFT_MODEL_EAGLE, DEFAULT_TARGET_MODEL_EAGLE = "org/d", "org/t"\n'
        'DEFAULT_DRAFT_MODEL_EAGLE += "-v2"\n'
    )
    assert sglang(text) == {"EAGLE": ("org/t", "org/d-v2")}


def test_sglang_rebinding_wins() -> None:
    text = 'DEFAULT_DRAFT_MODEL_X = "a"\nDEFAULT_TARGET_MODEL_X = "t"\n'
    text += 'DEFAULT_DRAFT_MODEL_X = "b"\n'
    assert sglang(text) == {"X": ("t", "b")}


@pytest.mark.parametrize(
    "later",
    [
        "DEFAULT_DRAFT_MODEL_X += suffix()",
        "DEFAULT_DRAFT_MODEL_X, Y = pair()",
        "def f():\n    global DEFAULT_DRAFT_MODEL_X\n    DEFAULT_DRAFT_MODEL_X = 'c'",
    ],
)
def test_sglang_changes_not_evaluated_are_refused(later: str) -> None:
    text = 'DEFAULT_DRAFT_MODEL_X = "a"\nDEFAULT_TARGET_MODEL_X = "t"\n' + later + "\n"
    with pytest.raises(RegistryError, match=r"line [34]"):
        read_sglang_constants(text, "t.py")
