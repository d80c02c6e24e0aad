"""dflash's MLX implementation (``model_mlx.py``, in the package named dflash), and its stages."""

from __future__ import annotations

from types import MappingProxyType

from dflash_check.knowledge.engines.interface import Engine, Release, Stage
from dflash_check.knowledge.reviewed import Reviewed, inherit

RELEASES = (Release("mlx", "0.1.0", revision="07ebd93d"),)
REVIEWED = (
    Reviewed(
        ">=0.1.0",
        repository="z-lab/dflash",
        pypi=True,
        distributions=("dflash",),
        notes="dflash 0.1.0's model_mlx.py (the package is named dflash)",
    ),
)
"""What was reviewed in dflash's MLX code (``knowledge/reviewed.py``)."""

_S, _D = Stage.SILENT, Stage.FIRST_DECODE
STAGES = MappingProxyType(
    {
        # Negative ids wrap and the draft borrows the target's head (a vocabulary mismatch
        # runs); an id past the layers fails when the first decode reads it (run on 0.1.0).
        "mlx": MappingProxyType({"DF002": _S, "DF007": _S, "DF004": _D, "DF032": _D}),
    }
)
"""Runtime -> rule -> stage, where dflash's MLX code differs from the rule's default."""

ENGINE = Engine(
    "mlx",
    "z-lab dflash (MLX)",
    "z-lab/dflash",
    inherit(RELEASES, REVIEWED),
    ("dflash",),
    stages=STAGES,
)
