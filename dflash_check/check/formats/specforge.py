"""SpecForge's DFlash variants: the z-lab key layout under other architecture names.

``DeepseekDFlashDraftModel`` is SpecForge's MLA (DeepSeek / Kimi attention) DFlash draft. Its
attention differs, but the DFlash surface the runtimes read (``target_layer_ids``, ``fc``,
``mask_token_id``, ``block_size``, ``num_target_layers``) is the z-lab one, read the same way
(``sgl-project/SpecForge`` ``specforge/modeling/draft/deepseek_dflash.py``).
"""

from __future__ import annotations

from dflash_check.check.formats.zlab import read_dflash_config_draft
from dflash_check.views import DraftMethod, DraftView, ModelFiles

ARCHITECTURES: dict[str, DraftMethod] = {"DeepseekDFlashDraftModel": "dflash"}


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a SpecForge DFlash variant."""
    return read_dflash_config_draft(files, "specforge", ARCHITECTURES)
