"""Run a real speculative decode of a pair: the proof that configs alone cannot give.

Loads the target with transformers (safetensors only, no remote code unless asked) and the
draft into the bundled ``DFlashDraft``, decodes each prompt twice — speculatively and with the
target alone — and reports losslessness, tau (tokens per verify step), per-position acceptance
and tokens per second. torch and transformers are imported here, lazily.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any, TypeVar

from dflash_check.errors import CheckError, ConfigError, MissingExtraError
from dflash_check.knowledge.acceptance import DEFAULT_MIN_ACCEPTANCE
from dflash_check.smoke.install import extra_install_hint
from dflash_check.smoke.report import LayerRollback, SmokeCase, SmokeReport
from dflash_check.sources.interface import ModelRef
from dflash_check.views import DFLASH_METHODS

# When a tokenizer knows no English (a toy, or a code- or number-only model), the built-in
# prompts encode to <unk> and the decode measures nothing useful; digits are in nearly every
# vocabulary.
NUMBER_PROMPTS = ("1 2 3", "5 10 15", "7 9 11", "40 43 46")
UNKNOWN_SHARE = 0.5

DEFAULT_PROMPTS = (
    "Write a Python function that returns the n-th Fibonacci number.",
    "Explain in three sentences how speculative decoding speeds up generation.",
    "List the first twenty prime numbers, separated by commas.",
    "Summarise the plot of Romeo and Juliet in one paragraph.",
)

# Files a smoke run needs from a Hub repo: never *.bin or *.pt (pickles), never remote code.
SNAPSHOT_PATTERNS = [
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.*",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
]


SMOKE_METHODS: tuple[str, ...] = DFLASH_METHODS
"""The draft methods the bundled runtime (``runtime/draft_model.py``) attempts: those with the
DFlash backbone (it refuses what it cannot build itself); EAGLE-3 heads and NextN checkpoints
are refused before anything is fetched."""


class SmokeUnsupportedError(CheckError):
    """The draft is a kind the bundled runtime cannot run yet."""


class SmokeDecodeError(CheckError):
    """The target's own forward failed during the decode (its message stays out of the line)."""


@dataclass(frozen=True)
class SmokeOptions:
    """The ``--smoke-run`` options."""

    device: str = "auto"
    dtype: str = "auto"
    prompts: tuple[str, ...] = ()
    max_new_tokens: int = 64
    block_size: int | None = None
    temperature: float = 0.0
    min_acceptance: float | None = None
    """``--min-acceptance``; None: 1.5 for the bundled runtime, the floor measured collapses
    give at the block size for an engine (``knowledge.acceptance``)."""
    chat_template: bool = True
    trust_remote_code: bool = False
    seed: int = 0
    token: str | None = None
    offline: bool = False
    repeats: int = 3
    """Timed runs of each decode after the warm-up; the report gives their median and range."""


def import_runtime() -> tuple[Any, Any]:
    """Import torch and transformers, or say exactly what to install.

    Both are looked up first (find_spec reads no module): a missing transformers is named at
    once, not after the seconds that importing torch takes.
    """
    import importlib.util

    for name in ("torch", "transformers"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken install, or a finder that refuses it
            found = False
        if not found:
            raise MissingExtraError(
                f"the smoke run needs torch and transformers ({name} is not installed)",
                hint=extra_install_hint("smoke"),
            )
    try:
        import torch
        import transformers
    except ImportError as err:
        raise MissingExtraError(
            f"the smoke run needs torch and transformers ({err.name} is not installed)",
            hint=extra_install_hint("smoke"),
        ) from None
    return torch, transformers


def pick_device(torch: Any, requested: str) -> Any:
    """Return the torch device for ``--device``; refuse CUDA where there is none."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise CheckError(
            "--device cuda: CUDA is not available to this torch "
            f"({torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA)",
            hint="use --device cpu (slow but complete) or --device auto",
        )
    return torch.device(requested)


def pick_dtype(torch: Any, requested: str, device: Any) -> Any:
    """Return the dtype: bfloat16 on CUDA and float32 on the CPU unless asked otherwise."""
    if requested == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return getattr(torch, requested)


def model_dir(ref: ModelRef, options: SmokeOptions) -> Path:
    """Return a local directory with the model's files (downloading safetensors from the Hub)."""
    if ref.path is not None:
        return ref.path
    from dflash_check.sources.hub import HubOptions, HubSource

    hub = HubSource(HubOptions(token=options.token, offline=options.offline))
    return hub.download_files(ref, SNAPSHOT_PATTERNS, f"model {ref.spec}")


def load_draft(
    folder: Path, torch: Any, device: Any, dtype: Any, block_size: int | None
) -> tuple[Any, int, int]:
    """Load the draft's safetensors into the bundled model; return (model, block, mask id)."""
    from safetensors.torch import load_file

    from dflash_check.smoke.draft_model import (
        DFLASH2_ARCHITECTURE,
        DFlashDraft,
        DraftConfig,
        DraftConfigError,
        checkpoint_key,
    )

    cfg = json.loads((folder / "config.json").read_text())
    if cfg.get("speculators_model_type") is not None:
        raise SmokeUnsupportedError(
            f"draft {folder}: speculators-format drafts are not supported by the smoke run yet",
            hint="the static check still applies; serve speculators drafts with vLLM",
        )
    try:
        draft_cfg = DraftConfig.from_dict(cfg)
        model = DFlashDraft(draft_cfg)
    except DraftConfigError as err:
        dflash2 = DFLASH2_ARCHITECTURE in (cfg.get("architectures") or [])
        kind = DFLASH2_ARCHITECTURE if dflash2 else "DFlash model"
        raise SmokeUnsupportedError(
            f"draft {folder}: config.json cannot build a {kind} ({err})"
        ) from None
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ConfigError(f"draft {folder}: no safetensors weights (only safetensors are loaded)")
    state: dict[str, Any] = {}
    for path in files:
        try:
            loaded = load_file(str(path))
        except Exception as err:  # safetensors raises its own error types
            raise ConfigError(f"draft {folder}: {path.name} cannot be loaded ({err})") from err
        state.update({checkpoint_key(name): tensor for name, tensor in loaded.items()})
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    if missing:
        raise ConfigError(
            f"draft {folder}: the weights lack {', '.join(missing[:3])}"
            + (" …" if len(missing) > 3 else "")
        )
    for name, tensor in expected.items():
        if tuple(state[name].shape) != tuple(tensor.shape):
            raise ConfigError(
                f"draft {folder}: {name} has shape {list(state[name].shape)}, the config "
                f"implies {list(tensor.shape)}"
            )
    model.load_state_dict({k: state[k] for k in expected})
    model.to(device=device, dtype=dtype).eval()
    return model, block_size or draft_cfg.block_size, draft_cfg.mask_token_id


def load_target(
    folder: Path, transformers: Any, device: Any, dtype: Any, trust_remote_code: bool
) -> tuple[Any, Any]:
    """Load the target model (safetensors only) and its tokenizer."""
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(folder),
            dtype=dtype,
            use_safetensors=True,
            trust_remote_code=trust_remote_code,
        )
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(folder), trust_remote_code=trust_remote_code
        )
    except (OSError, ValueError, KeyError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConfigError(
            f"target {folder}: transformers cannot load it: {first}",
            hint="--trust-remote-code runs the repo's own code, if you trust it"
            if "trust_remote_code" in str(err)
            else None,
        ) from err  # chained: DFLASH_CHECK_DEBUG=1 shows transformers' own traceback
    return model.to(device).eval(), tokenizer


def stop_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """Return the target's stop tokens: generation_config eos ids and the tokenizer's eos."""
    ids: set[int] = set()
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(eos, int):
        ids.add(eos)
    elif isinstance(eos, (list, tuple)):
        ids.update(int(e) for e in eos)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids


def encode(tokenizer: Any, prompt: str, chat_template: bool) -> list[int]:
    """Tokenise a prompt, through the chat template when the tokenizer has one."""
    if chat_template and getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
        )
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        return [int(i) for i in ids]
    return [int(i) for i in tokenizer(prompt)["input_ids"]]


def pick_prompts(tokenizer: Any, options: SmokeOptions) -> tuple[tuple[str, ...], str | None]:
    """Return the prompts to decode and, when the built-in ones were replaced, why."""
    if options.prompts:
        return options.prompts, None
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is None:
        return DEFAULT_PROMPTS, None
    ids = [i for p in DEFAULT_PROMPTS for i in tokenizer(p, add_special_tokens=False)["input_ids"]]
    if ids and sum(1 for i in ids if i == unk) / len(ids) > UNKNOWN_SHARE:
        return NUMBER_PROMPTS, (
            "the built-in English prompts are mostly unknown tokens to this tokenizer; "
            "number sequences were used instead (--prompt sets your own)"
        )
    return DEFAULT_PROMPTS, None


def timed(run: Callable[[], Any], repeats: int) -> tuple[Any, tuple[float, ...]]:
    """Run a decode ``repeats`` times; return the first result and every wall time."""
    first = run()
    times = [first.seconds]
    for _ in range(repeats - 1):
        times.append(run().seconds)
    return first, tuple(times)


COMPILER_CACHE_VARS = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
"""Where torch.compile (Inductor) and Triton keep compiled kernels; unset, Inductor writes
``$TMPDIR/torchinductor_<user>`` and Triton ``~/.triton``, outside HF_HOME, and both stay."""


@contextmanager
def compiler_caches() -> Iterator[Path]:
    """Point the compiler caches the user has not set at a temporary folder, removed after.

    Entered before torch is imported (both read the variables when they first compile); a
    variable the user set is left alone: that cache is theirs.
    """
    folder = Path(tempfile.mkdtemp(prefix="dflash-check-compile-"))
    saved = {name: os.environ.get(name) for name in COMPILER_CACHE_VARS}
    try:
        for name in COMPILER_CACHE_VARS:
            if saved[name] is None:
                os.environ[name] = str(folder / name.split("_")[0].lower())
        yield folder
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
        shutil.rmtree(folder, ignore_errors=True)


def run_smoke(
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    on_progress: Callable[[str], None] | None = None,
) -> SmokeReport:
    """Load the pair, decode every prompt speculatively and plainly, and measure."""
    with compiler_caches():
        return _run_smoke(draft, target, options, on_progress)


def _run_smoke(
    draft: ModelRef,
    target: ModelRef,
    options: SmokeOptions,
    on_progress: Callable[[str], None] | None = None,
) -> SmokeReport:
    """``run_smoke`` inside its temporary compiler caches."""
    torch, transformers = import_runtime()
    from dflash_check.smoke.decode import plain_decode, speculative_decode

    say = on_progress or (lambda _text: None)
    device = pick_device(torch, options.device)
    dtype = pick_dtype(torch, options.dtype, device)
    say("loading the target")
    model, tokenizer = load_target(
        model_dir(target, options), transformers, device, dtype, options.trust_remote_code
    )
    say("loading the draft")
    draft_model, block_size, mask_id = load_draft(
        model_dir(draft, options), torch, device, dtype, options.block_size
    )
    stops = stop_token_ids(model, tokenizer)
    prompts, prompts_note = pick_prompts(tokenizer, options)
    label = f"target {target.spec}"
    # Warm up kernels and allocators once, so the first case's timing is not an outlier.
    warm = encode(tokenizer, prompts[0], options.chat_template)
    guarded(
        label,
        "warm-up",
        lambda: speculative_decode(model, draft_model, warm, 4, stops, block_size, mask_id),
    )
    guarded(label, "warm-up", lambda: plain_decode(model, warm, 4, stops))
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    repeats = max(1, options.repeats)
    cases = []
    spec = None
    replays = replayed = 0
    for i, prompt in enumerate(prompts):
        say(f"decoding prompt {i + 1}/{len(prompts)}")
        ids = encode(tokenizer, prompt, options.chat_template)

        # One generator per decode kind and prompt, reseeded for every repeat: sampled
        # repeats then decode the same tokens, so their timings compare like with like.
        def spec_run(ids: list[int] = ids, i: int = i) -> Any:
            generator = torch.Generator(device=device).manual_seed(options.seed + 2 * i)
            return speculative_decode(
                model,
                draft_model,
                ids,
                options.max_new_tokens,
                stops,
                block_size,
                mask_id,
                options.temperature,
                generator,
            )

        def base_run(ids: list[int] = ids, i: int = i) -> Any:
            generator = torch.Generator(device=device).manual_seed(options.seed + 2 * i + 1)
            return plain_decode(
                model, ids, options.max_new_tokens, stops, options.temperature, generator
            )

        spec, spec_times = guarded(label, "speculative decode", lambda: timed(spec_run, repeats))
        base, base_times = guarded(label, "plain decode", lambda: timed(base_run, repeats))
        replays, replayed = replays + spec.replays, replayed + spec.replayed_tokens
        cases.append(
            SmokeCase(
                prompt=prompt,
                prompt_token_ids=tuple(ids),
                output_token_ids=tuple(spec.output_ids),
                baseline_token_ids=tuple(base.output_ids),
                acceptance_lengths=tuple(spec.acceptance_lengths),
                drafted=tuple(spec.drafted),
                lossless=(spec.output_ids == base.output_ids) if options.temperature <= 0 else None,
                seconds=median(spec_times),
                baseline_seconds=median(base_times),
                timings=spec_times,
                baseline_timings=base_times,
            )
        )
    rollbacks = (
        ()
        if spec is None
        else tuple(LayerRollback(r.what, r.method) for r in spec.rollbacks.values())
    )
    peak = int(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None
    return SmokeReport(
        device=str(device),
        dtype=str(dtype).removeprefix("torch."),
        block_size=block_size,
        temperature=options.temperature,
        min_acceptance=(
            DEFAULT_MIN_ACCEPTANCE if options.min_acceptance is None else options.min_acceptance
        ),
        cases=tuple(cases),
        draft_architecture=draft_model.cfg.architecture,
        rollbacks=rollbacks,
        replays=replays,
        replayed_tokens=replayed,
        peak_memory_bytes=peak,
        repeats=repeats,
        prompts_note=prompts_note,
    )


T = TypeVar("T")


def guarded(label: str, phase: str, run: Callable[[], T]) -> T:
    """Run one decode; a failure inside the target's own code becomes one clear line.

    transformers' messages name its internals, not the user's models: the line names the
    model, the phase and the exception type; DFLASH_CHECK_DEBUG=1 shows the original.
    """
    try:
        return run()
    except CheckError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError, KeyError, NotImplementedError) as err:
        raise SmokeDecodeError(
            f"{label}: its forward failed during the smoke run's {phase} "
            f"({type(err).__name__} raised in the model's own code)",
            hint="DFLASH_CHECK_DEBUG=1 shows the original error; the static check still applies",
        ) from err
