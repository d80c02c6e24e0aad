"""Cases from vLLM's own code, no test read (issue 29, item 2): what the tool learned from a
release's source without a test of the release pinning it, held to the release's start-up code
by the oracle (``conformance/oracle.py``).

Each case names the line of the release that decides it (``release_check``, also ``test``:
``vllm==REL:path:line (no test read)``), read from the release's source archive when the cases
are written (``_line``: the line holding a needle string): a release whose source lacks the
needle gets the case with the expectation for that (``absent``), or none. ``expect_stage``
``model``: the refusal is raised when the draft is built (the oracle's model stage on the meta
device; ``model_outcome`` asks the oracle to take that stage's error as the outcome). Nothing
here imports vLLM.

Not made here: Nemotron Parse 3.5's one-step limit (DF059). The check runs once vLLM has the
draft config built from the loaded target (``MTPSpeculatorConfig.resolve_num_speculative_
tokens``, vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/mtp/config.py:101-106), and the
``nemotron_parse`` target config is code the checkpoint ships (transformers does not recognise
it): a config-only target stops in the loader, and the driver's fallback (``hf_config_override``
alone) never reaches the check.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.mined.handwritten import QWEN3_8B, REPO, ZLAB_DRAFT

DFLASH2_DRAFT = "tests/fixtures/drafts/z-lab--Qwen3.8-27B-DFlash2"
"""A DFlash 2 draft as published: already non-causal with sliding layers (Beam's contract
but for its softcapping)."""
QWEN36_27B = "tests/fixtures/targets/Qwen--Qwen3.6-27B"
SPECFORGE_DSPARK = "tests/fixtures/drafts/sgl-project--SpecForge-qwen3-8b-dspark"

REGISTRY = "vllm/model_executor/models/registry.py"
UNSUPPORTED = "are not supported for now"
XPRESS = "vllm/model_executor/models/qwen3_xpress.py"
BEAM = "vllm/models/beam/nvidia/dflash2.py"
SPEC = "vllm/config/speculative.py"

MUSE_DRAFT = {
    "model_type": "muse_spark_dspark", "num_hidden_layers": 2, "moe": {"is_enabled": False},
    "global_attn_cfg": [2048], "layer_types": ["sliding_attention", "sliding_attention"],
    "target_layer_ids": [1, 3], "num_target_layers": 2, "markov_rank": 8,
    "markov_head_type": "vanilla", "dflash_config": {"causal": True, "target_layer_ids": [1, 3]},
    "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
    "vocab_size": 128, "mask_token_id": 127, "target_hidden_size": 64,
    "enable_confidence_head": False, "draft_position_mode": "rope",
}  # fmt: skip
"""The Muse Spark DSpark draft of vLLM 0.33.0's ``test_dspark_config_loads[0]``
(``dspark_cases.muse_cases``: ``_dspark_config`` made loadable as the release's own test makes
it), put to 0.32.0, whose model registry has no ``MuseSparkDSparkModel``."""
MUSE_TARGET = {
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 4, "vocab_size": 128,
}  # fmt: skip
"""That test's tiny Llama target."""


def _config(path: str, **edits: Any) -> dict[str, Any]:
    config = json.loads((REPO / path / "config.json").read_text())
    config.update(copy.deepcopy(edits))
    return config


def _beam(**dflash: Any) -> dict[str, Any]:
    """The DFlash 2 draft named ``DFlash2BeamDraftModel``, ``dflash`` merged into its
    dflash_config (a None value removes the key)."""
    config = _config(DFLASH2_DRAFT, architectures=["DFlash2BeamDraftModel"])
    config["dflash_config"].update(final_logit_softcapping=30.0)
    for key, value in dflash.items():
        if value is None:
            config["dflash_config"].pop(key)
        else:
            config["dflash_config"][key] = value
    return config


def _line(src: Path, path: str, needle: str) -> int | None:
    """The first line of ``path`` at the release holding ``needle`` (None: not there)."""
    file = src / path
    if not file.exists():
        return None
    for number, text in enumerate(file.read_text().splitlines(), 1):
        if needle in text:
            return number
    return None


Expect = tuple[str, str | None, str | None]
"""(expect, expect_stage, expect_match)."""
ACCEPTED: Expect = ("accepted", None, None)
UNREGISTERED: Expect = ("refused", "config", UNSUPPORTED)


def _mtp(architecture: str, n_predict: int | None) -> dict[str, Any]:
    return {"expect_mtp": {"architectures": [architecture], "n_predict": n_predict}}


ROWS: tuple[tuple[str, str, Callable[[], tuple[dict | str, dict | str | None]], int,
                  tuple[str, str], Expect | None, Expect | None, dict[str, Any]], ...] = (
    # XPress: both names are Qwen3XPressForCausalLM (0.33.0 on), whose __init__ refuses a
    # draft vocabulary other than the target's; 0.32.0 has no XPress class.
    ("xpress-full-vocabulary", "dflash",
     lambda: (_config(ZLAB_DRAFT, architectures=["Qwen3XPressModel"]), QWEN3_8B), 15,
     (XPRESS, "XPress currently requires a full-vocab draft"), ACCEPTED, UNREGISTERED, {}),
    ("xpress-padded-vocabulary", "dflash",
     lambda: (_config(ZLAB_DRAFT, architectures=["DFlashQwen3XPressModel"],
                      vocab_size=152064), QWEN3_8B), 15,
     (XPRESS, "XPress currently requires a full-vocab draft"),
     ("refused", "model", "XPress currently requires a full-vocab draft"), None, {}),
    # vLLM's own Beam DFlash 2 class (0.33.0 on): dflash_config['final_logit_softcapping'] read
    # in __init__, every layer asserted non-causal and sliding.
    ("beam-dflash2-contract", "dflash", lambda: (_beam(), QWEN36_27B), 7,
     (BEAM, 'draft_config["final_logit_softcapping"]'), ACCEPTED, UNREGISTERED, {}),
    ("beam-dflash2-no-softcapping", "dflash",
     lambda: (_beam(final_logit_softcapping=None), QWEN36_27B), 7,
     (BEAM, 'draft_config["final_logit_softcapping"]'),
     ("refused", "model", "final_logit_softcapping"), None, {}),
    ("beam-dflash2-causal", "dflash", lambda: ({**_beam(), "is_causal": True}, QWEN36_27B), 7,
     (BEAM, "assert not config.is_causal"), ("refused", "model", "^AssertionError"),
     None, {}),
    # A DFlash 2 draft stating no_rope_layers: 0.34.0 renames it to its Ricursive class
    # (hf_config_override), 0.32.0 and 0.33.0 build it as DFlash 2 (every layer rotated).
    ("dflash2-no-rope-layers", "dflash",
     lambda: (_config(DFLASH2_DRAFT, no_rope_layers=[1, 0, 1, 0, 1]), QWEN36_27B), 7,
     (REGISTRY, '"DFlash2DraftModel"'), ACCEPTED, None, {}),
    # MiniMax's DFlash 2 class is SGLang's; no vLLM release registers it.
    ("minimax-dflash2-unregistered", "dflash",
     lambda: (_config(DFLASH2_DRAFT, architectures=["MiniMaxDFlash2DraftModel"]), QWEN36_27B),
     7, (REGISTRY, UNSUPPORTED), UNREGISTERED, None, {}),
    # Muse Spark DSpark: registered from 0.33.0 (the mined cases there); 0.32.0 has neither the
    # class nor its config type.
    ("muse-spark-dspark", "dspark", lambda: (MUSE_DRAFT, MUSE_TARGET), 7,
     (REGISTRY, '"MuseSparkDSparkModel"'), ACCEPTED, ("refused", "config", None), {}),
    # MiniMax DSpark: registered from 0.34.0 (its target family is not in the corpus).
    ("dspark-minimax-unregistered", "dspark",
     lambda: (_config(SPECFORGE_DSPARK, architectures=["DSparkMiniMaxDraftModel"]),
              "tests/fixtures/targets/Qwen--Qwen3-8B"), 7,
     (REGISTRY, '"DSparkMiniMaxDraftModel"'), None, UNREGISTERED, {}),
    # MTP: a target stating no num_nextn_predict_layers; vLLM loads deepseek_v32 and kimi_k2
    # through DeepseekV3Config (default 1), and hf_config_override maps deepseek_v32 (not
    # kimi_k2) to its MTP draft.
    ("mtp-deepseek-v32-no-key", "mtp",
     lambda: ({"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
               "hidden_size": 7168, "num_hidden_layers": 61, "vocab_size": 129280}, None), 1,
     (SPEC, "use_v32_mtp = "), ACCEPTED, None, _mtp("DeepseekV32MTPModel", 1)),
    ("mtp-kimi-k2-no-key", "mtp",
     lambda: ({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
               "hidden_size": 7168, "num_hidden_layers": 61, "vocab_size": 163840}, None), 1,
     (SPEC, "use_v32_mtp = "), ACCEPTED, None, _mtp("DeepseekV3ForCausalLM", None)),
)  # fmt: skip
"""(case id, method, () -> (draft, target), draft tokens, (path, needle) of the deciding line,
the expectation where the release has the needle and where it has not (None: no case
there), extra fields). The MTP rows' "draft" is the target (``draft`` null in the case)."""


def cases_for(engine: str, release: str, src: Path) -> list[dict[str, Any]]:
    """The code cases of one vLLM release, each citing the release's line."""
    if engine != "vllm":
        return []
    cases = []
    for case_id, method, configs, k, (path, needle), present, absent, extra in ROWS:
        line = _line(src, path, needle)
        expect = present if line is not None else absent
        if expect is None:
            continue
        where = f"{engine}=={release}:{path}" + (f":{line}" if line else " (absent)")
        if line is None:  # the model registry's refusal decides
            where = f"{engine}=={release}:{REGISTRY}:{_line(src, REGISTRY, UNSUPPORTED)}"
        first, second = configs()
        mtp = method == "mtp"
        outcome, stage, match = expect
        cases.append(
            {
                "id": f"code-{case_id}",
                "test": f"{where} (no test read)",
                "source": where,
                "release_check": where,
                "method": method,
                "num_speculative_tokens": k,
                "target": first if mtp else second,
                "draft": None if mtp else first,
                "expect": outcome,
                "expect_stage": stage,
                "expect_match": match,
                **({"model_outcome": True} if stage == "model" else {}),
                **extra,
            }
        )
    return cases
