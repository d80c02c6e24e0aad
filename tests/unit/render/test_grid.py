"""The --verbose grids of the human report."""

from __future__ import annotations

import pytest

from dflash_check.render.table import render_text
from tests.support.helpers import check_files, draft_config, fc_tensors, files, qwen3_4b_config


@pytest.mark.parametrize("width", [80, 120])
def test_the_layer_picture_fits_the_line(width: int) -> None:
    """A target of 98 layers is drawn one cell per layer only where that fits the width;
    narrower, untapped stretches are elided, so the picture never runs past the line."""
    cfg = draft_config()
    target = qwen3_4b_config() | {"num_hidden_layers": 98}
    report = check_files(files("draft", cfg, fc_tensors(cfg)), files("target", target))
    (picture,) = [
        line
        for line in render_text(report, width, verbose=True).splitlines()
        if line.startswith("target layers")
    ]
    assert len(picture) <= width, picture
    assert ("…" in picture) == (width < 120)
