"""``--compare-bundled``: the bundled runtime's tau of the pair, as the engine run's floor.

An engine smoke run proves the engine decodes the pair, not that it decodes it as well as the
pair can: a draft whose ids sit where the engine ignores them still drafts, at a tau above any
fixed floor. The bundled runtime follows the reference semantics (the ids where the draft
states them, greedy and lossless), so its tau on the same prompts at the same block is what
the engine should come near (``knowledge.acceptance.BUNDLED_SHARE``). It loads both models in
this process (torch, the smoke extra): only when asked. When it cannot run, the reason goes
into the report and the floor falls back to the block-size one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from dflash_check.app.bundled_drafts import unsupported
from dflash_check.errors import CheckError
from dflash_check.knowledge.acceptance import BundledTau

if TYPE_CHECKING:
    from dflash_check.check.report import CheckReport
    from dflash_check.smoke.run import SmokeOptions
    from dflash_check.sources.interface import ModelRef


def bundled_block(report: CheckReport, given: int | None) -> int | None:
    """Return the block the engine is asked to draft: ``--block-size``, else the draft length
    the pair was checked for plus the bonus token (the launch command's
    ``num_speculative_tokens``); None: the draft's own, as the bundled runtime reads it."""
    if given is not None:
        return given
    tokens = report.num_speculative_tokens
    return tokens + 1 if tokens else None


def measure_bundled(
    report: CheckReport,
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    chat_template: bool,
    say: Callable[[str], None],
) -> tuple[BundledTau, tuple[str, ...]]:
    """Decode the pair in the bundled runtime (greedy, one timed run); return its tau, or why
    there is none, and the prompts it decoded (the engine then decodes those: the runtime
    replaces prompts a tokenizer cannot read). ``chat_template``: whether the engine applies
    the chat template (SGLang's native API takes raw text)."""
    from dflash_check.sanitize import one_line
    from dflash_check.smoke.run import DEFAULT_PROMPTS

    prompts = options.prompts or DEFAULT_PROMPTS
    if options.temperature > 0:
        # Sampled taus vary with the sampler's stream: only greedy ones compare.
        return BundledTau(
            None, why_not="--temperature is above 0; the taus compare greedy"
        ), prompts
    refused = unsupported(report, draft.spec)
    if refused is not None:
        why = f"the bundled runtime does not decode {report.draft.method} drafts"
        return BundledTau(None, why_not=why), prompts
    from dflash_check.smoke.run import run_smoke

    settings = replace(
        options,
        block_size=bundled_block(report, options.block_size),
        chat_template=chat_template,
        repeats=1,  # only tau is used, and it does not change between repeats
    )
    say("decoding the pair in the bundled runtime (--compare-bundled)")
    try:
        smoke = run_smoke(draft, target, settings, say)
    except CheckError as err:
        why = f"{err}; {err.hint}" if err.hint else str(err)
        return BundledTau(None, why_not=one_line(why)), prompts
    except (MemoryError, RuntimeError) as err:
        # A pair too big for this machine (torch's OutOfMemoryError is a RuntimeError) only
        # loses the comparison that was asked for, not the engine run.
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
        why = f"the bundled runtime failed to load or decode the pair ({type(err).__name__}"
        return BundledTau(None, why_not=one_line(f"{why}{': ' + first if first else ''})")), prompts
    finally:
        release_device_memory()
    return (
        BundledTau(
            round(smoke.mean_acceptance_length, 2),
            len(smoke.cases),
            smoke.block_size,
            smoke.lossless,
        ),
        tuple(c.prompt for c in smoke.cases),
    )


def release_device_memory() -> None:
    """Hand the bundled run's GPU memory back: ``--launch`` then starts an engine on the same
    GPU, and torch's allocator would otherwise keep the freed blocks of both models."""
    import gc
    import sys

    torch = sys.modules.get("torch")  # not imported: the run never started, nothing to free
    if torch is None:
        return
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
