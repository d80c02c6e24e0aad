"""TensorRT-LLM: the commit whose model code was read, and its stages."""

from __future__ import annotations

from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines.interface import Engine, Release, Stage
from dflash_check.knowledge.reviewed import Reviewed, inherit

if TYPE_CHECKING:
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp

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

_TRTLLM_SRC = "NVIDIA/TensorRT-LLM@fcd3f316"
"""Where its MTP code was read (another revision than its model code)."""


@cache
def mtp_rows(_engine: Engine) -> tuple[EngineMtp, ...]:
    """What TensorRT-LLM builds from a target's own MTP layers (``Engine.mtp``)."""
    # Its class is defined when asked: a pair check never reads the rows.
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp

    return (
        # TensorRT-LLM: its stored source (no line numbers could be read) gives the config class;
        # which architectures its PyTorch backend builds MTP for was not read.
        EngineMtp(
            "trtllm",
            (),
            "MTP in the PyTorch backend (one-model MTP-EAGLE when k is 1); "
            "architectures served not verified",
            "speculative_config=MTPDecodingConfig(num_nextn_predict_layers={k})",
            "max_draft_len = num_nextn_predict_layers",
            "not verified",
            f"{_TRTLLM_SRC}:tensorrt_llm/llmapi/llm_args.py "
            "(MTPDecodingConfig.set_max_total_draft_tokens, "
            "spec_dec_mode)",
            verified=False,
        ),
    )


ENGINE = Engine(
    "trtllm",
    "TensorRT-LLM",
    "NVIDIA/TensorRT-LLM",
    inherit(RELEASES, REVIEWED),
    ("dflash", "eagle3"),
    readable=False,
    stages=STAGES,
    mtp_rows=mtp_rows,
)
