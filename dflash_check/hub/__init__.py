"""Model sources: local directories and the Hugging Face Hub, behind one ``fetch_model``."""

from __future__ import annotations

from dflash_check.core.model import ModelFiles
from dflash_check.hub.interface import ModelRef, ModelSource, Role, parse_model_ref

__all__ = ["ModelRef", "ModelSource", "Role", "fetch_model", "parse_model_ref"]


def fetch_model(ref: ModelRef, role: Role, hub: ModelSource | None = None) -> ModelFiles:
    """Fetch one model from its directory or, through ``hub``, from the Hub."""
    if ref.is_local:
        from dflash_check.hub.local import LocalSource

        return LocalSource().fetch(ref, role)
    if hub is None:
        from dflash_check.hub.hub import HubSource

        hub = HubSource()
    return hub.fetch(ref, role)
