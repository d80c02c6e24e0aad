"""vLLM's MLA DSpark checkpoint contract (DF057): what vLLM checks when it reads the config of a
``K3DSparkModel`` draft (Kimi K3's dense MLA DSpark).

vLLM 0.32.0-0.34.0 build ``K3DSparkConfig`` from the draft's ``config.json`` while the
speculative config is resolved (``Release.mla_dspark_contract`` cites it), before any weight
loads; its ``ValueError`` stops start-up with the message quoted here. It refuses the MLA
options it does not implement, a null ``q_lora_rank``, an output vocabulary other than the input
one (the draft shares the target's embedding and LM head), and ids that are missing, empty or
not counted by ``num_target_layers``. vLLM's own tests pin each refusal
(tests/transformers_utils/test_dspark_mla_config.py, ``test_dspark_mla_rejects_unsupported_
checkpoint_options``).

Keys the file does not state take ``DeepseekV3Config``'s defaults (a ``q_lora_rank`` and a
``vocab_size`` of its own), which a config file does not show: those are judged only where the
draft states them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, contract_issues, rule
from dflash_check.knowledge.engines import VLLM_RUNNERS
from dflash_check.views import DraftView

MLA_DSPARK_ARCHITECTURE = "K3DSparkModel"
UNSUPPORTED = ("mla_use_nope", "mla_use_output_gate", "mla_use_qk_norm", "dspark_bonus_anchor")
"""Options vLLM's MLA DSpark refuses when true (k3_dspark.py:44-53)."""


def contract_refusals(draft: DraftView) -> Iterator[tuple[str, str]]:
    """Yield (field, vLLM's message) for each check of the contract the draft fails, in the
    order of vllm==0.32.0:vllm/transformers_utils/configs/k3_dspark.py:44-77 (vLLM raises at
    the first of its three checks; each is reported)."""
    assert draft.dspark is not None  # the rule asks only for DSpark drafts
    values = {name: json.loads(text) for name, text in draft.dspark.mla_contract}
    unsupported = [name for name in UNSUPPORTED if values.get(name)]
    if "q_lora_rank" in values and values["q_lora_rank"] is None:  # :54-55
        unsupported.append("q_lora_rank=None")
    if unsupported:  # :56-59
        message = "MLA DSpark does not support " + ", ".join(unsupported) + "."
        for name in unsupported:
            yield name.removesuffix("=None"), message
    vocab, out = values.get("vocab_size"), values.get("draft_vocab_size")
    if vocab and out and out != vocab:  # :61-68 (a null or 0 draft_vocab_size reads as vocab)
        yield (
            "draft_vocab_size",
            "MLA DSpark requires draft_vocab_size to equal vocab_size when sharing the target "
            "embedding and LM head.",
        )
    ids = values.get("target_layer_ids")
    if not ids or not isinstance(ids, list) or values.get("num_target_layers") != len(ids):
        yield (  # :70-77
            "target_layer_ids" if not ids else "num_target_layers",
            "MLA DSpark requires non-empty target_layer_ids and a matching num_target_layers.",
        )


@rule(
    "DF057",
    "mla-dspark-contract",
    Severity.ERROR,
    "The MLA DSpark draft breaks vLLM's MLA DSpark checkpoint contract",
    "vLLM reads a K3DSparkModel draft's config with its own K3DSparkConfig while it resolves "
    "the speculative config, before any weight loads (vllm==0.32.0:vllm/transformers_utils/"
    "configs/k3_dspark.py:44-77, the same in 0.33.0 and 0.34.0): it refuses mla_use_nope, "
    "mla_use_output_gate, mla_use_qk_norm and dspark_bonus_anchor, a null q_lora_rank, a "
    "draft_vocab_size other than vocab_size (the draft shares the target's embedding and LM "
    "head), and target_layer_ids that are missing, empty or not counted by num_target_layers. "
    "vLLM's own tests pin each check (tests/transformers_utils/test_dspark_mla_config.py).",
    "Publish the draft's config as the MLA DSpark layout vLLM serves: the options off, "
    "q_lora_rank set, one vocabulary, and num_target_layers = len(target_layer_ids).",
    runtimes=VLLM_RUNNERS,
    methods=("dspark",),
)
def check_mla_dspark(ctx: PairContext) -> Iterator[Issue]:
    """Name each field of the contract the draft fails, on each vLLM release that has it."""
    d = ctx.draft
    if d.dspark is None or MLA_DSPARK_ARCHITECTURE not in d.architectures:
        return
    yield from contract_issues(
        ctx,
        tuple(contract_refusals(d)),
        lambda release: release.mla_dspark_contract,
        f"draft {d.name} ({MLA_DSPARK_ARCHITECTURE})",
    )


RULES: tuple[Rule, ...] = (check_mla_dspark,)
