"""SGLang's translation of a MiniMax DSpark draft (DF062): what it requires, key by key.

SGLang 0.5.23 does not read a ``DSparkMiniMaxDraftModel`` checkpoint as it reads other DSpark
drafts: ``configure_minimax_m3_dspark`` first copies the top-level ``dspark_*`` keys onto the
draft's ``text_config`` (or the config itself without one), then rebuilds the draft config from
them (``Release.minimax_dspark_contract`` cites it). It indexes and converts each key without a
default, so a key the checkpoint lacks raises (KeyError, AttributeError, or TypeError from
``int(None)``) when the draft's model config is built at load; the server does not start. The
function stops at its first failure; this rule reports each one, in SGLang's order. vLLM reads
the same draft otherwise (its own defaults; DF025 for its Markov key).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, contract_issues, rule
from dflash_check.knowledge.engines import SGLANG
from dflash_check.views import DraftView

# The draft's own keys SGLang converts with int() and no default, in the order it reads them
# (minimax_vl.py:75-89), with how it reads each: the exception a missing key raises.
_REQUIRED = (
    ("num_target_layers", "dflash_config.num_target_layers", "KeyError: num_target_layers"),
    ("num_hidden_layers", "dflash_config.num_hidden_layers", "KeyError: num_hidden_layers"),
    (
        "ffn_hidden_size",
        "dspark_config.ffn_hidden_size",
        "TypeError: int() argument must be a string, a bytes-like object or a real number, not "
        "NoneType",
    ),
    (
        "dspark_block_size",
        "dspark_block_size",
        "AttributeError: no attribute dspark_block_size",
    ),
    (
        "dspark_markov_rank",
        "dspark_markov_rank",
        "AttributeError: no attribute dspark_markov_rank",
    ),
    (
        "dspark_noise_token_id",
        "dspark_noise_token_id",
        "AttributeError: no attribute dspark_noise_token_id",
    ),
)


def _int(value: Any) -> bool:
    """Whether Python's ``int()`` takes ``value`` as a count: an integer (a bool is one)."""
    return isinstance(value, int)


def contract_refusals(draft: DraftView) -> Iterator[tuple[str, str]]:
    """Yield (field, SGLang's exception) for each value the translation fails on, in the order
    of sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111."""
    assert draft.dspark is not None  # the rule asks only for DSpark drafts
    found = {name: (key, json.loads(text)) for name, key, text in draft.dspark.minimax_contract}
    root = draft.config_root

    dense = found.get("use_dense_ffn")
    if dense is None or not dense[1]:  # :71-72
        yield (
            dense[0] if dense else f"{root}dspark_config.use_dense_ffn",
            "M3.1 DSpark requires the dense draft FFN checkpoint",
        )
    for name, where, error in _REQUIRED:  # :73-89
        value = found.get(name)
        if value is None:
            # A missing dspark_* key is named at the top level, which SGLang copies from;
            # a section's key at the root it reads.
            flat = where.startswith("dspark_") and "." not in where
            yield (where if flat else f"{root}{where}", error)
        elif not _int(value[1]):
            yield (value[0], f"int() of {json.dumps(value[1])}")
    ids, depth = found.get("target_layer_ids"), found.get("num_target_layers")
    if ids is None:  # :93
        yield (f"{root}dflash_config.target_layer_ids", "KeyError: target_layer_ids")
        return
    key, values = ids
    if not isinstance(values, list) or not all(_int(i) for i in values):
        yield (key, f"int() of each of {json.dumps(values)}")
        return
    bound = depth[1] if depth is not None and _int(depth[1]) else None
    if (
        not values
        or len(set(values)) != len(values)
        or (bound is not None and any(i < 0 or i >= bound for i in values))
    ):  # :94-101
        yield (key, "M3.1 DSpark capture layer IDs must be unique and in [0, target depth)")


@rule(
    "DF062",
    "minimax-dspark-config",
    Severity.ERROR,
    "A MiniMax DSpark draft lacks a key SGLang's translation of it requires",
    "SGLang translates a DSparkMiniMaxDraftModel draft before it builds it: it copies the "
    "top-level dspark_* keys onto text_config (or the config itself), then requires a dense "
    "FFN (dspark_config.use_dense_ffn or dspark_use_dense_ffn: 'M3.1 DSpark requires the dense "
    "draft FFN checkpoint'), dflash_config.num_target_layers and num_hidden_layers, the FFN "
    "width, dspark_block_size, dspark_markov_rank and dspark_noise_token_id, each converted "
    "with int() and no default, and dflash_config.target_layer_ids unique and inside the "
    "target depth (sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111, run at load by "
    "configs/model_config.py:1019-1027). A missing key raises there: the server does not start.",
    "Publish the MiniMax DSpark draft with the dspark_* keys (block size, Markov rank, noise "
    "token), a dense FFN and dflash_config's layer counts and ids, as the engine reads them.",
    runtimes=(SGLANG.name,),
    methods=("dspark",),
)
def check_minimax_dspark(ctx: PairContext) -> Iterator[Issue]:
    """Name each key SGLang's MiniMax DSpark translation fails on, on each release that has it."""
    d = ctx.draft
    if d.dspark is None or not _is_minimax(d):
        return
    refusals = tuple(contract_refusals(d))
    yield from contract_issues(
        ctx,
        refusals,
        lambda release: release.minimax_dspark_contract,
        f"draft {d.name} (MiniMax DSpark)",
    )


def _is_minimax(d: DraftView) -> bool:
    """Whether the draft is the one SGLang translates (its first architecture, model_config.py
    :1019-1022; the normaliser reads the values for it alone)."""
    return d.architectures[:1] == ("DSparkMiniMaxDraftModel",)


RULES: tuple[Rule, ...] = (check_minimax_dspark,)
