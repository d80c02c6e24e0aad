"""Rules from the facts extracted from each engine release's code (``knowledge/facts.py``).

The family cells (``knowledge/runtimes/cells.py``) are derived from the same facts for every
target family the tool knows; the data covers every target architecture a release registers.
These rules speak where the cells are silent: a target the release serves no model class for,
and a served class of no known family with no capture for the draft's method. A family the
cells already mark ``cannot_capture`` is left to DF017, so nothing is said twice. Only engines
whose code is read as data (vLLM, SGLang) have facts; the others keep DF051's "not read" note.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from dflash_check.check.report import Severity
from dflash_check.check.rules.base import ALL_METHODS, Issue, PairContext, Rule, rule
from dflash_check.knowledge.engines import ENGINES_BY_NAME, registered
from dflash_check.knowledge.outcomes import Stage
from dflash_check.knowledge.runtimes import RuntimeProfile

if TYPE_CHECKING:
    from dflash_check.knowledge.coverage import Status


def _data_engines() -> tuple[str, ...]:
    """Engines with extracted facts (``Engine.extracted``: ``dflash_check/knowledge/data``),
    read from the registration when asked, so that an engine registered later is listed."""
    return tuple(e.name for e in registered() if e.extracted)


def _judged(ctx: PairContext) -> Iterator[tuple[RuntimeProfile, Status]]:
    """Each selected profile of an engine with data, with its release's judged status."""
    if not ctx.target.architectures:
        return
    # Imported here: the data is read only when a selected engine needs it.
    from dflash_check.knowledge import coverage, facts

    for p in ctx.profiles:
        engine = ENGINES_BY_NAME[p.engine_name]
        if not engine.extracted or p.family_independent:
            continue
        if p.cannot_capture is not None:
            continue  # DF017 reports the family from the reviewed cell
        found = facts.for_release(p.release or engine.newest)
        judged = coverage.status(found, ctx.target.architectures, ctx.draft.method, p.runner)
        if judged is not None:
            yield p, judged


def settled_by_data(ctx: PairContext) -> set[str]:
    """The selected profiles whose release's code settles this target (served or not, capture
    or not, by the general convention): DF051 has nothing to add for them."""
    return {p.name for p, judged in _judged(ctx) if judged.read}


@rule(
    "DF052",
    "target-not-served",
    Severity.ERROR,
    "The engine release has no model class for the target's architecture",
    "Engines dispatch on config.json's architectures, and each release serves the ones its "
    "model registry lists (vLLM's model_executor/models/registry.py, SGLang's EntryClass "
    "lists). For any other architecture both fall back to a Transformers-backend class: "
    "SGLang's TransformersForCausalLM has no capture hook, so the pair is refused at load "
    "(error); vLLM's backend implements SupportsEagle3 but serves the architecture only if the "
    "installed transformers implements it, else refuses it ('Model architectures [...] are not "
    "supported for now', vllm==0.34.0:vllm/model_executor/models/registry.py:1329), so for "
    "vLLM it is a warning. The registries are read from each release's code "
    "(dflash-check docs engine-facts).",
    "Serve the target with a release that registers its architecture, or use another runtime.",
    runtimes=_data_engines,
    methods=ALL_METHODS,
)
def check_target_served(ctx: PairContext) -> Iterator[Issue]:
    """Flag engine releases whose registry has none of the target's architectures."""
    from dflash_check.knowledge.coverage import Capture

    t = ctx.target
    for p, judged in _judged(ctx):
        if judged.capture is not Capture.NOT_SERVED:
            continue
        said = f": {judged.message}" if judged.message else ""
        if judged.may_serve:
            # vLLM's Transformers backend captures (SupportsEagle3) if transformers has it.
            yield Issue(
                f"target {t.name}: {judged.why}{said}",
                runtime=p.name,
                severity=Severity.WARNING,
                field="architectures",
                model="target",
                hint="Check that the installed transformers implements the architecture, or "
                "serve a release that registers it.",
            )
            continue
        yield Issue(
            f"target {t.name}: {judged.why}; {p.name} refuses the pair at load{said}",
            runtime=p.name,
            field="architectures",
            model="target",
        )


@rule(
    "DF053",
    "target-no-capture-in-release",
    Severity.ERROR,
    "The engine release serves the target but cannot capture its hidden states",
    "A DFlash draft or EAGLE-3 head needs the target's model class to capture hidden states: "
    "vLLM through the SupportsEagle3 interface (its V2 runner raises 'Model does not support "
    "EAGLE3 interface', vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:19), "
    "SGLang through a set_dflash_layers_to_capture / set_eagle3_layers_to_capture hook, defined "
    "or inherited. Whether each registered class has it is read from the release's code; a "
    "class that inherits the interface or hook without capturing (Qwen4Exp) is judged in "
    "dflash_check/knowledge/coverage.py. The engine refuses the pair at load, after the "
    "weights are read.",
    "Serve the pair with a runtime or release that captures this architecture "
    "(dflash-check docs engine-facts), or use another target.",
    runtimes=_data_engines,
    methods=ALL_METHODS,
)
def check_target_capture_in_release(ctx: PairContext) -> Iterator[Issue]:
    """Flag engine releases whose model class for the target has no capture for the method."""
    from dflash_check.knowledge.coverage import Capture

    t = ctx.target
    for p, judged in _judged(ctx):
        if judged.capture is not Capture.NO_CAPTURE:
            continue
        said = f": {judged.message}" if judged.message else ""
        if not judged.refused:
            # No load-time refusal on this path (the hook succeeds, sgl-project/sglang#38589):
            # the draft's fc meets features it was not built for when the first batch runs.
            yield Issue(
                f"target {t.name} ({', '.join(t.architectures)}): {judged.why}; {p.name} "
                "raises nothing at load and the draft is fed no captured hidden states",
                runtime=p.name,
                field="architectures",
                model="target",
                stage=Stage.FIRST_DECODE,
            )
            continue
        yield Issue(
            f"target {t.name} ({', '.join(t.architectures)}): {judged.why}; "
            f"{p.name} refuses the pair at load{said}",
            runtime=p.name,
            field="architectures",
            model="target",
        )


RULES: tuple[Rule, ...] = (
    check_target_served,
    check_target_capture_in_release,
)
