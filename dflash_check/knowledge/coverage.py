"""Reviewed judgement over the extracted facts: does a release serve a target, and capture?

``facts.py`` holds what the engines' code states mechanically (registry rows, interfaces,
hooks). Whether that amounts to hidden-state capture for a pair is decided here, where a
reviewer reads it: an interface inherited by a class whose inner model cannot capture, a hook
that delegates to a model which collects nothing. Each engine's module holds its judge
(``Engine.judge``) and the classes reviewed as not capturing (``Engine.no_capture``), each
citing the code (or the engine's issue) it was judged from; this module applies them, and the
fallback every engine shares.
"""

from __future__ import annotations

from dflash_check.knowledge.capture import Capture, Status
from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts

__all__ = ["FALLBACK_CLASS", "Capture", "Status", "status"]


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
    reviewed = ENGINES_BY_NAME[facts.engine].no_capture.get(tf.architecture)
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


def _judge(facts: ReleaseFacts, tf: TargetFacts, method: str, runner: str | None) -> Status | None:
    """Judge one served class by its engine module's judge (``Engine.judge``: vLLM by the
    aux-hidden-state interface and its capture sites, per runner; SGLang by the class's hook
    for the method). None: an engine without one is not judged."""
    judge = ENGINES_BY_NAME[facts.engine].judge
    return None if judge is None else judge(facts, tf, method, runner)
