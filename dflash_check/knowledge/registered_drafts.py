"""Which draft architectures an engine release's model registry holds, read from its facts.

vLLM and SGLang build a draft from the class their model registry names for the draft's
``architectures`` (vLLM: ``_SPECULATIVE_DECODING_MODELS`` in
``model_executor/models/registry.py``; SGLang: the ``EntryClass`` of its model files), so a
release loads exactly the draft architectures its model registry holds, and refuses the others
when it reads the draft's config. ``tools/extract_engine_facts.py`` reads that table from each
release's code (the ``drafts`` of ``knowledge/data/<engine>-<release>.json``): for an engine
whose code is extracted, which releases load an architecture is derived here, never written by
hand. An engine whose code is not extracted (TensorRT-LLM, llama.cpp, MLX, ...) keeps the
reviewed rows of the draft format table (``check/formats``), each citing where it was read.

vLLM renames a ``dflash`` draft's architecture to ``DFlash{arch}`` unless it starts or ends
with ``DFlash`` (``transformers_utils/configs/eagle.py``); for every DFlash architecture the tool
names, the name looked up here and the renamed one are both registered or both absent (Muse
Glimmer registers both spellings), so the draft's own names are looked up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES_BY_NAME, Engine, Release


@dataclass(frozen=True)
class Registration:
    """What one release's model registry says about a draft's architectures."""

    release: Release
    """The release judged."""
    architecture: str | None
    """The first of the draft's architectures the model registry holds (None: none of them)."""
    citation: str
    """Where that was read: the registry entry (``vllm==0.34.0:…/registry.py:722``); for a
    draft it lacks, the entries it holds among the format's architectures and the release's own
    refusal, each with its line in the release's facts."""

    @property
    def registered(self) -> bool:
        """Whether the release loads the draft (its model registry holds an architecture)."""
        return self.architecture is not None


def reads_registry(engine: Engine | None) -> bool:
    """Whether ``engine``'s model registry is read from its releases' code (extracted facts)."""
    return engine is not None and engine.extracted


def registration(
    release: Release, architectures: Iterable[str], siblings: Iterable[str] = ()
) -> Registration:
    """Judge ``release`` on a draft of ``architectures`` from the release's own facts.

    ``siblings`` are the other architectures of the draft's format, cited when the release holds
    none of the draft's: what it does register shows where its model registry was read.
    Raises ``facts.MissingFacts`` for a release without its data file.
    """
    found = facts.for_release(release)
    wanted = tuple(architectures)
    for arch in wanted:
        entry = found.drafts.get(arch)
        if entry is not None:
            return Registration(release, arch, found.cite(entry["at"]))
    held = [s for s in dict.fromkeys(siblings) if s in found.drafts]
    parts = [f"its model registry holds no {' or '.join(wanted) or 'architecture named'}"]
    if held:
        groups = _grouped(found, held)
        parts.append("it holds " + ", ".join(f"{names} ({where})" for names, where in groups))
    key = ENGINES_BY_NAME[release.engine].unregistered_draft
    refusal = found.message(key) if key else None
    if refusal is not None:
        parts.append(f"{release.spec} refuses it at load: {refusal}")
    return Registration(release, None, "; ".join(parts))


def _grouped(found: facts.ReleaseFacts, architectures: list[str]) -> list[tuple[str, str]]:
    """Return (names, citation) per file of their registry entries: one citation of the lines
    they span, so that a message names what the release holds without a line per name."""
    by_file: dict[str, list[tuple[str, int]]] = {}
    for arch in architectures:
        path, _, line = found.drafts[arch]["at"].rpartition(":")
        by_file.setdefault(path, []).append((arch, int(line)))
    out = []
    for path, entries in by_file.items():
        lines = sorted({n for _, n in entries})
        span = str(lines[0]) if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"
        names = ", ".join(sorted(a for a, _ in entries))
        out.append((names, found.cite(f"{path}:{span}")))
    return out


def registering(engine: Engine, architecture: str) -> tuple[Release, ...]:
    """Return the releases of ``engine`` whose model registry holds ``architecture``, oldest
    first (every release of an extracted engine has its facts: the contract tests hold it)."""
    return tuple(r for r in engine.releases if architecture in facts.for_release(r).drafts)
