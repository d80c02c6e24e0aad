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

Nemotron Parse 3.5's one-step limit (DF059) only on 0.34.0: its ``nemotron_parse`` target
config is code the checkpoint ships (transformers does not recognise it), so a config-only
target stops in vLLM's loader and the driver runs the MTP path alone (``_override_record``):
``hf_config_override``, then 0.34.0's own check, a classmethod
(``MTPSpeculatorConfig.resolve_num_speculative_tokens``, vllm==0.34.0:vllm/v1/worker/gpu/
spec_decode/mtp/config.py:101-106). 0.33.0 checks it inside ``SpeculativeConfig.__post_init__``
(config/speculative.py:1587-1591), which needs the loaded target: not reached here, no case.
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
     (SPEC, '"no_rope_layers", None'), ACCEPTED, ACCEPTED, {}),
    # MiniMax's DFlash 2 class is SGLang's; no vLLM release registers it.
    ("minimax-dflash2-unregistered", "dflash",
     lambda: (_config(DFLASH2_DRAFT, architectures=["MiniMaxDFlash2DraftModel"]), QWEN36_27B),
     7, (REGISTRY, UNSUPPORTED), UNREGISTERED, None, {}),
    # Muse Spark DSpark: registered from 0.33.0 (the mined cases there); 0.32.0 has neither the
    # class nor its config type.
    ("muse-spark-dspark", "dspark", lambda: (MUSE_DRAFT, MUSE_TARGET), 7,
     (REGISTRY, '"MuseSparkDSparkModel"'), ACCEPTED,
     ("refused", "config", "model type `muse_spark_dspark`"), {}),
    # MiniMax DSpark: registered from 0.34.0 (its target family is not in the corpus).
    ("dspark-minimax-unregistered", "dspark",
     lambda: (_config(SPECFORGE_DSPARK, architectures=["DSparkMiniMaxDraftModel"]),
              "tests/fixtures/targets/Qwen--Qwen3-8B"), 7,
     (REGISTRY, '"DSparkMiniMaxDraftModel"'), None, UNREGISTERED, {}),
    # ... and from 0.34.0 its draft config override reads the Markov rank from
    # dspark_markov_rank alone (in text_config where the draft has one). The target is a
    # stand-in (Qwen3-8B; no MiniMax M3 config in the corpus): the override runs on the draft's
    # config whatever the target, and the model stage is not run (``model_stage`` false).
    ("dspark-minimax-markov-key", "dspark",
     lambda: (_config(SPECFORGE_DSPARK, architectures=["DSparkMiniMaxDraftModel"],
                      dspark_markov_rank=256), QWEN3_8B), 7,
     (SPEC, '"markov_rank": hf_config.dspark_markov_rank'), ACCEPTED, None,
     {"model_stage": False}),
    ("dspark-minimax-no-markov-key", "dspark",
     lambda: (_config(SPECFORGE_DSPARK, architectures=["DSparkMiniMaxDraftModel"],
                      markov_rank=256), QWEN3_8B), 7,
     (SPEC, '"markov_rank": hf_config.dspark_markov_rank'),
     ("refused", "config", "has no attribute 'dspark_markov_rank'"), None,
     {"model_stage": False}),
    # MTP: a target stating no num_nextn_predict_layers; vLLM loads deepseek_v32 and kimi_k2
    # through DeepseekV3Config (default 1), and hf_config_override maps deepseek_v32 (not
    # kimi_k2) to its MTP draft.
    ("mtp-deepseek-v32-no-key", "mtp",
     lambda: ({"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
               "hidden_size": 7168, "num_hidden_layers": 61, "vocab_size": 129280}, None), 1,
     (SPEC, "use_v32_mtp = "), ACCEPTED, None, _mtp("DeepseekV32MTPModel", 1)),
    ("mtp-nemotron-parse-k2", "mtp",
     lambda: ({"architectures": ["RadioMBartPrefixForCausalLM"],
               "decoder": {"causal_vision_prefix": True, "vocab_size": 8, "d_model": 4}}, None),
     2, ("vllm/v1/worker/gpu/spec_decode/mtp/config.py", "only one trained MTP step"),
     ("refused", "config", "only one trained MTP step"), None, {}),
    # kimi_k2 is not mapped: 0.32.0 and 0.33.0 refuse method mtp for a draft config whose
    # model type is no MTP type; 0.34.0 accepts it at start-up with the target's own config as
    # the draft's (no n_predict).
    ("mtp-kimi-k2-no-key", "mtp",
     lambda: ({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
               "hidden_size": 7168, "num_hidden_layers": 61, "vocab_size": 163840}, None), 1,
     (SPEC, "Unsupported speculative method"),
     ("refused", "config", "Unsupported speculative method: 'mtp'"), ACCEPTED,
     _mtp("DeepseekV3ForCausalLM", None)),
)  # fmt: skip
"""(case id, method, () -> (draft, target), draft tokens, (path, needle) of the deciding line,
the expectation where the release has the needle and where it has not (None: no case
there), extra fields). The MTP rows' "draft" is the target (``draft`` null in the case)."""


ABSENT_AT: dict[str, tuple[str, str]] = {
    "mtp-kimi-k2-no-key": (SPEC, "use_v32_mtp = "),  # 0.34.0: the mapping leaves it alone
    "dflash2-no-rope-layers": (REGISTRY, '"DFlash2DraftModel"'),  # built as DFlash 2
    # 0.32.0's config registry has no muse_spark_dspark (0.33.0: transformers_utils/config.py
    # :145): the model type goes to transformers' AutoConfig, which does not know it.
    "muse-spark-dspark": (
        "vllm/transformers_utils/config.py",
        "config = AutoConfig.from_pretrained(",
    ),
}
"""The line that decides a case where its needle is absent, when not the model registry's
refusal of an unknown architecture."""


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
        if line is None:  # what decides where the needle is absent
            path, needle = ABSENT_AT.get(case_id, (REGISTRY, UNSUPPORTED))
            line = _line(src, path, needle)
        where = f"{engine}=={release}:{path}:{line}"
        first, second = configs()
        mtp = method == "mtp"
        outcome, stage, match = expect
        if outcome == "refused":  # nothing derived to compare
            extra = {k: v for k, v in extra.items() if k != "expect_mtp"}
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
