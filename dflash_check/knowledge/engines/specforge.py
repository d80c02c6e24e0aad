"""SpecForge: the training framework whose EAGLE-3 heads the tool reads (no serving stage)."""

from __future__ import annotations

from dflash_check.knowledge.engines.interface import Engine, Release
from dflash_check.knowledge.reviewed import Reviewed, inherit

RELEASES = (Release("specforge", "a6b6b023"),)
REVIEWED = (Reviewed(">=a6b6b023", repository="sgl-project/SpecForge"),)
"""What was reviewed in SpecForge's code (``knowledge/reviewed.py``)."""

ENGINE = Engine(
    "specforge",
    "SpecForge (training)",
    "sgl-project/SpecForge",
    inherit(RELEASES, REVIEWED),
    ("eagle3",),
)
