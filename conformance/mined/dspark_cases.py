"""vLLM's DSpark config-family and aux-capture tests as cases (issue 29, item 1): the MLA DSpark
(Kimi K3) checkpoint contract and the Muse Spark DSpark config, read from each release's test
file, and the Beam target's DFlash capture.

Both tests write a draft ``config.json`` (and a target one) to disk and hand them to vLLM's own
loaders, so the configs are taken from the release's test source as it writes them: the dict
literals of the test's helpers, evaluated with no names and no builtins (literals, ``*`` and
``|`` only), and the ``parametrize`` rows of each test. Nothing here imports vLLM.

The MLA drafts are kept as the test writes them, without a mask (noise) token id: the test checks
the config alone, and vLLM's DSpark speculator refuses a draft without one when it is built
(``get_parallel_drafting_token_id``, ``v1/worker/gpu/spec_decode/utils.py``), past the config
stage the tests reach; ``conformance/oracle-explained.json`` cites it where the tool says so.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

MLA = "tests/transformers_utils/test_dspark_mla_config.py"
MUSE = "tests/transformers_utils/test_muse_spark_config.py"
MLA_TOKENS = 8
"""``num_speculative_tokens=8``: the draft length the MLA test's speculative config asks for
(``test_dspark_mla_speculative_config_preserves_architecture``); its config-only tests name none."""
MUSE_LOADABLE = {
    "hidden_size": 64,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 64,
    "vocab_size": 128,
    "mask_token_id": 127,
    "target_hidden_size": 64,
    "enable_confidence_head": False,
}
"""What vLLM's own test adds to ``_dspark_config`` to build and load a Muse Spark draft for
the same tiny target (``test_dspark_draft_loads_weights``,
vllm==0.34.0:tests/transformers_utils/test_muse_spark_config.py:129-140): the config-only tests
leave the widths and the mask to ``MuseSparkDSparkConfig``'s defaults (hidden 5120, no mask),
which its model class needs (``vllm/models/muse_spark/common/dspark.py:200``, 0.33.0 :117).
The same draft in 0.33.0, whose test file has the same ``_dspark_config``."""
MUSE_TOKENS = 7
"""``num_speculative_tokens=7``, as ``_dspark_speculative_config`` asks for."""


LITERAL_NODES = (
    ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp,
    ast.operator, ast.unaryop, ast.expr_context,
)  # fmt: skip
"""What a test's config expression may hold to be evaluated (``_literal``)."""


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _literal(node: ast.expr) -> Any:
    """Evaluate a test's config expression: literals combined with ``*`` and ``|`` only."""
    for sub in ast.walk(node):
        if not isinstance(sub, LITERAL_NODES):
            raise ValueError(f"not a literal config: {ast.dump(sub)[:80]}")
    return eval(compile(ast.Expression(node), "<test>", "eval"), {"__builtins__": {}}, {})


def _dict_assigned(func: ast.FunctionDef, name: str) -> dict[str, Any]:
    """The dict literal ``func`` assigns to ``name``."""
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return dict(_literal(node.value))
    raise ValueError(f"{func.name} assigns no {name}")


def _dict_returned(func: ast.FunctionDef) -> dict[str, Any]:
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            return dict(_literal(node.value))
    raise ValueError(f"{func.name} returns nothing")


def _rows(func: ast.FunctionDef, argname: str) -> list[Any]:
    """The ``parametrize`` rows of ``func`` for ``argname`` (one name, or the first of a tuple)."""
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize"):
            continue
        names = _literal(deco.args[0])
        names = names.split(",") if isinstance(names, str) else list(names)
        if names[0].strip() == argname:
            return list(_literal(deco.args[1]))
    raise ValueError(f"{func.name} has no parametrize over {argname}")


def _case(
    engine: str, release: str, path: str, func: ast.FunctionDef, suffix: str, **fields: Any
) -> dict[str, Any]:
    name = func.name
    return {
        "id": f"{name.removeprefix('test_')}{suffix}",
        "test": f"{path}::{name}{suffix}",
        "source": f"{engine}=={release}:{path}:{func.lineno}",
        "method": "dspark",
        "expect_stage": None,
        "expect_match": None,
        **fields,
    }


def mla_cases(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The MLA DSpark (``K3DSparkModel``) tests: the config the test writes is accepted, each
    unsupported option is refused while vLLM loads the draft config ("MLA DSpark ...")."""
    file = src / MLA
    if not file.exists():
        return []
    funcs = _functions(ast.parse(file.read_text()))
    draft = _dict_assigned(funcs["_write_dspark_config"], "config")
    target = _dict_assigned(funcs["_write_target_config"], "config")
    common = {"num_speculative_tokens": MLA_TOKENS}
    accepted = {**common, "target": target, "draft": draft, "expect": "accepted"}
    cases = [
        _case(engine, release, MLA, funcs[name], "", **accepted)
        for name in (
            "test_dspark_mla_config_loads_from_local_json",
            "test_dspark_mla_speculative_config_preserves_architecture",
        )
        if name in funcs
    ]
    rejects = funcs.get("test_dspark_mla_rejects_unsupported_checkpoint_options")
    if rejects is not None:
        match = _raises_match(rejects)
        for i, overrides in enumerate(_rows(rejects, "overrides")):
            cases.append(
                _case(
                    engine,
                    release,
                    MLA,
                    rejects,
                    f"[{i}]",
                    **common,
                    target=target,
                    draft={**draft, **overrides},
                    expect="refused",
                    expect_stage="config",
                    expect_match=match,
                )
            )
    return cases


def _raises_match(func: ast.FunctionDef) -> str | None:
    """The ``match=`` of the test's ``pytest.raises``."""
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "raises":
            for kw in node.keywords:
                if kw.arg == "match":
                    return str(_literal(kw.value))
    return None


def muse_cases(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The Muse Spark DSpark config tests (0.33.0 on): the draft config (per
    ``draft_position_mode``), made loadable as vLLM's own test makes it (``MUSE_LOADABLE``),
    with the test's tiny Llama target, accepted."""
    file = src / MUSE
    if not file.exists():
        return []
    funcs = _functions(ast.parse(file.read_text()))
    if "_dspark_config" not in funcs:
        return []
    draft = _dict_returned(funcs["_dspark_config"]) | MUSE_LOADABLE
    builder = funcs.get("_dspark_speculative_config") or funcs.get(
        "test_dspark_speculative_config_preserves_architecture"
    )
    assert builder is not None
    target = _dict_assigned(builder, "target")
    common = {"num_speculative_tokens": MUSE_TOKENS, "target": target, "expect": "accepted"}
    cases = []
    loads = funcs.get("test_dspark_config_loads")
    if loads is not None:
        for i, mode in enumerate(_rows(loads, "mode")):
            cases.append(
                _case(
                    engine,
                    release,
                    MUSE,
                    loads,
                    f"[{i}]",
                    **common,
                    draft={**draft, "draft_position_mode": mode},
                )
            )
    keeps = funcs.get("test_dspark_speculative_config_preserves_architecture")
    if keeps is not None:
        cases.append(_case(engine, release, MUSE, keeps, "", **common, draft=draft))
    return cases


BEAM = "tests/models/test_beam_construction.py"
BEAM_TARGET = {
    "model_type": "beam",
    "architectures": ["BeamForCausalLM"],
    "num_hidden_layers": 36,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "mlp_layer_types": ["dense"] * 36,
    "max_position_embeddings": 32768,
}
"""A Beam target (vLLM's ``BeamConfig``, vllm/transformers_utils/configs/beam.py) as wide and as
deep as the corpus z-lab draft's Qwen3-8B: the test builds three stand-in layers, the ids it
names ([0, 1]) are inside either; dense MLPs, so that the model stage builds it on a CPU."""


def beam_cases(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """``test_dflash_target_layers_capture_layer_outputs`` (0.33.0 on): DFlash ids [0, 1] on a
    Beam target capture the outputs of layers 0 and 1 (aux positions 1, 2), on the corpus
    z-lab draft with the test's ``dflash_config``."""
    from conformance.mined.handwritten import _zlab  # the corpus z-lab draft, edited

    file = src / BEAM
    funcs = _functions(ast.parse(file.read_text())) if file.exists() else {}
    func = funcs.get("test_dflash_target_layers_capture_layer_outputs")
    if func is None:
        return []
    draft = _zlab({"dflash_config": {"target_layer_ids": [0, 1]}})
    return [
        {
            **_case(engine, release, BEAM, func, "", method="dflash"),
            "id": "beam_dflash_target_layers_capture_layer_outputs",
            "num_speculative_tokens": 15,
            "target": BEAM_TARGET,
            "draft": draft,
            "expect": "accepted",
            "expect_aux_layers": [1, 2],
        }
    ]


def cases_for(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The DSpark config-family and aux-capture cases of one release."""
    if engine != "vllm":
        return []
    cases = mla_cases(engine, release, src) + muse_cases(engine, release, src)
    return cases + beam_cases(engine, release, src)


_HF = "tests/config/test_speculative_draft_hf_overrides.py"
_SPEC = "tests/transformers_utils/test_speculators_override.py"
DERIVED_ON_MOCKS = (
    "asserts the values vLLM's draft-config override derives (the draft length from the draft's "
    "block size when none is asked, n_predict, the draft architecture, a VL wrapper's promoted "
    "text_config) on a MagicMock draft and target whose registry lookup is patched: no config "
    "file, no refusal or stage, nothing a pair check is held to"
)
DRAFT_FROM_TARGET = (
    "vLLM takes the draft from the target itself (MiniMax-M3's dspark/ subfolder when no draft "
    "is named; Mistral Large 4's params.json mtp block converted to a DSpark config): there is "
    "no draft config to pair, and `pair` is always given the draft"
)
SERVED_SPECULATORS = (
    "what vLLM does when a speculators checkpoint is served as the model itself "
    "(maybe_override_with_speculators): the verifier it names becomes the target, the user's "
    "--speculative-config dict is merged (runtime fields kept, model and method locked, custom "
    "method names registered), a local verifier path refused; `pair` is given the draft and "
    "the target explicitly and takes no --speculative-config dict"
)
PLAIN_DRAFT_SETTING = (
    "a plain causal LM as its own draft (method draft_model) with no num_speculative_tokens: "
    "vLLM refuses the missing serving setting; the draft is a plain model, not a draft format "
    "the tool reads"
)
CAPTURE_FACT = (
    "asserts a target class's aux capture (its EAGLE-3 interface, the positions it captures, "
    "which speculator configs ask for it) on stand-in modules: what the release's code says per "
    "architecture, recorded per release from that code (dflash_check/knowledge/data/vllm-REL."
    "json: capture and capture sites; the oracle's model stage runs the capture set-up), not a "
    "draft/target config pair"
)
EAGLE1_DRAFT = (
    "an EAGLE (1) draft (EagleLlamaForCausalLM, model_type eagle) fetched from the Hub: a draft "
    "format the tool does not read (EAGLE-3, DFlash, DSpark, NextN only); it asserts the "
    "architecture vLLM renames the draft config to, no pairing check"
)
REVIEWED: dict[str, str] = {
    f"{_HF}::test_dspark_width_is_independent_of_mtp_stages": DERIVED_ON_MOCKS,
    f"{_HF}::test_minimax_dspark_draft_promotes_text_config": DERIVED_ON_MOCKS,
    f"{_HF}::test_minimax_dspark_defaults_to_dspark_subfolder": DRAFT_FROM_TARGET,
    f"{_HF}::test_minimax_dspark_without_subfolder_raises": DRAFT_FROM_TARGET,
    "tests/transformers_utils/test_config.py::test_mistral_large_4_dspark_draft_config": (
        DRAFT_FROM_TARGET
    ),
    **dict.fromkeys(
        (
            f"{_SPEC}::test_speculators_extracts_baseline_config",
            f"{_SPEC}::test_speculators_preserves_user_attention_backend_override",
            f"{_SPEC}::test_speculators_user_cannot_override_model_field",
            f"{_SPEC}::test_speculators_user_cannot_override_method_field",
            f"{_SPEC}::test_speculators_keeps_custom_method_based_on_checkpoint_method",
            f"{_SPEC}::test_speculators_user_can_override_num_speculative_tokens",
            f"{_SPEC}::test_speculators_rejects_local_verifier_before_model_loading",
        ),
        SERVED_SPECULATORS,
    ),
    "tests/v1/test_oracle.py::test_unsupported_configs": PLAIN_DRAFT_SETTING,
    **dict.fromkeys(
        (
            "tests/model_executor/test_plamo3.py::"
            "test_plamo3_returns_dflash_selected_auxiliary_hidden_states",
            "tests/models/kimi_k3/test_eagle3.py::test_kimi_linear_advertises_eagle3_support",
            "tests/v1/worker/test_eagle3_aux_hidden_states_pp.py::"
            "test_aux_hidden_state_requirement_respects_eagle3_config",
        ),
        CAPTURE_FACT,
    ),
    "tests/test_config.py::test_eagle_draft_model_config": EAGLE1_DRAFT,
}
"""The tests of the DSpark, speculators, aux-capture and EAGLE groups read at 0.32.0-0.34.0 and
found not to assert anything a pair check is held to, with the reason (the MLA and Muse Spark
tests are cases above)."""
