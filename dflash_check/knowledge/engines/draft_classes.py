"""Typed values for what a release's own draft model classes do with a draft's config.

``Release`` (``interface.py``) holds one of these per class a release builds where the class's
behaviour is more than one citation: what the release does, as a closed choice a rule can branch
on, and where it was read. The values themselves live in the engine's module (``vllm.py``), per
range of releases (``Reviewed``); ``citations.own_citations`` resolves the texts inside them as
it does a plain text field.

This module imports nothing from the rest of the tool: the engines build their rows with it at
import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class NopeServing(str, Enum):
    """What a release does with a ``DFlash2DraftModel`` that states ``no_rope_layers``."""

    RENAMED = "renamed"
    """Renamed to the release's NoPE class (vLLM 0.34: ``DFlash2RicursiveDraftModel``), which
    leaves the listed layers unrotated: served as trained."""
    IGNORED = "ignored"
    """The key is not read: every draft layer is rotated, unlike training, and nothing fails."""


@dataclass(frozen=True)
class NopeLayers:
    """How one release serves a ``DFlash2DraftModel``'s ``no_rope_layers`` (DF018 says it)."""

    serving: NopeServing
    """What the release does with the key."""
    text: str
    """What it does, in words a finding quotes after the release's name, with the citation."""

    @property
    def honoured(self) -> bool:
        """Whether the draft is served as trained (a note), rather than rotated (a warning)."""
        return self.serving is NopeServing.RENAMED


@dataclass(frozen=True)
class XPressClass:
    """What one release's XPress drafter (``Qwen3XPressForCausalLM`` and the speculator that
    runs it) refuses in a draft's config, each with the citation. All three are raised before
    any draft token is made: when the class or its speculator is built, or when the speculative
    config is resolved, so at load."""

    full_vocab: str
    """Where the class refuses a draft vocabulary (``draft_vocab_size``, else ``vocab_size``)
    other than the target's, padding included (DF007)."""
    top_level_anchor: str
    """Where the speculator refuses a true top-level ``sample_from_anchor``, besides the
    ``dflash_config`` one its DFlash parent refuses (DF021)."""
    topc_range: str
    """Where the draft's ``xpress_topc`` outside 0 .. the draft vocabulary is refused (DF050)."""


@dataclass(frozen=True)
class ArchitectureRename:
    """How a release renames a draft's ``architectures`` before its model registry looks them up.

    vLLM wraps an EAGLE-3 (and DFlash) draft's config in ``EAGLEConfig``, which keeps a name
    that starts or ends with its prefix and prefixes the others (``LlamaForCausalLM`` ->
    ``Eagle3LlamaForCausalLM``); the renamed class is the one the model registry must hold.
    """

    prefix: str
    """The prefix written before a name that neither starts nor ends with it (``Eagle3``)."""
    text: str
    """Where the release renames, with the citation (quoted in a refusal)."""

    def renamed(self, architecture: str) -> str:
        """Return the name the release looks up for ``architecture`` (a pure function)."""
        keep = architecture.startswith(self.prefix) or architecture.endswith(self.prefix)
        return architecture if keep else f"{self.prefix}{architecture}"
