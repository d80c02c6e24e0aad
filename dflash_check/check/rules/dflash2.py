"""DFlash 2's own rules: its convolution and selector keys, tensor shapes and the target LM
head its candidate selector reads, each judged per engine that rejects the defect."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from dflash_check.check.formats.zlab import BEAM_ARCHITECTURE
from dflash_check.check.report import Severity
from dflash_check.check.rules.base import (
    Issue,
    PairContext,
    Rule,
    rule,
)
from dflash_check.knowledge.engines import (
    LLAMACPP,
    REFERENCE,
    SGLANG,
    TRTLLM,
    VLLM,
    VLLM_033,
    handling,
)
from dflash_check.views import DraftView

V033 = VLLM_033.source
"""vLLM 0.33.0, where the vLLM lines cited here were read."""


_DFLASH2_GROUP = (VLLM.name, SGLANG.name, LLAMACPP.name)
_DFLASH2_LATTICE = (LLAMACPP.name,)
_DFLASH2_TOP_K_MIN = (TRTLLM.name,)


@rule(
    "DF018",
    "dflash2-config",
    Severity.ERROR,
    "A DFlash 2 draft lacks its convolution or selector keys, or they do not fit its width",
    "DFlash 2 adds grouped dynamic convolutions and a candidate selector, configured by "
    "conv_kernel_size, conv_group_size, selector_rank and selector_top_k in dflash_config. "
    "A missing key fails the engines at load: the reference with a TypeError "
    "(z-lab/dflash@07ebd93d:dflash/model.py:518, :641), vLLM with a bare KeyError (it reads "
    f"dflash_config only: {V033}:vllm/model_executor/models/"
    "qwen3_dflash2.py:248-257, :376-389), TensorRT-LLM with 'DFlash 2 drafter is missing "
    "required dflash_config entries' and 'DFlash 2 selector_top_k=… leaves no candidates to "
    "choose between; it must be at least 2.' (_validate_dflash2_config), llama.cpp with "
    "'DFlash2 model is missing conv/selector metadata' (src/models/dflash.cpp). SGLang reads "
    "dflash_config only, with 0 for a missing key: the convolution is optional but its two "
    "keys go together, the selector needs selector_rank and both its keys together "
    "(sglang 0.5.23 speculative/dflash_utils.py:628-633, :644-648; models/dflash.py:1267-1273). "
    "conv_group_size must divide hidden_size (vLLM qwen3_dflash2.py:182-185, SGLang "
    "models/dflash.py:545-551, llama.cpp), and llama.cpp needs hidden_size >= selector_top_k "
    "x (selector_top_k + 1) ('DFlash2 hidden size is too small for the selector lattice'). "
    "vLLM's own DFlash2BeamDraftModel class (0.33.0, 0.34.0) also needs, when it is built, "
    "a numeric dflash_config.final_logit_softcapping (KeyError without it), is_causal false and "
    "every layer's layer_types entry sliding_attention (asserts): vllm==0.34.0:vllm/models/"
    "beam/nvidia/dflash2.py:79-80, :564-567 (0.33.0: :79-80, :563-566). SGLang's "
    "DFlash2BeamDraftModel is an alias of its DFlash2DraftModel and reads none of them. A "
    "DFlash2DraftModel that states no_rope_layers is served as trained by vLLM 0.34 "
    "(renamed to its Ricursive class, config/speculative.py:"
    "796-801: a note) and rotated in every layer by 0.32 and 0.33 (a warning).",
    "Publish the draft's dflash_config with the four DFlash 2 keys as trained.",
)
def check_dflash2_config(ctx: PairContext) -> Iterator[Issue]:
    """Check DFlash 2's keys, per engine that rejects each defect."""
    d, facts = ctx.draft, ctx.draft.dflash2
    if facts is None:
        return
    # The engines' readers of the keys, defined only when a DFlash 2 draft is checked (start-up).
    from dflash_check.knowledge.dflash2_readers import DFLASH2_READERS

    values = {name: (value, key) for name, value, key in facts.keys}
    nested = {
        name: (value if key == f"dflash_config.{name}" else None)
        for name, (value, key) in values.items()
    }
    for reader in DFLASH2_READERS:
        seen = nested if reader.nested_only else {n: v for n, (v, _) in values.items()}
        missing = [
            name
            for name, value in seen.items()
            if value is None or (reader.zero_is_missing and value == 0)
        ]
        for name in missing:
            top_only = values[name][1] == name
            where = " (only at the top level)" if top_only else ""
            error = reader.error.format(key=name, missing=missing)
            yield Issue(
                f"draft {d.name} (DFlash 2) has no {name} in dflash_config{where}: "
                f"{reader.runtime} fails at load: {error}",
                runtime=reader.runtime,
                field=values[name][1] or f"dflash_config.{name}",
            )
    yield from _sglang_dflash2_pairs(d, {n: v or 0 for n, v in nested.items()})
    yield from _vllm_beam_contract(ctx)
    yield from _vllm_nope_layers(ctx)

    def each(runtimes: tuple[str, ...], message: str, key: str) -> Iterator[Issue]:
        for name in runtimes:
            yield Issue(f"{message} ({name} rejects it at load)", runtime=name, field=key)

    group, group_key = values.get("conv_group_size", (None, None))
    if group and d.hidden_size % group:
        yield from each(
            _DFLASH2_GROUP,
            f"draft {d.name} (DFlash 2): {group_key} {group} does not divide hidden_size "
            f"{d.hidden_size}",
            group_key or "dflash_config.conv_group_size",
        )
    top_k, top_k_key = values.get("selector_top_k", (None, None))
    if top_k and d.hidden_size < top_k * (top_k + 1):
        yield from each(
            _DFLASH2_LATTICE,
            f"draft {d.name} (DFlash 2): hidden_size {d.hidden_size} < {top_k_key} {top_k} x "
            f"{top_k + 1} = {top_k * (top_k + 1)}, too small for the selector lattice",
            top_k_key or "dflash_config.selector_top_k",
        )
    if top_k == 1:
        yield from each(
            _DFLASH2_TOP_K_MIN,
            f"draft {d.name} (DFlash 2): {top_k_key} is 1, which leaves no candidates to choose "
            "between ('DFlash 2 selector_top_k=1 leaves no candidates to choose between; it "
            "must be at least 2.')",
            top_k_key or "dflash_config.selector_top_k",
        )


def _beam_defects(d: DraftView) -> Iterator[tuple[str, str]]:
    """Yield (field, what vLLM's Beam class raises) for each key its constructor needs that the
    draft does not give as it needs it (Release.beam_dflash2_contract cites the lines)."""
    assert d.dflash2 is not None
    stated = {key: json.loads(text) for key, text in d.dflash2.stated}
    # LogitsProcessor(soft_cap=float(dflash_config["final_logit_softcapping"])): dflash_config
    # only, no default; the value must convert to a float.
    cap_key = "dflash_config.final_logit_softcapping"
    if cap_key not in stated:
        yield cap_key, "KeyError: 'final_logit_softcapping' (dflash_config has no such key)"
    else:
        try:
            float(stated[cap_key])
        except (TypeError, ValueError):
            yield cap_key, f"float({json.dumps(stated[cap_key])}) fails: not a number"
    # assert not config.is_causal: a false value passes; transformers' config classes define
    # no is_causal (Qwen3Config of transformers 5 has none), so one left out is an
    # AttributeError.
    if "is_causal" not in stated:
        yield "is_causal", "AttributeError: the config has no is_causal (it must be false)"
    elif stated["is_causal"]:
        yield "is_causal", f"AssertionError: is_causal is {json.dumps(stated['is_causal'])}"
    # assert config.layer_types[layer_idx] == "sliding_attention", for every draft layer.
    layers = d.num_hidden_layers or 0
    types = d.layer_types
    derived = ""
    if types is None:
        # Qwen3Config derives the list: sliding only for layers >= max_window_layers (28 by
        # default) with use_sliding_window (False by default); full_attention otherwise.
        if stated.get("model_type") != "qwen3":
            yield "layer_types", "the config states no layer_types for the class to assert on"
            return
        sliding, first = bool(stated.get("use_sliding_window")), stated.get("max_window_layers")
        first = first if isinstance(first, int) else 28
        types = tuple(
            "sliding_attention" if sliding and i >= first else "full_attention"
            for i in range(layers)
        )
        derived = " (no layer_types: Qwen3Config derives them from use_sliding_window and "
        "max_window_layers)"
    wrong = [i for i, kind in enumerate(types[:layers]) if kind != "sliding_attention"]
    if wrong:
        i = wrong[0]
        yield (
            "layer_types",
            (f"AssertionError: layer {i} is {types[i]}, not sliding_attention{derived}"),
        )
    elif len(types) < layers:
        yield (
            "layer_types",
            (f"IndexError: layer_types has {len(types)} entries for {layers} layers"),
        )


def _vllm_beam_contract(ctx: PairContext) -> Iterator[Issue]:
    """Yield, on each selected vLLM release whose own Beam class has the contract, what that
    class fails on when it is built. SGLang's DFlash2BeamDraftModel is an alias of its
    DFlash2DraftModel (sglang==0.5.23:sglang/srt/models/dflash.py:1313): not judged here."""
    d = ctx.draft
    if BEAM_ARCHITECTURE not in d.architectures or d.dflash2 is None:
        return
    defects = tuple(_beam_defects(d))
    for p in ctx.profiles:
        # Model Runner V1 refuses DFlash 2 before any class is built (DF016).
        where = p.release.beam_dflash2_contract if p.release is not None else None
        if where is None or not handling(p.engine_name).builds_classes(p.runner):
            continue
        for field, error in defects:
            yield Issue(
                f"draft {d.name} (DFlash 2 Beam): {p.label}'s own {BEAM_ARCHITECTURE} class "
                f"fails at load: {error} ({where})",
                runtime=p.name,
                field=field,
            )


def _vllm_nope_layers(ctx: PairContext) -> Iterator[Issue]:
    """Say, per vLLM release, what it does with a DFlash2DraftModel's no_rope_layers: 0.34
    serves them as trained (the Ricursive class; nothing else it needs from the target
    changes, a DFlash2Qwen3ForCausalLM all the same), earlier releases rotate them silently."""
    d = ctx.draft
    assert d.dflash2 is not None
    stated = dict(d.dflash2.stated)
    if d.architectures[:1] != ("DFlash2DraftModel",) or not json.loads(
        stated.get("no_rope_layers", "null")
    ):
        return
    for p in ctx.profiles:
        nope = p.release.dflash2_nope if p.release is not None else None
        # Only the runner that builds the class serves it (V1 refuses DFlash 2, DF016).
        if nope is None or not handling(p.engine_name).builds_classes(p.runner):
            continue
        honoured = nope.honoured
        yield Issue(
            f"draft {d.name} (DFlash 2) states no_rope_layers: {p.label} {nope.text}"
            + (
                "; the layer ids, widths and vocabulary it needs from the target are unchanged"
                if honoured
                else "; layers trained without positions get them, which no error shows "
                "(acceptance drops)"
            ),
            runtime=p.name,
            severity=Severity.INFO if honoured else Severity.WARNING,
            field="no_rope_layers",
            hint="Nothing to do." if honoured else _nope_hint(),
        )


def _nope_hint() -> str:
    """Name the first vLLM release that serves no_rope_layers as trained (read from the
    releases when asked, so a new release changes no text here)."""
    first = next(
        (r for r in VLLM.releases if r.dflash2_nope is not None and r.dflash2_nope.honoured),
        None,
    )
    if first is None:
        return "No vLLM release serves no_rope_layers as trained: serve the draft elsewhere."
    return f"Serve the draft with vLLM {first.version} or later."


def _sglang_dflash2_pairs(d: DraftView, nested: dict[str, int]) -> Iterator[Issue]:
    """SGLang's DFlash 2 config checks: it reads dflash_config only, with 0 for a missing key."""
    kernel, group = nested.get("conv_kernel_size", 0), nested.get("conv_group_size", 0)
    rank, top_k = nested.get("selector_rank", 0), nested.get("selector_top_k", 0)
    if (kernel > 0) != (group > 0):
        name = "conv_group_size" if kernel else "conv_kernel_size"
        yield Issue(
            f"draft {d.name} (DFlash 2) has no {name} in dflash_config: sglang fails at load: "
            "'DFLASH grouped convolution needs conv_kernel_size and conv_group_size together. "
            f"Got conv_kernel_size={kernel}, conv_group_size={group}.'",
            runtime=SGLANG.name,
            field=f"dflash_config.{name}",
        )
    if (rank > 0) != (top_k > 0):
        name = "selector_top_k" if rank else "selector_rank"
        yield Issue(
            f"draft {d.name} (DFlash 2) has no {name} in dflash_config: sglang fails at load: "
            f"'DFLASH selector needs rank and top_k together. Got rank={rank}, top_k={top_k}.'",
            runtime=SGLANG.name,
            field=f"dflash_config.{name}",
        )
    elif rank == 0:
        yield Issue(
            f"draft {d.name} (DFlash 2) has no selector_rank in dflash_config: sglang fails at "
            "load: 'DFlash selector draft requires dflash_config.selector_rank.'",
            runtime=SGLANG.name,
            field="dflash_config.selector_rank",
        )


# The runtimes that load DFlash 2 weights (MLX's reference port loads DFlash only).
_DFLASH2_LOADERS = (REFERENCE.name, VLLM.name, SGLANG.name, TRTLLM.name, LLAMACPP.name)
# The keys that size DFlash 2's tensors, besides hidden_size and vocab_size.
DFLASH2_SHAPE_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank")
# DFlash 2 tensor names (the reference's, optionally under a module prefix such as model.):
# layers.I.{attention,mlp}_conv.{base_kernel,kernel_projection.weight} and the selector's
# codebooks (stored bare, or as embedding weights) and hidden projection. A string compiled
# (and cached by re) on the first DFlash 2 draft: every pair imports the rules.
_DFLASH2_TENSOR = (
    r"(?:^|\.)(?:layers\.(?P<layer>\d+)\.(?P<module>attention_conv|mlp_conv)|"
    r"(?P<selector>candidate_selector))\."
    r"(?P<part>base_kernel|kernel_projection\.weight|predecessor_codebook(?:\.weight)?|"
    r"successor_codebook(?:\.weight)?|hidden_projection\.weight)$"
)
_SELECTOR_PARTS = ("predecessor_codebook", "successor_codebook", "hidden_projection.weight")


@rule(
    "DF020",
    "dflash2-tensors",
    Severity.ERROR,
    "A DFlash 2 convolution or selector tensor in the header has the wrong shape, or is missing",
    "DFlash 2's weights are sized by its config: per layer attention_conv.base_kernel and "
    "mlp_conv.base_kernel [2, conv_kernel_size, hidden_size], their kernel_projection.weight "
    "[2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size], and the selector's "
    "predecessor_codebook and successor_codebook [vocab_size, selector_rank] and "
    "hidden_projection.weight [selector_rank, hidden_size] (z-lab/dflash@07ebd93d:dflash/"
    "model.py:518, :641; dflash_check/smoke/draft_model.py). A header that disagrees with "
    "the config fails when the weights load: vLLM 'Tried to load weights of size …to a "
    f"parameter of size …' ({V033}:vllm/model_executor/layers/linear.py:"
    "404-411), torch's 'size mismatch for …' in the reference, a wrong-shape tensor error in "
    "the others. The shapes are read from the safetensors header only.",
    "Publish the config the weights were trained with (conv_kernel_size, conv_group_size, "
    "selector_rank, vocab_size), or the weights of this config.",
    runtimes=_DFLASH2_LOADERS,
)
def check_dflash2_tensors(ctx: PairContext) -> Iterator[Issue]:
    """Compare DFlash 2's conv and selector tensors in the header with the config."""
    d, facts = ctx.draft, ctx.draft.dflash2
    if facts is None or not d.has_safetensors:
        return
    keys = {name: value for name, value, _ in facts.keys}
    h = d.hidden_size
    kernel, group, rank = (keys.get(k) for k in DFLASH2_SHAPE_KEYS)
    vocab = d.vocab_size or ctx.target.vocab_size
    # DF018 reports missing or unusable keys; only the tensors they size are judged here.
    conv = bool(kernel and group and h % group == 0)
    conv_shapes: dict[str, tuple[int, ...]] = {}
    if kernel and group and conv:
        conv_shapes["base_kernel"] = (2, kernel, h)
        conv_shapes["kernel_projection.weight"] = (2 * kernel * (h // group), h)
    selector_shapes: dict[str, tuple[int, ...]] = {}
    if rank:
        selector_shapes["predecessor_codebook"] = (vocab, rank)
        selector_shapes["successor_codebook"] = (vocab, rank)
        selector_shapes["hidden_projection.weight"] = (rank, h)
    problems: list[tuple[str, str]] = []  # (tensor, what is wrong)
    seen: set[str] = set()  # the expected names found (per layer for the convolutions)
    tensor = re.compile(_DFLASH2_TENSOR)
    for name, shape in d.dflash2_tensors:  # linear in the header, whatever the config says
        found = tensor.search(name)
        if found is None:
            continue
        layer, module, part = found.group("layer"), found.group("module"), found.group("part")
        part = part.removesuffix(".weight") if "codebook" in part else part
        want = (selector_shapes if found.group("selector") else conv_shapes).get(part)
        if want is None:
            continue
        seen.add(f"layers.{layer}.{module}.{part}" if layer is not None else part)
        if shape != want:
            problems.append((name, f"{name} is {list(shape)}, expected {list(want)}"))
    absent = [f"candidate_selector.{p}" for p in _SELECTOR_PARTS if rank and p not in seen]
    if conv:
        # The first layer whose convolutions are incomplete: bounded by what the header has.
        for i in range(min(d.num_hidden_layers or 0, len(seen) + 1)):
            layer_absent = [
                f"layers.{i}.{module}.{part}"
                for module in ("attention_conv", "mlp_conv")
                for part in conv_shapes
                if f"layers.{i}.{module}.{part}" not in seen
            ]
            if layer_absent:
                absent += layer_absent
                break
    for name in absent:
        if name.startswith("layers."):
            want = conv_shapes[name.split(".", 3)[-1]]
        else:
            want = selector_shapes[name.split(".", 1)[1]]
        problems.append((name, f"no {name} {list(want)}"))
    if not problems:
        return
    shown = "; ".join(text for _, text in problems[:3])
    if len(problems) > 3:
        shown += f"; and {len(problems) - 3} more"
    basis = (
        f"hidden_size {h}"
        + (f", conv_kernel_size {kernel}, conv_group_size {group}" if conv else "")
        + (f", selector_rank {rank}, vocab_size {vocab}" if rank else "")
    )
    # Only the runtimes the rule is about load DFlash 2 weights (its runtimes=_DFLASH2_LOADERS).
    loaders = check_dflash2_tensors.runtimes
    for p in ctx.profiles:
        if p.name in loaders:
            yield Issue(
                f"DFlash 2 draft {d.name}'s safetensors header does not match its config "
                f"({basis}): {shown}",
                runtime=p.name,
                field=problems[0][0],
            )


@rule(
    "DF023",
    "dflash2-lm-head",
    Severity.WARNING,
    "SGLang: a DFlash 2 draft on a target whose LM head is quantised",
    "DFlash 2's candidate selector takes its top-k candidates from the target's LM head. "
    "SGLang needs that head dense (FP16/BF16/FP32) or quantised with a method it supports, and "
    "otherwise raises at the first decode: 'DFlash candidate top-k requires a dense "
    "FP16/BF16/FP32 target lm_head or a supported lm_head.quant_method.' (sglang 0.5.23 "
    "models/dflash.py:122-129, dflash_utils.py:817-825; the worker keeps such a head eager, "
    "dflash_worker_v2.py:899-912). The target's quantization_config says when the head is "
    "quantised (ModelOpt quantized_layers, compressed-tensors config_groups naming lm_head), "
    "not whether SGLang supports its method, hence a warning. vLLM 0.33.0 has no such guard "
    "(qwen3_dflash2.py:408-413; the 'unquantized target LM head' check of vllm#52816's draft "
    "is not in the release).",
    "Serve with a target whose lm_head is not quantised (most NVFP4 checkpoints keep it in "
    "BF16), or check that SGLang supports the head's quantisation.",
    runtimes=(SGLANG.name,),
)
def check_dflash2_lm_head(ctx: PairContext) -> Iterator[Issue]:
    """Warn for SGLang when a DFlash 2 draft meets a target with a quantised LM head."""
    d, t = ctx.draft, ctx.target
    if d.dflash2 is None or t.lm_head_quantization is None:
        return
    yield Issue(
        f"target {t.name} quantises its lm_head ({t.lm_head_quantization}, "
        f"quantization_config); DFlash 2 draft {d.name}'s selector needs a dense head or one "
        "SGLang supports, else the first decode raises 'DFlash candidate top-k requires a "
        "dense FP16/BF16/FP32 target lm_head or a supported lm_head.quant_method.'",
        runtime=SGLANG.name,
        field="quantization_config",
        model="target",
    )


# -- format-specific load checks (DSpark, Laguna): what each engine's own loader rejects --------


RULES: tuple[Rule, ...] = (
    check_dflash2_config,
    check_dflash2_tensors,
    check_dflash2_lm_head,
)
