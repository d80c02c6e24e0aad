"""Reviewed judgement over the extracted facts: does a release serve a target, and capture?

``facts.py`` holds what the engines' code states mechanically (registry rows, interfaces,
hooks). Whether that amounts to hidden-state capture for a pair is decided here, where a
reviewer reads it: an interface inherited by a class whose inner model cannot capture, a hook
that delegates to a model which collects nothing. Every exception below cites the code (or the
engine's issue) it was judged from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts


class Capture(str, Enum):
    """A release's capture status for one target architecture and drafting method."""

    CAPTURES = "captures"
    """The model code has the capture the method needs."""
    NOT_SERVED = "not-served"
    """The release registers no model class for the architecture."""
    NO_CAPTURE = "no-capture"
    """The class is served, but has no capture for the method: the engine refuses at load."""


@dataclass(frozen=True)
class Status:
    """The judged status with the engine's words and where they were read."""

    capture: Capture
    why: str
    """What the code shows, with citations."""
    message: str | None = None
    """The engine's own message (quoted, cited) when it refuses."""
    may_serve: bool = False
    """For ``NOT_SERVED``: whether the engine's fallback may still serve and capture it (vLLM's
    Transformers backend, when the installed transformers implements the architecture)."""
    refused: bool = True
    """For ``NO_CAPTURE``: whether the engine refuses the pair at load; False where the capture
    is set up without an error and the draft is fed no hidden states (Qwen4Exp on SGLang)."""
    convention: bool = False
    """Whether the capture read matches the engine's general convention, so the checks made
    with it hold for this class (vLLM: a capture after each layer, or before each layer and
    after the last; SGLang: a hook that adds one)."""

    @property
    def read(self) -> bool:
        """Whether the release's code settles this target for the engine (DF051 then has
        nothing to add)."""
        return self.capture is not Capture.CAPTURES or self.convention


# (engine, architecture) -> why a class the mechanical facts show as capturing does not.
# vLLM 0.34: Qwen4ExpForConditionalGeneration inherits SupportsEagle3 from Qwen3-VL, but its
# language model is Qwen4ExpForCausalLM (model.py:1050), whose Qwen4ExpModel (model.py:415) is
# a plain nn.Module: the interface's set_aux_hidden_state_layers asserts an EagleModelMixin.
# SGLang 0.5.23: the hooks inherited from Qwen3VLForConditionalGeneration delegate to the
# language model, whose forward collects nothing (sgl-project/sglang#38589).
_VLLM_QWEN4 = (
    "vllm/models/qwen4_exp/nvidia/model.py:1050 builds Qwen4ExpForCausalLM, whose "
    "Qwen4ExpModel (model.py:415) has no EagleModelMixin and no capture"
)
REVIEWED_NO_CAPTURE: dict[tuple[str, str], tuple[str, str | None]] = {
    ("vllm", "Qwen4ExpForConditionalGeneration"): (_VLLM_QWEN4, "needs_eagle_mixin"),
    ("sglang", "Qwen4ExpForConditionalGeneration"): (
        "the capture hooks inherited from Qwen3VLForConditionalGeneration delegate to the "
        "Qwen4Exp language model, which collects no hidden states (sgl-project/sglang#38589): "
        "the hook succeeds and the draft is fed nothing",
        None,
    ),
}

_SGLANG_HOOK = {"dflash": "dflash", "dflash2": "dflash", "dspark": "dspark", "eagle3": "eagle3"}
_SGLANG_MESSAGE = {"eagle3": "no_eagle3_hook"}


def status(
    facts: ReleaseFacts, architectures: tuple[str, ...], method: str, runner: str | None
) -> Status | None:
    """Judge ``facts`` on a target of ``architectures`` for ``method`` (None: no judgement,
    e.g. an engine whose facts say nothing about capture, or a target without architectures)."""
    if not architectures:
        return None
    tf = facts.target(architectures)
    if tf is None:
        return _not_served(facts, architectures, method, runner)
    reviewed = REVIEWED_NO_CAPTURE.get((facts.engine, tf.architecture))
    if reviewed is not None:
        why, key = reviewed
        message = facts.message(key) if key else None
        # A reviewed class without an engine message is one the engine does not refuse.
        return Status(
            Capture.NO_CAPTURE,
            f"{why} ({facts.cite(tf.class_at or tf.at)})",
            message,
            refused=key is not None,
        )
    return _judge(facts, tf, method, runner)


# The class each engine falls back to for an architecture its registry lacks: vLLM tries its
# Transformers backend when the installed transformers implements the architecture
# (vllm==0.34.0:vllm/model_executor/models/registry.py:1466-1496, _try_resolve_transformers),
# SGLang appends TransformersForCausalLM (sglang==0.5.23:sglang/srt/models/registry.py:88-91).
FALLBACK_CLASS = "TransformersForCausalLM"


def _not_served(
    facts: ReleaseFacts, architectures: tuple[str, ...], method: str, runner: str | None
) -> Status:
    shown = ", ".join(architectures)
    head = f"{facts.spec} has no model class for {shown}"
    fallback = facts.targets.get(FALLBACK_CLASS)
    if fallback is None:
        return Status(Capture.NOT_SERVED, head, facts.message("unsupported_architecture"))
    judged = _judge(facts, fallback, method, runner)
    where = facts.cite(fallback.class_at or fallback.at)
    if judged is not None and judged.capture is Capture.CAPTURES:
        return Status(
            Capture.NOT_SERVED,
            f"{head}; it serves the target through its Transformers backend ({FALLBACK_CLASS}, "
            f"{where}) only if the installed transformers implements {architectures[0]}, "
            "else it refuses at load",
            facts.message("unsupported_architecture"),
            may_serve=True,
        )
    return Status(
        Capture.NOT_SERVED,
        f"{head}; it falls back to {FALLBACK_CLASS} ({where}), which has no capture for {method}",
        judged.message if judged is not None else facts.message("unsupported_architecture"),
    )


def _vllm(facts: ReleaseFacts, tf: TargetFacts, runner: str | None) -> Status | None:
    if tf.interface is None:
        return None
    if tf.interface:
        positions = {site.rsplit(":", 1)[1] for site in tf.sites}
        convention = "after-layer" in positions or {"before-layer", "after-loop"} <= positions
        return Status(
            Capture.CAPTURES,
            f"implements SupportsEagle3 ({facts.cite(tf.class_at or tf.at)})",
            convention=convention,
        )
    key = "no_capture_v1" if (runner or "").upper() == "V1" else "no_capture_v2"
    return Status(
        Capture.NO_CAPTURE,
        f"{tf.architecture} ({facts.cite(tf.class_at or tf.at)}) does not implement the "
        "aux-hidden-state interface (SupportsEagle3)",
        facts.message(key) or facts.message("no_capture_v2"),
    )


def _sglang(facts: ReleaseFacts, tf: TargetFacts, method: str) -> Status | None:
    hook_method = _SGLANG_HOOK.get(method)
    if hook_method is None:
        return None
    hook = tf.hooks.get(hook_method) or (
        tf.hooks.get("dflash") if hook_method == "dspark" else None
    )
    if hook is not None:
        # SGLang's general convention is +1 and a capture before each layer only (the
        # strictest range), so a +1 hook never makes it too permissive.
        return Status(
            Capture.CAPTURES,
            f"{hook_method} hook at {facts.cite(hook.at)}",
            convention=hook.rule == "plus-one",
        )
    name = {"eagle3": "set_eagle3_layers_to_capture"}.get(
        hook_method, "set_dflash_layers_to_capture"
    )
    return Status(
        Capture.NO_CAPTURE,
        f"{tf.architecture} ({facts.cite(tf.class_at or tf.at)}) has no {name} hook, "
        "defined or inherited",
        facts.message(_SGLANG_MESSAGE.get(hook_method, "no_dflash_hook")),
    )


_JUDGES: Mapping[str, Callable[[ReleaseFacts, TargetFacts, str, str | None], Status | None]] = (
    MappingProxyType(
        {
            "vllm": lambda facts, tf, method, runner: _vllm(facts, tf, runner),
            "sglang": lambda facts, tf, method, runner: _sglang(facts, tf, method),
        }
    )
)
"""How each extracted engine's facts say whether a served class captures: vLLM by the
aux-hidden-state interface and its capture sites (per runner), SGLang by the class's hook for
the method. One row per engine: an engine without one is not judged."""


def _judge(facts: ReleaseFacts, tf: TargetFacts, method: str, runner: str | None) -> Status | None:
    """Judge one served class by its engine's row of ``_JUDGES`` (None: no row, no judgement)."""
    judge = _JUDGES.get(facts.engine)
    return None if judge is None else judge(facts, tf, method, runner)
