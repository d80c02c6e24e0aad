"""Write the header-only safetensors file of the example draft (deterministic).

The check reads only the safetensors header, so the example carries the real checkpoint's
tensor names and shapes (fc.weight is 2560 x 12800) without the 1 GB of weights.
Run: python examples/build.py
"""

from __future__ import annotations

import json
from pathlib import Path

from dflash_check.core.safetensors_header import dflash_draft_tensors, encode_header

HERE = Path(__file__).parent


def main() -> None:
    """Write examples/Qwen3-4B-DFlash-b16/model.safetensors from its config.json."""
    folder = HERE / "Qwen3-4B-DFlash-b16"
    cfg = json.loads((folder / "config.json").read_text())
    tensors = dflash_draft_tensors(
        hidden=cfg["hidden_size"],
        num_ids=len(cfg["dflash_config"]["target_layer_ids"]),
        target_hidden=cfg["hidden_size"],
        layers=cfg["num_hidden_layers"],
        intermediate=cfg["intermediate_size"],
        heads=cfg["num_attention_heads"],
        kv_heads=cfg["num_key_value_heads"],
        head_dim=cfg["head_dim"],
    )
    (folder / "model.safetensors").write_bytes(encode_header(tensors))


if __name__ == "__main__":
    main()
