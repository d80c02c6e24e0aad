"""Run one conformance case in vLLM (offline ``LLM``), inside vLLM's own virtual environment.

Usage: python vllm_driver.py SPEC.json OUT.json. SPEC has ``target``, ``draft`` (null: the
target alone, the lossless baseline), ``method``, ``num_speculative_tokens``, ``prompts`` and
``max_tokens``. OUT gets the stage reached (``config``, ``load``, ``first decode``, ``done``),
the exception that stopped it (type and message), the output token ids and vLLM's own
speculative counters (``LLM.get_metrics``; ``vllm/v1/spec_decode/metrics.py`` names). The
engine core runs in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) so the exception that
stopped it is the one raised here, not a wrapper. Imports vLLM: never imported by the project.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from _record import Recording

COUNTERS = {
    "vllm:spec_decode_num_drafts": "drafts",
    "vllm:spec_decode_num_draft_tokens": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "accepted",
}


def main(spec_path: str, out_path: str) -> int:
    """Run the case in ``spec_path``; write what happened to ``out_path``."""
    spec = json.loads(Path(spec_path).read_text())
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    with Recording(out_path, "config") as record:
        import vllm
        from vllm import LLM, SamplingParams
        from vllm.engine.arg_utils import EngineArgs

        record["release"] = vllm.__version__
        kwargs: dict = {
            "model": spec["target"],
            "enforce_eager": True,  # no torch.compile warm-up (1-3 min on a CPU)
            "max_model_len": 128,
            "dtype": "float32",
            "seed": 0,
            "disable_log_stats": False,
            # The CPU backend reserves this fraction of the machine's memory for the KV cache.
            "gpu_memory_utilization": spec.get("memory_fraction", 0.1),
        }
        if spec.get("draft"):
            kwargs["speculative_config"] = {
                "method": spec["method"],
                "model": spec["draft"],
                "num_speculative_tokens": spec["num_speculative_tokens"],
            }
        EngineArgs(**kwargs).create_engine_config()  # config-time refusals surface here
        record["stage"] = "load"
        llm = LLM(**kwargs)
        record["stage"] = "first decode"
        params = SamplingParams(temperature=0.0, max_tokens=spec["max_tokens"])
        outs = llm.generate(spec["prompts"], params, use_tqdm=False)
        record["outputs"] = [list(o.outputs[0].token_ids) for o in outs]
        for metric in llm.get_metrics():
            if metric.name in COUNTERS:
                record["counters"][COUNTERS[metric.name]] = int(metric.value)
            elif metric.name == "vllm:spec_decode_num_accepted_tokens_per_pos":
                record["counters"]["accepted_per_position"] = [int(v) for v in metric.values]
        record["stage"] = "done"
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
