"""The rule table: every check the tool makes, with its id, severity, rationale and fix.

Each rule is a function made into a ``Rule`` by ``@rule(...)`` (``rules/base.py``) in the module
of its subject, and each module ends with its ``RULES`` tuple. This module concatenates those
tuples into the one table, as flake8 lists its checkers: adding a rule is writing it and naming
it in its module's ``RULES`` (a new module: its import and its tuple below). The table's
metadata is the single source for reports, SARIF rule entries and ``docs/rules.md``.

Subjects: ``layer_ids`` (which target layers the draft reads), ``layer_keys`` (where it states
them, and the depth it was trained for), ``widths`` (fc and hidden
sizes, context length), ``vocab`` (vocabulary, tokenizer), ``mask_token``, ``block`` (block
size, draft length, anchor), ``identity`` (named target, format, capture), ``dflash2``
(DFlash 2's keys and tensors), ``formats`` (DSpark, Laguna), ``eagle3`` and ``eagle3_shapes``
(EAGLE-3 heads: ids; widths and maps), ``nextn`` (NextN checkpoints), ``draft`` (the draft's own
layers), ``target`` and ``coverage`` (what is known of the target's engine code), ``method`` (the
requested method against the draft's), ``omni_dspark`` (vLLM's Qwen3-Omni DSpark contract),
``domino`` (SGLang's Domino projector keys), ``mla_dspark`` (vLLM's MLA DSpark contract),
``minimax_dspark`` (SGLang's MiniMax DSpark translation), and ``outcomes`` (rules a run's result
raises).
"""

from __future__ import annotations

# The formats first, as before the split: entered through the runtime tables (check.report ->
# knowledge.runtimes -> views), the views meet sources/__init__ half-built, which imports back
# from them; the formats enter by the safetensors header instead (a debt of the views' room).
import dflash_check.check.formats  # noqa: F401

# isort: split
from dflash_check.check.rules import (
    algorithm_gate,
    block,
    coverage,
    dflash2,
    domino,
    draft,
    eagle3,
    eagle3_shapes,
    eagle_steps,
    formats,
    identity,
    layer_ids,
    layer_keys,
    mask_token,
    method,
    minimax_dspark,
    mla_dspark,
    nextn,
    omni_dspark,
    outcomes,
    target,
    vocab,
    widths,
)
from dflash_check.check.rules.base import Issue, PairContext, Rule, fmt_ids
from dflash_check.check.rules.identity import name_relation

__all__ = [
    "ALL_RULES",
    "OUTCOME_RULES",
    "RULES",
    "RULES_BY_ID",
    "RULES_BY_NAME",
    "TARGET_ALONE_RULES",
    "Issue",
    "PairContext",
    "Rule",
    "fmt_ids",
    "name_relation",
]

# The pair rules, one tuple per subject; the table (reports, SARIF, docs, the order findings
# come in) is in id order whatever the order of the modules here.
RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            *layer_ids.RULES,
            *algorithm_gate.RULES,
            *layer_keys.RULES,
            *widths.RULES,
            *vocab.RULES,
            *mask_token.RULES,
            *block.RULES,
            *identity.RULES,
            *dflash2.RULES,
            *domino.RULES,
            *mla_dspark.RULES,
            *minimax_dspark.RULES,
            *formats.RULES,
            *eagle3.RULES,
            *eagle3_shapes.RULES,
            *nextn.RULES,
            *eagle_steps.RULES,
            *draft.RULES,
            *target.RULES,
            *coverage.RULES,
            *method.RULES,
            *omni_dspark.RULES,
        ),
        key=lambda r: r.id,
    )
)
OUTCOME_RULES: tuple[Rule, ...] = outcomes.OUTCOME_RULES
TARGET_ALONE_RULES: tuple[Rule, ...] = outcomes.TARGET_ALONE_RULES
ALL_RULES: tuple[Rule, ...] = (*RULES, *OUTCOME_RULES, *TARGET_ALONE_RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
"""The pair rules by id (``--ignore``, ``dflash-check rules DF001``)."""
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
"""The pair rules by their kebab-case name."""
