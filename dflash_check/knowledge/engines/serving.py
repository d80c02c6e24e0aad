"""What only serving an engine needs: its HTTP surface and the spec of its serve command.

The engine smoke run (``--engine``) and ``--print-command`` / ``--launch`` build these; a check
never does. Each engine module returns its profile from a function (``Engine.http``) that
imports this module, so that ``pair`` defines neither class at start-up
(``benchmarks/bench_pair.py``; ``tests/acceptance/test_imports.py`` holds it).
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_check.knowledge.settings import NO_ENGINE_SETTINGS, EngineSettings


@dataclass(frozen=True)
class HttpProfile:
    """What the engine smoke run needs to know about one engine's HTTP surface."""

    name: str
    info_paths: tuple[str, ...]
    """Engine info endpoints, all asked in order (the first to report a field wins; a 404 is
    skipped)."""
    metric_drafts: str | None
    """Counter of verify steps (exposed name), or None when the engine has no such counter."""
    metric_draft_tokens: str | None
    metric_accepted: str | None
    metric_accepted_per_pos: str | None
    metric_generated: str | None
    """Counter of all generated tokens: tells when someone else shares the server."""
    metric_required: str
    """The series whose absence means the server runs without speculation (or without metrics)."""
    metrics_hint: str
    """What to do when ``metric_required`` is missing."""
    counts_from_metrics: bool
    """Whether the run's speculative counts are differenced from ``/metrics`` counters (vLLM;
    a chat template can then be used) rather than read from each answer (SGLang's native
    ``/generate``, which takes raw text)."""
    info_nests_speculation: bool
    """Whether the info endpoint nests the speculative settings in its config (vLLM's
    ``/server_info``) rather than at the top level (SGLang's ``/get_server_info``)."""
    info_says_off: bool
    """Whether a reported version without a speculative algorithm means speculation is off."""
    draft_hint: str
    """How to make a server of this engine name the draft it serves."""


@dataclass(frozen=True)
class LaunchSpec:
    """Everything an engine's serve command depends on."""

    engine: str
    """The engine's name (``vllm``, ``sglang``)."""
    target: str
    """The target as the engine should load it (Hub id or path)."""
    draft: str
    """The draft as the engine should load it."""
    block_size: int | None
    """The draft's block size (None: the reference default, 16)."""
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    speculative: bool = True
    """False: the same target without a draft (the baseline for the lossless check)."""
    num_speculative_tokens: int | None = None
    """Draft tokens per step the user serves with (``--num-speculative-tokens``); None: derived
    from the block size."""
    method: str = "dflash"
    """The draft's method as the tool reads it (``dflash``, ``dflash2``, ``dspark``,
    ``eagle3``)."""
    trust_remote_code: bool = False
    """Pass ``--trust-remote-code`` (both engines spell it so): the target's config names its
    own code (``auto_map``), which each engine refuses to load without it."""
    engine_settings: EngineSettings = NO_ENGINE_SETTINGS
    """The settings the check read from ``engine_args``: an engine's serve command takes the
    ones it writes itself (SGLang's draft length) from here, the one source."""
    engine_args: tuple[str, ...] = ()
    """The user's ``--engine-arg`` values, passed after the command's own flags, less those
    the engine's command writes from ``engine_settings`` (``Engine.writes``)."""
