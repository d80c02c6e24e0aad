"""vLLM's keyword-relevant tests that no mechanical rule settles (``tools/engine_test_triage.py``),
read by hand (0.32.0, 0.33.0, 0.34.0): the reason each is not applicable, or the case it calls
for and that is not written yet (``PENDING``: the coverage page says so; it is not a case).

Grouped by reason; a test id is ``path::name`` without parameters, the same in every release
that has it.
"""

from __future__ import annotations

PARALLEL = (
    "asserts the draft's parallel layout (TP / EP / DP / context parallelism, EPLB) vLLM derives "
    "from the target's; the tool checks a pair's configs, not a deployment's parallelism"
)
QUANT = (
    "asserts quantization-method selection or scale loading for a model's layers "
    "(MTP / draft layers included), not a draft/target pairing"
)
WEIGHTS = (
    "asserts a draft model class's weight loading, checkpoint name mapping or shared "
    "embeddings / lm_head with the target, on built modules, not the pair's configs"
)
CONTEXT_LENGTH = (
    "asserts the max_model_len / max_position_embeddings vLLM derives for the draft from the "
    "target (a serving limit, not a refusal or a pairing check)"
)
OTHER_SUBSYSTEM = (
    "asserts another subsystem's handling of speculative decoding (watermarking, sampling-"
    "parameter validation, DRY sampling, metrics, KV connectors, warm-up, CUDA graphs, "
    "benchmarks), not a draft/target pairing"
)
RUNTIME_OBJECTS = (
    "asserts what the model runner's speculator objects hold or dispatch to (built from "
    "stand-in configs), not a config check of a pair"
)
PLATFORM_PATH = (
    "asserts a vendor-specific decode path (ROCm / AMD specialized kernels, SM120 sparse MLA) "
    "and what it accepts, not the generic start-up path the tool models"
)
OTHER_METHOD = (
    "asserts a method the tool does not check (extract_hidden_states, custom / LiLiCorr "
    "speculators, synthetic rejection sampling, n-gram), whose configs have no draft/target "
    "pairing to check"
)
DRAFT_FORWARD = (
    "asserts a built draft or target module's forward outputs on tensors (aux hidden states "
    "computed, fc dtype), not which layers a config selects"
)
RUNNER_CHOICE = (
    "asserts which model runner (V1 / V2) vLLM picks for a draft (heterogeneous vocabulary, "
    "DFlash candidate drafts); both runners accept the pair, so no refusal to check"
)
SERVING_FLAG = (
    "asserts a serving flag of the speculative config (parallel_drafting, EAGLE block drop) "
    "that a draft/target pair check does not take"
)
NOT_SPECULATIVE = (
    "the speculative names are incidental (a flag switched off, a model class's module "
    "path); what it asserts does not involve a draft"
)

REVIEWED_GROUPS: dict[str, tuple[str, ...]] = {
    PARALLEL: (
        "tests/test_config.py::test_draft_inherits_ep_only_for_moe",
        "tests/test_config.py::test_draft_parallel_config_preserves_ep_without_model",
        "tests/test_config.py::test_draft_decode_context_parallel_size",
        "tests/distributed/test_eplb_spec_decode.py::test_dspark_draft_supports_eplb",
        "tests/distributed/test_eplb_spec_decode.py::test_draft_model_supports_eplb_requires_draft_moe",
        "tests/distributed/test_eplb_spec_decode.py::test_eplb_dspark_draft_registration",
        "tests/models/test_deepseek_v41_pcp.py::test_pcp_rejects_speculation_other_than_fixed_length_dspark",
        "tests/models/test_muse_spark_rocm_mono.py::test_deployment_guard_accepts_only_tep8_with_dspark",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_engine_args_tensor_parallelism",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_engine_args_rejects_invalid_tp_argname",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_moe_backend_override",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_moe_backend_inherits_target",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_moe_backend_default_auto",
        "tests/v1/spec_decode/test_dynamic_sd.py::test_dynamic_sd_is_disabled_with_data_parallel",
        "tests/v1/e2e/spec_decode/draft_model/test_draft_model.py::test_draft_model_inherits_target_dcp_config",
        "tests/v1/worker/test_cp_utils.py::test_cp_checks_allow_a_replicated_draft_backend_without_dcp",
        "tests/v1/worker/test_dspark_utils.py::test_dspark_parallel_config_eplb_by_model_type",
        "tests/v1/worker/test_dspark_utils.py::test_draft_context_parallelism_without_changing_target",
        "tests/v1/worker/test_dspark_utils.py::test_default_draft_decode_context_parallel_size",
        "tests/v1/worker/test_gpu_model_runner_v2_eplb.py::test_v2_load_model_registers_dspark_speculator_with_eplb",
        "tests/models/test_deepseek_v4_mega_moe.py::test_dspark_draft_registers_mixture_of_experts",
        "tests/models/test_deepseek_v4_mega_moe.py::test_deepseek_v4_drafter_pwal_hooks_finalize_mega_moe",
    ),
    QUANT: (
        "tests/model_executor/layers/test_fused_shared_expert.py::test_deepseek_v41_quant_config_rejects_fp8_mtp_shared_expert_fse",
        "tests/model_executor/layers/test_fused_shared_expert.py::test_models_fse_init",
        "tests/model_executor/test_eagle_quantization.py::test_get_draft_quant_config_with_draft_model",
        "tests/models/qwen4_exp/test_config.py::test_qwen4_exp_mtp_remaps_quark_layer_names",
        "tests/models/qwen4_exp/test_ple.py::test_ple_fp8_embedding_respects_checkpoint_shard_exclusions",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_falls_back_for_unsupported_quantization_configs",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_respects_modelopt_exclusion",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_respects_inc_layer_config",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_is_unquantized_under_quark",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_dtype_overrides_modelopt_exclusion",
        "tests/models/qwen4_exp/test_ple.py::test_ple_embedding_rejects_unsupported_quantization_configs",
        "tests/models/multimodal/processing/test_nemotron3_5_transcribe.py::test_mtp_draft_config_keeps_the_quantization_recipe",
        "tests/quantization/test_fp8.py::test_deepseek_v41_mxfp8_scale_loading",
        "tests/quantization/test_fp8.py::test_deepseek_v41_nvfp4_export_keeps_ignored_experts_mxfp4",
        "tests/v1/worker/test_gpu_model_runner_v2.py::test_standalone_draft_kv_dtype_override",
    ),
    WEIGHTS: (
        "tests/models/test_dspark_mla.py::test_dspark_mla_uses_compile_free_model_entrypoint",
        "tests/models/test_dspark_mla.py::test_dspark_mla_checkpoint_weight_mapping",
        "tests/models/test_dspark_mla.py::test_dspark_mla_shares_frozen_target_weights_and_skips_training_head",
        "tests/models/transformers/test_backend.py::test_mtp_draft_loads_mtp_weights",
        "tests/transformers_utils/test_muse_spark_config.py::test_dspark_draft_loads_weights",
        "tests/v1/spec_decode/test_dflash2.py::test_beam_dflash2_loads_every_checkpoint_tensor",
        "tests/v1/spec_decode/test_lilicorr.py::test_selected_lm_head_survives_dflash_and_lilicorr_sharing",
        "tests/v1/worker/test_spec_decode_embed_sharing_pp.py::test_m3_direct_loader_embedding_ownership",
        "tests/v1/worker/test_spec_decode_embed_sharing_pp.py::test_nemotron_only_reports_loaded_mtp_weights",
        "tests/v1/worker/test_spec_decode_embed_sharing_pp.py::test_nemotron_shares_target_embedding_and_refit",
        "tests/v1/worker/test_spec_decode_embed_sharing_pp.py::test_m3_preserves_legacy_embedding_sharing",
        "tests/v1/spec_decode/test_mtp.py::test_mtp_load_model_unified",
    ),
    CONTEXT_LENGTH: (
        "tests/config/test_speculative_draft_limits_max_model_len.py::test_draft_model_limits_max_model_len",
        "tests/config/test_speculative_draft_limits_max_model_len.py::test_eagle_draft_limits_max_model_len_unless_resized",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_override_raises_smaller_value",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_override_keeps_sufficient_value",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_override_ignores_missing_attribute",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_override_raises_cache_only_rope_types",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_override_skips_other_rope_types",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_eagle_draft_inherits_target_max_model_len",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_dflash_draft_inherits_target_max_model_len",
        "tests/config/test_speculative_draft_max_position_embeddings.py::test_independent_draft_model_keeps_its_own_limit",
        "tests/v1/spec_decode/test_max_len.py::test_mtp_speculative_config_max_model_len",
    ),
    OTHER_SUBSYSTEM: (
        "tests/benchmarks/test_forward_cli.py::test_bench_forward_drafter",
        "tests/compile/test_config.py::test_one_token_draft_decodes_cover_max_num_seqs",
        "tests/test_config.py::test_per_request_spec_decode_metrics_requires_spec_decode",
        "tests/test_config.py::test_dflash_allows_async_scheduling",
        "tests/test_config.py::test_max_num_new_slots_for_drafting",
        "tests/test_config.py::test_target_only_gumbel_allows_speculative_decoding",
        "tests/test_config.py::test_dual_key_gumbel_requires_probabilistic_drafting",
        "tests/test_config.py::test_dual_key_gumbel_supports_probabilistic_speculative_decoding",
        "tests/test_config.py::test_dual_key_gumbel_rejects_dflash_candidate_drafts",
        "tests/test_config.py::test_dual_key_gumbel_supports_dspark",
        "tests/v1/core/test_kv_cache_utils.py::test_draft_group_not_annotated_without_spec_decode",
        "tests/test_sampling_params.py::test_diffusion_canvas_width_is_accepted_with_either_scheduler",
        "tests/v1/attention/test_kpool_tail_slot_mapping.py::test_tail_ring_divides_the_attention_block",
        "tests/v1/core/prefix_cache/test_partial_prefix_cache_hits.py::test_eagle_group_registers_unaligned_tail_under_partial_hash_hits",
        "tests/v1/kv_connector/unit/test_nixl_connector.py::test_missing_speculative_config_changes_compatibility_hash",
        "tests/v1/kv_connector/unit/test_nixl_connector.py::test_head_sharded_draft_regions_check_layer_identity",
        "tests/v1/kv_connector/unit/test_simple_cpu_offload_connector.py::test_multi_cpu_coordinator_uses_parent_hash_protocol",
        "tests/v1/kv_connector/unit/test_umbp_core.py::test_namespace_distinguishes_draft_models",
        "tests/v1/kv_connector/unit/test_umbp_hybrid.py::test_single_sliding_window_stores_a_replayable_tail",
        "tests/v1/sample/test_dry.py::test_spec_decode_is_refused_at_construction",
        "tests/v1/sample/test_logprobs.py::test_logprob_token_ids_validate_vocab_bounds_valid",
        "tests/v1/sample/test_logprobs.py::test_logprob_token_ids_validate_vocab_bounds_invalid",
        "tests/v1/sample/test_logprobs.py::test_prompt_logprob_token_ids_validation",
        "tests/v1/sample/test_trace_replay_params.py::test_sampling_params_trace_field_rejects_empty_list",
        "tests/v1/sample/test_trace_replay_params.py::test_sampling_params_trace_field_rejects_prompt_scoring",
        "tests/v1/sample/test_trace_replay_params.py::test_sampling_params_trace_field_requires_single_output",
        "tests/v1/sample/test_trace_replay_params.py::test_sampling_params_trace_field_rejects_invalid_token_ids",
        "tests/v1/sample/test_trace_replay_params.py::test_validate_trace_replay_accepts_in_vocab",
        "tests/v1/sample/test_trace_replay_params.py::test_validate_trace_replay_rejects_out_of_vocab",
        "tests/v1/sample/test_trace_replay_params.py::test_validate_trace_replay_noop_when_unset",
        "tests/v1/sample/test_trace_replay_params.py::test_trace_decode_token_ids_allows_speculative_decoding",
        "tests/v1/sample/test_trace_replay_params.py::test_trace_decode_token_ids_rejects_speculative_decoding",
        "tests/v1/core/test_scheduler.py::test_draft_slots_budgeted_per_scheduled_request",
        "tests/v1/spec_decode/test_dflash_lookahead.py::test_dflash_drafter_window_reserves_bonus_token",
        "tests/v1/sample/test_trace_replay_params.py::test_trace_decode_token_ids_rejects_structured_outputs",
        "tests/v1/simple_kv_offload/test_scheduler.py::test_eager_store_matches_gpu_cacheable_prefix",
        "tests/v1/worker/test_attn_utils.py::test_flashinfer_sparse_full_graphs_exclude_prefill_keep_varlen_decode",
        "tests/v1/worker/test_mamba_hybrid_model_state.py::test_prepare_attn_omits_the_offset_without_a_speculative_config",
        "tests/v1/worker/test_mixed_warmup_gate.py::test_kernel_warmup_runs_same_rounds_on_every_pp_stage",
        "tests/watermarking/test_watermarking.py::test_dual_key_watermarker_uses_domain_separated_keys",
        "tests/watermarking/test_watermarking.py::test_speculative_decoding_uses_fixed_dual_key_roles",
        "tests/watermarking/test_watermarking.py::test_config_key_resolution_matches_the_model_runner",
        "tests/watermarking/test_watermarking.py::test_target_only_speculative_watermarking_skips_draft_watermarker",
    ),
    RUNTIME_OBJECTS: (
        "tests/v1/worker/test_gpu_extract_hidden_states_speculator.py::test_init_speculator_dispatches_extract_hidden_states",
        "tests/v1/worker/test_gpu_target_dependent_ar_speculator.py::test_speculator_uses_draft_model_hidden_size",
        "tests/v1/worker/test_gpu_target_dependent_ar_speculator.py::test_mm_support_configured_after_model_load",
        "tests/models/step5/test_mtp_config.py::test_mtp_config_view",
    ),
    PLATFORM_PATH: (
        "tests/models/minimax_m3/amd_specialized_decode/test_runtime.py::test_only_eagle3_speculation_is_accepted",
        "tests/v1/attention/test_flashinfer_sparse_mla_sm120_api.py::test_sm120_dsv4_required_topk_tracks_dspark_width",
    ),
    OTHER_METHOD: (
        "tests/v1/spec_decode/test_custom_speculator.py::test_custom_speculator",
        "tests/v1/spec_decode/test_extract_hidden_states.py::test_extract_hidden_states_text_only_config_regression",
        "tests/v1/spec_decode/test_extract_hidden_states.py::test_extract_hidden_states_speculative_config_vlm",
        "tests/v1/spec_decode/test_extract_hidden_states.py::test_extract_hidden_states_config_invalid_text_config",
        "tests/v1/spec_decode/test_extract_hidden_states.py::test_proposer_initialization",
        "tests/v1/spec_decode/test_extract_hidden_states.py::test_proposer_initialization_missing_layer_ids",
        "tests/v1/spec_decode/test_lilicorr.py::test_runtime_length_keeps_trained_checkpoint_geometry",
        "tests/v1/spec_decode/test_lilicorr.py::test_candidate_generation_routes_scores_and_adaptive_inputs",
        "tests/v1/spec_decode/test_lilicorr.py::test_lilicorr_config_preserves_architecture",
        "tests/v1/spec_decode/test_ngram_gpu.py::test_construction_validates_speculative_config",
        "tests/v1/spec_decode/test_synthetic_rejection_sampler_utils.py::test_acceptance_length_to_rates",
        "tests/v1/spec_decode/test_synthetic_rejection_sampler_utils.py::test_resolve_length_produces_minvariance_schedule",
        "tests/v1/worker/test_eagle3_aux_hidden_states_pp.py::test_minimax_missing_upstream_aux_slot_is_not_silently_dropped",
        "tests/v1/worker/test_gpu_extract_hidden_states_speculator.py::test_init_requires_greedy_draft_sampling",
    ),
    DRAFT_FORWARD: (
        "tests/v1/spec_decode/test_dflash2.py::test_dflash_fc_runs_fp32_target_hidden_states_in_draft_dtype",
        "tests/v1/spec_decode/test_dflash2.py::test_ripple_draft_skips_context_rope_on_nope_layers",
    ),
    NOT_SPECULATIVE: (
        "tests/models/test_qwen3_5.py::test_qwen3_5_models_use_platform_specific_implementation",
        "tests/transformers_utils/test_muse_spark_config.py::test_text_config_eos_default",
        "tests/transformers_utils/test_muse_spark_config.py::test_metap_rejects_unknown_mode",
    ),
    RUNNER_CHOICE: (
        "tests/test_config.py::test_v2_model_runner_heterogeneous_vocab_draft_falls_back_to_v1",
        "tests/test_config.py::test_dflash_candidate_draft_forces_v2_model_runner",
    ),
    SERVING_FLAG: (
        "tests/test_config.py::test_parallel_drafting_is_deprecated",
        "tests/test_config.py::test_eagle_block_drop_can_be_disabled_without_disabling_eagle",
    ),
}

PENDING_GROUPS: dict[str, tuple[str, ...]] = {
    # None left: the MTP group's cases are conformance/mined/mtp_cases.py, the DSpark,
    # speculators, aux and EAGLE groups' are dspark_cases.py and the groups above.
}


def _flat(groups: dict[str, tuple[str, ...]]) -> dict[str, str]:
    flat: dict[str, str] = {}
    for reason, tests in groups.items():
        for test in tests:
            assert test not in flat, f"{test} is listed twice"
            flat[test] = reason
    return flat


REVIEWED = _flat(REVIEWED_GROUPS)
"""Reviewed and not applicable, by test id."""
PENDING = _flat(PENDING_GROUPS)
"""Reviewed, applicable, and the case not written yet, by test id (what the case is)."""
