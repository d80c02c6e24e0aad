"""What each reviewed field of vLLM (``VLLM_REVIEWED`` in ``vllm.py``) was read from: per range,
field -> the engine functions (``Read``) with the fingerprints of the versions reviewed.

``tools/extract_engine_facts.py`` fingerprints each named function in every release the range
covers and fails, naming the fields to re-read, where one differs from every reviewed version;
``tests/unit/knowledge/test_engine_contract.py`` holds every semantic field to naming one.
"""

from __future__ import annotations

from collections.abc import Mapping

from dflash_check.knowledge.reviewed import Read

_SPEC_DECODE = "vllm/v1/worker/gpu/spec_decode/"
_MODELS = "vllm/model_executor/models/"
_SPECULATIVE = "vllm/config/speculative.py"


def _dflash_anchor_read(speculator: str) -> tuple[Read, ...]:
    """``dflash_anchor``: the speculator's refusal and the loader's copy (``_dflash_anchor``)."""
    return (
        Read(_SPEC_DECODE + "dflash/speculator.py", "DFlashSpeculator.__init__", (speculator,)),
        Read(
            "vllm/transformers_utils/configs/speculators/algos.py",
            "update_dflash",
            ("7fb40f94725e1ab8",),
        ),
    )


def _duplicates_read(profile: str) -> tuple[Read, ...]:
    """``duplicate_ids_refused``: the de-duplication, fc's size, the profile's drafter run."""
    return (
        Read(
            _MODELS + "interfaces.py",
            "EagleModelMixin._set_aux_hidden_state_layers",
            ("a1ac96e52770f122",),
        ),
        Read(_MODELS + "qwen3_dflash.py", "_get_dflash_fc_input_size", ("b0312cac055a8cfe",)),
        Read("vllm/v1/worker/gpu/model_runner.py", "GPUModelRunner._dummy_run", (profile,)),
    )


_OMNI_READ = Read(_SPECULATIVE, "_validate_qwen3_omni_dspark", ("b5e4a04b40f66723",))
_EAGLE_RENAME_READ = Read(
    "vllm/transformers_utils/configs/eagle.py", "EAGLEConfig.__init__", ("e6e8caad1706a7d2",)
)
_V2_PICK_READ = Read(
    "vllm/config/vllm.py",
    "VllmConfig.use_v2_model_runner",
    ("3a633fdccf47975b", "29297299afe30ff8"),  # 0.32.0, 0.33.0
)
_V1_REMOVED_READ = Read(
    "vllm/platforms/interface.py", "Platform.validate_environ", ("dcc40595b1c8eed0",)
)
_BEAM_READ = (
    Read(
        "vllm/models/beam/nvidia/dflash2.py", "DFlash2BeamAttention.__init__", ("f05d76e49f52e1df",)
    ),
    Read(
        "vllm/models/beam/nvidia/dflash2.py",
        "DFlash2BeamForCausalLM.__init__",
        ("6e70f105208d71e9",),
    ),
)
_XPRESS_READ = (
    Read(_MODELS + "qwen3_xpress.py", "Qwen3XPressForCausalLM.__init__", ("23bd0d1f0dbcf094",)),
    Read(_SPEC_DECODE + "xpress/speculator.py", "XPressSpeculator.__init__", ("403bd734e91208f5",)),
)
_NOPE_IGNORED_READ = (
    Read(
        _MODELS + "qwen3_dflash.py",
        "DFlashQwen3Attention.__init__",
        ("f7f780d8fdcd6ea7", "3d569917995aa492"),  # 0.32.0, 0.33.0
    ),
    Read(_MODELS + "qwen3_dflash.py", "DFlashQwen3Attention.forward", ("b574ea1e844d9f66",)),
)

READ_ALL: Mapping[str, tuple[Read, ...]] = {
    "mla_dspark_contract": (
        Read(
            "vllm/transformers_utils/configs/k3_dspark.py",
            "K3DSparkConfig.__init__",
            ("b76e933956299aa2",),
        ),
    ),
}
"""Read for ``>=0.32``."""

READ_BEFORE_034: Mapping[str, tuple[Read, ...]] = dict.fromkeys(
    ("runners", "runner_short", "cpu_runner"), (_V2_PICK_READ,)
)
"""Read for ``<0.34``."""

READ_032: Mapping[str, tuple[Read, ...]] = {
    "dflash_anchor": _dflash_anchor_read("5939ed9552b26145"),
    "runner_choice": (_V2_PICK_READ,),
    "duplicate_ids_refused": _duplicates_read("1dd89d91f4d5fab9"),
    "omni_dspark_contract": (_OMNI_READ,),
    "draft_renames": (_EAGLE_RENAME_READ,),
    "draft_class_from_config": (
        Read(_SPECULATIVE, "SpeculativeConfig.hf_config_override", ("a54fda1e221b7696",)),
    ),
    "dflash2_nope": _NOPE_IGNORED_READ,
}
"""Read for ``>=0.32,<0.33``."""

READ_033: Mapping[str, tuple[Read, ...]] = {
    "dflash_anchor": _dflash_anchor_read("e3c02d9d72dc6b28"),
    "runner_choice": (_V2_PICK_READ,),
    "duplicate_ids_refused": _duplicates_read("1dd89d91f4d5fab9"),
    "omni_dspark_contract": (_OMNI_READ,),
    "draft_renames": (_EAGLE_RENAME_READ,),
    "draft_class_from_config": (
        Read(_SPECULATIVE, "SpeculativeConfig.hf_config_override", ("230b6d44ac6b4701",)),
    ),
    "dflash2_nope": _NOPE_IGNORED_READ,
    "xpress": (
        *_XPRESS_READ,
        Read(_SPECULATIVE, "SpeculativeConfig.__post_init__", ("b849b64c7206aa35",)),
    ),
    "beam_dflash2_contract": _BEAM_READ,
}
"""Read for ``>=0.33,<0.34``."""

READ_034: Mapping[str, tuple[Read, ...]] = {
    "dflash_anchor": _dflash_anchor_read("f9aef0c6672d4a46"),
    **dict.fromkeys(
        ("runners", "removed_runners", "runner_short", "runner_choice"),
        (_V1_REMOVED_READ,),
    ),
    "checks_method": (
        Read(
            _SPEC_DECODE + "speculator_config.py",
            "_resolve_checkpoint_config_class",
            ("1bf2deb9f5404843",),
        ),
    ),
    "duplicate_ids_refused": _duplicates_read("006e2a9966d0fca2"),
    "omni_dspark_contract": (
        _OMNI_READ,
        Read(
            _SPEC_DECODE + "dspark/config.py",
            "DSparkSpeculatorConfig.apply_options",
            ("379a3f2d912f45d2",),
        ),
    ),
    "draft_renames": (
        _EAGLE_RENAME_READ,
        Read(_SPEC_DECODE + "eagle/config.py", "wrap_eagle_hf_config", ("8a7b8130ea885512",)),
    ),
    "draft_class_from_config": (
        Read(_SPECULATIVE, "SpeculativeConfig.hf_config_override", ("4d91e1b235df3653",)),
        Read(
            _SPEC_DECODE + "speculator_config.py",
            "DraftModelSpeculatorConfig.configure",
            ("9cc567db23ebb411",),
        ),
    ),
    "dflash2_nope": (
        Read(_SPECULATIVE, "SpeculativeConfig.hf_config_override", ("4d91e1b235df3653",)),
        Read(
            _MODELS + "ricursive_dflash2.py",
            "RicursiveDFlash2DecoderLayer",
            ("172956c48f8699f8",),
        ),
    ),
    "xpress": (
        *_XPRESS_READ,
        Read(
            _SPEC_DECODE + "xpress/config.py",
            "XPressSpeculatorConfig.apply_options",
            ("d55fc9d2ea73f9e6",),
        ),
    ),
    "beam_dflash2_contract": _BEAM_READ,
    # The speculator config classes whose method each draft class declares.
    "declared_methods": (
        Read(
            _SPEC_DECODE + "dflash/config.py",
            "DFlashSpeculatorConfig",
            ("35dabc8412dd3d5c",),
        ),
        Read(
            _SPEC_DECODE + "dspark/config.py",
            "DSparkSpeculatorConfig",
            ("d9124b3d4e9c47cc",),
        ),
        Read(_SPEC_DECODE + "mtp/config.py", "MTPSpeculatorConfig", ("e393987f0ff640eb",)),
    ),
}
"""Read for ``>=0.34``."""
