"""Run vLLM's own start-up validation over config-only pairs, inside vLLM's own environment.

Usage: python vllm_config_driver.py JOBS.json OUT.json. JOBS is a list of
``{"id", "target", "draft", "method", "num_speculative_tokens"}`` (folders holding only a
``config.json``; ``max_model_len``, 2048 unless given; ``draft`` None for MTP, whose draft
vLLM derives from the target's config); OUT gets one record per job:
``outcome`` (``accepted`` / ``refused``), the
``stage`` that refused (``config``: ``EngineArgs.create_engine_config``; ``load``: the
speculator's own config set-up the model runner makes before building the drafter; ``model``,
when the job asks for it: the target and the draft built on the meta device and the aux-layer
capture set up as the runner does), the exception's type and message, and on acceptance the
aux layers the release computes and what the capture and the draft's fc were given (for
MTP, ``mtp``: the draft config's model type, architecture and ``n_predict``).
Imports vLLM: never imported by the project.

Stubs, each because the GPU wheel runs here on a CPU without the GPU stack:

- ``vllm.triton_utils.HAS_TRITON = True``: the CPU platform refuses to start without Triton
  (``vllm==0.34.0:vllm/platforms/cpu.py:243``, "requires Triton (triton-cpu)"); nothing on the
  config path calls a Triton kernel, so the flag alone is stubbed, not Triton. The platform
  reads the flag when it checks a config; the Triton kernel decorator of model modules binds
  it when imported (``TRITON_HELPERS``), so that module is imported first, with the real flag
  (False): forced, the decorator reads ``triton.runtime`` off vLLM's placeholder module and
  every model module with a Triton kernel fails to import
  (``vllm==0.34.0:vllm/model_executor/warmup/jit_warmup_triton_helper.py:501-503``, Qwen3.5's
  gated-delta-net ops); with the real flag it takes its no-Triton path, as a CPU build does.
- a stand-in ``torchvision`` module (an empty package): multimodal targets (Qwen3-Omni) import
  it for their processors; the index's torchvision does not load against the CPU torch, and no
  processor is built here (``skip_tokenizer_init``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MESSAGE_CHARS = 600
TRITON_HELPERS = ("vllm.model_executor.warmup.jit_warmup_triton_helper",)
"""Modules that bind ``HAS_TRITON`` at import and decorate model kernels with it (0.32.0-0.34.0):
imported before the flag is stubbed (see the module's docstring)."""


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
    try:
        from vllm.v1.worker.gpu.spec_decode.dspark.config import DSparkSpeculatorConfig
    except ImportError:  # a release without it: nothing more runs before the drafter is built
        return
    DSparkSpeculatorConfig(spec)


def _aux_layers(config: Any) -> list[int] | None:
    """The target layers whose outputs the runner captures for the draft, as the release's own
    ``get_eagle3_aux_layers_from_config`` computes them (executed, not read: a change of its
    numbering shows in the recorded results). None where the release has no such function."""
    try:
        from vllm.v1.worker.gpu.spec_decode.eagle.eagle3_utils import (
            get_eagle3_aux_layers_from_config,
        )
    except ImportError:
        return None
    layers = get_eagle3_aux_layers_from_config(config.speculative_config)
    return list(layers) if layers is not None else None


_DISTRIBUTED: list[bool] = []


def _model_stage(config: Any) -> dict[str, Any]:
    """Build the target and the draft on the meta device with the release's own classes and set
    up the aux-layer capture as Model Runner V2 does (``set_eagle3_aux_hidden_state_layers``,
    ``vllm==0.34.0:vllm/v1/worker/gpu/model_runner.py:425-429``); return what the capture and
    the draft's fc were given. No weights, no forward: a refusal raised when a model is built is
    the pair's outcome, the start-up memory profile's forward is not run."""
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.model_executor.model_loader.utils import initialize_model

    if not _DISTRIBUTED:  # one process group of one, as a single-GPU server has
        with set_current_vllm_config(config):
            init_distributed_environment(
                world_size=1,
                rank=0,
                local_rank=0,
                distributed_init_method="tcp://127.0.0.1:29555",
                backend="gloo",
            )
            initialize_model_parallel(1, 1)
        _DISTRIBUTED.append(True)
    spec = config.speculative_config
    with torch.device("meta"):
        target = initialize_model(vllm_config=config)
        draft = initialize_model(vllm_config=config, model_config=spec.draft_model_config)
    seen: dict[str, Any] = {"captured": None}
    if _uses_aux(spec):
        from vllm.v1.worker.gpu.spec_decode.eagle import eagle3_utils

        eagle3_utils.set_eagle3_aux_hidden_state_layers(target, spec)
        inner = eagle3_utils._inner_decoder(target)
        layers = getattr(inner, "aux_hidden_state_layers", None)
        seen["captured"] = list(layers) if layers is not None else None
    fc = [m for name, m in draft.named_modules() if name.split(".")[-1] == "fc"]
    seen["fc_in_features"] = int(fc[0].weight.shape[1]) if fc else None
    text = config.model_config.hf_text_config
    seen["target_layers"] = getattr(text, "num_hidden_layers", None)
    seen["target_hidden"] = getattr(text, "hidden_size", None)
    seen["fc_matches_capture"] = fc_matches_capture(seen)
    return seen


def fc_matches_capture(seen: dict[str, Any]) -> bool | None:
    """Whether the draft's fc takes what the runner captures: one target hidden state per
    captured layer that fires. vLLM sizes the fc from the draft's aux-id count
    (``vllm==0.34.0:vllm/model_executor/models/qwen3_dflash.py:125-134``) and the runner sets
    the capture set apart (``set_eagle3_aux_hidden_state_layers``, de-duplicated at
    ``model_executor/models/interfaces.py:1630``). The decoder captures at position 0 (its
    input) and after each layer (``idx + 1``): positions 0..N fire, a larger id never does
    (``vllm==0.34.0:vllm/model_executor/models/qwen2.py:420-431``, the same in 0.32.0 and
    0.33.0). When the widths differ the drafter's first forward fails on the concatenated
    width (``conformance/agreement.py``, ``FIRST_FORWARD``). None where the stage saw no
    capture set, no fc or no layer count."""
    captured, fc, hidden = seen["captured"], seen["fc_in_features"], seen["target_hidden"]
    layers = seen["target_layers"]
    if captured is None or fc is None or not hidden or layers is None:
        return None
    fired = [i for i in captured if 0 <= i <= layers]
    return fc == len(fired) * hidden


def _mtp_draft(config: Any) -> dict[str, Any]:
    """The MTP draft config the release derived from the target's own
    (``SpeculativeConfig.hf_config_override``, run by ``create_engine_config``): its model type,
    architecture and ``n_predict``, what vLLM's MTP tests assert."""
    return _derived(config.speculative_config.draft_model_config.hf_config)


def _derived(hf: Any) -> dict[str, Any]:
    """An MTP draft config's model type, architecture and ``n_predict``."""
    return {
        "model_type": getattr(hf, "model_type", None),
        "architectures": list(getattr(hf, "architectures", None) or []),
        "n_predict": getattr(hf, "n_predict", None),
    }


def _mtp_record(job: dict[str, Any], stop: Exception, started: float) -> dict[str, Any]:
    """An MTP job whose start-up stopped: run the MTP path alone, as vLLM's own MTP tests do
    (``SpeculativeConfig(method="mtp", target_model_config=ModelConfig(TARGET), ...)``,
    ``vllm==0.34.0:tests/models/test_qwen3_5_mtp_config.py:141-184``). Where it raises, that
    is the outcome (the MTP path refused); where it builds the draft config, the start-up
    stopped elsewhere, in the target's own set-up on this CPU (e.g. the CPU platform turns
    prefix caching off for MLA targets, ``vllm==0.34.0:vllm/platforms/cpu.py:532-542``, and
    then refuses a hybrid model's Mamba block size, ``vllm/config/vllm.py:3583-3593``): the
    MTP outcome is recorded, with the stop as data (``start_up_stop``), for the reader to
    judge."""
    from vllm.config import ModelConfig, ParallelConfig
    from vllm.config.speculative import SpeculativeConfig

    try:
        target = ModelConfig(
            model=job["target"],
            skip_tokenizer_init=True,
            max_model_len=job.get("max_model_len", 2048),
        )
    except Exception as err:  # noqa: BLE001 - the loader, not the MTP path: see _override_record
        return _override_record(job, err, started)

    def derive() -> Any:
        return SpeculativeConfig(
            method=job["method"],
            num_speculative_tokens=job.get("num_speculative_tokens"),
            target_model_config=target,
            target_parallel_config=ParallelConfig(),
        ).draft_model_config.hf_config

    return _mtp_outcome(job, derive, stop, started)


def _override_record(job: dict[str, Any], stop: Exception, started: float) -> dict[str, Any]:
    """An MTP job whose target config vLLM's loader cannot read from a config-only folder (a
    checkpoint that ships its own config code, as MiMo and Nemotron Parse do, or a config with
    no ``model_type``): run ``SpeculativeConfig.hf_config_override`` on the config as the
    test builds it (``PreTrainedConfig(**config)``, ``vllm==0.34.0:tests/models/multimodal/
    generation/test_nemotron_parse_35_mtp.py:25-36``); the loader's refusal is kept as data."""
    from transformers import PretrainedConfig
    from vllm.config.speculative import SpeculativeConfig

    raw = json.loads((Path(job["target"]) / "config.json").read_text())
    config = PretrainedConfig(**{k: v for k, v in raw.items() if k != "model_type"})
    if "model_type" in raw:  # set after construction, as the tests do (a class attribute)
        config.model_type = raw["model_type"]
    for name, value in raw.items():  # nested sections as objects, as the tests build them
        if isinstance(value, dict) and name != "quantization_config":
            setattr(config, name, PretrainedConfig(**value))

    def derive() -> Any:
        hf = SpeculativeConfig.hf_config_override(config)
        _resolve_tokens(hf, job)
        return hf

    return _mtp_outcome(job, derive, stop, started)


def _resolve_tokens(hf: Any, job: dict[str, Any]) -> None:
    """Run the release's own draft-length check of an MTP draft on the derived config, where it
    is a classmethod of the MTP speculator config that a stand-in spec can be given
    (``MTPSpeculatorConfig.resolve_num_speculative_tokens``, vllm==0.34.0:vllm/v1/worker/gpu/
    spec_decode/mtp/config.py:100-107: Nemotron Parse 3.5's one trained step, then the
    divisibility by ``n_predict``). 0.32.0 and 0.33.0 check it inside
    ``SpeculativeConfig.__post_init__`` (0.33.0: config/speculative.py:1587-1591), which the
    fallback does not reach: nothing is checked there."""
    from types import SimpleNamespace

    try:
        from vllm.v1.worker.gpu.spec_decode.mtp.config import MTPSpeculatorConfig
    except ImportError:
        return
    if not hasattr(MTPSpeculatorConfig, "resolve_num_speculative_tokens"):
        return
    draft = SimpleNamespace(architectures=list(hf.architectures or ()), hf_config=hf)
    spec = SimpleNamespace(
        draft_model_config=draft, num_speculative_tokens=job.get("num_speculative_tokens")
    )
    MTPSpeculatorConfig.resolve_num_speculative_tokens(spec)


def _mtp_outcome(
    job: dict[str, Any], derive: Callable[[], Any], stop: Exception, started: float
) -> dict[str, Any]:
    """The record of an MTP path run alone: ``derive`` returns the draft config vLLM derived,
    or raises (the MTP path's own refusal); ``stop`` is what stopped the start-up."""
    try:
        hf = derive()
    except Exception as err:  # noqa: BLE001 - the MTP path's own refusal
        return {"id": job["id"], "outcome": "refused", "stage": "config", "error": _error(err),
                "start_up_stop": _error(stop),  # the path was run alone: say why
                "seconds": round(time.monotonic() - started, 3)}  # fmt: skip
    return {
        "id": job["id"],
        "outcome": "accepted",
        "stage": None,
        "error": None,
        "aux_layers": None,
        "model": None,
        "mtp": _derived(hf),
        "start_up_stop": _error(stop),
        "seconds": round(time.monotonic() - started, 3),
    }


def _error(err: Exception) -> dict[str, str]:
    return {"type": type(err).__name__, "message": str(err)[:MESSAGE_CHARS]}


def _uses_aux(spec: Any) -> bool:
    """Whether Model Runner V2 sets up the aux-layer capture for this draft, as the release's
    runner decides it: ``SpeculativeConfig.uses_aux_hidden_states`` (0.34.0,
    ``vllm/v1/worker/gpu/model_runner.py:317-319``), ``eagle3_utils.requires_aux_hidden_states``
    (0.33.0, ``model_runner.py:306-308``), or the method list written in the runner (0.32.0,
    ``model_runner.py:300-307``)."""
    if hasattr(spec, "uses_aux_hidden_states"):
        return bool(spec.uses_aux_hidden_states)
    from vllm.v1.worker.gpu.spec_decode.eagle import eagle3_utils

    if hasattr(eagle3_utils, "requires_aux_hidden_states"):
        return bool(eagle3_utils.requires_aux_hidden_states(spec))
    return spec.method in ("eagle3", "dflash", "dspark", "extract_hidden_states")


def _model_record(config: Any) -> dict[str, Any]:
    """The model stage's record. What it raises is kept as data, not as the pair's outcome: on
    this CPU some targets cannot be built (an MXFP4 MoE has no CPU backend), which says
    nothing about the pair."""
    try:
        return _model_stage(config)
    except Exception as err:  # noqa: BLE001 - kept as data (see the docstring)
        return {"error": {"type": type(err).__name__, "message": str(err)[:MESSAGE_CHARS]}}


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """Validate one pair; return its record (an exception is the pair's outcome)."""
    from vllm.engine.arg_utils import EngineArgs

    stage = "config"
    started = time.monotonic()
    try:
        speculative: dict[str, Any] = {"method": job["method"]}
        if job["draft"] is not None:  # None: MTP, the draft derived from the target's config
            speculative["model"] = job["draft"]
        if job.get("num_speculative_tokens") is not None:
            speculative["num_speculative_tokens"] = job["num_speculative_tokens"]
        args = EngineArgs(
            model=job["target"],
            speculative_config=speculative,
            load_format="dummy",
            enforce_eager=True,
            skip_tokenizer_init=True,
            max_model_len=job.get("max_model_len", 2048),
        )
        config = args.create_engine_config()
        stage = "load"
        _load_stage(config)
        aux = _aux_layers(config)
        model = _model_record(config) if job.get("model_stage") else None
        mtp = _mtp_draft(config) if job["draft"] is None else None
    except Exception as err:  # noqa: BLE001 - whatever the engine raises is its verdict
        if job["draft"] is None and stage == "config":
            return _mtp_record(job, err, started)
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
        "aux_layers": aux,
        "model": model,
        "mtp": mtp,
        "seconds": round(time.monotonic() - started, 3),
    }


def start_vllm(out_path: str) -> str:
    """Put the stubs in place (see the module docstring), import vLLM; its version."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    stand_in_torchvision(Path(out_path).resolve().parent / "stand-in")
    import contextlib
    import importlib

    import vllm
    import vllm.triton_utils

    for name in TRITON_HELPERS:
        with contextlib.suppress(ImportError):  # a release without it
            importlib.import_module(name)
    vllm.triton_utils.HAS_TRITON = True
    return vllm.__version__


def run_jobs(
    jobs_path: str, out_path: str, run: Callable[[dict[str, Any]], dict[str, Any]], release: str
) -> int:
    """Run ``run`` over every job in ``jobs_path``; write the records to ``out_path`` (shared
    by the drivers that take a job list)."""
    jobs = json.loads(Path(jobs_path).read_text())
    out = {"release": release, "records": [run(job) for job in jobs]}
    Path(out_path).write_text(json.dumps(out, indent=1, default=str) + "\n")
    return 0


def main(jobs_path: str, out_path: str) -> int:
    """Run every job in ``jobs_path``; write the records to ``out_path``."""
    return run_jobs(jobs_path, out_path, run_one, start_vllm(out_path))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
