"""dflash-mlx: bstnxbt's MLX runtime, what people serve DFlash drafts with on Apple Silicon.

Read from the released wheel (dflash-mlx 0.1.8 on the package index).
"""

from __future__ import annotations

from types import MappingProxyType

from dflash_check.knowledge.engines.interface import Engine, Release, Stage
from dflash_check.knowledge.reviewed import Reviewed, inherit

RELEASES = (Release("dflash-mlx", "0.1.8"),)
REVIEWED = (
    Reviewed(
        ">=0.1.8",
        repository="bstnxbt/dflash-mlx",
        pypi=True,
        distributions=("dflash-mlx",),
        notes="Apple Silicon (Metal); imports and runs on Linux with mlx[cpu]. Drafts load "
        "through mlx-lm's load_model into DFlashDraftModelArgs, whose fields are read at the top "
        "level only: block_size (checked, DF012), and also rope_theta, max_position_embeddings, "
        "head_dim, tie_word_embeddings and num_target_layers have no default "
        "(dflash-mlx==0.1.8:dflash_mlx/model.py:222-236)",
    ),
)
"""What was reviewed in dflash-mlx's code (``knowledge/reviewed.py``)."""

_L, _D, _S = Stage.LOAD, Stage.FIRST_DECODE, Stage.SILENT
STAGES = MappingProxyType(
    {
        "dflash-mlx": MappingProxyType(
            {
                # Without ids it guesses as many ids as the draft has layers and sizes fc from
                # them.
                "DF001": _S,
                # It captures key t + 1: -1 is key 0, the embeddings.
                "DF002": _S,
                # A key past N is never captured: KeyError when the prefill gathers it.
                "DF004": _D,
                "DF032": _D,
                # It sizes fc from the draft's own hidden size: the checkpoint's fc is refused
                # at load (run on dflash-mlx 0.1.8).
                "DF006": _L,
                # It drafts through the target's embeddings and head (draft_backend.py:131-142).
                "DF007": _S,
                # It takes token 0 for a missing mask token and serves (model.py:696).
                "DF008": _S,
            }
        ),
    }
)
"""Runtime -> rule -> stage, where dflash-mlx differs from the rule's default."""

ENGINE = Engine(
    "dflash-mlx",
    "dflash-mlx (MLX runtime)",
    "bstnxbt/dflash-mlx",
    inherit(RELEASES, REVIEWED),
    ("dflash",),
    stages=STAGES,
)
