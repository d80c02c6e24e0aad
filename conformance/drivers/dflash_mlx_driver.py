"""Run one conformance case in ``dflash-mlx`` 0.1.8 (bstnxbt's MLX runtime), on ``mlx[cpu]``.

Usage: python dflash_mlx_driver.py SPEC.json OUT.json (see vllm_driver.py for both files). It
follows the runtime's own ``dflash generate`` path (``dflash-mlx==0.1.8:dflash_mlx/generate.py:
45-106``): an offline runtime context, ``load_runtime_bundle`` (target, draft, target ops),
then ``stream_dflash_generate``, whose last event is a ``SummaryEvent`` with the generated ids,
``cycles_completed`` (verify steps) and ``accepted_from_draft``
(``dflash_mlx/engine/events.py:167-173``). Loading is the ``load`` stage, generating the
``first decode``.
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
        if not spec.get("draft"):
            from mlx_lm import load as mlx_lm_load
            from mlx_lm.generate import stream_generate as plain_generate

            model, tokenizer = mlx_lm_load(spec["target"])
            record["stage"] = "first decode"
            for prompt in spec["prompts"]:  # mlx-lm's default sampler is greedy
                answers = plain_generate(model, tokenizer, prompt, max_tokens=spec["max_tokens"])
                record["outputs"].append([int(r.token) for r in answers])
            record["stage"] = "done"
        else:
            from dflash_mlx.engine.events import SummaryEvent
            from dflash_mlx.runtime import get_stop_token_ids, stream_dflash_generate
            from dflash_mlx.runtime.bundle import load_runtime_bundle
            from dflash_mlx.runtime.context import build_offline_runtime_context

            context = build_offline_runtime_context()
            bundle = load_runtime_bundle(
                model_ref=spec["target"], draft_ref=spec["draft"], verify_config=context.verify
            )
            record["stage"] = "first decode"
            steps = accepted = 0
            for prompt in spec["prompts"]:
                summary = None
                for event in stream_dflash_generate(
                    target_model=bundle.target_model,
                    target_ops=bundle.target_ops,
                    tokenizer=bundle.tokenizer,
                    draft_model=bundle.draft_model,
                    draft_backend=bundle.draft_backend,
                    prompt=prompt,
                    max_new_tokens=spec["max_tokens"],
                    stop_token_ids=get_stop_token_ids(bundle.tokenizer),
                    runtime_context=context,
                ):
                    if isinstance(event, SummaryEvent):
                        summary = event
                if summary is None:
                    raise RuntimeError("dflash-mlx ended without a summary")
                record["outputs"].append([int(t) for t in summary.generated_token_ids])
                steps += int(summary.cycles_completed)
                accepted += int(summary.accepted_from_draft)
            # accepted_from_draft counts draft tokens only; each cycle also commits the
            # target's own token, as classify's tau = (drafts + accepted) / drafts expects.
            record["counters"] = {"drafts": steps, "accepted": accepted}
            record["stage"] = "done"
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
