"""dflash-check: static and runtime compatibility checks for DFlash draft/target pairs."""

from __future__ import annotations

__version__ = "0.1.0"
