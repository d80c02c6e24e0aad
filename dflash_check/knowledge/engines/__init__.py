"""Every engine the tool models: one module each, behind ``interface.py``, registered here.

An engine module fills one ``Engine`` (``interface.py``): its releases, the semantics reviewed
in its code per range of releases, its stages, limits, HTTP profile and serve command. Adding
a release is one row in its module (plus its extracted facts file); adding an engine is one
module and one entry in ``ENGINES``. Every reader looks engines up through ``ENGINES`` at call
time (``engine``, ``ENGINES_BY_NAME``, ``owner``), never by a branch on a name.

The names below the registration (``VLLM``, ``VLLM_033``, …) are the rows other modules cite
by name; each is looked up by version, so a new release adds none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from dflash_check.knowledge.engines import (
    dflash_mlx,
    llamacpp,
    mlx,
    reference,
    sglang,
    specforge,
    trtllm,
    vllm,
)
from dflash_check.knowledge.engines.handling import NOT_READ, DraftHandling
from dflash_check.knowledge.engines.interface import (
    INSTALLED,
    Engine,
    EngineModule,
    Release,
    UnknownRelease,
)

if TYPE_CHECKING:
    from dflash_check.knowledge.engines.mtp_reading import (
        EngineMtp,
        MtpRefusal,
        MtpReruns,
        MtpStepLimit,
        MtpSteps,
    )

_MTP_READING = frozenset({"EngineMtp", "MtpRefusal", "MtpReruns", "MtpStepLimit", "MtpSteps"})
"""The MTP row classes, exported lazily (``__getattr__``): only the readers of ``Engine.mtp``
import them, and a pair check defines none at start-up."""


def __getattr__(name: str) -> Any:
    """Return an MTP row class (``mtp_reading.py``), imported on first use."""
    if name in _MTP_READING:
        from dflash_check.knowledge.engines import mtp_reading

        return getattr(mtp_reading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MODULES: tuple[EngineModule, ...] = (
    reference,
    vllm,
    sglang,
    trtllm,
    llamacpp,
    mlx,
    dflash_mlx,
    specforge,
)
"""Every engine module, in the order reports list the engines: the one registration."""
ENGINES: tuple[Engine, ...] = tuple(m.ENGINE for m in MODULES)
"""Every engine the tool models, in that order: what every reader looks engines up in, at
call time (``registered()``), so that a test may register a fake engine here."""


def registered() -> tuple[Engine, ...]:
    """Return the registered engines (``ENGINES``, read at call time)."""
    return ENGINES


class _ByName(Mapping[str, Engine]):
    """The registered engines by name, read from ``ENGINES`` at each look-up."""

    def __getitem__(self, name: str) -> Engine:
        found = next((e for e in registered() if e.name == name), None)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([e.name for e in registered()])

    def __len__(self) -> int:
        return len(registered())


ENGINES_BY_NAME: Mapping[str, Engine] = _ByName()


def engine(name: str) -> Engine:
    """Return the engine called ``name`` (KeyError for a name the tool does not model)."""
    return ENGINES_BY_NAME[name]


def owner(runtime: str) -> Engine | None:
    """Return the engine a runtime row belongs to (``vllm-v1`` -> vLLM), if any."""
    return next((e for e in registered() if runtime in e.runtime_names), None)


def handling(engine_name: str) -> DraftHandling:
    """Return what the engine ``engine_name`` does with a draft where a rule asks it
    (``Engine.handling``); a runtime of no registered engine answers with the defaults."""
    found = ENGINES_BY_NAME.get(engine_name)
    return found.handling if found is not None else NOT_READ


def engines_with_test_files() -> tuple[Engine, ...]:
    """Return the registered engines whose own test registry ``registry`` reads
    (``Engine.test_file``), in registration order: the order a file's content is tried in."""
    return tuple(e for e in registered() if e.test_file is not None)


def release_of(engine_name: str, version: str | None = None) -> Release:
    """Return the release ``version`` of ``engine_name`` (None: the newest)."""
    return ENGINES_BY_NAME[engine_name].release(version)


VLLM = vllm.ENGINE
VLLM_032 = VLLM.release("0.32.0")
VLLM_033 = VLLM.release("0.33.0")
VLLM_034 = VLLM.release("0.34.0")
VLLM_V1 = vllm.VLLM_V1
VLLM_RUNNERS = VLLM.runtime_names
"""vLLM's runtimes, V2 first: a rule about every vLLM runner names these."""
SGLANG = sglang.ENGINE
SGLANG_0523 = SGLANG.release("0.5.23")
LLAMACPP = llamacpp.ENGINE
LLAMACPP_001D906A = LLAMACPP.release("001d906a")
LLAMACPP_0C1E5709 = LLAMACPP.release("0c1e57098")
TRTLLM = trtllm.ENGINE
TRTLLM_7C7504C0 = TRTLLM.release("7c7504c0")
REFERENCE = reference.ENGINE
DFLASH_010 = REFERENCE.release("0.1.0")
MLX = mlx.ENGINE
MLX_010 = MLX.release("0.1.0")
DFLASH_MLX = dflash_mlx.ENGINE
DFLASH_MLX_018 = DFLASH_MLX.release("0.1.8")
SPECFORGE = specforge.ENGINE
SPECFORGE_A6B6B023 = SPECFORGE.release("a6b6b023")
VLLM_REVIEWED = vllm.VLLM_REVIEWED
LLAMACPP_REVIEWED = llamacpp.REVIEWED

__all__ = [
    "DFLASH_010",
    "DFLASH_MLX",
    "DFLASH_MLX_018",
    "ENGINES",
    "ENGINES_BY_NAME",
    "INSTALLED",
    "LLAMACPP",
    "LLAMACPP_0C1E5709",
    "LLAMACPP_001D906A",
    "LLAMACPP_REVIEWED",
    "MLX",
    "MLX_010",
    "MODULES",
    "REFERENCE",
    "SGLANG",
    "SGLANG_0523",
    "SPECFORGE",
    "SPECFORGE_A6B6B023",
    "TRTLLM",
    "TRTLLM_7C7504C0",
    "VLLM",
    "VLLM_032",
    "VLLM_033",
    "VLLM_034",
    "VLLM_REVIEWED",
    "VLLM_RUNNERS",
    "VLLM_V1",
    "DraftHandling",
    "Engine",
    "EngineModule",
    "EngineMtp",
    "MtpRefusal",
    "MtpReruns",
    "MtpStepLimit",
    "MtpSteps",
    "Release",
    "UnknownRelease",
    "engine",
    "engines_with_test_files",
    "handling",
    "owner",
    "registered",
    "release_of",
]
