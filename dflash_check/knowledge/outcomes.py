"""How each engine fails on each error: at load, at the first decode, or silently.

A user who reads "incompatible" needs to know what they will see: a server that refuses to
start, one that reports healthy and then fails the first request, or one that serves with the
draft's acceptance collapsed and no error at all (the worst case: nothing tells them). The
stage is data per rule (``STAGES``), refined in each engine's module where it differs
(``Engine.stages``); the checker attaches it to
each error finding and the reports carry it.

Sources: the engines' code read per release (``knowledge/runtimes/`` citations) and the runs on
real engines recorded in December 2026 (vLLM 0.32.0 CPU build, Model Runner V1; llama.cpp
``0c1e57098``; dflash 0.1.0 MLX): out-of-range ids, hidden-size and vocabulary mismatches fail at
the first decode in vLLM V1 after the server reports healthy; an fc-width mismatch and a missing
mask token fail at load; llama.cpp runs a vocabulary mismatch, a negative id and a repeated id
(the draft borrows the target's head; -1 becomes the embeddings) silently, aborts at the first
decode on an id of N-1 or a missing mask token, and at load on a layer the target lacks.
EAGLE-3 heads on vLLM V1 (11 cases, rerun 2026-12-04): ids read as other layers collapse
silently (DF031); an id past the target and defaults captured as fewer states fail at the first
decode (DF032, DF033); an fc of another count or width, a d2t of another size and an embedding
that contradicts vocab_size are refused at load (DF033, DF034, DF037, DF036).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from dflash_check.knowledge.engines import owner
from dflash_check.knowledge.engines.interface import STAGE_TEXT, Stage

__all__ = ["STAGES", "STAGE_TEXT", "Stage", "earliest", "stage_of"]

_L, _D, _S = Stage.LOAD, Stage.FIRST_DECODE, Stage.SILENT

STAGES: Mapping[str, Stage] = MappingProxyType(
    {
        # rule: its stage on an engine that does not say otherwise (``Engine.stages``).
        # No ids: vLLM sizes fc from num_hidden_layers (load) unless the sizes happen to agree
        # (rules.py says so per pair); llama.cpp and MLX refuse the draft.
        "DF001": _L,
        # Negative ids: an empty list fails when the draft is built.
        "DF002": _L,
        "DF003": _S,
        # Out-of-range ids: checked or sized when the engine starts (SGLang, vLLM V2).
        "DF004": _L,
        "DF005": _L,
        "DF006": _D,
        "DF007": _D,
        "DF008": _L,
        "DF009": _S,
        "DF011": _L,
        "DF012": _L,
        "DF015": _S,
        "DF016": _L,
        "DF017": _L,
        "DF018": _L,
        "DF020": _L,
        "DF021": _L,
        "DF022": _S,
        "DF025": _L,
        "DF027": _L,
        "DF028": _L,
        "DF031": _S,
        "DF032": _L,
        # vLLM sizes fc for the count it expects and fails in load_weights at startup
        # (vllm-project/vllm#54526).
        "DF033": _L,
        "DF034": _L,
        "DF035": _D,
        "DF036": _D,
        "DF037": _L,
        "DF039": _L,
        "DF040": _S,
        # A target alone with no MTP layers: an engine asked for an MTP draft fails at start-up.
        "DF041": _L,
        "DF044": _L,
        "DF050": _L,
        # A release with no model class (SGLang's Transformers fallback has no hook) or no
        # capture for the target: the engine refuses the pair when the draft is attached.
        "DF052": _L,
        "DF053": _L,
        # vLLM 0.34 raises a ValueError while it builds the speculative config: the server
        # refuses to start (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:413).
        "DF054": _L,
        # vLLM checks the Qwen3-Omni DSpark contract while it resolves the config.
        "DF055": _L,
        # SGLang parses the draft's Domino keys while the target's runner sets up capture.
        "DF056": _L,
        # vLLM builds the MLA DSpark draft's config class while it resolves the config.
        "DF057": _L,
        # SGLang's DeepSeek V4 defaults assert the algorithm while the server arguments
        # resolve: the server refuses to start, before any weight loads.
        "DF058": _L,
        # vLLM refuses more tokens than Parse 3.5's trained step while it resolves the config.
        "DF059": _L,
        # SGLang fails on its MTP step flags while it resolves the server arguments.
        "DF060": _L,
        # SGLang translates a MiniMax DSpark draft's config when it builds the draft's model
        # config at load; a missing key raises there.
        "DF062": _L,
        # A target alone: an engine asked for an MTP draft it cannot build from the target
        # refuses while it resolves the speculative config (vLLM 0.33.0 on kimi_k2,
        # vllm==0.33.0:vllm/config/speculative.py:1498-1501), as it does a draft-token count
        # that is not a multiple of the MTP layers (DF044, speculative.py:1604-1612).
        "DF063": _L,
        # vLLM registers the draft's MoE layers while it builds the draft model, after the
        # target's: the server refuses to start (fused_moe/runner/moe_runner.py).
        "DF093": _L,
    }
)
"""Rule id -> its default stage; each engine module says where one of its runtimes differs
(``Engine.stages``)."""


def stage_of(rule: str, runtime: str | None) -> Stage | None:
    """Return the stage at which ``runtime`` shows an error of ``rule`` (None: not known, or a
    rule with no engine-side failure)."""
    default = STAGES.get(rule)
    if default is None:
        return None
    found = owner(runtime or "")
    return (found.stage(runtime or "", rule) if found is not None else None) or default


def earliest(stages: Iterable[Stage | None]) -> Stage | None:
    """Return the earliest stage among ``stages``: what the user meets first."""
    order = list(Stage)
    known = [s for s in stages if s is not None]
    return min(known, key=order.index) if known else None
