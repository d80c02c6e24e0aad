"""How each engine reads DFlash 2's four keys (``DF018``'s table, ``check/rules/dflash2.py``).

Apart from the rule because only a DFlash 2 draft's check reads it: every other pair's
start-up would define its class for nothing (``benchmarks/bench_pair.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.knowledge.engines import LLAMACPP, REFERENCE, TRTLLM, VLLM


@dataclass(frozen=True)
class Dflash2Reader:
    """How one engine reads DFlash 2's four keys, and what it raises without one."""

    runtime: str
    nested_only: bool
    """It reads the keys from dflash_config only, so a top-level copy counts as missing."""
    zero_is_missing: bool
    """It treats 0 as absent (the engines that default the keys to 0 or require them > 0)."""
    error: str
    """Its load error for a missing key."""


# The engines' DFlash 2 config reading (cited in DF018's why). SGLang's own rules (conv and
# selector keys in pairs, selector_rank required, conv optional) are checked separately.
DFLASH2_READERS = (
    Dflash2Reader(REFERENCE.name, False, False, "TypeError (a missing constructor argument)"),
    Dflash2Reader(VLLM.name, True, False, "bare KeyError '{key}'"),
    Dflash2Reader(
        TRTLLM.name,
        True,
        True,
        "'DFlash 2 drafter is missing required dflash_config entries {missing}; got …'",
    ),
    Dflash2Reader(LLAMACPP.name, False, True, "'DFlash2 model is missing conv/selector metadata'"),
)
