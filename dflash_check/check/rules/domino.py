"""SGLang's Domino draft-config contract (DF056): what SGLang checks, field by field, when a
DFlash-family draft names a Domino projector (``dflash_config.projector_type: "domino"``).

SGLang 0.5.23 parses every DFlash, DFlash 2 and DSpark draft config with
``parse_dflash_draft_config`` (``Release.domino_contract`` cites it per release) while the target's
runner sets up the aux-layer capture, before any weight loads: a refusal stops start-up with
SGLang's ``ValueError``, quoted here. Domino adds a GRU over the draft prefix and a projection to
the vocabulary, built from ``gru_hidden_dim`` and ``emb_dim`` (``models/dflash.py:780-803``), so
those widths must be stated; its rollout supports only a one-token pure-draft prefix and a
boolean ``shift_label``. Its DFlash and DFlash 2 classes then check the projector's tensors
against those widths while the weights load (``weight_refusals``). SGLang stops at its first
refusal; this rule reports each field it refuses, in SGLang's order.

vLLM 0.32.0-0.34.0 do not read ``projector_type`` at all (no Domino code in the 0.34.0 wheel):
they build such a draft as a plain DFlash draft, whose weight loader refuses the Domino tensors
(``prefix_gru.*``, ``embed_proj.*``) as unknown parameters ("There is no module or parameter
named ...", vllm==0.34.0:vllm/model_executor/models/utils.py:453-459).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import Issue, PairContext, Rule, contract_issues, rule
from dflash_check.knowledge.engines import SGLANG
from dflash_check.knowledge.settings import SglangSettings
from dflash_check.views import DraftView

_EMB_NESTED = "DFLASH Domino dflash_config.emb_dim"
"""SGLang's name for the nested emb_dim in its messages."""


def _int(value: Any, name: str, minimum: int) -> tuple[int | None, str | None]:
    """SGLang's ``_parse_optional_int`` (dflash_utils.py:500-516): ``int(value)`` as Python
    converts it (a float truncates, a bool is 0 or 1, a numeric string parses), then a lower
    bound. Return (the value, None) or (None, SGLang's message)."""
    if value is None:
        return None, None
    try:
        parsed = int(value)
    except (TypeError, ValueError, OverflowError):
        return None, f"Invalid {name}={value!r}."
    if parsed < minimum:
        comparator = "positive" if minimum == 1 else f">= {minimum}"
        return None, f"{name} must be {comparator}, got {parsed}."
    return parsed, None


def _read(stated: Mapping[str, Any], name: str) -> tuple[str, Any]:
    """Return (dotted key, value) of ``name`` as SGLang reads it: ``dflash_cfg.get(name,
    top-level value)``, so a key present in ``dflash_config`` wins, a null too."""
    nested = f"dflash_config.{name}"
    return (nested, stated[nested]) if nested in stated else (name, stated.get(name))


def domino_refusals(stated: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Yield (field, SGLang's message) for each Domino check the draft config fails, in the
    order of sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:727-791. ``stated`` maps each
    dotted key the config states (``dflash_config.gru_hidden_dim``, ``emb_dim``) to its value."""

    def read(name: str) -> tuple[str, Any]:
        return _read(stated, name)

    if read("projector_type")[1] != "domino":
        return
    shift_key, shift = read("shift_label")
    prefix_key, raw_prefix = read("pure_draft_prefix_len")
    prefix, error = _int(raw_prefix, "DFLASH Domino pure_draft_prefix_len", 0)
    prefix_bad = error is not None
    if error:
        yield prefix_key, error
    gru_key, raw_gru = read("gru_hidden_dim")
    gru, error = _int(raw_gru, "DFLASH Domino gru_hidden_dim", 1)
    gru_bad = error is not None
    if error:
        yield gru_key, error
    # emb_dim is read from both places and they must agree (:756-773).
    nested_emb, error = _int(stated.get("dflash_config.emb_dim"), _EMB_NESTED, 1)
    emb_bad = error is not None
    if error:
        yield "dflash_config.emb_dim", error
    top_emb, error = _int(stated.get("emb_dim"), "DFLASH Domino top-level emb_dim", 1)
    emb_bad = emb_bad or error is not None
    if error:
        yield "emb_dim", error
    if nested_emb is not None and top_emb is not None and nested_emb != top_emb:
        emb_bad = True
        yield (
            "dflash_config.emb_dim",
            "DFLASH Domino emb_dim differs between dflash_config and the top-level config: "
            f"{nested_emb} != {top_emb}.",
        )
    if not isinstance(shift, bool):  # :775-778
        yield (
            shift_key,
            f"DFLASH Domino requires dflash_config.shift_label to be a bool, got {shift!r}.",
        )
    if not prefix_bad and prefix != 1:  # :779-783
        yield (
            prefix_key,
            f"DFLASH Domino currently requires pure_draft_prefix_len=1, got {prefix!r}.",
        )
    if not gru_bad and gru is None:  # :784-785
        yield gru_key, "DFLASH Domino requires dflash_config.gru_hidden_dim."
    if not emb_bad and nested_emb is None and top_emb is None:  # :786-787
        yield "dflash_config.emb_dim", "DFLASH Domino requires dflash_config.emb_dim."
    # block_size was parsed before (:609-617, a positive int, else the generic refusal).
    block_key, raw_block = read("block_size")
    block, _ = _int(raw_block, "DFLASH block_size", 1)
    if block is not None and block <= 1:  # :788-791
        yield block_key, f"DFLASH Domino requires block_size > 1, got {block}."


def worker_refusals(draft: DraftView, target_vocab: int | None) -> Iterator[tuple[str, str]]:
    """Yield (field, SGLang's message) for what the DFlash worker refuses of a Domino draft
    and its target when it starts (sglang==0.5.23:sglang/srt/speculative/dflash_worker_v2.py
    :464-490): the draft's vocabulary must be the target's, row for row (``validate_domino_
    runtime``, domino_utils.py:157-161), padding included: the Domino projector's output rows
    are compared with the target's head. Run by the oracle (``conformance/drivers/
    sglang_config_driver.py``, the worker's guards)."""
    known = draft.vocab_size is not None and target_vocab is not None
    if known and draft.vocab_size != target_vocab:
        yield (
            "vocab_size",
            "DFLASH Domino requires identical target and draft vocab sizes, got "
            f"target={target_vocab}, draft={draft.vocab_size}.",
        )


def server_refusals(settings: SglangSettings) -> Iterator[tuple[str, str, str, str]]:
    """Yield (guard, the setting as a flag, SGLang's message, the fix) for each server setting
    under which the DFlash worker refuses a Domino draft when it starts
    (sglang==0.5.23:sglang/srt/speculative/dflash_worker_v2.py:455-460, 525-529), in its order.
    A plain DFlash draft passes both guards: the caller asks only for a Domino one."""
    if settings.dp_attention:  # get_parallel().attn_dp_enabled (off on Ascend, not read here)
        yield (
            "dp_attention",
            f"--attn-dp-size {settings.attn_dp_size}",
            "DFLASH with dp attention supports plain DFlash and DFlash2 drafts; Domino and "
            "LiLiCorr heads are not supported.",
            "Serve the Domino draft without DP attention (--attn-dp-size 1, no "
            "--enable-dp-attention), or serve a plain DFlash draft under it.",
        )
    # Without the flag SGLang drafts the draft's own block_size, which the config contract
    # already holds above 1 (dflash_utils.py:788-791): only a given value can be refused here.
    tokens = settings.draft_tokens("dflash")  # the DFLASH worker's, alias included
    if tokens is not None and tokens <= 1:
        yield (
            "num_draft_tokens",
            f"--speculative-num-draft-tokens {tokens}",
            f"DFLASH Domino requires speculative_num_draft_tokens > 1, got {tokens}.",
            "Serve the Domino draft with --speculative-num-draft-tokens of its block_size "
            "(or leave it out: SGLang then takes the draft's block_size).",
        )


_LOADED_BY_DFLASH_MODEL = ("dflash", "dflash2")
"""The methods whose SGLang classes load weights through ``DFlashDraftModel.load_weights``
(models/dflash.py:1317-1324), which checks the Domino tensors; DSpark's classes do not."""


def weight_refusals(
    draft: DraftView, stated: Mapping[str, Any], *, refused: bool
) -> Iterator[tuple[str, str]]:
    """Yield (field, SGLang's message) for the Domino tensors of the draft's header, as
    ``DFlashDraftModel.load_weights`` checks them (sglang==0.5.23:sglang/srt/models/
    dflash.py:921-1000): none without a Domino projector; with one, the shapes its config builds
    (:784-803) and all four weights. ``refused``: the config was refused already, so the shapes
    it would build are not known."""
    projector = _read(stated, "projector_type")[1]
    tensors = dict(draft.domino_tensors)
    if projector != "domino":
        if tensors:  # :921-929, at the first such tensor
            yield (
                next(iter(tensors)),
                "DFLASH checkpoint contains Domino projector weights but "
                f"projector_type={projector!r}.",
            )
        return
    if not draft.has_safetensors or refused:
        return
    # The config passed, so these convert as SGLang's int() did.
    gru = int(_read(stated, "gru_hidden_dim")[1])
    nested_emb = stated.get("dflash_config.emb_dim")
    emb = nested_emb if nested_emb is not None else stated["emb_dim"]
    hidden, vocab = draft.hidden_size, draft.vocab_size
    expected = {
        "prefix_gru.weight_ih_l0": (3 * gru, hidden),
        "prefix_gru.weight_hh_l0": (3 * gru, gru),
        "embed_proj.0.weight": (int(emb), hidden + gru),
        "embed_proj.2.weight": (vocab, int(emb)) if vocab is not None else None,
    }
    loaded = set()
    for name, shape in tensors.items():
        param = name.removeprefix("model.")
        if param not in expected:
            continue  # a tensor the model has no parameter for is skipped (:944-946)
        loaded.add(param)
        want = expected[param]
        if want is not None and tuple(shape) != want:  # :975-982
            yield (
                name,
                f"DFLASH Domino projector weight shape mismatch: expected {param}{want}, "
                f"got {tuple(shape)} from {name!r}.",
            )
    missing = sorted(set(expected) - loaded)
    if missing:  # :987-999
        yield (
            "prefix_gru" if any(m.startswith("prefix_gru") for m in missing) else "embed_proj",
            f"DFLASH Domino checkpoint is missing required projector weights: {missing}.",
        )


@rule(
    "DF056",
    "domino-config",
    Severity.ERROR,
    "The DFlash draft's Domino projector keys break SGLang's Domino contract",
    "A DFlash-family draft with dflash_config.projector_type 'domino' carries SpecForge's Domino "
    "projector: a GRU over the draft prefix of gru_hidden_dim units and a projection through "
    "emb_dim to the vocabulary, built from those keys (sglang==0.5.23:sglang/srt/models/"
    "dflash.py:780-803). SGLang checks them when it parses the draft config at load, before "
    "any weight loads (speculative/dflash_utils.py:727-791, run by model_executor/"
    "model_runner_components/spec_aux_hidden_state.py:217): a bool shift_label, "
    "pure_draft_prefix_len 1, positive gru_hidden_dim and emb_dim (the same emb_dim where "
    "dflash_config and the top level both state it) and a block_size above 1. Its DFlash and "
    "DFlash 2 classes then load the projector's four tensors with the shapes those keys build, "
    "and refuse projector tensors in a draft without a Domino projector (models/dflash.py"
    ":921-1000), and its DFlash worker refuses a draft vocabulary other than the target's "
    "when it starts (speculative/domino_utils.py:157-161), as it refuses a Domino draft when "
    "the server runs DP attention (--attn-dp-size above 1, or --enable-dp-attention with "
    "--dp-size above 1: speculative/dflash_worker_v2.py:455-460) or drafts one token "
    "(--speculative-num-draft-tokens 1: :525-529; read from --engine-arg). SGLang's own "
    "tests pin each check (test/registered/unit/spec/test_dflash_domino_config.py). vLLM "
    "0.32.0-0.34.0 do not read projector_type.",
    "Publish the Domino draft's dflash_config with the projector keys it was trained with, "
    "as SGLang's message names them.",
    runtimes=(SGLANG.name,),
)
def check_domino(ctx: PairContext) -> Iterator[Issue]:
    """Name each Domino field SGLang refuses, on each SGLang release that reads them."""
    facts = ctx.draft.dflash
    if facts is None or not (facts.domino or ctx.draft.domino_tensors):
        return
    stated = {key: json.loads(text) for key, text in facts.domino}
    refusals = tuple(domino_refusals(stated))
    if ctx.draft.method in _LOADED_BY_DFLASH_MODEL:
        refusals += tuple(weight_refusals(ctx.draft, stated, refused=bool(refusals)))
        if _read(stated, "projector_type")[1] == "domino":  # DSpark has its own worker
            refusals += tuple(worker_refusals(ctx.draft, ctx.target.vocab_size))
    # The release's reviewed semantics say whether it reads Domino's keys (SGLang >= 0.5.23).
    yield from contract_issues(
        ctx,
        refusals,
        lambda release: release.domino_contract,
        f"draft {ctx.draft.name} (Domino projector)",
    )
    yield from _server_issues(ctx, stated)


def _server_issues(ctx: PairContext, stated: Mapping[str, Any]) -> Iterator[Issue]:
    """The worker's refusals of a Domino draft under the server settings the pair is served
    with (``--engine-arg``), on each SGLang release whose worker has the guard."""
    if ctx.draft.method not in _LOADED_BY_DFLASH_MODEL:
        return  # DSpark drafts run in their own worker
    if _read(stated, "projector_type")[1] != "domino":
        return
    for guard, flag, message, fix in server_refusals(ctx.engine_settings.sglang):
        for issue in contract_issues(
            ctx,
            (("dflash_config.projector_type", message),),
            lambda release, guard=guard: release.domino_worker.get(guard),
            f"draft {ctx.draft.name} (Domino projector) with {flag}",
        ):
            yield replace(issue, hint=fix)


RULES: tuple[Rule, ...] = (check_domino,)
