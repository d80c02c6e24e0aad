"""Rules about what the draft is and was made for: the target it names, its format and
whether the target can capture for it (DF014, DF016, DF017)."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.formats import format_named
from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    ALL_METHODS,
    Issue,
    PairContext,
    Rule,
    rule,
)

# Name endings that mark another packaging of the same weights (a quantisation, a format),
# not another model: 'RedHatAI/Qwen3.6-35B-A3B-NVFP4' and 'nvidia/Qwen3.6-35B-A3B-NVFP4' or
# 'Qwen/Qwen3.6-35B-A3B' are one model for a draft's purposes.
VARIANT_SUFFIXES = (
    "nvfp4",
    "fp4",
    "mxfp4",
    "fp8",
    "fp8-dynamic",
    "fp8-static",
    "int4",
    "int8",
    "w4a16",
    "w8a8",
    "awq",
    "gptq",
    "gptq-int4",
    "gptq-int8",
    "bf16",
    "fp16",
    "gguf",
    "mlx",
    "4bit",
    "8bit",
)
# The order _strip_variant tries them in, longest first; sorted once, not on every call.
_SUFFIXES_LONGEST_FIRST = sorted(VARIANT_SUFFIXES, key=len, reverse=True)


def model_name_parts(name: str) -> tuple[str | None, str]:
    """Return (org, name) of a repo id or directory, lower-cased, without a revision.

    A directory is named by its last component; ``ORG--NAME`` (the HF cache and this
    project's fixture layout) counts as ``ORG/NAME``.
    """
    text = name.split("@", 1)[0].rstrip("/").lower()
    is_path = text.startswith((".", "/", "~")) or text.count("/") > 1
    if is_path or "/" not in text:
        last = text.rsplit("/", 1)[-1]
        org, sep, rest = last.partition("--")
        return (org, rest) if sep and rest else (None, last)
    org, _, rest = text.partition("/")
    return org, rest


def _strip_variant(name: str) -> str:
    """Remove packaging suffixes (``-NVFP4``, ``-FP8``, …) from a lower-cased model name."""
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES_LONGEST_FIRST:
            if name.endswith("-" + suffix):
                name = name[: -len(suffix) - 1]
                changed = True
    return name


def name_relation(named: str, target: str) -> str:
    """Return ``same``, ``variant`` (same model, other publisher or packaging) or ``other``."""
    n_org, n_name = model_name_parts(named)
    t_org, t_name = model_name_parts(target)
    if n_name == t_name and (n_org == t_org or n_org is None or t_org is None):
        return "same"
    if _strip_variant(n_name) == _strip_variant(t_name):
        return "variant"
    return "other"


@rule(
    "DF014",
    "base-model",
    Severity.WARNING,
    "The draft names another target (card base_model, speculators verifier)",
    "A draft records the target it was trained against: the model card's base_model, or the "
    "speculators format's verifier. Another model may still load, with silently lower "
    "acceptance if its weights differ (a fine-tune, another size of the family). The same "
    "model from another publisher or in another quantisation (RedHatAI/…-NVFP4 for "
    "nvidia/…-NVFP4) is a note.",
    "Pair the draft with the model it names, or confirm the substitute is the same weights "
    "(a quantized or re-uploaded copy).",
    methods=ALL_METHODS,
)
def check_named_target(ctx: PairContext) -> Iterator[Issue]:
    """Compare the targets the draft names with the given one."""
    d, t = ctx.draft, ctx.target
    named = [(name, "base_model") for name in d.base_model]
    if d.verifier is not None:
        named.append((d.verifier, d.verifier_key or "verifier"))
    for name, key in named:
        relation = name_relation(name, t.name)
        if relation == "same":
            continue
        what = "model card names base_model" if key == "base_model" else f"{key} is"
        if relation == "variant":
            yield Issue(
                f"draft {d.name}'s {what} {name}; target {t.name} is the same model from "
                "another publisher or in another packaging",
                severity=Severity.INFO,
                field=key,
                hint="Nothing to do if both hold the same weights.",
            )
        else:
            yield Issue(f"draft {d.name}'s {what} {name}, not target {t.name}", field=key)


@rule(
    "DF016",
    "format-unsupported",
    Severity.ERROR,
    "The runtime does not load drafts of this format",
    "Each draft format is read by some runtimes only: the speculators format is vLLM's "
    "(its speculators loader maps aux_hidden_state_layer_ids and transformer_layer_config), "
    "while the z-lab reference, SGLang or MLX look for dflash_config. The portable check "
    "covers the runtimes that load the draft's format (dflash-check docs formats).",
    "Serve the draft with a runtime that loads its format, or convert it.",
    methods=ALL_METHODS,
)
def check_format_supported(ctx: PairContext) -> Iterator[Issue]:
    """Flag selected runtimes that cannot load the draft's format at all."""
    d = ctx.draft
    fmt = format_named(d.format)
    for p in ctx.profiles:
        refusal = p.refusal(d)
        if refusal is not None:
            yield Issue(
                f"draft {d.name} is a {d.method} draft ({', '.join(d.architectures)}), which "
                f"{p.name} refuses at load: '{refusal.message}'",
                runtime=p.name,
                field="architectures",
            )
        elif not fmt.loads(p.name, d, p.release):
            loaded_by = ", ".join(fmt.loaded_by(d)) or "none known"
            found = fmt.registration(p.name, d, p.release)
            # An extracted engine's refusal names its release and cites its model registry.
            what = (
                f"{p.name} does not load"
                if found is None
                else f"{found.release.spec} does not load: {found.citation}"
            )
            archs = f" ({', '.join(d.architectures)})" if found is not None else ""
            yield Issue(
                f"draft {d.name} is a {fmt.title} draft{archs}, which {what} "
                f"(loaded by: {loaded_by})",
                runtime=p.name,
                field="speculators_model_type" if d.format == "speculators" else "architectures",
            )


@rule(
    "DF017",
    "target-capture",
    Severity.ERROR,
    "The runtime cannot capture hidden states from this target family",
    "A DFlash draft or EAGLE-3 head reads hidden states that the target's own model code must "
    "capture, and each engine implements that per model class: vLLM through its aux-hidden-state "
    "interface (SupportsEagle3), SGLang through a set_dflash_layers_to_capture hook (a "
    "set_eagle3_layers_to_capture hook for an EAGLE-3 head), dflash-mlx through a target "
    "backend. For vLLM and SGLang whether each family's class has it is read from each "
    "release's own code (dflash-check docs engine-facts), so a release that adds or drops it "
    "changes the verdict; only what that code cannot show is a reviewed exception, listed with "
    "its reason (dflash-check docs runtimes, per target family). Without it the engine refuses "
    "the pair at load, after the weights are read, in its own words quoted in the finding.",
    "Serve the pair with a runtime that captures this family (dflash-check docs runtimes), or "
    "use a "
    "target whose model class supports hidden-state capture.",
    methods=ALL_METHODS,
)
def check_target_capture(ctx: PairContext) -> Iterator[Issue]:
    """Flag the runtimes whose model code for this target family has no capture hook."""
    t = ctx.target
    for p in ctx.profiles:
        if p.cannot_capture is not None:
            yield Issue(
                f"target {t.name} ({', '.join(t.architectures) or t.model_type}): "
                f"{p.cannot_capture}",
                runtime=p.name,
                field="architectures",
                model="target",
            )


RULES: tuple[Rule, ...] = (
    check_named_target,
    check_format_supported,
    check_target_capture,
)
