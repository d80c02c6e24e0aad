"""The reference implementation: z-lab dflash on transformers, and its stages."""

from __future__ import annotations

from types import MappingProxyType

from dflash_check.knowledge.engines.interface import Engine, Release, Stage
from dflash_check.knowledge.reviewed import Reviewed, inherit

RELEASES = (Release("reference", "0.1.0", revision="07ebd93d"),)
REVIEWED = (Reviewed(">=0.1.0", repository="z-lab/dflash", pypi=True, distributions=("dflash",)),)
"""What was reviewed in dflash's transformers code (``knowledge/reviewed.py``)."""

_D = Stage.FIRST_DECODE
STAGES = MappingProxyType(
    {
        "reference": MappingProxyType(
            {
                # Without ids it guesses with the z-lab formula but sizes fc from the config.
                "DF001": Stage.LOAD,
                # Negative ids wrap (-1 is the embeddings).
                "DF002": Stage.SILENT,
                # An id past the layers fails when the first decode reads the layer.
                "DF004": _D,
                "DF032": _D,
            }
        ),
    }
)
"""Runtime -> rule -> stage, where the reference differs from the rule's default."""

ENGINE = Engine(
    "reference",
    "z-lab dflash (transformers)",
    "z-lab/dflash",
    inherit(RELEASES, REVIEWED),
    ("dflash", "dflash2", "dspark"),
    stages=STAGES,
)
