"""Model sources: local directories and the Hugging Face Hub, behind one interface."""

from __future__ import annotations

from dflash_check.sources.interface import ModelRef, ModelSource, Role, parse_model_ref

__all__ = ["ModelRef", "ModelSource", "Role", "parse_model_ref"]
