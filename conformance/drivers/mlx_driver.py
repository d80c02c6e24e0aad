"""Run one conformance case in the MLX reference (z-lab ``dflash`` 0.1.0 ``model_mlx.py``).

Usage: python mlx_driver.py SPEC.json OUT.json (see vllm_driver.py for both files). Runs in its
own virtual environment with ``mlx[cpu]`` on Linux. ``load_draft`` calls ``snapshot_download``
even for a local folder (``dflash==0.1.0:dflash/model_mlx.py:430-431``), so the driver hands it
the folder back unchanged. ``stream_generate`` yields the prefill token (``accepted`` None)
and then one response per verify step whose ``accepted`` is the tokens it committed
(``model_mlx.py:855-863``): verify steps and accepted draft tokens follow from them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _record import Recording


def main(spec_path: str, out_path: str) -> int:
    """Run the case in ``spec_path``; write what happened to ``out_path``."""
    spec = json.loads(Path(spec_path).read_text())
    with Recording(out_path, "load") as record:
        from dflash import model_mlx
        from mlx_lm import load as mlx_lm_load
        from mlx_lm.generate import stream_generate as plain_generate

        model, tokenizer = mlx_lm_load(spec["target"])
        if not spec.get("draft"):
            record["stage"] = "first decode"
            for prompt in spec["prompts"]:  # mlx-lm's default sampler is greedy
                answers = plain_generate(model, tokenizer, prompt, max_tokens=spec["max_tokens"])
                record["outputs"].append([int(r.token) for r in answers])
            record["stage"] = "done"
        else:
            model_mlx.snapshot_download = lambda path, **_kwargs: path  # a local folder
            draft = model_mlx.load_draft(spec["draft"])
            record["stage"] = "first decode"
            steps = committed = 0
            for prompt in spec["prompts"]:
                tokens: list[int] = []
                for response in model_mlx.stream_generate(
                    model, draft, tokenizer, prompt, max_tokens=spec["max_tokens"]
                ):
                    tokens += list(response.tokens)
                    if response.accepted is not None:
                        steps += 1
                        committed += int(response.accepted)
                record["outputs"].append(tokens)
            record["counters"] = {"drafts": steps, "accepted": committed - steps}
            record["stage"] = "done"
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
