"""vLLM's Qwen3-Omni DSpark checkpoint contract (DF055): what vLLM checks, field by field, when
a DSpark draft is named for a Qwen3-Omni target.

vLLM 0.32.0-0.34.0 run ``_validate_qwen3_omni_dspark`` while the speculative config is resolved
(``Release.omni_dspark_contract`` cites it per release), before any weight loads: a refusal
stops start-up with vLLM's message, quoted here. The function stops at its first refusal; this
rule reports each field it refuses, in vLLM's order.

A key the draft (or the target's text model) does not state takes the default of the config
class transformers builds (``Qwen3Config`` has a ``head_dim``, ``hidden_size``, vocabulary and
head counts of its own), which a config file does not show: those comparisons are made only
where both sides state the key. Keys no config class defaults (``target_hidden_size``, the ids,
the Markov head, ``use_aux_hidden_state``, the noise token) are refused when absent, as vLLM's
``getattr(..., None)`` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, contract_issues, rule
from dflash_check.knowledge.engines import VLLM_RUNNERS
from dflash_check.views import ATTENTION_KEYS, DraftView, TargetView

OMNI_TARGET_MODEL_TYPE = "qwen3_omni_moe"
OMNI_TARGET_ARCHITECTURES = frozenset(
    {"Qwen3OmniMoeForConditionalGeneration", "Qwen3OmniMoeThinkerForConditionalGeneration"}
)
"""What makes a target Qwen3-Omni for vLLM (vllm==0.34.0:vllm/config/speculative.py:101-106,
:158-164): its top-level ``model_type`` or one of these architectures."""
OMNI_DRAFT_ARCHITECTURE = "Qwen3OmniDSparkModel"


def is_omni_target(target: TargetView) -> bool:
    """Whether vLLM treats the target as Qwen3-Omni (and so runs the contract)."""
    return OMNI_TARGET_MODEL_TYPE in target.model_types[:1] or bool(
        OMNI_TARGET_ARCHITECTURES & set(target.architectures)
    )


def _positive_int(value: Any) -> bool:
    """vLLM's test: an int, not a bool, above zero."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _head_dim(values: Mapping[str, Any]) -> Any:
    """``_get_attention_head_dim`` (:175-188): ``head_dim``, else hidden / heads when exact."""
    if values.get("head_dim") is not None:
        return values["head_dim"]
    hidden, heads = values.get("hidden_size"), values.get("num_attention_heads")
    if _positive_int(hidden) and _positive_int(heads) and hidden % heads == 0:
        return hidden // heads
    return None


def contract_refusals(
    draft: DraftView, target: TargetView, num_speculative_tokens: int | None
) -> Iterator[tuple[str, str]]:
    """Yield (field, vLLM's message) for each check of the contract the pair fails, in the
    order of vllm==0.34.0:vllm/config/speculative.py:209-434."""
    assert draft.dspark is not None  # the rule asks only for DSpark drafts
    found = {name: (key, json.loads(text)) for name, key, text in draft.dspark.omni_contract}
    values = {name: value for name, (_, value) in found.items()}

    def where(name: str) -> str:
        return found[name][0] if name in found else name

    if OMNI_DRAFT_ARCHITECTURE not in draft.architectures:  # :216-225
        yield (
            "architectures",
            f"Qwen3-Omni DSpark requires a standalone draft checkpoint with architectures="
            f"['{OMNI_DRAFT_ARCHITECTURE}']; generic Qwen3DSparkModel checkpoints must be "
            "converted first.",
        )
    block = values.get("block_size", values.get("dspark_block_size"))
    if not _positive_int(block):  # :227-238
        yield (
            where("block_size"),
            "Qwen3-Omni DSpark requires a positive integer block_size in the draft config.",
        )
    elif num_speculative_tokens is not None and num_speculative_tokens != block:  # :239-243
        yield (
            "num_speculative_tokens",
            "Qwen3-Omni DSpark requires num_speculative_tokens to match the trained block_size "
            f"({block}); got {num_speculative_tokens}.",
        )
    hidden = target.hidden_size
    if values.get("target_hidden_size") != hidden:  # :250-260
        yield (
            where("target_hidden_size"),
            "Qwen3-Omni DSpark draft target_hidden_size must match the target text hidden "
            f"size ({hidden}); got {values.get('target_hidden_size')}.",
        )
    if "hidden_size" in values and values["hidden_size"] != hidden:  # :261-266
        yield (
            where("hidden_size"),
            "Qwen3-Omni DSpark draft hidden_size must match the target thinker hidden size "
            f"({hidden}); got {values['hidden_size']}.",
        )
    yield from _attention_refusals(values, where, target)
    yield from _layer_id_refusals(values, where, target)
    yield from _head_refusals(values, where)
    yield from _vocab_refusals(values, where, target)
    rope = (values.get("rope_parameters"), values.get("rope_scaling"))
    if "mrope_section" in values or any(  # :420-434
        isinstance(r, Mapping) and "mrope_section" in r for r in rope
    ):
        yield (
            where("mrope_section") if "mrope_section" in values else "rope_parameters",
            "Qwen3-Omni DSpark draft checkpoints must use logical 1-D RoPE and must not "
            "define mrope_section.",
        )


def _attention_refusals(
    values: Mapping[str, Any], where: Any, target: TargetView
) -> Iterator[tuple[str, str]]:
    """:268-300: heads, key/value heads and head width equal the thinker's (compared only where
    both configs state them: an absent one is the config class's default)."""
    theirs: dict[str, Any] = {name: json.loads(text) for name, text in target.attention}
    if "hidden_size" not in theirs:
        theirs["hidden_size"] = target.hidden_size
    for name in ATTENTION_KEYS:
        if name == "head_dim":
            mine, want = _head_dim(values), _head_dim(theirs)
        else:
            mine, want = values.get(name), theirs.get(name)
        if mine is None or want is None:
            continue
        if not _positive_int(want):
            continue  # the target's own malformed value: the target rules say so
        if mine != want:
            yield (
                where(name),
                f"Qwen3-Omni DSpark draft {name} must match the target thinker value "
                f"({want}); got {mine}.",
            )


def _layer_id_refusals(
    values: Mapping[str, Any], where: Any, target: TargetView
) -> Iterator[tuple[str, str]]:
    """:302-328: a non-empty list of ints, strictly increasing, inside [0, N-1]."""
    ids = values.get("target_layer_ids")
    key = where("target_layer_ids")
    if not isinstance(ids, list) or not ids:
        yield (
            key,
            "Qwen3-Omni DSpark requires a non-empty target_layer_ids list in the draft config.",
        )
        return
    if any(not isinstance(t, int) or isinstance(t, bool) for t in ids):
        yield (key, "Qwen3-Omni DSpark target_layer_ids must contain only integers.")
        return
    if ids != sorted(set(ids)):
        yield (
            key,
            "Qwen3-Omni DSpark target_layer_ids must be unique and strictly increasing.",
        )
        return
    n = target.num_hidden_layers
    if ids[0] < 0 or ids[-1] >= n:
        yield (
            key,
            "Qwen3-Omni DSpark target_layer_ids must be zero-based text-layer indices in "
            f"[0, {n - 1}]; got {ids}.",
        )


def _head_refusals(values: Mapping[str, Any], where: Any) -> Iterator[tuple[str, str]]:
    """:330-365: aux hidden states on, a vanilla Markov head of positive rank, sampling from
    the anchor and no bonus anchor."""
    if values.get("use_aux_hidden_state") is not True:
        yield (
            where("use_aux_hidden_state"),
            "Qwen3-Omni DSpark requires use_aux_hidden_state=true because Omni conditioning "
            "is supplied through thinker hidden states.",
        )
    if not _positive_int(values.get("markov_rank")):
        yield (
            where("markov_rank"),
            "Qwen3-Omni DSpark requires a positive integer markov_rank in the draft config.",
        )
    if values.get("markov_head_type") != "vanilla":
        yield (
            where("markov_head_type"),
            "Qwen3-Omni DSpark currently requires markov_head_type='vanilla'; got "
            f"{values.get('markov_head_type')!r}.",
        )
    anchor = values.get("sample_from_anchor", True)
    bonus = values.get("dspark_bonus_anchor", False)
    if anchor is not True or bonus is not False:
        yield (
            where("sample_from_anchor" if anchor is not True else "dspark_bonus_anchor"),
            "Qwen3-Omni DSpark requires sample_from_anchor=true and dspark_bonus_anchor=false.",
        )


def _vocab_refusals(
    values: Mapping[str, Any], where: Any, target: TargetView
) -> Iterator[tuple[str, str]]:
    """:367-418: a positive input vocabulary (it may be smaller than the target's, or hold one
    draft-only noise row more), an output vocabulary no larger than the target's, and a noise
    token inside the input vocabulary."""
    if "vocab_size" not in values:
        return  # the config class's default: not known from the file
    vocab = values["vocab_size"]
    if not _positive_int(vocab):
        yield (
            where("vocab_size"),
            f"Qwen3-Omni DSpark input vocab_size must be a positive integer; got {vocab}.",
        )
        return
    out = values.get("draft_vocab_size", vocab)
    if not _positive_int(out) or out > target.vocab_size:
        yield (
            where("draft_vocab_size") if "draft_vocab_size" in values else where("vocab_size"),
            "Qwen3-Omni DSpark draft_vocab_size must be a positive integer no larger than "
            f"target vocab_size ({target.vocab_size}); got {out}.",
        )
        return
    noise = values.get("mask_token_id")
    if not (isinstance(noise, int) and not isinstance(noise, bool) and 0 <= noise < vocab):
        yield (
            where("mask_token_id"),
            "Qwen3-Omni DSpark requires a valid mask/noise token id within the draft input "
            f"vocabulary [0, {vocab - 1}].",
        )


def vocabulary_by_contract(ctx: PairContext) -> frozenset[str]:
    """Return the runtimes on which the contract decides the draft's vocabulary: vLLM releases
    that have it, for a Qwen3OmniDSparkModel draft on a Qwen3-Omni target whose vocabulary
    checks pass. There the draft keeps its own input embedding, which may be smaller than the
    target's or hold one draft-only noise row past it (vLLM's tests accept both,
    tests/test_config.py:4148-4164 in 0.34.0), so the generic vocabulary rules stand aside."""
    d = ctx.draft
    if d.dspark is None or not is_omni_target(ctx.target):
        return frozenset()
    if OMNI_DRAFT_ARCHITECTURE not in d.architectures:
        return frozenset()
    found = {name: json.loads(text) for name, _, text in d.dspark.omni_contract}
    if list(_vocab_refusals(found, lambda name: name, ctx.target)):
        return frozenset()
    return frozenset(
        p.name
        for p in ctx.profiles
        if p.release is not None and p.release.omni_dspark_contract is not None
    )


@rule(
    "DF055",
    "omni-dspark-contract",
    Severity.ERROR,
    "The DSpark draft breaks vLLM's Qwen3-Omni DSpark checkpoint contract",
    "For a Qwen3-Omni target vLLM checks a DSpark draft field by field while it resolves the "
    "speculative config, before any weight loads (vllm==0.34.0:vllm/config/speculative.py"
    ":209-434, run by spec_decode/dspark/config.py:124-127; 0.32.0 :147-372 and 0.33.0 "
    ":167-392, run at :1543 and :1674): a standalone Qwen3OmniDSparkModel checkpoint whose "
    "widths and heads equal the thinker's text model, strictly increasing ids inside it, aux "
    "hidden states on, a vanilla Markov head of positive rank, sampling from the anchor, a "
    "positive vocabulary whose noise token it holds, and 1-D RoPE. vLLM's own tests pin each "
    "check (tests/test_config.py:4059-4176 in 0.34.0).",
    "Convert the draft to the Qwen3-Omni DSpark layout vLLM expects, with the values its "
    "message names.",
    runtimes=VLLM_RUNNERS,
    methods=("dspark",),
)
def check_omni_dspark(ctx: PairContext) -> Iterator[Issue]:
    """Name each field of the contract the pair fails, on each vLLM release that has it."""
    if not is_omni_target(ctx.target) or ctx.draft.dspark is None:
        return
    refusals = tuple(contract_refusals(ctx.draft, ctx.target, ctx.num_speculative_tokens))
    # The release's reviewed semantics say whether it has the contract (vLLM >= 0.32).
    yield from contract_issues(
        ctx,
        refusals,
        lambda release: release.omni_dspark_contract,
        f"draft {ctx.draft.name} with target {ctx.target.name} (Qwen3-Omni)",
    )


RULES: tuple[Rule, ...] = (check_omni_dspark,)
