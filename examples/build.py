"""Write header-only safetensors files for the example and fixture drafts (deterministic).

The check reads only the safetensors header, so each draft folder carries its checkpoint's
tensor names and shapes (the example's fc.weight is 2560 x 12800) without the weights.
Every folder under examples/ and tests/fixtures/hub/ whose config.json is a DFlash draft gets
a model.safetensors matching its config. Run: python examples/build.py
"""

from __future__ import annotations

import json
from pathlib import Path

from dflash_check.sources.safetensors_header import header_for_draft_config

ROOT = Path(__file__).resolve().parent.parent
DRAFT_ARCHITECTURES = {"DFlashDraftModel", "DFlash2DraftModel"}


def main() -> None:
    """Write model.safetensors next to every draft config.json."""
    for config_path in sorted(
        [*ROOT.glob("examples/*/config.json"), *ROOT.glob("tests/fixtures/hub/*/*/config.json")]
    ):
        config = json.loads(config_path.read_text())
        if DRAFT_ARCHITECTURES & set(config.get("architectures") or []):
            (config_path.parent / "model.safetensors").write_bytes(header_for_draft_config(config))
            print(f"wrote {config_path.parent.relative_to(ROOT)}/model.safetensors")


if __name__ == "__main__":
    main()
