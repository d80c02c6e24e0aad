"""Speculative methods the tool recognises in a draft config but cannot check yet.

Checked before the draft formats (``normalise_draft``): a config of one of these methods gets a
message naming the method rather than "not a draft".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dflash_check.check.formats import nextn
from dflash_check.check.formats.common import config_architectures


@dataclass(frozen=True)
class OtherMethod:
    """A speculative method the tool recognises but cannot check yet."""

    name: str
    title: str
    identified_by: str
    matches: Callable[[Mapping[str, Any]], bool]


def _arch_contains(*needles: str) -> Callable[[Mapping[str, Any]], bool]:
    def matches(config: Mapping[str, Any]) -> bool:
        return any(n in a.lower() for a in config_architectures(config) for n in needles)

    return matches


def _speculators_type(*kinds: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda config: config.get("speculators_model_type") in kinds


# Checked before the formats, in order: P-EAGLE heads carry EAGLE-3 keys and names, so they
# must not be read as EAGLE-3; EAGLE-1/2 heads have an eagle_config without aux states.
OTHER_METHODS: tuple[OtherMethod, ...] = (
    OtherMethod(
        "peagle",
        "P-EAGLE (parallel-drafting EAGLE)",
        "architectures PEagleDraftModel / Peagle*, speculators_model_type peagle",
        lambda c: _arch_contains("peagle")(c) or _speculators_type("peagle")(c),
    ),
    OtherMethod(
        "mtp",
        "MTP (multi-token prediction layers other than a NextN checkpoint)",
        "architectures *MTP*, speculators_model_type mtp",
        lambda c: (
            (_arch_contains("mtp")(c) and not nextn.matches(c)) or _speculators_type("mtp")(c)
        ),
    ),
    OtherMethod(
        "eagle",
        "EAGLE-1/2",
        "architectures Eagle* (not Eagle3), speculators_model_type eagle, or an eagle_config "
        "with use_aux_hidden_state false",
        lambda c: (
            _speculators_type("eagle")(c)
            or any(
                "eagle" in a.lower() and "eagle3" not in a.lower() for a in config_architectures(c)
            )
            or (
                isinstance(c.get("eagle_config"), dict)
                and c["eagle_config"].get("use_aux_hidden_state", True) is False
            )
        ),
    ),
)


def other_method_of(config: Mapping[str, Any]) -> OtherMethod | None:
    """Return the unsupported method a draft config uses, if it is one the tool names."""
    return next((m for m in OTHER_METHODS if m.matches(config)), None)
