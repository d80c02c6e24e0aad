"""MTP's rule (DF040): a NextN draft checkpoint against the target it was exported from.

Registered into ``RULES`` by ``check/rules/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, fmt_ids, rule
from dflash_check.knowledge.engines import SGLANG


@rule(
    "DF040",
    "nextn-target",
    Severity.ERROR,
    "The NextN checkpoint was exported from another target",
    "A NextN checkpoint is the target's own MTP layer: SGLang builds it from the checkpoint's "
    "config and loads its weights from model.layers.{num_hidden_layers}, concatenates the "
    "target's embedding and last hidden state (eh_proj) and decodes over vocab_size. Another "
    "hidden size or vocabulary fails at load or the first decode; another layer count leaves "
    "the MTP weights unloaded (they sit under another layer index).",
    "Use the NextN checkpoint exported from this target (same hidden size, vocabulary and "
    "layer count).",
    runtimes=(SGLANG.name,),
    methods=("mtp",),
)
def check_nextn_target(ctx: PairContext) -> Iterator[Issue]:
    """Compare hidden size, vocabulary, layer count and the header's layer index."""
    d, t = ctx.draft, ctx.target
    name = f"NextN checkpoint {d.name}"
    if d.hidden_size != t.hidden_size:
        yield Issue(
            f"{name} hidden_size {d.hidden_size} != target {t.name} hidden_size {t.hidden_size}",
            field="hidden_size",
        )
    if d.vocab_size is not None and d.vocab_size != t.vocab_size:
        yield Issue(
            f"{name} vocab_size {d.vocab_size} != target {t.name} vocab_size {t.vocab_size}",
            field="vocab_size",
        )
    n = t.num_hidden_layers
    if d.num_hidden_layers is None:
        yield Issue(
            f"{name} states no num_hidden_layers, which places its MTP layer",
            field="num_hidden_layers",
        )
    elif d.num_hidden_layers != n:
        yield Issue(
            f"{name} was exported from a {d.num_hidden_layers}-layer target (num_hidden_layers), "
            f"but target {t.name} has {n} ({t.layers_key})",
            field="num_hidden_layers",
        )
    layers = d.nextn.layers if d.nextn is not None else ()
    if layers and layers != (n,):
        yield Issue(
            f"{name}: its weights sit under layer {fmt_ids(layers)}, but on target "
            f"{t.name} the MTP layer is model.layers.{n}",
            severity=Severity.ERROR,
            field=d.fc_weight_name or "model.safetensors",
        )


RULES: tuple[Rule, ...] = (check_nextn_target,)
