"""Run vLLM's own start-up validation over config-only pairs, inside vLLM's own environment.

Usage: python vllm_config_driver.py JOBS.json OUT.json. JOBS is a list of
``{"id", "target", "draft", "method", "num_speculative_tokens"}`` (folders holding only a
``config.json``); OUT gets one record per job: ``outcome`` (``accepted`` / ``refused``), the
``stage`` that refused (``config``: ``EngineArgs.create_engine_config``; ``load``: the
speculator's own config set-up the model runner makes before building the drafter), and the
exception's type and message. Imports vLLM: never imported by the project.

Stubs, each because the GPU wheel runs here on a CPU without the GPU stack:

- ``vllm.triton_utils.HAS_TRITON = True``: the CPU platform refuses to start without Triton
  (``vllm==0.34.0:vllm/platforms/cpu.py:243``, "requires Triton (triton-cpu)"); nothing on the
  config path calls a Triton kernel, so the flag alone is stubbed, not Triton.
- a stand-in ``torchvision`` module (an empty package): multimodal targets (Qwen3-Omni) import
  it for their processors; the index's torchvision does not load against the CPU torch, and no
  processor is built here (``skip_tokenizer_init``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

MESSAGE_CHARS = 600


STAND_IN = """
# A stand-in torchvision written by conformance/drivers/vllm_config_driver.py: importable,
# every attribute an inert placeholder class; nothing here runs an image transform.
__version__ = "0.0.0+stand-in"


class _Anything(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return cls


class _Placeholder(metaclass=_Anything):
    def __init__(self, *args, **kwargs):
        pass

    def __class_getitem__(cls, item):
        return cls

    def __getattr__(self, name):
        return _Placeholder


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder
"""
STAND_IN_MODULES = ("", "transforms", "transforms/v2", "transforms/functional", "io", "ops")
"""The torchvision modules multimodal model files import at module level (Qwen2-VL's image
processor: ``torchvision.transforms.v2.functional``)."""


def stand_in_torchvision(root: Path) -> None:
    """Write the stand-in package under ``root`` and put it first on the import path, here and
    (through PYTHONPATH) in vLLM's model-inspection subprocess."""
    for sub in STAND_IN_MODULES:
        folder = root / "torchvision" / sub
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text(STAND_IN)
    (root / "torchvision" / "transforms" / "v2" / "functional.py").write_text(STAND_IN)
    sys.path.insert(0, str(root))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p
    )


def _load_stage(config: Any) -> None:
    """The speculator config the V2 model runner builds before the drafter (it runs the
    DSpark checkpoint contract, ``vllm/v1/worker/gpu/spec_decode/dspark/config.py:125``)."""
    spec = config.speculative_config
    if spec is None or not spec.use_dspark():
        return
    from vllm.v1.worker.gpu.spec_decode.dspark.config import DSparkSpeculatorConfig

    DSparkSpeculatorConfig(spec)


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """Validate one pair; return its record (an exception is the pair's outcome)."""
    from vllm.engine.arg_utils import EngineArgs

    stage = "config"
    started = time.monotonic()
    try:
        speculative: dict[str, Any] = {"method": job["method"], "model": job["draft"]}
        if job.get("num_speculative_tokens") is not None:
            speculative["num_speculative_tokens"] = job["num_speculative_tokens"]
        args = EngineArgs(
            model=job["target"],
            speculative_config=speculative,
            load_format="dummy",
            enforce_eager=True,
            skip_tokenizer_init=True,
            max_model_len=2048,
        )
        config = args.create_engine_config()
        stage = "load"
        _load_stage(config)
    except Exception as err:  # noqa: BLE001 - whatever the engine raises is its verdict
        return {
            "id": job["id"],
            "outcome": "refused",
            "stage": stage,
            "error": {"type": type(err).__name__, "message": str(err)[:MESSAGE_CHARS]},
            "seconds": round(time.monotonic() - started, 3),
        }
    return {
        "id": job["id"],
        "outcome": "accepted",
        "stage": None,
        "error": None,
        "seconds": round(time.monotonic() - started, 3),
    }


def main(jobs_path: str, out_path: str) -> int:
    """Run every job in ``jobs_path``; write the records to ``out_path``."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    stand_in_torchvision(Path(out_path).resolve().parent / "stand-in")
    import vllm
    import vllm.triton_utils

    vllm.triton_utils.HAS_TRITON = True
    jobs = json.loads(Path(jobs_path).read_text())
    records = [run_one(job) for job in jobs]
    out = {"release": vllm.__version__, "records": records}
    Path(out_path).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
