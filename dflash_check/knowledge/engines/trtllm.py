"""TensorRT-LLM: the commit whose model code was read, and its stages."""

from __future__ import annotations

from types import MappingProxyType

from dflash_check.knowledge.engines.interface import Engine, Release, Stage
from dflash_check.knowledge.reviewed import Reviewed, inherit

RELEASES = (Release("trtllm", "7c7504c0"),)
REVIEWED = (
    Reviewed(
        ">=7c7504c0",
        repository="NVIDIA/TensorRT-LLM",
        notes="model code read on GitHub at this commit; no release wheel was read",
    ),
)
"""What was reviewed in TensorRT-LLM's code (``knowledge/reviewed.py``)."""

STAGES = MappingProxyType(
    {
        # An out-of-range id leaves the slot of an empty buffer unwritten, and without ids it
        # guesses: both serve with acceptance collapsed.
        "trtllm": MappingProxyType(
            {"DF001": Stage.SILENT, "DF004": Stage.SILENT, "DF032": Stage.SILENT}
        ),
    }
)
"""Runtime -> rule -> stage, where TensorRT-LLM differs from the rule's default."""

ENGINE = Engine(
    "trtllm",
    "TensorRT-LLM",
    "NVIDIA/TensorRT-LLM",
    inherit(RELEASES, REVIEWED),
    ("dflash", "eagle3"),
    readable=False,
    stages=STAGES,
)
