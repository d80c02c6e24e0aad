"""A release's judged capture status for one target: the values the engines' judges return.

Each extracted engine's module judges its own facts (``Engine.judge``: vLLM by the
aux-hidden-state interface, SGLang by the class's hook); ``coverage.py`` asks it. These values
sit apart from both so that an engine module and the coverage judgement import them without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Capture(str, Enum):
    """A release's capture status for one target architecture and drafting method."""

    CAPTURES = "captures"
    """The model code has the capture the method needs."""
    NOT_SERVED = "not-served"
    """The release registers no model class for the architecture."""
    NO_CAPTURE = "no-capture"
    """The class is served, but has no capture for the method: the engine refuses at load."""


@dataclass(frozen=True)
class Status:
    """The judged status with the engine's words and where they were read."""

    capture: Capture
    why: str
    """What the code shows, with citations."""
    message: str | None = None
    """The engine's own message (quoted, cited) when it refuses."""
    may_serve: bool = False
    """For ``NOT_SERVED``: whether the engine's fallback may still serve and capture it (vLLM's
    Transformers backend, when the installed transformers implements the architecture)."""
    refused: bool = True
    """For ``NO_CAPTURE``: whether the engine refuses the pair at load; False where the capture
    is set up without an error and the draft is fed no hidden states (Qwen4Exp on SGLang)."""
    convention: bool = False
    """Whether the capture read matches the engine's general convention, so the checks made
    with it hold for this class (vLLM: a capture after each layer, or before each layer and
    after the last; SGLang: a hook that adds one)."""

    @property
    def read(self) -> bool:
        """Whether the release's code settles this target for the engine (DF051 then has
        nothing to add)."""
        return self.capture is not Capture.CAPTURES or self.convention
