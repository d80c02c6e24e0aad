"""SGLang: its release, its stages and serving.

Serving: ``python3 -m sglang.launch_server --model-path TARGET --speculative-algorithm DFLASH``
(``DSPARK``, ``EAGLE3``, ``EAGLE`` for those drafts: ``settings.SGLANG_ALGORITHMS``)
``--speculative-draft-model-path DRAFT --speculative-num-draft-tokens BLOCK`` (the block size
itself, not minus one; DFlash 2 uses the same algorithm since sgl-project/sglang#35371; the
EAGLE family a chain, ``--speculative-num-steps K --speculative-eagle-topk 1
--speculative-num-draft-tokens K+1``, or none of the three: ``_draft_length``), ``--tp-size`` /
``--pp-size`` and ``--enable-metrics`` (``sgl-project/sglang:python/sglang/srt/server_args.py``).

HTTP: ``/metrics`` (with ``--enable-metrics``) has only gauges for speculation,
``sglang:spec_accept_length`` and ``sglang:spec_accept_rate``, windowed averages that cannot be
differenced (``python/sglang/srt/metrics/collector.py``, ``SchedulerMetricsCollector``). Its
exact per-request counters are in the ``meta_info`` of the native ``/generate`` answer:
``spec_verify_ct``, ``completion_tokens``, the accepted/proposed draft counts and the
acceptance histogram (``python/sglang/srt/managers/tokenizer_manager.py``,
``_calculate_spec_decoding_metrics``). ``/get_server_info`` reports the speculative settings,
parallelism and version.
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from dflash_check.knowledge.capture import Capture, Status
from dflash_check.knowledge.engines.handling import DraftHandling
from dflash_check.knowledge.engines.interface import (
    Engine,
    Release,
    Stage,
    draft_tokens,
    shared_flags,
)
from dflash_check.knowledge.engines.test_files import EngineTestFile
from dflash_check.knowledge.reviewed import Read, Reviewed, inherit
from dflash_check.knowledge.settings import DRAFT_LENGTH_FLAGS, SGLANG_ALGORITHMS

if TYPE_CHECKING:
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp
    from dflash_check.knowledge.engines.serving import HttpProfile, LaunchSpec
    from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts

RELEASES = (Release("sglang", "0.5.23", date="2026-10-30"),)
_WORKER = "sglang==0.5.23:sglang/srt/speculative/dflash_worker_v2.py"
"""The DFlash worker as read at 0.5.23, whose start-up guards ``domino_worker`` cites."""
_DSV4_HOOK = Read(
    "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", ("5737d26dc1f89150",)
)
REVIEWED = (
    Reviewed(
        ">=0.5.23",
        # The engine functions each field was read from, with the fingerprints reviewed
        # (tools/extract_engine_facts.py).
        read={
            "domino_contract": (
                Read(
                    "sglang/srt/speculative/dflash_utils.py",
                    "parse_dflash_draft_config",
                    ("f4b93ec21d690477",),
                ),
            ),
            "minimax_dspark_contract": (
                Read(
                    "sglang/srt/configs/minimax_vl.py",
                    "configure_minimax_m3_dspark",
                    ("56e6d735a5627faa",),
                ),
            ),
            "domino_worker": (
                Read(
                    "sglang/srt/speculative/dflash_worker_v2.py",
                    "DFlashWorkerV2.__init__",
                    ("99e842bb2d9209fe",),
                ),
            ),
            "algorithm_gates": (_DSV4_HOOK,),
            "eagle_topk_gates": (_DSV4_HOOK,),
        },
        repository="sgl-project/sglang",
        pypi=True,
        distributions=("sglang",),
        # The target's model runner parses the draft config while it sets up the aux-layer
        # capture, before any weight loads; the draft model parses it again when it is built.
        domino_contract="sglang==0.5.23:sglang/srt/speculative/dflash_utils.py:727-791, run "
        "at load by model_executor/model_runner_components/spec_aux_hidden_state.py:217",
        # A MiniMax DSpark draft's config is translated when its model config is built at
        # load (the server-argument hook runs it too, but swallows what it raises).
        minimax_dspark_contract="sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111, run "
        "at load by configs/model_config.py:1019-1027 (and at server-args resolution by "
        "speculative/dspark_components/dspark_config.py:155-158, whose caller swallows errors)",
        # The DFlash worker's own guards at start-up, after the config parsed: a plain DFlash
        # draft passes both.
        domino_worker=MappingProxyType(
            {"dp_attention": f"{_WORKER}:455-460", "num_draft_tokens": f"{_WORKER}:525-529"}
        ),
        # The DeepSeek V4 defaults assert the algorithm while the server arguments resolve,
        # before any weight loads; the raw --speculative-algorithm string is compared.
        algorithm_gates=MappingProxyType(
            {
                "DeepseekV4ForCausalLM": (
                    ("EAGLE", "DSPARK"),
                    "sglang==0.5.23:sglang/srt/arg_groups/deepseek_v4_hook.py:148-158, run "
                    "at server-args resolution by arg_groups/model_hook.py:258-265",
                )
            }
        ),
        # With EAGLE (NEXTN is its alias) the same hook asserts a topk of 1.
        eagle_topk_gates=MappingProxyType(
            {
                "DeepseekV4ForCausalLM": "sglang==0.5.23:sglang/srt/arg_groups/"
                "deepseek_v4_hook.py:156-158, run at server-args resolution by "
                "arg_groups/model_hook.py:258-265"
            }
        ),
    ),
)
"""What was reviewed in SGLang's code, per range of releases (``knowledge/reviewed.py``)."""

STAGES = MappingProxyType(
    {
        # SGLang checks the id range at startup; without ids it guesses with the z-lab formula
        # and serves.
        "sglang": MappingProxyType(
            {"DF001": Stage.SILENT, "DF004": Stage.LOAD, "DF032": Stage.LOAD}
        ),
    }
)
"""Runtime -> rule -> stage, where SGLang differs from the rule's default (``outcomes.py``)."""


@cache
def http() -> HttpProfile:
    """SGLang's HTTP surface, for the engine smoke run (``Engine.http``)."""
    # Imported when a smoke run asks: a check never talks HTTP, and defining the class
    # would cost every pair's start-up.
    from dflash_check.knowledge.engines.serving import HttpProfile

    return HttpProfile(
        name="sglang",
        # /get_server_info is the long-standing path; newer servers also answer /server_info.
        info_paths=("/get_server_info", "/server_info"),
        metric_drafts=None,
        metric_draft_tokens=None,
        metric_accepted=None,
        metric_accepted_per_pos=None,
        metric_generated="sglang:generation_tokens_total",
        metric_required="sglang:spec_accept_length",
        metrics_hint="start SGLang with --enable-metrics and a --speculative-algorithm",
        counts_from_metrics=False,
        info_nests_speculation=False,
        info_says_off=True,
        draft_hint="use a server whose /get_server_info reports speculative_draft_model_path",
    )


EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3"})
"""The algorithms whose steps, topk and draft tokens SGLang resolves together
(``_handle_eagle_family``, sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:1072-1283):
--speculative-eagle-topk or --speculative-num-draft-tokens without --speculative-num-steps
fails its assert (:1159-1163), steps without a topk a comparison with None (:1273-1276)."""


def algorithm(method: str) -> str:
    """Return SGLang's ``--speculative-algorithm`` for a draft of ``method``."""
    return SGLANG_ALGORITHMS.get(method, "DFLASH")


def serve(spec: LaunchSpec) -> list[str]:
    """``python3 -m sglang.launch_server --speculative-algorithm DFLASH …`` (the algorithm of
    the draft's method, ``settings.SGLANG_ALGORITHMS``)."""
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", spec.target]
    if spec.speculative:
        argv += [
            "--speculative-algorithm",
            algorithm(spec.method),
            "--speculative-draft-model-path",
            spec.draft,
        ]
        argv += _draft_length(spec)
    argv += shared_flags(spec, "--tp-size", "--pp-size")
    # /metrics is off by default in SGLang; the smoke run reads it.
    argv.append("--enable-metrics")
    return argv


def _draft_length(spec: LaunchSpec) -> list[str]:
    """The draft-length flags of the serve command, one flag per setting."""
    own = spec.engine_settings.sglang
    # The user's own draft length (--engine-arg) is the one source where given: one flag per
    # setting, not the derived one beside it (SGLang refuses two that differ for DFLASH,
    # arg_groups/speculative_hook.py:374-384, and for DSPARK, :824-834); two the user gave
    # that differ are passed as given, as the check judged them (DF019). An EAGLE-family
    # user's steps and topk pass on with the engine arguments, as given (DF060 judged them).
    given = own.draft_length_args(spec.method)
    if algorithm(spec.method) in EAGLE_FAMILY:
        steps_given = own.speculative_num_steps, own.speculative_eagle_topk
        if given or steps_given != (None, None):
            return given
        if spec.num_speculative_tokens is None and spec.method == "eagle3":
            # None of the three: SGLang picks them per target architecture (:1159-1174,
            # :1430-1458), as the recorded EAGLE-3 commands ran
            # (conformance/results/oracle/commands/sglang-0.5.23.json).
            return []
        # A chain of k draft tokens: steps k at topk 1, which SGLang verifies as k + 1
        # tokens (it sets them so at topk 1 anyway, :1255-1266). A NextN checkpoint always
        # gets the chain: DeepSeek V4's model hook asserts a topk of 1 (deepseek_v4_hook.py
        # :156-158) before the speculative hook would pick one (arg_groups/pipeline.py:225
        # runs the model hooks, :306 the speculative one).
        k = draft_tokens(spec.block_size, spec.num_speculative_tokens, spec.method)
        return [
            "--speculative-num-steps",
            str(k),
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            str(k + 1),
        ]
    if given:
        return given
    # SGLang's setting counts the bonus token as well as the draft tokens (it drafts gamma + 1
    # positions).
    tokens = draft_tokens(spec.block_size, spec.num_speculative_tokens, spec.method) + 1
    return ["--speculative-num-draft-tokens", str(tokens)]


_HOOKS = MappingProxyType(
    {"dflash": "dflash", "dflash2": "dflash", "dspark": "dspark", "eagle3": "eagle3"}
)
"""The draft's method -> the capture hook SGLang calls for it."""
_MESSAGES = MappingProxyType({"eagle3": "no_eagle3_hook"})


def judge(facts: ReleaseFacts, tf: TargetFacts, method: str, runner: str | None) -> Status | None:
    """Judge a served class by its capture hook for the method, defined or inherited."""
    hook_method = _HOOKS.get(method)
    if hook_method is None:
        return None
    hook = tf.hooks.get(hook_method) or (
        tf.hooks.get("dflash") if hook_method == "dspark" else None
    )
    if hook is not None:
        # SGLang's general convention is +1 and a capture before each layer only (the
        # strictest range), so a +1 hook never makes it too permissive.
        return Status(
            Capture.CAPTURES,
            f"{hook_method} hook at {facts.cite(hook.at)}",
            convention=hook.rule == "plus-one",
        )
    name = {"eagle3": "set_eagle3_layers_to_capture"}.get(
        hook_method, "set_dflash_layers_to_capture"
    )
    return Status(
        Capture.NO_CAPTURE,
        f"{tf.architecture} ({facts.cite(tf.class_at or tf.at)}) has no {name} hook, "
        "defined or inherited",
        facts.message(_MESSAGES.get(hook_method, "no_dflash_hook")),
    )


# SGLang 0.5.23: the hooks inherited from Qwen3VLForConditionalGeneration delegate to the
# language model, whose forward collects nothing (sgl-project/sglang#38589).
NO_CAPTURE = MappingProxyType(
    {
        "Qwen4ExpForConditionalGeneration": (
            "the capture hooks inherited from Qwen3VLForConditionalGeneration delegate to the "
            "Qwen4Exp language model, which collects no hidden states "
            "(sgl-project/sglang#38589): the hook succeeds and the draft is fed nothing",
            None,
        ),
    }
)
"""Architecture -> why a class the facts show as capturing does not (``Engine.no_capture``)."""


def mtp_rows(_engine: Engine) -> tuple[EngineMtp, ...]:
    """SGLang's MTP rows (``Engine.mtp``), imported when asked: a pair check never reads them."""
    from dflash_check.knowledge.engines.sglang_mtp import MTP

    return MTP


# The rules' questions (handling.py). A DSpark draft vocabulary larger than the target's: its
# draft sampling asserts on the device (sgl-project/sglang#37472). A MiniMax DSpark draft read
# at its text_config gets the top-level dspark_* keys copied onto it first
# (sglang==0.5.23:sglang/srt/configs/minimax_vl.py:64-111, check/formats/dspark.py).
HANDLING = DraftHandling(
    dspark_larger_vocab="; sglang's draft sampling asserts on the device at the first decode "
    "(sgl-project/sglang#37472)",
    copies_dspark_noise=True,
)
TEST_FILE = EngineTestFile(
    "test_utils.py constants",
    ("DEFAULT_DRAFT_MODEL_",),
    (("..", "_version.py"), ("..", "version.py")),
    "dflash_check.app.engine_tests.sglang_constants:read_sglang_constants",
    asks_method=False,
    # EAGLE is SGLang's EAGLE-2 scenario; a suffix not listed (EAGLE_DP_ATTN) leaves the
    # method to the draft's own config.
    key_methods=MappingProxyType(
        {
            "EAGLE": "eagle",
            "EAGLE3": "eagle3",
            "DFLASH": "dflash",
            "STANDALONE": "draft_model",
            "NGRAM": "ngram",
        }
    ),
)
"""Its test pairings: ``DEFAULT_DRAFT_MODEL_X`` / ``DEFAULT_TARGET_MODEL_X`` constants."""

ENGINE = Engine(
    "sglang",
    "SGLang",
    "sgl-project/sglang",
    inherit(RELEASES, REVIEWED),
    ("dflash", "dflash2", "dspark", "eagle3", "mtp"),
    drivable=True,
    extracted=True,
    stages=STAGES,
    http=http,
    serve=serve,
    # Its draft length, read once by knowledge/settings.py.
    writes=DRAFT_LENGTH_FLAGS,
    judge=judge,
    no_capture=NO_CAPTURE,
    reviewed=REVIEWED,
    mtp_rows=mtp_rows,
    handling=HANDLING,
    test_file=TEST_FILE,
)
