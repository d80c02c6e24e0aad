"""Run SGLang's own start-up resolution over serve command lines, inside SGLang's own environment.

Usage: python sglang_config_driver.py JOBS.json OUT.json. JOBS is a list of ``{"id", "argv"}``:
``argv`` the arguments after ``python3 -m sglang.launch_server`` (config-only folders as the
model paths). OUT gets one record per job: ``outcome`` (``accepted`` / ``refused``), the
``stage`` that refused, the exception's type and message, and what SGLang made of the line:

- ``parse``: ``prepare_server_args(argv)``, the launcher's own parser
  (``ServerArgs.add_cli_args`` + ``from_cli_args``, ``sglang==0.5.23:sglang/launch_server.py:81``);
  ``parsed`` records the speculative settings as given;
- ``config``: ``ServerArgs.resolve_once()`` (the resolution pipeline, the speculative hook
  ``arg_groups/speculative_hook.py`` among it) and ``check_server_args()``, in the order
  ``Engine`` runs them (``entrypoints/engine.py:1153-1165``); ``resolved`` records the
  speculative settings after resolution;
- ``load``: what the model runner resolves from the configs before it builds a model: the
  target's ``ModelConfig``, ``resolve_spec_aux_hidden_state_config`` (``model_runner.py:596-604``:
  DFlash draft config parsed, target layer ids resolved and range-checked,
  ``spec_aux_hidden_state.py:199-262``), the DSpark worker's runtime config (gamma, mask token
  against the target vocabulary, ``dspark_worker_v2.py:261-265``) and the DFlash worker's mask
  token id against the target vocabulary (``dflash_worker_v2.py:531-535``); ``load`` records
  the layer ids SGLang captures for the draft.

Models are not built (no weights, no meta-device construction): a refusal raised when the draft
or the target's capture hook is built is not reached here. Imports SGLang: never imported by
the project.

Stubs, each because the GPU wheel runs here on a CPU without a GPU:

- ``--device cuda`` appended to every line: a server started on a GPU host detects CUDA; on
  this CPU SGLang would detect ``cpu``, where DFLASH and DSpark are refused by the platform
  (``arg_groups/speculative_hook.py:286-300``, ``:669-672`` of 0.5.23), which says nothing
  about the pair. Resolution itself touches no GPU.
- the machine's facts as a CUDA host (an H100, sm90) reports them, through SGLang's own
  ``override_platform`` (``runtime_context.py:1950``, what its tests use): resolution reads
  them, e.g. Mamba-state snapshots for hybrid targets (Qwen3.5) are allowed on CUDA only
  (``arg_groups/mamba_hook.py:102-120``); nothing here queries the device.
- ``mxfp4`` in the quantization registry: registered at import on CUDA
  (``layers/quantization/__init__.py:95-105``), so an MXFP4 target (gpt-oss) is not "unknown
  quantization" on this CPU.
- the stand-in ``torchvision`` of ``vllm_config_driver``: ``sglang/srt/configs/__init__.py``
  imports multimodal configs that import it at module level; the index's torchvision does not
  load against the CPU torch, and no image is processed here.
- the DFlash worker's ``self`` for ``_resolve_mask_token_id``: the worker cannot be built
  without a GPU; the method reads only the target's vocabulary size and its tokenizer (none:
  the folders hold configs only, so a draft without ``mask_token_id`` is recorded as "needs
  the tokenizer", not refused).
- the DFlash worker's collaborators, to run its own start-up guards (``_worker_guards``:
  ``DFlashWorkerV2.__init__``, ``speculative/dflash_worker_v2.py:388-529`` of 0.5.23, up to
  where it resolves the mask token): the draft worker bundle (the draft's own ``ModelConfig``,
  a draft model with no selector, LiLiCorr head or weights), the parallel state as the
  resolved arguments give it (``attn_dp_enabled_of``, the TP size, rank 0), the target's
  model with weightless embedding and head, no-op TP sync and draft contexts. The guards run
  as released: DP attention with a Domino head, the candidate pool, ``validate_domino_runtime``
  (CUDA, TP, the two vocabularies; it stops, and is let pass, where it first reads a weight,
  which needs the built target), the draft token count of a Domino draft. Only a ``ValueError``
  there is SGLang's refusal; any other exception is a stand-in's gap, recorded under
  ``load.worker``, not a verdict.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

from vllm_config_driver import MESSAGE_CHARS, run_jobs, stand_in_torchvision

DEVICE = ("--device", "cuda")
"""Appended to every line (see the module docstring)."""
SETTINGS = (
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_draft_tokens",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_dflash_block_size",
    "speculative_dspark_block_size",
    "tp_size",
    "pp_size",
    "enable_metrics",
    "host",
    "port",
)
"""The settings recorded from the parsed and the resolved arguments."""


def _settings(view: Any) -> dict[str, Any]:
    return {name: getattr(view, name, None) for name in SETTINGS}


def _mask_token(draft_hf_config: Any, vocab_size: int) -> int | str | None:
    """The DFlash worker's mask token id (its own method, a stand-in ``self``)."""
    from sglang.srt.speculative.dflash_utils import parse_dflash_draft_config
    from sglang.srt.speculative.dflash_worker_v2 import DFlashWorkerV2

    parsed = parse_dflash_draft_config(draft_hf_config=draft_hf_config)
    if parsed.mask_token_id is None:
        return "needs the tokenizer"
    runner = SimpleNamespace(model_config=SimpleNamespace(vocab_size=vocab_size))
    worker = SimpleNamespace(target_worker=SimpleNamespace(model_runner=runner, tokenizer=None))
    return DFlashWorkerV2._resolve_mask_token_id(
        worker, mask_token=parsed.mask_token, mask_token_id=parsed.mask_token_id
    )


def _load_stage(server_args: Any) -> dict[str, Any]:
    """What the model runner and the draft worker resolve from the configs (no model built)."""
    from sglang.srt.arg_groups.overrides import resolving_view
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_executor.model_runner_components.spec_aux_hidden_state import (
        resolve_spec_aux_hidden_state_config,
    )
    from sglang.srt.runtime_context import publish
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    publish(server_args, role="scheduler")  # the runner reads the published settings
    cfg = resolving_view(server_args)
    algorithm = SpeculativeAlgorithm.from_string(cfg.speculative_algorithm)
    target = ModelConfig.from_server_args(server_args)
    aux = resolve_spec_aux_hidden_state_config(
        server_args=server_args, model_config=target, spec_algorithm=algorithm,
        is_draft_worker=False,
    )  # fmt: skip
    text = target.hf_text_config
    seen: dict[str, Any] = {
        "target_layers": getattr(text, "num_hidden_layers", None),
        "target_vocab": target.vocab_size,
        "dflash_target_layer_ids": aux.dflash_target_layer_ids,
        "eagle_aux_hidden_state_layer_ids": aux.eagle_aux_hidden_state_layer_ids,
    }
    if algorithm.is_dspark():
        from sglang.srt.speculative.dspark_components.dspark_config import resolve_runtime_config

        rows = getattr(text, "padded_vocab_size", None) or target.vocab_size
        runtime = resolve_runtime_config(
            draft_hf_config=aux.draft_model_config.hf_config,
            speculative_num_draft_tokens=cfg.speculative_num_draft_tokens,
            target_vocab_size=int(rows),
        )
        seen["dspark_gamma"] = runtime.gamma
        seen["mask_token_id"] = runtime.mask_token_id
    elif algorithm.is_dflash_family():
        seen["mask_token_id"] = _mask_token(aux.draft_model_config.hf_config, target.vocab_size)
        seen["worker"] = _worker_guards(server_args, target, aux, algorithm)
    return seen


class _PastTheGuards(Exception):
    """The DFlash worker got past its start-up guards (raised where it next resolves the mask
    token, which ``_mask_token`` runs on its own)."""


_WEIGHTLESS = "requires target embedding and lm_head weight tensors"
"""``validate_domino_runtime``'s message where it first reads a weight: past its checks of
the pair (device, TP, vocabularies); the rest needs the built target."""


def _worker_guards(server_args: Any, target: Any, aux: Any, algorithm: Any) -> str | None:
    """Run ``DFlashWorkerV2.__init__`` up to the mask token with stand-in collaborators (see
    the module docstring); None when SGLang's guards pass, a note when a stand-in stops it
    first. Its ``ValueError`` is SGLang's refusal and propagates."""
    from sglang.srt.arg_groups.overrides import resolving_view
    from sglang.srt.runtime_context import attn_dp_enabled_of
    from sglang.srt.speculative import dflash_worker_v2 as worker_module

    cfg = resolving_view(server_args)
    draft_config = aux.draft_model_config
    weightless = SimpleNamespace(weight=None)
    draft_model = SimpleNamespace(
        candidate_selector=None, lilicorr=None, prefix_gru=weightless, embed_proj=weightless,
        config=SimpleNamespace(hidden_size=int(draft_config.hf_config.hidden_size)),
        set_block_size=lambda size: None,
    )  # fmt: skip
    bundle = SimpleNamespace(
        draft_worker=None, draft_model_runner=SimpleNamespace(model_config=draft_config),
        draft_model=draft_model,
    )  # fmt: skip
    parallel = SimpleNamespace(
        attn_dp_enabled=bool(attn_dp_enabled_of(cfg)),
        tp_group=SimpleNamespace(world_size=int(cfg.tp_size)), tp_rank=0,
    )  # fmt: skip
    model = SimpleNamespace(get_input_embeddings=lambda: weightless, lm_head=weightless)
    runner = SimpleNamespace(
        model_config=target, model=model, spec_aux_config=aux, spec_algorithm=algorithm
    )
    target_worker = SimpleNamespace(model_runner=runner, device="cuda", tokenizer=None)
    validate = worker_module.validate_domino_runtime

    def validate_to_the_weights(**kwargs: Any) -> None:
        try:
            validate(**kwargs)
        except ValueError as err:
            if _WEIGHTLESS not in str(err):
                raise

    def past_the_guards(self: Any, **kwargs: Any) -> None:
        raise _PastTheGuards

    stand_ins = {
        "get_parallel": lambda: parallel,
        "SpecTpSync": lambda *a, **k: None,
        "get_dp_tp_group": lambda: None,
        "resolve_draft_parallel_layout": lambda *a, **k: None,
        "model_draft_parallel_spec": lambda *a, **k: None,
        "draft_pp_context": contextlib.nullcontext,
        "draft_tp_context": lambda *a: contextlib.nullcontext(),
        "build_draft_tp_worker": lambda **k: bundle,
        "validate_domino_runtime": validate_to_the_weights,
    }
    cls = worker_module.DFlashWorkerV2
    worker = cls.__new__(cls)
    with contextlib.ExitStack() as stack:
        for name, value in stand_ins.items():
            stack.enter_context(mock.patch.object(worker_module, name, value))
        stack.enter_context(mock.patch.object(cls, "_resolve_mask_token_id", past_the_guards))
        try:
            cls.__init__(worker, server_args, 0, 0, target_worker)
        except _PastTheGuards:
            return None
        except ValueError:
            raise
        except Exception as err:  # noqa: BLE001 - a stand-in's gap, not SGLang's verdict
            return f"not reached: {type(err).__name__}: {err}"[:MESSAGE_CHARS]
    return "not reached: the worker did not resolve its mask token"


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """Parse, resolve and load one line; return its record (an exception is its outcome)."""
    from sglang.srt.arg_groups.overrides import resolving_view
    from sglang.srt.server_args import prepare_server_args

    record: dict[str, Any] = {"id": job["id"], "argv": job["argv"]}
    stage = "parse"
    started = time.monotonic()
    usage = io.StringIO()  # argparse writes its refusal to stderr, then exits
    try:
        with contextlib.redirect_stderr(usage):
            server_args = prepare_server_args([*job["argv"], *DEVICE])
        record["parsed"] = _settings(server_args)
        stage = "config"
        server_args.resolve_once()
        server_args.check_server_args()
        record["resolved"] = _settings(resolving_view(server_args))
        stage = "load"
        record["load"] = _load_stage(server_args)
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the engine's verdict (argparse exits)
        record.update(outcome="refused", stage=stage)
        message = usage.getvalue().strip().splitlines()[-1:] if stage == "parse" else []
        message = message[0] if message else str(err)
        record["error"] = {"type": type(err).__name__, "message": message[:MESSAGE_CHARS]}
    else:
        record.update(outcome="accepted", stage=None, error=None)
    record["seconds"] = round(time.monotonic() - started, 3)
    return record


def as_on_a_gpu_host() -> None:
    """The platform facts and the quantization registry of a CUDA host (see the docstring)."""
    from sglang.srt.layers.quantization import QUANTIZATION_METHODS
    from sglang.srt.layers.quantization.mxfp4 import Mxfp4Config
    from sglang.srt.runtime_context import override_platform

    override_platform(is_cuda=True, is_sm90=True, device_capability=(9, 0), device_sm=90).install()
    QUANTIZATION_METHODS.setdefault("mxfp4", Mxfp4Config)


def main(jobs_path: str, out_path: str) -> int:
    """Run every job in ``jobs_path``; write the records to ``out_path``."""
    stand_in_torchvision(Path(out_path).resolve().parent / "stand-in")
    logging.disable(logging.WARNING)  # SGLang's own warnings; its refusals are exceptions
    import sglang

    as_on_a_gpu_host()
    return run_jobs(jobs_path, out_path, run_one, sglang.__version__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
