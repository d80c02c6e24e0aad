"""The requested method against the draft's: vLLM 0.34 refuses a ``method`` that does not match
the one the draft checkpoint's model class declares (``Release.checks_method``).

The user names the method in ``--speculative-config '{"method": ...}'``; the draft's model class
names its own (``speculator_config_class``). Releases before 0.34 have no such check and pick
the proposer from the requested method alone; what a mismatched pair then does is not read, so
nothing is said for them.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_check.check.formats import format_named
from dflash_check.check.report import Severity
from dflash_check.check.rules.base import ALL_METHODS, Issue, PairContext, Rule, rule
from dflash_check.knowledge.engines import VLLM
from dflash_check.knowledge.settings import vllm_method


@rule(
    "DF054",
    "method-mismatch",
    Severity.ERROR,
    "The requested speculative method is not the one the draft checkpoint declares",
    "vLLM 0.34 resolves the draft's model class before it builds the proposer, and when that "
    "class declares a speculator (DFlash, DFlash 2 and DSpark drafts, Gemma 4 MTP) it compares "
    "the declared method with speculative_config.method and raises a ValueError on a mismatch, so "
    "the server refuses to start "
    "(vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:413-425). A DSpark "
    "draft asked for as dflash, or a DFlash draft asked for as dspark, is refused. Earlier "
    "releases have no such check. Checked when the method is given "
    "(--speculative-method, pairs.yaml 'method', a vLLM test entry's speculative_method).",
    "Pass the method the draft declares (dflash for DFlash and DFlash 2 drafts, dspark for "
    "DSpark drafts), or serve the draft the method is meant for.",
    runtimes=(VLLM.name,),
    methods=ALL_METHODS,
)
def check_method(ctx: PairContext) -> Iterator[Issue]:
    """Flag vLLM releases that refuse the requested method for this draft at load."""
    if ctx.speculative_method is None:
        return
    d = ctx.draft
    requested = vllm_method(ctx.speculative_method)
    fmt = format_named(d.format)
    for p in ctx.profiles:
        release = p.release
        # The release's reviewed semantics say whether it checks the method (vLLM >= 0.34).
        if release is None or release.checks_method is None:
            continue
        if not fmt.loads(p.name, d, p.release):
            continue  # DF016: the release does not load the draft at all
        declared = next(
            (m for a in d.architectures if (m := release.declared_methods.get(a)) is not None),
            None,
        )
        if declared is None or declared == requested:
            continue
        yield Issue(
            f"draft {d.name} ({', '.join(d.architectures)}) is a '{declared}' checkpoint, but "
            f"the engine is asked for method '{requested}': {p.label} refuses it at load "
            f"('speculative_config requested method={requested!r}, but the draft model ... is "
            f"a {declared!r} checkpoint', {release.checks_method})",
            hint=f'Pass --speculative-config \'{{"method": "{declared}"}}\' (what the draft '
            "declares), or use a draft of the method you meant.",
            runtime=p.name,
            field="method",
        )


RULES: tuple[Rule, ...] = (check_method,)
