"""SGLang 0.5.23's own tests about speculative decoding, as cases (issue 29, item 1).

``python tools/mine/sglang.py SRC`` writes ``conformance/mined/sglang-0.5.23.json`` and its
coverage page ``sglang-0.5.23.md``. SRC holds the test files named in ``READ`` at the commits
named there (the index's stored versions of ``sgl-project/sglang``, read with its ``read_file``
verb): the index has no 0.5.23 source archive and the repository is over ``fetch``'s size
limit, so no file is pinned to the 0.5.23 tag. Each test's verdict is therefore checked
against the code of the 0.5.23 wheel (``pip download --no-deps sglang==0.5.23``), and a case is
made only where that code gives the verdict the test asserts (``release_check`` cites it); a
test whose version asserts what 0.5.23 does not do is listed with the reason.

Stages: ``config`` is ``ServerArgs`` resolution (``arg_groups/speculative_hook.py``); ``load``
is the draft model's construction, where ``parse_dflash_draft_config`` refuses a draft
(``models/dflash.py:700``; the config stage calls it only to infer the block size and
swallows its errors, ``arg_groups/speculative_hook.py:399-415``). A maintainer's tool.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

# The repository root, in place of this folder: tools/mine/speculators.py must not shadow
# the installed package of that name.
sys.path[0] = str(Path(__file__).resolve().parents[2])

from tools.mine.coverage import (  # noqa: E402
    REPO,
    Page,
    TestId,
    assertion_line,
    line_of,
    tests_in,
    write,
)

ENGINE, RELEASE = "sglang", "0.5.23"
WHEEL = f"{ENGINE}=={RELEASE}:sglang/srt"
"""Citations of the 0.5.23 wheel's code, by path under ``sglang/srt``."""
ZLAB_DRAFT = "tests/fixtures/hub/z-lab/Qwen3-8B-DFlash-b16"
QWEN3_8B = "tests/fixtures/targets/Qwen--Qwen3-8B"
"""36 layers, hidden 4096: the target the Domino test's ``num_target_layers`` names."""

DOMINO = "test/registered/unit/spec/test_dflash_domino_config.py"
DOMINO_UNIT = "test/registered/unit/spec/test_dflash_domino.py"
DRAFT_MODEL = "test/registered/unit/models/test_dflash_draft_model.py"
DSPARK_UNIT = "test/registered/unit/spec/test_dspark.py"
DSPARK_CHECKPOINT = "test/registered/unit/spec/test_dspark_checkpoint.py"
DSPARK_DRAFT = "tests/fixtures/drafts/sgl-project--SpecForge-qwen3-8b-dspark"
"""SpecForge's Qwen3-8B DSpark draft (vocabulary 151936, Qwen3-8B's), a corpus pair SGLang
0.5.23 accepts (``specforge-qwen3-8b-dspark``)."""
SPEC_AUX = (
    "test/registered/unit/model_executor/model_runner_components/test_spec_aux_hidden_state.py"
)
READ: dict[str, str] = {
    "test/registered/unit/spec/test_dflash_domino_config.py":
        "8e4cc8bc7dca284bb4d4dd85888edea88ac775f5",
    "test/registered/unit/spec/test_dflash_utils.py": "0560ccd58da8d87646b6be1c6f036732b710f5c1",
    SPEC_AUX: "02d55f5db0359f1077bb32ba4a300a9622f29e6d",
    DOMINO_UNIT: "0ac97887bcf654b11fcdfa190834990615ca1728",
    DSPARK_CHECKPOINT: "29cbd8f1231e6e85c877d4a3fabc9df12a7b405f",
}  # fmt: skip
"""Files kept in SRC (the cases and their lines come from them), with the commit read."""
DSPARK_CHECKPOINT_TESTS: tuple[str, ...] = (
    *(f"TestDSparkConfiguration::{t}" for t in (
        "test_cli_generated_from_optional_fields", "test_non_dspark_rejects_explicit_even_zero",
        "test_optional_budgets_and_explicit_zero", "test_budget_errors",
        "test_speculators_query_rows_and_layer_conversion_once")),
    *(f"TestDSparkVocabulary::{t}" for t in (
        "test_confidence_uses_target_predecessor_ids", "test_zero_draft_vocabulary_is_invalid",
        "test_mapping_requires_range_shape_and_injectivity",
        "test_dense_reduced_chain_uses_target_predecessors_and_scale_once")),
    *(f"TestDSparkCheckpointWeights::{t}" for t in (
        "test_own_head_embedding_and_mapping_survive_attach",
        "test_w1_must_cover_all_target_predecessors",
        "test_output_vocab_inferred_from_w2_when_input_has_mask_row",
        "test_weight_reload_refreshes_candidate_table",
        "test_predecessor_shape_reload_requires_recapture",
        "test_reload_cannot_overwrite_shared_target_embedding",
        "test_missing_or_wrong_markov_weight_is_load_error",
        "test_speculators_missing_backbone_weight_is_load_error",
        "test_training_backbone_aliases_are_normalized_before_loading",
        "test_reduced_vocab_cannot_use_shared_full_head",
        "test_own_embedding_only_keeps_target_head",
        "test_base_and_bias_each_receive_logit_scale_once")),
)  # fmt: skip
"""The tests of ``DSPARK_CHECKPOINT`` (kept in SRC) that are not applicable, for ``REVIEWED``
(its ``test_mask_uses_input_embedding_domain`` has a case from its second assertion)."""

LISTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "test/registered/unit/spec/test_dflash_attention_config.py": (
        "5357884ac62a314662ad7be51d30d4c44fee80f4",
        ("test_absent_causal_override_preserves_legacy_behavior",
         "test_explicit_causal_override_is_parsed", "test_invalid_causal_override_is_rejected",
         "test_sliding_window_falls_back_to_dflash_swa_window_size",
         "test_top_level_sliding_window_keeps_precedence"),
    ),
    "test/registered/unit/arg_groups/test_speculative_draft_config_tolerance.py": (
        "359e436bff124f7a3e95a19db73e956cbe79e47c",
        tuple(f"TestDraftConfigTolerance::{t}" for t in (
            "test_unparseable_draft_config_is_not_fatal", "test_gemma4_draft_still_promotes",
            "test_parseable_non_gemma4_draft_unaffected")),
    ),
    "test/registered/unit/spec/test_dflash_platform_support.py": (
        "15209523f6bb85bb243951fc92b2b764e5f87f89",
        ("test_dflash_rejects_platform_without_capability",
         "test_dflash_accepts_platform_with_capability"),
    ),
    "test/registered/spec/dspark/test_dspark_speculators_convention.py": (
        "01f476234ab4ee99c7fb7cb31b68d31b6a7c54a8",
        tuple(f"TestDsparkSpeculatorsConventionDetection::{t}" for t in (
            "test_deepspec_checkpoint_not_flagged",
            "test_other_speculators_model_type_not_flagged",
            "test_speculators_dspark_checkpoint_flagged")),
    ),
    "test/registered/unit/server_args/test_server_args_pp_speculative.py": (
        "f7b5a6ecbd897effcefefb3dff75de683da57fdf",
        tuple(f"TestPipelineParallelSpeculativeGate::{t}" for t in (
            "test_prefill_role_accepts_pp_with_speculative_decoding",
            "test_pp_size_one_is_unaffected", "test_pp_without_speculative_decoding_is_unaffected",
            "test_decode_role_still_rejects_pp_with_speculative_decoding",
            "test_non_disaggregated_still_rejects_pp_with_speculative_decoding",
            "test_overlap_schedule_requirement_survives_the_split",
            "test_overlap_schedule_requirement_holds_without_speculative_decoding",
            "test_policy_layer_is_not_specific_to_one_algorithm"))
        + tuple(f"TestPipelineParallelSpeculativePerAlgorithmGate::{t}" for t in (
            "test_dspark_accepts_pp_on_the_prefill_role",
            "test_dspark_rejects_pp_on_the_decode_role",
            "test_dspark_rejects_pp_without_disaggregation",
            "test_eagle_rejects_pp_even_on_the_prefill_role",
            "test_ngram_rejects_pp_even_on_the_prefill_role",
            "test_dflash_pp_rejection_is_untouched")),
    ),
    "test/registered/unit/spec/test_draft_model_override_args.py": (
        "3a33c40df3012444a3f1c2d799951bc5ce8eb2ec",
        tuple(f"TestDraftModelOverrideArgs::{t}" for t in (
            "test_draft_override_falls_back_to_target_override",
            "test_explicit_draft_override_wins",
            "test_model_config_uses_target_and_draft_overrides_independently",
            "test_algorithm_detection_receives_draft_overrides")),
    ),
    "test/registered/spec/dflash/test_dflash.py": (
        "0159305fe00f59da626a01358d00f0f28f52b37b",
        ("TestDFlashServerBase::test_early_stop", "TestDFlashServerBase::test_eos_handling",
         "TestDFlashServerBase::test_greedy_determinism",
         "TestDFlashServerPage256::test_radix_attention",
         "TestDFlashServerOverlap::test_sampling_mask",
         "TestDFlashServerOverlap::test_radix_attention"),
    ),
    "test/registered/spec/dspark/test_glm52_dspark_config.py": (
        "2e0868a730008791e425f93bf141f77129313d1b",
        tuple(f"TestGLM52RedHatDSparkConfig::{t}" for t in (
            "test_dflash_parser_reads_nested_transformer_config_and_aux_layers",
            "test_explicit_aux_layers_resolve_without_trained_target_depth",
            "test_dspark_parser_prefers_speculators_tokens_for_gamma",
            "test_dspark_parser_selects_default_proposal_method",
            "test_dspark_parser_rejects_missing_default_proposal_method",
            "test_dspark_parser_rejects_invalid_speculative_tokens",
            "test_dict_text_config_none_falls_back_to_transformer_layer_config",
            "test_dflash_parser_rejects_empty_aux_layer_ids",
            "test_prefixed_dspark_block_size_overrides_speculators_gamma",
            "test_prefixed_target_layer_ids_must_be_non_empty",
            "test_generic_dspark_draft_model_is_registered",
            "test_hf_loader_falls_back_for_missing_top_level_model_type")),
    ),
    "test/registered/unit/model_executor/model_runner_components/"
    "test_aux_hidden_state_capture.py": (
        "1f33d3dd05486a8b26ecb9768ffb4789d5354990",
        ("test_cli_parses_method_and_layer_ids", "test_invalid_combinations_are_rejected",
         "test_eagle3_defaults_to_model_layers", "test_disabled_by_default",
         "test_eagle3_capture_without_draft", "test_dflash_family_capture_without_draft",
         "test_draft_runner_never_captures", "test_dflash_family_hook_routing",
         "test_full_capture_keeps_last_hidden_next_to_aux",
         "test_last_hidden_is_not_kept_without_the_flag",
         "test_last_hidden_only_under_full_aux_capture"),
    ),
    DRAFT_MODEL: (
        "0cd950b15546f04441b8ad5f8b3e19309d1cdb32",
        ("TestDFlashDraftModel::test_explicit_target_ids_are_not_validated_against_draft_depth",
         "TestDFlashDraftModel::test_checkpoint_without_embedding_uses_fallback_contract",
         "TestDFlashDecoderLayer::test_sliding_window_falls_back_to_published_dflash_config",
         *(f"TestDFlashDecoderLayer::{t}" for t in (
             "test_attention_receives_quant_config_and_full_prefix",
             "test_laguna_attention_propagates_nested_prefix",
             "test_laguna_attention_preserves_root_g_proj_prefix",
             "test_laguna_projection_prefixes_and_state_dict_names",
             "test_registered_laguna_entry_class_constructs_with_nested_prefix")),
         *(f"TestDFlashWeightValidation::{t}" for t in (
             "test_valid_unquantized_fc_weight_loads",
             "test_invalid_unquantized_fc_weight_reports_logical_shape",
             "test_valid_packed_fc_weight_loads",
             "test_valid_logical_checkpoint_loads_into_packed_fc_weight",
             "test_invalid_packed_fc_weight_still_fails",
             "test_valid_modelopt_packed_on_disk_shape_loads",
             "test_laguna_checkpoint_projection_names_reach_expected_loaders")),
         "TestDFlashEmbeddingSelection::test_draft_embedding_is_preferred",
         "TestDFlashEmbeddingSelection::test_target_embedding_is_the_fallback",
         *(f"TestDFlashGreedyHead::{t}" for t in (
             "test_quantized_head_uses_quant_method_instead_of_packed_weight",
             "test_unquantized_fast_path_multiplies_only_valid_base_vocab",
             "test_unquantized_added_vocab_path_uses_two_sliced_matmuls",
             "test_quantized_head_path_applies_once_and_excludes_padding"))),
    ),
    "test/registered/unit/models/test_dspark_draft_model.py": (
        "1fc8c9156cb4ad6fde1a449a57cc930354fd62c2",
        tuple(f"TestDSparkDraftModel::{t}" for t in (
            "test_markov_projection_receives_quant_config_and_full_prefix",
            "test_checkpoint_embedding_is_preserved_when_attaching_target_modules",
            "test_target_embedding_is_used_when_checkpoint_omits_one",
            "test_checkpoint_embedding_requires_matching_config_declaration",
            "test_declared_checkpoint_embedding_is_forwarded_to_backbone_loader",
            "test_quantized_target_head_uses_quant_method")),
    ),
    "test/registered/unit/models/test_draft_entry_hook_parity.py": (
        "3063deea7127f01820c5f6546b8221a027d0fc85",
        ("TestDraftEntryHookParity::test_a_draft_resolves_a_gate_exactly_when_its_target_does",),
    ),
    "test/registered/unit/configs/test_eagle_draft_arch.py": (
        "6c6d789d6cabb532108647f39d95a9732a13ae72",
        tuple(f"TestResolveEagleDraftArch::{t}" for t in (
            "test_llama_draft_without_draft_vocab_is_eagle",
            "test_llama_draft_with_draft_vocab_is_eagle3",
            "test_layer_count_is_not_used_to_classify",
            "test_qwen2_draft_is_eagle", "test_family_without_eagle3_class_is_left_alone",
            "test_repackaged_checkpoints_are_untouched", "test_unknown_architecture_is_untouched",
            "test_explicit_none_draft_vocab_counts_as_absent",
            "test_mapping_targets_are_registered_entry_classes")),
    ),
    "test/registered/unit/configs/test_draft_hf_config_resolution.py": (
        "f3e64c3823d8e1065d5b7114dadea91f0fd1558d",
        (*(f"TestDraftHfConfigResolution::{t}" for t in (
            "test_forwards_the_target_read_inputs",
            "test_returns_an_isolated_copy_of_the_cached_config",
            "test_revision_falls_back_to_the_target_revision",
            "test_decrypted_draft_config_becomes_the_configuration_file",
            "test_no_configuration_file_when_undecrypted",
            "test_object_store_draft_path_is_resolved_before_the_read",
            "test_remote_draft_path_is_pulled_once_per_process")),
         *(f"TestDraftReadFailureAttribution::{t}" for t in (
             "test_read_failure_names_the_draft_path_and_keeps_the_cause",
             "test_read_failure_does_not_name_the_decrypted_config_path",
             "test_malformed_model_override_args_is_not_a_draft_read_failure",
             "test_a_broken_config_parser_is_not_reported_as_an_unreadable_draft")),
         "TestDflashBlockSizeFallback::test_unreadable_draft_falls_back_to_the_default_block_size",
         "TestDflashBlockSizeFallback::test_malformed_model_override_args_is_fatal",
         *(f"TestGemma4DraftAliasResolution::{t}" for t in (
             "test_gemma4_assistant_draft_is_detected_through_the_plugin_parser",
             "test_non_gemma4_draft_is_not_detected",
             "test_no_draft_read_for_algorithms_that_ignore_the_answer",
             "test_no_draft_read_without_a_draft_path",
             "test_gemma4_draft_promotes_nextn_to_frozen_kv_mtp",
             "test_gemma4_draft_rejects_eagle3",
             "test_non_gemma4_draft_keeps_the_nextn_to_eagle_alias"))),
    ),
    "test/registered/unit/models/test_dflash_head_geometry.py": (
        "a70951475e8dc71dbdabe84949fb82e851450c02",
        tuple(f"TestDFlashHeadGeometry::{t}" for t in (
            "test_per_layer_heads_override_scalar_default",
            "test_scalar_heads_used_when_per_layer_heads_are_absent",
            "test_per_layer_heads_require_layer_entry",
            "test_laguna_config_accepts_non_uniform_all_swa_heads",
            "test_laguna_config_does_not_apply_swa_rope_to_full_layers",
            "test_laguna_config_all_swa_uses_swa_rope_for_default_fields")),
    ),
    "test/registered/unit/spec/test_dflash_quantized_draft_layout.py": (
        "3b7b681d6ef253f75a22290aa07d03297fcf5d67",
        ("test_every_layer_is_built_under_its_checkpoint_name",
         "test_shard_only_ignore_reaches_the_fused_projection",
         "test_fc_is_quantized_by_a_config_that_targets_linear",
         "test_fc_stays_dense_when_ignored_or_unquantized", "test_packed_fc_tensors_load",
         "test_dense_fc_loads_under_its_own_and_the_vendor_name",
         "test_dense_fc_shape_is_still_checked",
         "test_loading_refuses_a_tensor_the_module_stores_differently",
         "test_loading_refuses_decoder_layers_without_an_fc",
         "test_loading_still_ignores_tensors_the_draft_has_no_parameter_for"),
    ),
    DSPARK_UNIT: (
        "005179ca582aef5732231629ea687b453ed656f8",
        (*(f"TestDSparkPredicates::{t}" for t in (
            "test_identity_predicates", "test_capability_predicates",
            "test_from_string_resolves", "test_spec_input_types_classified")),
         *(f"TestHandleDspark::{t}" for t in (
            "test_pins_steps_and_topk_and_block_size",
            "test_explicit_num_draft_tokens_used_when_block_size_alias_unset",
            "test_overrides_steps_and_topk_but_preserves_explicit_max_requests",
            "test_block_size_alias_conflict_raises", "test_nonpositive_block_size_raises",
            "test_confidence_threshold_bounds",
            "test_confidence_threshold_accepts_endpoints_and_rejects_negative",
            "test_draft_path_defaults_to_target", "test_dp_attention_enables_dp_lm_head",
            "test_pipeline_parallel_rejected", "test_mixed_chunk_disabled"))),
    ),
    "test/registered/unit/spec/test_dflash_dp_attention.py": (
        "3ca165ae502b8d98efe618fbf891f445ca6d5b17",
        tuple(f"TestDFlashDPAttention::{t}" for t in (
            "test_dp_attention_keeps_draft_graph_enabled", "test_dp_lm_head_resolution",
            "test_draft_scope_restores_target_state", "test_non_extend_rank_skips_prompt_kv",
            "test_idle_rank_joins_target_verify", "test_padded_hidden_rows_are_not_materialized",
            "test_target_graphs_keep_global_dp_metadata",
            "test_embedding_cache_respects_sharding_and_padding")),
    ),
    "test/registered/unit/spec/test_dflash_cpu.py": (
        "2ebaee647e0c3d2a9bc7e643c4feed4a986a5f42",
        ("test_dflash_device_gate_rejects_an_unsupported_device",
         "test_dflash_device_gate_admits_the_supported_devices",
         "test_dflash_cpu_disables_overlap_schedule",
         "test_dflash_leaves_overlap_schedule_alone_off_cpu",
         "test_dflash_cpu_draft_backend_defaults_to_intel_amx",
         "test_dflash_cpu_draft_backend_is_kept_when_explicit",
         "test_dflash_verify_input_is_a_linear_chain", "test_amx_prepacked_qkv_cannot_be_sliced",
         "test_dflash_head_logits_dense_path_matches_matmul"),
    ),
    "test/registered/unit/spec/test_deepseek_v4_spec_algorithm_alias.py": (
        "8abde356740ec9a1ae5066c4bb98e8bd84c5341c",
        tuple(f"TestDeepseekV4SpeculativeAlgorithmAlias::{t}" for t in (
            "test_nextn_alias_is_accepted", "test_lowercase_algorithm_is_accepted",
            "test_unset_eagle_topk_is_accepted", "test_supported_algorithms_still_pass",
            "test_topk_guard_stays_live_through_the_alias",
            "test_unsupported_algorithms_are_still_rejected")),
    ),
    "test/registered/unit/spec/test_dflash_backend_resolution.py": (
        "6283bde44381262b893d0141a529e58041a5d54d",
        ("test_trtllm_rejected_for_a_non_causal_sliding_layer",
         "test_trtllm_kept_when_no_layer_is_both_sliding_and_non_causal"),
    ),
    "test/registered/unit/spec/test_dflash_tree_width_args.py": (
        "1aa0e788e76791850073b11fe07ccc2a5bdbf802",
        (*(f"TestDflashChainWidthUnchanged::{t}" for t in (
            "test_num_draft_tokens_alias_still_sets_block_size",
            "test_explicit_block_size_alone_resolves",
            "test_block_size_inferred_from_draft_checkpoint",
            "test_matching_alias_and_explicit_block_size_agree",
            "test_conflicting_alias_and_explicit_block_size_raise",
            "test_unreadable_draft_config_falls_back_to_default_block_size")),
         *(f"TestDflashTreeWidthDerivation::{t}" for t in (
             "test_verify_width_grows_with_tree_width", "test_non_power_of_two_block_size",
             "test_num_steps_stays_one")),
         *(f"TestDflashTreeWidthRejections::{t}" for t in (
             "test_eagle_topk_is_rejected", "test_num_draft_tokens_rejected_with_a_wide_tree",
             "test_zero_tree_width_rejected", "test_tree_width_above_selector_top_k_rejected",
             "test_checkpoint_without_selector_rejected",
             "test_unreadable_draft_config_rejected_with_a_wide_tree")),
         *(f"TestDflashTreeAdmissionChecks::{t}" for t in (
             "test_mask_capable_backends_are_accepted",
             "test_trtllm_mha_rejected_as_silently_wrong", "test_mask_incapable_backend_rejected",
             "test_prefill_and_decode_backend_slots_are_checked", "test_paged_kv_rejected",
             "test_replayssm_spec_rejected", "test_decode_cuda_graph_must_be_disabled",
             "test_disable_cuda_graph_also_satisfies_the_graph_gate",
             "test_simulated_real_draft_tokens_rejected", "test_simulated_fixed_tokens_allowed",
             "test_chain_width_is_exempt_from_every_gate"))),
    ),
    "test/registered/unit/spec/test_draft_model_subfolder.py": (
        "87d5cc1ed0e19d1c78669f80d20e2a9e64e84520",
        tuple(f"TestResolveModelSubfolder::{t}" for t in (
            "test_a_subfolder_resolves_to_the_directory_inside_the_target",
            "test_an_absent_subfolder_returns_the_path_untouched",
            "test_a_missing_subfolder_fails_loudly",
            "test_the_draft_path_is_folded_during_server_args_resolution")),
    ),
    "test/registered/unit/spec/test_draft_per_runner_config.py": (
        "05dc1882282a23c3bbc94ee53aea447b86064908",
        tuple(f"TestDraftPerRunnerConfig::{t}" for t in (
            "test_the_draft_load_format_applies_to_the_draft_runner_only",
            "test_an_unset_draft_load_format_leaves_the_load_config_alone",
            "test_the_draft_format_is_published_while_the_draft_loads",
            "test_the_target_load_never_shifts_the_published_format",
            "test_the_transfer_engine_gate_answers_for_the_runner",
            "test_the_load_config_takes_the_per_runner_format_when_given",
            "test_the_draft_backend_applies_to_the_draft_runner_only",
            "test_an_unresolved_draft_falls_back_to_the_config_field",
            "test_the_target_keeps_its_split_pair",
            "test_the_draft_worker_and_its_factory_get_the_published_config")),
    ),
    "test/registered/unit/spec/test_draft_server_args_copy.py": (
        "9fea3e9bb28676a93f5ba3587c79453dc5027e4b",
        tuple(f"TestDraftServerArgsCopy::{t}" for t in (
            "test_the_draft_context_length_follows_the_target",
            "test_the_target_instance_is_left_alone",
            "test_the_draft_load_format_applies_only_when_configured",
            "test_load_time_overrides_reach_the_draft",
            "test_the_draft_specific_fields_win_over_the_resolved_ones",
            "test_the_built_draft_overrides_carry_the_load_format_too")),
    ),
    "test/registered/unit/spec/test_asd_dspark_settings.py": (
        "37860a9fbfa34f9c2c2188ff710bec8c1008a804",
        ("TestDisabledByDefault::test_empty_env_is_disabled",
         "TestDisabledByDefault::test_enabled_zero_is_disabled",
         *(f"TestCalibrationArm::{t}" for t in (
             "test_trace_flag_selects_calibration", "test_trace_capacity_is_parsed",
             "test_non_integer_capacity_raises", "test_trace_conflicts_with_enabled")),
         *(f"TestEnabledArmValidation::{t}" for t in (
             "test_enabled_requires_exactly_one_config_source",
             "test_config_is_invalid_when_disabled", "test_enabled_must_be_binary",
             "test_trace_flag_must_be_binary", "test_legacy_mode_env_is_rejected")),
         *(f"TestSettingsInvariants::{t}" for t in (
             "test_unknown_mode_is_rejected", "test_enabled_mode_requires_a_config",
             "test_config_is_invalid_outside_enabled_mode",
             "test_trace_capacity_must_be_a_positive_integer")),
         "TestOptionalPackageDegradation::test_missing_package_raises_clear_runtime_error"),
    ),
    "test/registered/unit/spec/test_block_verification_args.py": (
        "25fca893256c7bf6772601fcaf9ccd7810128f25",
        tuple(f"TestBlockVerificationArgs::{t}" for t in (
            "test_supported_algorithms", "test_other_verification_modes_unchanged",
            "test_unsupported_configurations")),
    ),
    "test/registered/unit/spec/test_draft_probs_reduced_vocab.py": (
        "cc360d22f8dfa73e31cd5c0f6ddff73d76f72059",
        tuple(f"TestScatterDraftProbsToTargetVocab::{t}" for t in (
            "test_hot_columns_land_on_their_target_ids", "test_non_hot_mass_is_exactly_zero",
            "test_total_mass_is_preserved", "test_output_is_fp32_for_any_input_dtype",
            "test_no_buffer_reuse_across_calls", "test_width_matches_target_probs_contract",
            "test_chain_rejection_sampling_stays_unbiased")),
    ),
    "test/registered/unit/spec/test_dflash_pd_disaggregation_guard.py": (
        "01d17b2828411c94d29fae963b50196b820178e4",
        tuple(f"TestDflashPdDisaggregationGuard::{t}" for t in (
            "test_rejects_pd_prefill_and_decode_before_model_loading",
            "test_keeps_non_pd_dflash_available")),
    ),
    "test/registered/unit/spec/test_dflash_request_validation.py": (
        "0c23aa807d69546da7b30b008bf1dd1a9fa18241",
        ("test_seeded_greedy_sampling_is_allowed", "test_seeded_non_greedy_sampling_is_allowed",
         "test_seeded_non_greedy_sampling_rejects_unseeded_backend",
         "test_seeded_non_greedy_sampling_is_allowed_in_deterministic_mode",
         "test_seeded_filtered_sampling_rejects_flashinfer_backend_even_in_deterministic_mode",
         "test_unseeded_non_greedy_sampling_is_allowed",
         "test_tokenizer_manager_allows_seeded_non_greedy"),
    ),
    "test/registered/unit/spec/test_dflash_compact_capability.py": (
        "11b25bfd2b7df1a50f3de2478a6d3fc83984853f",
        ("test_registered_architecture_fixtures_are_structurally_eligible",
         "test_non_uniform_or_unbounded_checkpoint_fails_closed",
         "test_runtime_window_requires_a_positive_integer",
         "test_text_config_fields_are_resolved_without_architecture_allowlisting"),
    ),
    "test/registered/unit/spec/test_build_hot_token_lm_head.py": (
        "4f5a4ee1fcae1343fafded3f59c298afaa036f41",
        tuple(f"TestBuildHotTokenLmHead::{t}" for t in (
            "test_tp4_assembly_is_exact_on_every_rank",
            "test_tp1_fast_path_selects_rows_and_wraps_parameters",
            "test_rejects_empty_and_out_of_range_maps",
            "test_rejects_packed_quantized_rows_loudly")),
    ),
    "test/registered/unit/speculative/dvr/test_server_args.py": (
        "a35cc4a60b178318cda39f23838307fd7c11a26e",
        tuple(f"TestDVRServerArgs::{t}" for t in (
            "test_linear_state_capability_is_explicit",
            "test_unregistered_linear_state_config_is_rejected",
            "test_algorithm_defaults_define_one_chain_contract",
            "test_defaults_preserve_scheduler_and_attention_selection",
            "test_generic_unsupported_modes_are_rejected", "test_invalid_chain_shapes_are_rejected",
            "test_eagle_rejects_multi_layer_tree", "test_cuda_graph_contract_and_capacity",
            "test_cuda_graph_keeps_user_decode_coverage",
            "test_gdn_and_plain_attention_prefill_graph_policies",
            "test_gdn_defaults_match_chunk_state_contract",
            "test_gdn_rejects_incompatible_state_lifecycles",
            "test_gdn_radix_requires_resolved_extra_buffer",
            "test_gdn_requires_boundary_exporting_prefill_backend",
            "test_attention_backend_validation_uses_effective_phase_backends",
            "test_radix_disabled_and_plain_attention_keep_upstream_options",
            "test_request_row_headroom_does_not_change_ordinary_spec",
            "test_algorithm_is_normalized_before_generic_spec_handling")),
    ),
    "test/registered/unit/speculative/test_spec_info.py": (
        "0967b48eb97d051fbd1abbd456e5f1cfc648d40e",
        (*(f"TestSpeculativeAlgorithmFromString::{t}" for t in (
            "test_valid_eagle", "test_valid_eagle3", "test_valid_standalone", "test_valid_ngram",
            "test_none_returns_none_variant", "test_case_insensitive",
            "test_invalid_name_raises_value_error", "test_empty_string_raises_value_error")),
         *(f"TestSpeculativeAlgorithmBoolChecks::{t}" for t in (
             "test_is_eagle_true_for_eagle_and_eagle3", "test_is_eagle_false_for_others",
             "test_is_eagle3_only_for_eagle3", "test_is_standalone", "test_is_ngram",
             "test_is_none")),
         *(f"TestSpeculativeAlgorithmSupportsSpecV2::{t}" for t in (
             "test_eagle_supports", "test_eagle3_supports", "test_standalone_supports",
             "test_ngram_does_not_support", "test_none_does_not_support")),
         *(f"TestSpeculativeAlgorithmCreateWorker::{t}" for t in (
             "test_none_raises_assertion", "test_ngram_with_overlap_raises",
             "test_ngram_without_overlap", "test_eagle_with_overlap", "test_eagle_without_overlap",
             "test_eagle_multi_layer_with_overlap", "test_eagle_multi_layer_without_overlap",
             "test_standalone_with_overlap", "test_standalone_without_overlap")),
         *(f"TestSpecInputType::{t}" for t in (
             "test_enum_values_are_distinct", "test_expected_members_exist")),
         *(f"TestSpecInput::{t}" for t in (
             "test_is_draft_input_true_for_eagle_draft",
             "test_is_draft_input_false_for_verify_types",
             "test_is_verify_input_true_for_verify_types", "test_is_verify_input_false_for_draft",
             "test_get_spec_adjusted_global_num_tokens",
             "test_get_spec_adjusted_global_num_tokens_identity"))),
    ),
    "test/registered/unit/speculative/test_spec_utils_logic.py": (
        "d13ab057232bd3cfda492172c790b35a15d3b0c7",
        (*(f"TestSpecNeedHiddenStates::{t}" for t in (
            "test_multi_layer_eagle_enabled_returns_false",
            "test_multi_layer_eagle_disabled_returns_true", "test_none_falls_back_to_global")),
         *(f"TestCreateAcceptLengthFilter::{t}" for t in (
             "test_all_unfinished", "test_none_unfinished", "test_partial_unfinished",
             "test_single_request", "test_zero_accept_length")),
         *(f"TestTraverseTree::{t}" for t in (
             "test_single_node_tree", "test_linear_chain", "test_branching_tree",
             "test_rejected_token_by_vocab_size", "test_rejected_token_by_bitmask",
             "test_terminated_grammar_stops_expansion"))),
    ),
    "test/registered/unit/speculative/test_dsv4_draft_swa_sidecar.py": (
        "211ffd832d7dff72eb5bb2d8487ffc64215c02fa",
        tuple(f"TestDSV4DraftSWASidecar::{t}" for t in (
            "test_scratch_rows_are_outside_committed_sidecar",
            "test_pd_buffer_range_excludes_scratch_pages",
            "test_page_indices_read_direct_scratch_rows")),
    ),
    "test/registered/unit/speculative/test_eagle_info_v2.py": (
        "5e32ad18a7f9a88f31a9f8503f2be864b7512c22",
        ("TestEagleVerifyV2::test_spec_v2_verify_applies_custom_logit_processor",),
    ),
    "test/registered/unit/spec/test_draft_construction_isolation.py": (
        "643c261ba9a0da309f9b7f24c453c40a8adcfe6f",
        (*(f"TestFusionDecisionFlag::{t}" for t in (
            "test_unset_flag_falls_back_to_the_config_intent",
            "test_the_installed_decision_wins_over_the_intent",
            "test_the_intent_short_circuits_the_gate",
            "test_the_draft_build_scope_restores_the_targets_decision",
            "test_a_gateless_draft_inherits_the_active_decision",
            "test_post_build_scopes_do_not_clobber_the_draft_leaf",
            "test_the_build_scope_leaves_the_runner_backend_alone",
            "test_a_record_outside_any_scope_is_target_only",
            "test_initialize_moe_config_seeds_both_leaves", "test_a_forward_time_read_is_refused",
            "test_the_intent_stays_on_the_bag")),
         *(f"TestDraftWeightUpdateRecord::{t}" for t in (
             "test_a_target_update_is_recorded", "test_a_draft_update_keeps_the_targets_record"))),
    ),
    "test/registered/unit/spec/test_dflash_kda.py": (
        "a46f80ca82494918aec5be6aca495f2a493856eb",
        ("test_context_state_parses_and_validates", "test_reset_policy_keeps_block_local_behaviour",
         "test_scan_matches_full_sequence_oracle_cpu", "test_scan_batches_independent_requests_cpu",
         "test_reset_mask_starts_a_fresh_request", "test_worker_groups_rows_per_request",
         "test_draft_model_iterates_scan_layers_only",
         "test_reset_policy_cuda_kernel_matches_reference",
         "test_scan_cuda_state_matches_reference", "test_scan_cuda_kernels_match_cpu_oracle"),
    ),
    "test/registered/unit/spec/test_dspark_draft_window.py": (
        "b30a33dc8feb287d3a7214db56db43e609fe6420",
        tuple(f"TestDSparkDraftWindow::{t}" for t in (
            "test_unset_preserves_native_windows_and_other_backends",
            "test_window_includes_current_token_and_only_changes_draft",
            "test_constructor_configures_window_after_loading_draft",
            "test_explicit_window_rejects_other_backends",
            "test_empty_or_noncausal_layers_fail_without_partial_update",
            "test_checkpoint_window_layout_is_not_silently_overridden",
            "test_window_does_not_rebase_rope_positions",
            "test_nonpositive_windows_fail_in_central_validation",
            "test_dspark_window_is_recognized_by_central_validation")),
    ),
    "test/registered/unit/spec/test_dflash_validate_request.py": (
        "2487eb1f9fadff4840be89d93cd5ca380ecc1576",
        tuple(f"TestValidateDflashRequestGrammarGating::{t}" for t in (
            "test_dspark_admits_every_grammar_kind", "test_dflash_rejects_every_grammar_kind",
            "test_ungrammared_request_admitted_on_both",
            "test_non_grammar_rejections_survive_for_dspark")),
    ),
    "test/registered/unit/spec/test_draft_tp_context.py": (
        "a9c97c9f6973c03e778d1fe1e63a6b9f58a55012",
        tuple(f"TestDraftTpContext::{t}" for t in (
            "test_owning_attention_runs_on_the_attention_tp_group",
            "test_otherwise_the_target_placement_stays")),
    ),
    "test/registered/unit/server_args/test_gdn_mtp_cache_mode.py": (
        "5a59cf6fa77fd72cb9cec1060226b3601b0119aa",
        (*(f"TestValidateGdnMtpCacheMode::{t}" for t in (
            "test_non_none_mode_bypasses_all_checks", "test_none_mode_rejects_replayssm",
            "test_replayssm_guard_wins_over_topk_guard", "test_none_mode_rejects_topk_gt_one",
            "test_none_mode_allows_linear_draft_chain", "test_none_mode_rejects_mamba_extra_buffer",
            "test_extra_buffer_disabled_when_radix_cache_off",
            "test_valid_recover_ssm_config_no_buffer")),
         *(f"TestFiRecoveryKernel::{t}" for t in (
             "test_missing_kernel_dispatcher", "test_dispatcher_without_decode_kernel",
             "test_non_flashinfer_decode_kernel", "test_flashinfer_kernel_with_state_pool",
             "test_flashinfer_kernel_without_state_pool"))),
    ),
    "test/registered/unit/server_args/test_speculative_admission_default.py": (
        "fe25b7c4d9e023d485dbe32d4af97e5ec944a1c5",
        tuple(f"TestSpeculativeAdmissionDefault::{t}" for t in (
            "test_derives_from_decode_graph_ladder", "test_scales_by_attention_dp_degree",
            "test_externally_registered_algorithm_keeps_the_capacity_estimator",
            "test_dp_size_ignored_without_dp_attention", "test_floors_at_the_historical_value",
            "test_disabled_decode_graph_falls_back_to_the_floor",
            "test_explicit_flag_is_never_clobbered",
            "test_earlier_model_specific_writer_is_never_clobbered",
            "test_non_speculative_server_is_left_for_the_capacity_estimator")),
    ),
    "test/registered/unit/configs/test_dspark_quantization_config.py": (
        "5254ec992910bafde1aa6f5be79d90dab7cabde7",
        tuple(f"TestDSparkQuantizationConfig::{t}" for t in (
            "test_unquant_isolates_bf16_draft_without_changing_target",
            "test_omitted_draft_quantization_inherits_modelslim",
            "test_unquant_does_not_force_bfloat16_over_explicit_dtype",
            "test_unquant_does_not_suppress_draft_hf_quantization_metadata",
            "test_unquant_does_not_suppress_standalone_hf_quantization_metadata",
            "test_draft_does_not_autodetect_modelslim_description",
            "test_saved_draft_keeps_bfloat16_and_capture_ids_on_reload",
            "test_glm_model_config_entry_accepts_isolated_dspark_draft")),
    ),
    "test/registered/unit/models/test_deepseek_v4_pipeline_aux_capture.py": (
        "7ac872a11e0704545a019979ffffaa500ae3b093",
        tuple(f"TestDeepseekV4PipelineAuxCapture::{t}" for t in (
            "test_cross_stage_capture_matches_single_stage_and_requested_order",
            "test_configuration_enables_all_stages_and_sizes_only_incoming_captures",
            "test_invalid_layers_fail_on_every_stage",
            "test_missing_upstream_capture_fails_instead_of_returning_partial_features",
            "test_capture_disabled_preserves_pipeline_outputs",
            "test_wrapper_only_passes_assembled_captures_to_last_stage_logits")),
    ),
    "test/registered/unit/models/test_dflash_quantized.py": (
        "cc9eb7aea853406505cdff90629e2f052635aba4",
        tuple(f"TestDFlashQuantizedFc::{t}" for t in (
            "test_pack_quantized_fc_loads", "test_dense_fc_still_loads",
            "test_fc_shape_mismatch_raises")),
    ),
    "test/registered/unit/spec/test_dflash_dspark_verify_lengths.py": (
        "19a054ac9fe4b8cd0cd868091c92e347bbc2986c",
        tuple(f"TestDFlashDSparkVerifyLengths::{t}" for t in (
            "test_ragged_verify_token_buckets_default_to_full_blocks",
            "test_ragged_verify_token_buckets_can_add_fine_grained_tiers",
            "test_ragged_verify_token_buckets_can_skip_tiny_tiers",
            "test_prepare_for_decode_keeps_committed_and_reserved_lengths_separate",
            "test_prepare_for_decode_fails_before_req_to_token_oob",
            "test_dflash_draft_block_uses_prefix_seq_lens_cpu",
            "test_dspark_draft_proposer_passes_prefix_seq_lens_cpu",
            "test_dspark_draft_proposer_derives_cpu_lens_from_gpu_only_batch",
            "test_dspark_target_verify_passes_prefix_seq_lens_cpu_not_reserved",
            "test_dspark_ragged_verify_passes_prefix_seq_lens_cpu",
            "test_dflash_family_dummy_verify_input_uses_caller_width")),
    ),
    "test/registered/unit/spec/test_draft_placement_pp.py": (
        "4ff9e8d7d57f3b9841cbb8f2aeb22f305b7206d2",
        tuple(f"TestDraftPlacementUnderPipelineParallel::{t}" for t in (
            "test_the_last_prefill_stage_hosts_the_draft",
            "test_earlier_prefill_stages_run_target_only",
            "test_only_the_last_of_four_prefill_stages_hosts_the_draft",
            "test_a_single_stage_prefill_role_is_unaffected",
            "test_the_skip_is_scoped_to_the_prefill_role",
            "test_no_speculative_algorithm_still_short_circuits_first")),
    ),
    "test/registered/unit/spec/test_dspark_pp.py": (
        "34b531835e0e147bed7c7e6ec9dc6f56fa902447",
        tuple(f"TestDSparkPPProjection::{t}" for t in (
            "test_capture_ownership_includes_boundary_and_empty_stages",
            "test_projection_matches_full_fc_including_padding_and_chunks",
            "test_missing_capture_or_preceding_context_is_rejected",
            "test_k3_boundary_uses_next_stages_weights",
            "test_only_last_stage_normalizes_and_removes_raw_captures",
            "test_intermediate_stage_returns_before_sampling_and_kv_injection",
            "test_dspark_ring_does_not_publish_eagle_fields",
            "test_original_topology_contacts_matching_rank_on_both_pp_stages",
            "test_ascend_mixed_mla_and_draft_transfers_exact_bytes")),
    ),
    "test/registered/unit/spec/test_dspark_pp_context.py": (
        "0913f81ddee64a17774238d33c1fe6a01a407e21",
        tuple(f"TestDSparkPPContext::{t}" for t in (
            "test_idle_verify_without_ragged_layout_uses_target_verify_mode",
            "test_replicated_commit_writes_only_locally_owned_rows",
            "test_empty_owner_partition_runs_idle_draft_with_gathered_counts",
            "test_replicated_final_idle_lane_defers_draft_to_scheduler",
            "test_replicated_nonfinal_idle_lane_only_forwards_verify_proxy",
            "test_prepare_pp_idle_draft_uses_gathered_owner_counts",
            "test_pp_launch_schedules_idle_draft_after_run_batch",
            "test_pp_relay_schedules_idle_draft_on_first_stage",
            "test_full_projection_fast_path_requires_final_pp_owner",
            "test_empty_draft_model_is_limited_to_non_owner_pp_prefill_ranks",
            "test_lifecycle_only_model_does_not_consume_checkpoint_weights",
            "test_block_fp8_projection_slice_selects_matching_weight_and_scale_blocks",
            "test_partial_projection_uses_prepared_quantized_slice",
            "test_pp_spec_verify_buffers_use_token_axis",
            "test_partial_projection_sum_matches_full_projection",
            "test_deepseek_v4_partial_projection_survives_context_only_pruning",
            "test_deepseek_v4_capture_is_local_to_each_pp_rank",
            "test_non_last_pp_prefill_does_not_require_target_lm_head",
            "test_context_only_rank_does_not_require_draft_attention_backend",
            "test_lifecycle_only_rank_does_not_allocate_draft_pool",
            "test_lifecycle_only_rank_does_not_publish_draft_pool",
            "test_non_last_pp_prefill_uses_minimal_draft_kv_pool",
            "test_last_pp_prefill_keeps_full_draft_kv_pool")),
    ),
    "test/registered/unit/spec/test_dspark_context_boundary.py": (
        "22d40ada1b3f3624b4c9bb652d307b233c4d3177",
        ("test_clamp_verify_lens_context_boundary_cpu",
         "test_clamp_verify_lens_preserves_short_context_verify_window",
         "test_alloc_verify_window_pads_draft_tail_with_last_legal_position_cpu",
         "test_worker_uses_the_boundary_clamp_before_target_verify",
         "test_valid_layout_positions_never_cross_context_boundary",
         "test_remaining_generation_tokens_handles_none_max_new_tokens",
         "test_worker_remaining_generation_none_guard_present"),
    ),
    "test/registered/unit/spec/test_dspark_compact_layout.py": (
        "0c23aa807d69546da7b30b008bf1dd1a9fa18241",
        tuple(f"TestDSparkCompactLayout::{t}" for t in (
            "test_row_index_marks_padded_tail_invalid",
            "test_verify_ids_padded_graph_keeps_anchor_draft_order_and_zero_padding",
            "test_verify_ids_use_draft_tokens_for_non_anchor_slots")),
    ),
    "test/registered/unit/spec/test_dflash_compact_physical_layout.py": (
        "11b25bfd2b7df1a50f3de2478a6d3fc83984853f",
        ("test_tp2_geometry_and_fixed_bytes",
         "test_linear_budget_is_removed_only_after_capability_and_bytes_freeze",
         "test_fixed_bytes_include_one_sentinel_page", "test_fixed_rows_scale_only_with_owner_span",
         "test_fixed_budget_rejects_paged_modulo_aliasing",
         "test_owner_budget_uses_local_attention_dp_and_decode_extra_slots",
         "test_owner_budget_rejects_unresolved_or_uneven_geometry",
         "test_regions_are_bounded_disjoint_and_periodic",
         "test_generation_reuse_fails_closed_and_explicit_rebind_is_counted",
         "test_request_generation_is_monotonic_across_clear",
         "test_decode_request_generation_is_monotonic_across_clear",
         "test_invalid_geometry_fails_closed", "test_window_equal_to_commit_block_has_unique_rows"),
    ),
    "test/registered/unit/spec/test_adaptive_spec_params.py": (
        "090dbccc53c15835eca22016a21b1b22844ff706",
        (*(f"TestAdaptiveStepSlot::{t}" for t in (
            "test_initial_steps_snaps_to_middle_when_missing",
            "test_update_respects_warmup_and_interval",
            "test_empty_batches_do_not_consume_warmup_or_shift_steps",
            "test_update_scales_up_across_candidates",
            "test_update_can_scale_down_across_candidates_in_one_recompute",
            "test_exact_rise_threshold_does_not_upshift",
            "test_exact_drop_threshold_does_downshift",
            "test_hysteresis_can_prevent_premature_upshift",
            "test_down_hysteresis_can_prevent_premature_downshift",
            "test_multi_batch_sequence_can_ramp_up_then_back_down",
            "test_zero_step_mixed_slot_drops_probes_and_rechecks", "test_ceiling_coeff_caps_steps",
            "test_ceiling_disabled_by_default")),
         *(f"TestAdaptiveSpeculativeParams::{t}" for t in (
             "test_default_config_loads", "test_config_file",
             "test_launch_flag_not_injected_into_slots", "test_invalid_config_raises",
             "test_invalid_steps_raises", "test_empty_steps_raises",
             "test_global_hysteresis_inherited", "test_entry_hysteresis_overrides_global")),
         *(f"TestBatchSizeRouting::{t}" for t in (
             "test_routes_to_floor_slot_without_cuda_graph",
             "test_cuda_graph_bs_pads_batch_up_before_routing",
             "test_cuda_graph_bs_for_step_prunes_unreachable_graphs",
             "test_cuda_graph_bs_for_step_returns_none_when_disabled",
             "test_observe_verify_feeds_the_routed_slot",
             "test_stale_inflight_result_does_not_update_new_step")),
         *(f"TestResolveCandidateSteps::{t}" for t in (
             "test_default_config", "test_config_file", "test_unions_and_dedups_across_slots"))),
    ),
    "test/registered/unit/spec/test_dp_prefill_spec.py": (
        "61c189f046529fcbd633e425e4ab210f9b690f91",
        (*(f"TestDPPrefillSpecPlan::{t}" for t in (
            "test_target_preserves_prefill_counts_and_scales_decode",
            "test_prefill_ranks_contribute_zero_draft_tokens",
            "test_uniform_or_idle_steps_are_not_heterogeneous",
            "test_all_phases_disable_graphs_and_preserve_group_representation",
            "test_invalid_metadata_is_rejected",
            "test_gather_resets_phase_and_restores_pure_decode_flags",
            "test_forward_metadata_scales_only_raw_counts")),
         *(f"TestDPPrefillSpecWorker::{t}" for t in (
             "test_prefill_decode_and_idle_ranks_follow_the_same_phase_order",
             "test_local_mixed_batch_is_rejected_before_draft",
             "test_uniform_prefill_retains_existing_dispatch"))),
    ),
    "test/registered/unit/spec/test_dspark_dsa_ragged_graph_gate.py": (
        "0c23aa807d69546da7b30b008bf1dd1a9fa18241",
        ("test_dsa_ragged_graph_allows_full_width_layout",
         "test_dsa_ragged_graph_rejects_non_uniform_compact_layout",
         "test_dsa_ragged_graph_rejects_token_tier_padding",
         "test_non_dsa_backend_keeps_generic_ragged_graph_path"),
    ),
    "test/registered/unit/speculative/test_dspark_verify_seq_lens.py": (
        "c0052d328e9ba7e0304d35840d99fcfe029ce90e",
        ("test_explicit_backend_capability_avoids_double_counting_verify_width",
         "test_ordinary_backend_keeps_preextended_lengths",
         "test_raw_verify_backend_also_owns_length_adjustment"),
    ),
    "test/registered/unit/speculative/test_npu_a5_spec_contracts.py": (
        "364e685fc683142f6400ecba9b80291577349459",
        tuple(f"TestNpuA5SpecContracts::{t}" for t in (
            "test_full_tree_mask_starts_after_prefix_columns",
            "test_cache_location_reference_has_no_max_step",
            "test_topk_two_tree_keeps_child_and_sibling_links",
            "test_target_only_sampling_validation")),
    ),
    "test/registered/unit/speculative/test_pd_eagle_draft_proposal.py": (
        "63d1d0ee05b11fceac482b966c12cf492e737444",
        tuple(f"TestPdEagleDraftProposal::{t}" for t in (
            "test_rejection_sampling_gets_one_hot_proposal_at_drafted_token",
            "test_proposal_matches_target_vocab_width",
            "test_no_proposal_without_rejection_sampling",
            "test_multi_layer_gets_one_hot_proposal_per_chain_step",
            "test_one_hot_proposal_keeps_verify_exact")),
    ),
    "test/registered/unit/speculative/test_base_spec_worker_api.py": (
        "8bf6a666f3bd509ff01029a71bb47468f470f864",
        (*(f"TestBaseSpecWorkerInheritance::{t}" for t in (
            "test_base_spec_worker_inherits_from_base_tp_worker",
            "test_base_spec_worker_implements_abstract_methods",
            "test_base_spec_worker_has_spec_specific_methods")),
         *(f"TestBaseTpWorkerDefaults::{t}" for t in (
             "test_check_and_save_default_to_model_runner",
             "test_check_and_save_preserve_legacy_spec_target_semantics")),
         *(f"TestBaseSpecWorkerDelegation::{t}" for t in (
             "test_model_runner_delegation", "test_spec_v2_attn_backends_delegation",
             "test_device_delegation", "test_tp_rank_delegation", "test_pp_rank_delegation",
             "test_dp_rank_delegation", "test_gpu_id_delegation",
             "test_capacity_properties_delegation", "test_sliding_window_delegation",
             "test_is_hybrid_swa_delegation", "test_get_worker_info_delegation",
             "test_get_pad_input_ids_func_delegation", "test_get_memory_pool_delegation",
             "test_forward_batch_embedding_delegation",
             "test_get_tokens_per_layer_info_delegation", "test_weight_update_delegation",
             "test_lora_adapter_delegation", "test_scheduler_field_delegation",
             "test_check_and_save_api_delegation",
             "test_save_remote_model_supports_draft_runner_list")),
         *(f"TestSpecWorkerUnifiedAPI::{t}" for t in (
             "test_spec_worker_has_required_base_tp_worker_methods",
             "test_spec_worker_has_required_rank_properties",
             "test_spec_worker_can_be_used_where_tp_worker_expected")),
         *(f"TestSpecWorkerOverlapScheduling::{t}" for t in (
             "test_default_spec_v2_attn_backends",
             "test_spec_worker_always_has_spec_v2_attn_backends"))),
    ),
    "test/registered/unit/speculative/test_spec_worker_integration.py": (
        "8bf6a666f3bd509ff01029a71bb47468f470f864",
        (*(f"TestSpecWorkerImplementations::{t}" for t in (
            "test_spec_workers_inherit_from_base_spec_worker",
            "test_spec_workers_inherit_from_base_tp_worker",
            "test_spec_workers_implement_required_methods")),
         *(f"TestSchedulerOverlapAssumptions::{t}" for t in (
             "test_scheduler_can_use_unified_attn_backends_check",
             "test_scheduler_model_worker_abstraction"))),
    ),
    "test/registered/unit/speculative/test_external_corpus_remove.py": (
        "30ec8594e9446ba6978a7bb9dab9ef17fc60c46c",
        tuple(f"TestRemoveDuringPendingLoad::{t}" for t in (
            "test_remove_during_pending_load_rejected", "test_corpus_committed_after_load",
            "test_remove_after_load_succeeds",
            "test_remove_different_corpus_during_load_succeeds")),
    ),
    "test/registered/unit/speculative/test_spec_prepare_swa_eviction.py": (
        "26a2a3981798b8deb97d053d163fa3c48668e03f",
        tuple(f"TestSpecPrepareSwaEviction::{t}" for t in (
            "test_dflash_family_evicts_and_ticks", "test_tick_advances_every_iteration",
            "test_dflash_family_evicts_before_tick", "test_eagle_path_unchanged")),
    ),
    "test/registered/unit/speculative/dvr/test_backends.py": (
        "a35cc4a60b178318cda39f23838307fd7c11a26e",
        ("test_eagle_checks_loaded_draft_layers_not_target_config",
         "test_eagle_rejection_hook_delegates_to_upstream_sampling",
         "test_eagle_proposal_uses_request_seed_and_position",
         "test_eagle_refreshes_graph_seeds_before_draft",
         "test_dflash_draft_input_uses_request_allocation_as_host_bound",
         "test_dflash_cuda_graph_recapture_replaces_only_its_hook",
         "test_draft_weight_reload_uses_runner_weight_updater",
         "test_draft_ipc_reload_preserves_checkpoint_ownership",
         "test_dflash_private_commit_keeps_target_verify_war_snapshot",
         "test_self_draft_copies_each_graph_proposal_before_next_replay",
         "test_self_draft_restores_batch_output_flags",
         "test_self_draft_positions_do_not_alias_sequence_lengths",
         "test_dummy_verify_input_matches_draft_backend"),
    ),
    "test/registered/unit/speculative/dvr/test_sampling.py": (
        "a35cc4a60b178318cda39f23838307fd7c11a26e",
        ("test_proposal_distribution_matches_pytorch_sampler",
         "test_draft_sample_returns_the_filtered_distribution",
         "test_greedy_draft_applies_logits_bias_without_sampling",
         "test_point_proposal_accepts_or_samples_the_target_residual",
         "test_degenerate_residual_samples_target_without_padded_token",
         "test_seeded_proposal_never_selects_zero_probability_padded_vocab",
         "test_all_accepted_path_samples_final_target_row",
         "test_equal_distributions_accept_full_dvr16_chain",
         "test_root_only_mask_does_not_truncate_other_requests",
         "test_seeded_proposal_is_repeatable_and_batch_order_independent",
         "test_seeded_rejection_is_repeatable_and_batch_order_independent"),
    ),
    "test/registered/unit/speculative/dvr/test_state.py": (
        "023d5640192ba1029b7e9f3748cf46ae01b89153",
        ("test_dvr_memory_budget_includes_cuda_graph_dummy_row",
         "test_self_dvr_proposal_budget_matches_chain_capacity",
         "test_eagle_dvr_proposal_budget_is_request_local", "test_radix_ping_pong_capacity",
         "test_sync_dvr_pool_disables_generic_snapshots_and_uses_one_radix_lane",
         "test_target_extend_records_live_boundary",
         "test_new_prefill_boundary_is_copied_to_radix_tracking_slot",
         "test_sync_single_lane_publishes_first_accepted_boundary",
         "test_sync_single_lane_uses_replacement_slot_after_radix_donation",
         "test_warm_partial_extend_needs_no_new_radix_checkpoint",
         "test_no_radix_boundary_crossing_updates_only_live_state",
         "test_radix_boundary_crossing_rotates_publication_lane",
         "test_release_selects_latest_visible_radix_boundary",
         "test_prefill_only_release_keeps_fully_processed_prompt_boundary",
         "test_generated_release_excludes_unprocessed_final_token",
         "test_aligned_generation_keeps_last_visible_boundary",
         "test_overlap_extra_round_preserves_last_visible_boundary"),
    ),
    "test/registered/unit/speculative/dvr/test_worker.py": (
        "a35cc4a60b178318cda39f23838307fd7c11a26e",
        ("test_short_prefix_uses_one_root_verify_sentinel",
         "test_short_prefix_tracks_only_new_prefill_requests",
         "test_short_prefix_mixed_batch_masks_only_seed_row_during_sampling",
         "test_dvr_rejects_dynamic_token_penalties",
         "test_weight_update_recaptures_the_complete_dvr_draft_graph_set",
         "test_cache_release_waits_for_pending_dvr_rollback",
         "test_verify_publishes_lengths_before_commit_and_preserves_war_snapshot"),
    ),
    "test/registered/unit/speculative/dvr/test_cuda_graph_runner.py": (
        "8e06fd786159f8300c6701ce38dd3f984cbf83df",
        ("test_draft_capture_is_fast_and_restores_target_state",
         "test_draft_replay_changes_only_backend_local_metadata",
         "test_draft_policy_cache_clear_uses_upstream_cache_boundaries",
         "test_triton_fast_decode_override_contract", "test_fa3_fast_decode_override_contract",
         "test_backend_resolution_returns_attention_and_linear_state_once",
         "test_backend_resolution_flattens_upstream_multi_step_wrappers",
         "test_hybrid_backend_propagates_cpu_sequence_length_requirement",
         "test_backend_resolution_rejects_distinct_linear_state_adapters",
         "test_backend_validation_accepts_supported_attention_backends",
         "test_draft_custom_allreduce_context_restores_target_policy",
         "test_dvr_graph_layouts_separate_draft_decode_from_target_verify",
         "test_cuda_graph_war_event_skips_provisional_self_draft"),
    ),
    "test/registered/unit/spec/test_dflash_tree_sampling_admission.py": (
        "9013bfec8c432bbd95be2827f9873dc244877efa",
        (*(f"TestDflashTreeRejectsSampling::{t}" for t in (
            "test_sampling_request_rejected_on_a_tree",
            "test_batch_entry_backstops_a_non_greedy_batch",
            "test_an_aborted_sampling_request_does_not_kill_the_worker",
            "test_a_live_sampling_request_beside_an_aborted_one_still_raises")),
         *(f"TestDflashTreeAdmitsWhatItMust::{t}" for t in (
             "test_greedy_request_admitted_on_a_tree",
             "test_sampling_request_admitted_on_the_chain",
             "test_forced_tree_verify_rejects_sampling_at_width_one",
             "test_force_tree_verify_is_ignored_by_dspark"))),
    ),
    "test/registered/unit/spec/test_draft_extend_graph_capability.py": (
        "641d33172881bd3ba96307ba52aa3dca75c44368",
        tuple(f"TestDraftExtendGraphCapability::{t}" for t in (
            "test_flashattention_declares_support",
            "test_support_implies_in_graph_metadata_rebuild", "test_swa_pool_stays_eager")),
    ),
    "test/registered/unit/spec/test_dspark_dequant_probe.py": (
        "f0f0ce4bc1638f14e98725cba36a153dfc9be736",
        tuple(f"TestDequantProbe::{t}" for t in (
            "test_packed_qweight_only_answers_false", "test_plain_bf16_weight_answers_true",
            "test_fp8_with_matching_scale_answers_true", "test_fp8_missing_scale_answers_false",
            "test_fp8_wrong_scale_shape_answers_false",
            "test_fused_probe_routes_packed_to_fallback_without_raising")),
    ),
    "test/registered/unit/spec/test_dflash_verify_mask_policy.py": (
        "585556173bdd6e44a38c3ff2c8a7e684a4ef133b",
        ("TestChainSkipsTheMask::test_backend_with_a_builtin_causal_path_skips_the_mask",
         "TestChainSkipsTheMask::test_backend_without_one_still_gets_the_mask",
         "TestTreeAlwaysTakesTheMask::test_skip_set_does_not_apply_to_a_tree",
         "TestTreeAlwaysTakesTheMask::test_tree_width_one_is_still_a_chain",
         "TestCompositeBackendIsUnwrapped::test_hybrid_target_resolves_to_its_full_attention_child",
         "TestTreeKeepsTheSelectorEager::test_tree_verify_refuses_to_fold_the_draft_head",
         "TestTreeKeepsTheSelectorEager::test_chain_still_reaches_the_folding_checks"),
    ),
    "test/registered/unit/spec/test_dflash_verify_budget.py": (
        "8e465ccbf277d16793e3bc54253106ed5a6e5a72",
        tuple(f"TestDFlashVerifyBudget::{t}" for t in (
            "test_target_verify_width_uses_independent_budget",
            "test_unset_budget_preserves_full_block",
            "test_triton_verify_metadata_uses_runtime_width")),
    ),
    "test/registered/unit/spec/test_draft_decode_window.py": (
        "0d98ba315187dc9b476a93ff17fd4f210e2974c4",
        (*(f"TestDraftDecodeWindowKernel::{t}" for t in (
            "test_window_zero_is_full_kv", "test_windowed_kv_indptr_lengths",
            "test_windowed_content_sink_plus_recent", "test_tree_topk_layout",
            "test_tree_topk_paged")),
         *(f"TestResolveDraftDecodeWindow::{t}" for t in (
             "test_unset_is_full_attention", "test_window_only", "test_window_and_sink",
             "test_declared_values_win_over_the_raw_fields",
             "test_native_sliding_window_draft_opts_out",
             "test_native_window_equal_to_flag_is_quiet",
             "test_no_native_window_still_windows")),
         *(f"TestDraftDecodeWindowBackendWiring::{t}" for t in (
             "test_triton_backend_wires_window_sink",
             "test_flashinfer_backend_wires_window_sink"))),
    ),
    "test/registered/unit/spec/test_spec_registry.py": (
        "0465eebc1445c537526cb6e16215c0d3791e8f8f",
        (*(f"TestFromString::{t}" for t in (
            "test_none_input_returns_none_member", "test_builtin_name_returns_enum",
            "test_builtin_name_is_case_insensitive", "test_unknown_name_raises",
            "test_registered_plugin_returns_custom_spec",
            "test_registered_plugin_lookup_is_case_insensitive")),
         *(f"TestRegister::{t}" for t in (
             "test_register_returns_factory_unchanged",
             "test_two_distinct_registrations_are_independent", "test_duplicate_name_raises",
             "test_reserved_name_raises", "test_register_is_case_insensitive_on_collision")),
         *(f"TestCustomSpecAlgoInterface::{t}" for t in (
             "test_is_predicates_all_false_except_speculative",
             "test_supports_spec_v2_follows_supports_overlap", "test_create_worker_calls_factory",
             "test_create_worker_raises_on_overlap_mismatch")),
         "TestValidatorHook::test_validator_invocation_is_caller_driven",
         "TestSubclassOverride::test_subclass_overrides_is_eagle",
         "TestSubclassOverride::test_subclass_overrides_create_worker",
         "TestCrossTypeIdentity::test_plugin_not_equal_to_builtin"),
    ),
    "test/registered/unit/spec/test_eagle_utils.py": (
        "1a80ca6dfe858c280c2c132e5c06573a96190891",
        ("test_get_draft_input_from_target_hidden_dim_matches_old_oss_draft_extend_rules",
         "test_get_draft_input_from_target_hidden_dim_matches_oss_eagle3_projection_width",
         "test_get_draft_recurrent_hidden_state_spec"),
    ),
    "test/registered/unit/spec/test_dspark_shared_modules.py": (
        "e4a6dc8f47ce30d3ac9afee97729b2c1d4cfbf7c",
        tuple(f"TestDSparkSharedModules::{t}" for t in (
            "test_pp1_borrows_custom_modules_without_copy", "test_tp2_pp2_native_modules",
            "test_pp4_intermediate_stages")),
    ),
    "test/registered/unit/spec/test_dflash_confidence.py": (
        "3bf58222ae41029b60c90525c022a4abdfa064e6",
        tuple(f"TestDFlashConfidence::{t}" for t in (
            "test_ragged_verify_input_advertises_nonuniform_width",
            "test_uniform_graph_rejects_ragged_dflash_input",
            "test_confidence_relay_follows_dflash_runtime_config_not_ragged_env",
            "test_selector_confidence_uses_the_selected_path",
            "test_compact_graph_coverage_rejects_schedulable_bucket_miss",
            "test_dflash_confidence_uses_dense_cuda_graph_tiers",
            "test_other_speculative_algorithms_keep_generic_cuda_graph_tiers",
            "test_dflash_confidence_rejects_return_logprob_like_dspark",
            "test_graph_tier_alignment_fills_existing_padding_with_real_tokens",
            "test_graph_tier_alignment_is_opt_in",
            "test_graph_accept_is_armed_only_for_noop_greedy_adjustments",
            "test_verify_prefix_contains_the_bonus_logit_for_every_request",
            "test_anchor_only_verify_uses_anchor_prediction_as_bonus",
            "test_observer_reports_confidence_and_defer_metrics",
            "test_sps_budget_selects_the_measured_throughput_knee",
            "test_sps_budget_allows_anchor_only_floor",
            "test_sps_budget_is_optional_positions_above_the_floor",
            "test_sps_budget_filters_near_zero_survival_candidates",
            "test_current_confidence_gpu_scheduler_consumes_lagged_extra_budget",
            "test_fixed_verify_width_scales_with_batch_size",
            "test_raw_commit_inject_layout_matches_dense_verify_slots",
            "test_dflash_confidence_has_dflash_family_capabilities",
            "test_dflash_confidence_does_not_request_overlap_hidden_states",
            "test_observer_records_lagged_budget_without_confidence_copy")),
    ),
    "test/registered/unit/spec/test_dflash_grouped_conv.py": (
        "f9b3c182f3185171935b0332bf5524d8a3e4ef05",
        tuple(f"TestDFlashGroupedConv::{t}" for t in (
            "test_nonfinite_rows_stay_in_their_request",
            "test_compiled_nonfinite_rows_stay_in_their_request",
            "test_module_prepare_and_finish_do_not_leak",
            "test_compiled_module_prepare_and_finish_do_not_leak",
            "test_finite_output_unchanged")),
    ),
    "test/registered/unit/spec/test_dflash_extra_buffer_lazy.py": (
        "199614ee743d0dd65722d6362d26f88c795a91b4",
        (*(f"TestValidateMambaExtraBufferLazyDflash::{t}" for t in (
            "test_dflash_with_extra_buffer_lazy_is_accepted", "test_dspark_still_accepted",
            "test_pd_disaggregation_still_rejected", "test_track_interval_must_cover_draft_tokens",
            "test_the_chunk_size_is_not_read_before_the_page_size_resolves")),
         "TestDflashVerifyRunsMambaTrackHook::test_hook_runs_before_init_new_on_verify",
         "TestDflashVerifyRunsMambaTrackHook::test_idle_batch_skips_hook"),
    ),
    "test/registered/unit/spec/test_base_spec_worker_weight_update.py": (
        "32b3f419ca8805390268509bf800d1e3ec7cf842",
        tuple(f"TestBaseSpecWorkerWeightUpdate::{t}" for t in (
            "test_recapture_updates_single_runner_before_coordinator_capture",
            "test_recapture_updates_all_runners_before_one_coordinator_capture",
            "test_without_recapture_updates_all_runners_without_capture",
            "test_failure_stops_before_later_runner_and_capture")),
    ),
    "test/registered/unit/spec/test_dspark_acceptance_policy.py": (
        "bfa2670232263470697c13166db85c64cc3ad0c9",
        ("TestPolicyBaseClass::test_lifecycle_hooks_are_default_noops",
         "TestPolicyBaseClass::test_accept_is_abstract",
         "TestWorkerHook::test_default_hook_returns_none",
         "TestWorkerHook::test_note_request_finished_forwards_to_policy",
         *(f"TestExecutorSeam::{t}" for t in (
             "test_folded_accept_rejects_policy",
             "test_folded_accept_without_policy_reads_epilogue",
             "test_policy_receives_native_contract_arguments",
             "test_policy_without_req_pool_indices_raises", "test_no_policy_calls_native_accept",
             "test_policy_can_delegate_to_native"))),
    ),
    "test/registered/unit/spec/test_dflash_mamba_checkpoint_boundary.py": (
        "98005809e3f228a66fa03ae33d104b2eab91c2a3",
        ("TestDFlashMambaCheckpointBoundary::test_tracks_checkpoint_crossed_by_committed_tokens",),
    ),
    "test/registered/unit/spec/test_dflash_dp_embedding.py": (
        "62790ca5709e4bcdd85c76e92ad16aabab714e44",
        ("test_replicated_embedding_reuses_storage_without_collective",
         "test_sharded_embedding_uses_own_group_and_preserves_added_vocab",
         "test_replicated_added_vocab_removes_internal_padding",
         "test_non_dp_embedding_keeps_existing_lookup"),
    ),
    "test/registered/unit/spec/test_dflash_dp_buffers.py": (
        "f0e1e53bab9a02ce1ba42ed6f8463ca81e391e33",
        ("test_draft_token_count_reuses_storage_and_updates_only_for_batch_changes",
         "test_draft_buffers_do_not_add_a_token_count_when_disabled"),
    ),
    "test/registered/unit/spec/test_dspark_expert_distribution.py": (
        "795b9d5d8e7fb9be5e7865cb2849acf4fb5b6899",
        tuple(f"TestDSparkExpertDistribution::{t}" for t in (
            "test_draft_preserves_target_counts_and_output",
            "test_draft_restores_recorder_after_exception",
            "test_draft_preserves_enclosing_disabled_region")),
    ),
    "test/registered/unit/spec/test_accepted_path_state_capture.py": (
        "669078414dc4cfc7f6af8bda4c202c864bed1d14",
        tuple(f"TestAcceptedPathStateCapture::{t}" for t in (
            "test_committed_slots_hold_the_accepted_path",
            "test_without_compaction_committed_slots_hold_the_front_chain",
            "test_front_chain_acceptance_is_an_identity")),
    ),
    "test/registered/unit/spec/test_aiter_greedy_sample_draft_contract.py": (
        "abfb11ad968844d6b75a18468c65ad29384f8e85",
        tuple(f"TestAiterGreedySampleDraftContract::{t}" for t in (
            "test_matches_softmax_slow_path", "test_index_shape_and_dtype_match_torch_argmax",
            "test_empty_batch", "test_tie_break_is_stable_across_batch_shapes",
            "test_tie_break_is_stable_across_repeats", "test_tie_break_picks_lowest_index",
            "test_correct_immediately_above_vocab_floor")),
    ),
    "test/registered/unit/spec/test_cache_locs_fallback.py": (
        "f617cf19863ba27125062347950e66e710fe7db0",
        ("test_assign_extend_cache_locs_fallback_preserves_variable_ranges",),
    ),
    "test/registered/unit/spec/test_adaptive_runtime_state.py": (
        "015c872628e328b530880bcf95ae91222604b225",
        tuple(f"TestAdaptiveController::{t}" for t in (
            "test_injected_policy_builds_pruned_states_and_applies_initial_state",
            "test_registered_initial_state_is_reused", "test_batch_activation_is_idempotent",
            "test_verify_feedback_can_activate_a_state", "test_missing_state_fails_loud")),
    ),
    "test/registered/unit/spec/test_chain_speculative_sampling.py": (
        "7b331272d9523b143cb180f761b2aa474ba79fc0",
        tuple(f"TestChainSpeculativeSamplingTorch::{t}" for t in (
            "test_all_accepted_one_hot_final", "test_reject_residual_point_mass_bonus",
            "test_nan_draft_is_zeroed_in_residual", "test_mixed_batch_matches_single_row_runs",
            "test_first_token_distribution_matches_target", "test_triton_compat_helpers",
            "test_cuda_parity_with_triton_kernel")),
    ),
    "test/registered/unit/spec/test_cuda_event_ring.py": (
        "30ec40d8dbda90c24383333809097fc222b407f9",
        ("TestWarMailboxRingWiring::test_publishers_use_the_mailbox_ring",
         *(f"TestReusableEventRing::{t}" for t in (
             "test_lazy_fixed_allocation_and_round_robin",
             "test_consecutive_next_distinct_within_depth", "test_depth_validation",
             "test_cuda_record_wait_across_reuse"))),
    ),
    "test/registered/unit/spec/test_dflash_tree.py": (
        "585556173bdd6e44a38c3ff2c8a7e684a4ef133b",
        ("test_width_one_closure_is_lower_triangular",
         "test_closure_row_counts_give_the_layer_index",
         "test_closure_handles_dead_ends_and_uneven_fanout",
         "test_row_offsets_and_layout_agree_on_the_total_size",
         "test_width_one_mask_row_is_exactly_causal",
         "test_links_derived_from_the_mask_recover_the_parents",
         "test_kernel_meta_matches_the_host_derivation",
         "test_tree_meta_rejects_narrow_prefix_lens",
         "test_mask_kernel_rewrites_every_live_cell"),
    ),
    "test/registered/unit/spec/test_dflash_domino_kernel.py": (
        "6c89b5ca37dd33febe25f84ae003ee7baba738fa",
        ("TestDominoFusedScoringKernel::test_matches_dense_reference",
         "TestDominoFusedScoringKernel::test_mutation_changes_argmax"),
    ),
    "test/registered/unit/spec/test_dflash_tree_verify.py": (
        "1cd27004b0ee74ad482c0a6fa118ccb569d7daaf",
        ("test_width_one_tree_accept_matches_the_chain",
         "test_width_one_accept_index_is_the_identity_chain",
         "test_predict_stays_in_vocabulary_where_accept_index_pads",
         "test_mamba_step_index_follows_the_node_not_the_depth",
         "test_commit_layout_gathers_source_rows_and_chain_positions",
         "test_tree_meta_links_match_the_beam_parents"),
    ),
    "test/registered/unit/spec/test_draft_sampling.py": (
        "0b79ccf242ea60667ef3533d2fe4e35ad8dd13aa",
        (*(f"TestDraftSampling::{t}" for t in (
            "test_inherit_and_override_without_mutating_target",
            "test_target_greedy_rows_stay_greedy_with_overrides",
            "test_disabled_cutoffs_keep_full_model_support", "test_top_k_precedes_top_p",
            "test_candidate_support_and_request_broadcast",
            "test_greedy_rows_propose_the_first_argmax_with_point_mass_q",
            "test_sample_frequencies_match_returned_truncated_q",
            "test_rejection_correction_preserves_target_with_sparse_or_greedy_q",
            "test_graph_staging_writes_in_place",
            "test_single_graph_retains_final_q_for_each_step", "test_empty_batch")),
         "TestDraftSamplingArgs::test_default_and_cli",
         "TestDraftSamplingArgs::test_invalid_cli_values"),
    ),
    "test/registered/unit/spec/test_dflash_logits.py": (
        "01f461213cead6b74109b6d92147f912f7bc9ec1",
        ("test_dflash_unary_logit_transform",
         "test_selector_greedy_row_walk_is_deterministic_in_a_mixed_batch",
         "test_selector_rejects_a_quantized_target_lm_head",
         "test_selector_projects_a_quantized_target_lm_head_through_its_quant_method",
         "test_selector_gathers_global_candidates_across_vocab_shards",
         "test_worker_folds_a_gate_admitted_quantized_selector_head",
         "test_disabled_selector_sampling_forces_greedy_draft",
         "test_selector_accept_uses_greedy_fallback_without_staged_sample",
         "test_grouped_conv_supports_runtime_block_sizes"),
    ),
    "test/registered/unit/spec/test_dflash_greedy_draft_tp_sync.py": (
        "ecdf959364d46e0f1318f18d5aedf3c70aee0482",
        tuple(f"TestDflashGreedyDraftTpSync::{t}" for t in (
            "test_greedy_selector_draft_is_synchronized",
            "test_sampled_batch_without_selector_is_synchronized",
            "test_sampled_domino_draft_is_synchronized",
            "test_sampled_selector_draft_is_not_resynchronized",
            "test_mixed_selector_batch_syncs_only_greedy_rows",
            "test_selector_sampling_disabled_syncs_whole_tensor")),
    ),
    "test/registered/unit/spec/test_dflash_grammar_mask.py": (
        "1aeb131f75289384a12e7e9ab7a1f9f6468be1ab",
        tuple(f"TestDFlashGrammarMask::{t}" for t in (
            "test_validate_dflash_request_allows_greedy_grammar",
            "test_validate_dflash_request_rejects_non_greedy_grammar",
            "test_returns_none_without_grammar", "test_advances_and_rolls_back_for_linear_chain",
            "test_verify_rejects_non_greedy_grammar")),
    ),
    "test/registered/unit/spec/test_dflash_mamba_commit.py": (
        "0e4797aa464a59a0b3e737fede5633a7721d55c9",
        tuple(f"TestDFlashMambaCommit::{t}" for t in (
            "test_commit_steps_cover_real_dflash_boundary_cases",
            "test_commit_steps_use_post_verify_length",
            "test_worker_commits_active_and_radix_track_states",
            "test_worker_without_extra_buffer_still_commits_active_state")),
    ),
    "test/registered/unit/spec/test_dflash_penalties.py": (
        "be7a1ff3b56f4e2bdbc8edaf6111af85aa77be44",
        (*(f"TestDFlashVerifyPenalties::{t}" for t in (
            "test_accumulated_penalties_reach_every_row_of_the_block",
            "test_scaling_penalty_is_kept_under_a_grammar_mask",
            "test_live_orchestrator_is_used_without_accumulated_buffers",
            "test_dspark_fast_path_respects_accumulated_penalties")),
         "TestCommittedOutputTokens::test_each_committed_token_is_fed_once",
         "TestCommittedOutputTokens::test_dflash_decode_prep_feeds_committed_tokens_when_penalized"),
    ),
    "test/registered/unit/spec/test_dflash_block_penalties.py": (
        "ec31c5721e90b2f4c5c9556f19f4c2304f6904c5",
        ("test_block_matches_token_by_token_all_penalties",
         "test_position_zero_matches_broadcast_path",
         "test_anchor_unresolved_fold_matches_prefed_anchor",
         "test_anchor_unresolved_fold_masked_rows", "test_anchor_unresolved_rows_mismatch_raises",
         "test_noop_predicate_sees_block_penalty_state", "test_single_token_block_uses_block_path",
         "test_no_penalty_path_is_byte_identical",
         "test_block_path_still_applies_vocab_mask_and_logit_bias",
         "test_strided_wrapper_forwards_candidates_into_block_path",
         "test_forward_copy_snapshot_is_isolated", "test_candidates_shape_mismatch_raises",
         "test_penalty_state_rows_mismatch_raises"),
    ),
    "test/registered/unit/spec/test_dflash_verify_grammar_mask.py": (
        "9e721e0b51df323f464d07dc218b588cf7460b5d",
        tuple(f"TestDFlashVerifyGrammarMask::{t}" for t in (
            "test_stale_mask_does_not_poison_unconstrained_verify",
            "test_current_verify_mask_is_applied_per_position",
            "test_live_penalties_and_logit_bias_survive_stale_mask",
            "test_logit_bias_without_live_penalizer_survives_stale_mask",
            "test_precomputed_penalties_survive_stale_mask")),
    ),
    "test/registered/unit/spec/test_dflash_verify_logits_adjustments.py": (
        "2aa83bba1df0bc31385409b4150ba846c88c29e2",
        tuple(f"TestDFlashVerifyLogitsAdjustments::{t}" for t in (
            "test_broadcasts_additive_penalties_over_verify_block",
            "test_additive_penalties_disable_noop_fast_path",
            "test_missing_additive_penalties_keep_noop_fast_path")),
    ),
    "test/registered/unit/spec/test_dflash_verify_target_probs.py": (
        "0c23aa807d69546da7b30b008bf1dd1a9fa18241",
        tuple(f"TestDFlashVerifyTargetProbs::{t}" for t in (
            "test_reference_chain_accept_handles_reject_and_cutoff",
            "test_seeded_chain_uniform_samples_are_position_deterministic",
            "test_seeded_chain_uniform_requires_positions",
            "test_seeded_dflash_uniforms_validate_positions_shape",
            "test_seeded_draft_sampling_is_position_deterministic",
            "test_min_p_filters_and_renormalizes_target_probs",
            "test_sparse_top_k_path_applies_min_p_after_top_k_renormalization",
            "test_dense_path_applies_top_k_top_p_then_min_p",
            "test_dense_path_uses_torch_fallback_when_renorm_kernels_unavailable",
            "test_sparse_and_dense_paths_match_heterogeneous_sampling_params")),
    ),
    "test/registered/unit/spec/test_dflash_verify_penalties.py": (
        "5a94ed98619c9210d090048508153bd35f9d81e1",
        (*(f"TestDFlashVerifyAdditivePenalties::{t}" for t in (
            "test_overlap_additive_penalties_are_applied",
            "test_noop_gate_detects_additive_penalties", "test_noop_gate_true_when_clean",
            "test_sampling_batch_info_field_contract")),
         *(f"TestDFlashMinNewTokensCounting::{t}" for t in (
             "test_ragged_accept_lengths_are_counted_exactly",
             "test_mask_lifts_exactly_at_min_new_tokens",
             "test_prefill_first_token_is_counted_once",
             "test_grammar_truncated_run_counts_only_retained_tokens",
             "test_uncommitted_request_is_not_counted",
             "test_other_penalty_ledgers_are_untouched",
             "test_hot_path_skipped_when_only_other_penalizers_are_required",
             "test_hot_path_runs_when_min_new_tokens_is_active",
             "test_generic_cumulate_still_advances_by_one",
             "test_no_counting_when_no_penalizer_is_required"))),
    ),
    "test/registered/unit/spec/test_dflash_penalizer_cumulate.py": (
        "00731f0bc9fa81c39802754fb4b62e9cce967582",
        tuple(f"TestDFlashPenalizerCumulate::{t}" for t in (
            "test_multi_token_cumulate_updates_all_penalties_and_masks_padding",
            "test_multi_token_matches_single_token_cumulate",
            "test_schedule_batch_penalty_cursor_feeds_only_new_tokens",
            "test_verify_adjustments_apply_repetition_to_logits",
            "test_spec_prepare_for_decode_gates_penalty_cumulate")),
    ),
    "test/registered/unit/spec/test_custom_mask_no_leak.py": (
        "d95bc6143272f5245c5c773d13923d59f9308d7b",
        ("test_eagle_mask_exact_size", "test_eagle_mask_no_unbounded_growth",
         "test_dflash_mask_exact_size", "test_dflash_mask_no_unbounded_growth"),
    ),
    "test/registered/unit/spec/test_deterministic_fast_sample.py": (
        "3b0d674db8752459ebbef3a793bf530fadf0f363",
        tuple(f"TestDeterministicFastSample::{t}" for t in (
            "test_replay_is_bitwise_reproducible", "test_cuda_graph_replay_and_input_updates",
            "test_batch_permutation_and_split_are_invariant",
            "test_seed_position_and_draft_step_select_separate_streams",
            "test_seeded_samples_follow_categorical_distribution",
            "test_hash_endpoints_produce_finite_ordering",
            "test_requires_matching_seed_position_rows")),
    ),
    "test/registered/unit/spec/test_draft_bcg_input_embeds.py": (
        "ce0180fc36a58470b03187833c62b35a6a83d01e",
        ("test_buffers_default_follows_multimodal",
         "test_buffers_text_only_draft_opts_into_input_embeds",
         "test_registry_defaults_to_multimodal",
         "test_registry_text_only_draft_registers_input_embeds",
         "test_registry_mm_can_skip_input_embeds_slot"),
    ),
    "test/registered/unit/spec/test_draft_extend_stream_order.py": (
        "b27f9a1a458494d213bf692720d9990be816978b",
        tuple(f"TestDraftExtendStreamOrder::{t}" for t in (
            "test_single_layer_plan", "test_single_layer_no_plan",
            "test_multi_layer_without_boundary_event", "test_multi_layer_boundary_event",
            "test_multi_layer_staged_boundary", "test_multi_layer_staged_without_boundary",
            "test_multi_layer_no_plan")),
    ),
    "test/registered/unit/spec/test_draft_tail_buffer.py": (
        "015ce614d45c84390c4b5e8916439c53bc7abb3b",
        (*(f"TestDraftTailBufferBasics::{t}" for t in (
            "test_open_tracks_committed_len_and_can_accept", "test_append_and_snapshot",
            "test_duplicate_is_idempotent", "test_conflicting_token_raises_with_batch_context",
            "test_already_committed_output_ignored", "test_unknown_request_output_dropped",
            "test_wrong_verifier_rank_raises", "test_wrong_drafter_rank_raises",
            "test_base_ahead_of_state_raises", "test_skips_buffered_tail_raises",
            "test_close_removes_state")),
         *(f"TestDraftTailBufferCommitReconciliation::{t}" for t in (
             "test_full_match_commit_advances_prefix",
             "test_partial_commit_then_pending_expected_match",
             "test_commit_mismatch_advances_can_accept_and_rejects_stale",
             "test_stale_gap_after_can_accept_lags_committed", "test_noncontiguous_commit_raises",
             "test_commit_for_unknown_request_is_noop")),
         *(f"TestDraftTailBufferControlBatchAndSnapshots::{t}" for t in (
             "test_apply_control_batch_open_commit_close_in_order",
             "test_snapshot_allow_partial_returns_immediately",
             "test_snapshot_no_partial_returns_when_tokens_present",
             "test_include_raw_tail_tokens")),
         *(f"TestDraftTailBufferWaiting::{t}" for t in (
             "test_waiter_wakes_when_tokens_arrive", "test_close_unblocks_waiter_with_error",
             "test_waiter_blocks_on_pending_then_wakes")),
         *(f"TestDraftTailBufferPendingEdgeCases::{t}" for t in (
             "test_second_commit_while_pending_extends_queue",
             "test_already_committed_in_pending_path",
             "test_pending_expected_gap_for_base_or_pos_ahead",
             "test_tail_nonempty_while_pending_commit_raises")),
         "TestDraftTailBufferMultiRequest::test_interleaved_stream_batch_tracks_each_request",
         "TestDraftTailBufferMultiRequest::test_control_batch_commits_multiple_requests",
         "TestDraftTailBufferLifecycle::test_full_request_trajectory"),
    ),
    "test/registered/unit/spec/test_dspark_c128_cleanup.py": (
        "21c83c0745385aeed975af12b3c203f3e46424da",
        tuple(f"TestDSparkC128Cleanup::{t}" for t in (
            "test_cleanup_uses_final_committed_lengths", "test_cleanup_is_optional_and_skips_idle",
            "test_final_war_event_follows_prefill_or_decode")),
    ),
    "test/registered/unit/spec/test_dspark_draft_sampling_mask.py": (
        "8385945ca443194b03b9a988660ee61017aebf7d",
        ("TestDsparkDraftSamplingMask::test_deterministic_draft_preserves_stochastic_target_support",),
    ),
    "test/registered/unit/spec/test_dspark_grammar_mask.py": (
        "7fd4eb220a7f597b5f669573c3b68f3e2cd6fe52",
        ("TestDSparkGrammarMask::test_linear_tree_mask_rows_match_verify_logits",),
    ),
    "test/registered/unit/spec/test_dspark_kv_inject_hybrid_pool.py": (
        "fd200a5be944529d66c3c0551c35564d0d83a2ce",
        ("TestDSparkInjectHybridPool::test_hybrid_pool_gets_translated_swa_loc",
         "TestDSparkInjectHybridPool::test_plain_pool_gets_no_swa_loc"),
    ),
    "test/registered/unit/spec/test_dspark_pd_queue.py": (
        "c8a9e67e18a5c8c6cbe45e80a5cf208aa88f7305",
        ("TestDSparkPDQueues::test_bootstrap_respects_the_smallest_metadata_capacity",
         "TestDSparkPDQueues::test_four_rank_readiness_capacity_and_failures"),
    ),
    "test/registered/unit/spec/test_dspark_draft_sampling.py": (
        "0b79ccf242ea60667ef3533d2fe4e35ad8dd13aa",
        tuple(f"TestDsparkDraftSampling::{t}" for t in (
            "test_eager_saves_corrected_truncated_distribution_for_both_samplers",
            "test_folded_sampler_retains_q_in_graph_buffers",
            "test_folded_memory_budget_includes_saved_probabilities",
            "test_folded_cuda_graph_replays_changed_sampling_policy",
            "test_proposer_passes_folded_q_to_verification",
            "test_mixed_verification_uses_saved_q")),
    ),
    "test/registered/unit/spec/test_decoupled_spec_hook.py": (
        "2a71e58b194dadd93f4c3586f9a9f744c8410f70",
        (*(f"TestDecoupledSpecHookEnforce::{t}" for t in (
            "test_missing_bind_endpoint_raises", "test_missing_connect_endpoints_raises",
            "test_missing_rank_raises", "test_negative_rank_raises", "test_dp_size_gt_1_raises",
            "test_dp_attention_raises", "test_page_size_gt_1_raises",
            "test_page_size_none_is_allowed", "test_missing_speculative_algorithm_raises",
            "test_missing_num_steps_raises", "test_topk_gt_1_raises")),
         *(f"TestDecoupledSpecHookNormalizeAndForce::{t}" for t in (
             "test_topk_none_normalized_to_one",
             "test_num_draft_tokens_adjusted_to_num_steps_plus_one",
             "test_max_running_requests_defaulted",
             "test_verifier_forces_overlap_and_mixed_chunk_off",
             "test_verifier_does_not_disable_radix_cache",
             "test_verifier_does_not_force_mamba_no_buffer",
             "test_drafter_forces_overlap_mixed_chunk_and_radix_off",
             "test_drafter_forces_mamba_no_buffer", "test_valid_config_is_idempotent"))),
    ),
    "test/registered/unit/spec/test_dspark_execution_phases.py": (
        "b5fc1c7c4193253baa821d5d9afc0fdbf367004c",
        tuple(f"TestDSparkExecutionPhases::{t}" for t in (
            "test_stage_handoff_precedes_acceptance_and_local_slot_commit",
            "test_logits_capture_precedes_adjustment_and_grammar_acceptance",
            "test_stale_repeated_and_out_of_order_operations_are_rejected",
            "test_failed_forward_or_commit_prevents_buffer_reuse",
            "test_failed_decode_preparation_prevents_buffer_reuse",
            "test_prefill_waits_for_final_sample_and_owns_its_result",
            "test_failed_prefill_blocks_reuse_and_second_commit")),
    ),
    "test/registered/unit/spec/test_dspark_pdmux.py": (
        "13caf792cc30b24b0518a3b9b221ccc88924f785",
        tuple(f"TestDSparkPDMux::{t}" for t in (
            "test_scheduler_pp_proxy_argument_is_accepted_for_decode",
            "test_scheduler_pp_proxy_argument_reaches_target_prefill",
            "test_layer_split_rejects_target_without_aux_capture_support",
            "test_split_prefill_finalizes_only_after_last_segment",
            "test_split_prefill_idle_rank_skips_finalization",
            "test_stream_switch_updates_target_and_draft_runners")),
    ),
    "test/registered/unit/spec/test_dp_spec_prefill_coordination.py": (
        "24c93754fa69a1b88ed7a48df122b103b5e52fc9",
        (*(f"TestDPSpecPrefillCoordinationPlan::{t}" for t in (
            "test_target_preserves_prefill_counts_and_scales_decode",
            "test_prefill_ranks_contribute_zero_draft_tokens",
            "test_uniform_or_idle_steps_are_not_heterogeneous",
            "test_all_phases_disable_graphs_and_preserve_group_representation",
            "test_local_draft_restores_target_counts", "test_invalid_phase_is_rejected",
            "test_gather_resets_coordination_and_restores_pure_decode_flags",
            "test_forward_metadata_scales_only_raw_counts",
            "test_coordinated_padding_preserves_local_forward_modes")),
         *(f"TestDPSpecPrefillCoordinationWorker::{t}" for t in (
             "test_prefill_decode_and_idle_ranks_follow_the_same_phase_order",
             "test_disabled_feature_retains_existing_dispatch_without_phase_metadata",
             "test_uniform_prefill_retains_existing_dispatch"))),
    ),
    "test/registered/unit/spec/test_dspark_dp_spec_prefill_coordination.py": (
        "0efbdc7da2cd5b39c91456b61a9db231020a1cc8",
        tuple(f"TestDSparkDPSpecPrefillCoordination::{t}" for t in (
            "test_draft_counts_are_not_scaled_twice",
            "test_prefill_joins_draft_before_target_with_local_counts_preserved",
            "test_dispatch_keeps_uniform_and_disabled_paths")),
    ),
    "test/registered/unit/spec/test_decoupled_slot_table.py": (
        "0b912132a7eb35768782967dfa256e7e42cc9440",
        (*(f"TestDecoupledSlotTable::{t}" for t in (
            "test_assign_then_lookup", "test_lookup_missing_returns_none",
            "test_remove_then_lookup_none", "test_remove_absent_is_noop",
            "test_reassign_overwrites", "test_clear")),
         *(f"TestPlanLanding::{t}" for t in (
             "test_all_hit", "test_all_dropped_when_table_empty", "test_mixed_hit_and_drop",
             "test_row_index_tracks_original_position",
             "test_stamp_carries_block_base_and_table_generation", "test_empty_block",
             "test_rank_mismatch_raises", "test_malformed_block_raises",
             "test_duplicate_rid_raises"))),
    ),
    "test/registered/unit/spec/test_dflash_compact_worker_runtime.py": (
        "1c5b8c176f1e94aad9531465e3635368e525d767",
        ("test_compact_prefill_visible_segments_slice_packed_prompt_suffix",
         "test_compact_prefill_chunk_crosses_ring_wrap_with_absolute_positions",
         "test_commit_accept_covers_zero_accept_and_full_commit_block",
         "test_compact_verify_locs_and_prefix_valid_writer_keep_zero_and_full_lens",
         "test_compact_radix_restore_copies_content_to_owner_and_releases_pin",
         "test_compact_radix_restore_coverage_or_range_failure_releases_pin",
         "test_compact_radix_restore_skips_continuing_owner_without_plan",
         "test_compact_radix_restore_get_plan_failure_releases_every_batch_rid",
         "test_compact_radix_restore_mask_failure_releases_every_batch_rid",
         "test_compact_radix_restore_preserves_copy_error_and_attempts_all_releases",
         "test_compact_prefill_sidecar_projects_each_visible_token_once_and_falls_back"),
    ),
    "test/registered/unit/spec/test_decoupled_spec_transport.py": (
        "12f9e1fc4da3ee1c517f4feaf0eb47ccf4201884",
        (*(f"TestTransportFactory::{t}" for t in (
            "test_factory_returns_fake", "test_factory_coerces_string_kind",
            "test_factory_returns_zmq_without_importing_or_starting",
            "test_fake_without_mesh_raises", "test_unknown_kind_raises")),
         *(f"TestFakeTransport::{t}" for t in (
             "test_roundtrip_both_directions", "test_try_recv_empty_returns_none",
             "test_fifo_order_preserved", "test_multi_peer_routing",
             "test_send_out_of_range_rank_raises", "test_wait_for_input",
             "test_close_unregisters_inbound",
             "test_dead_peer_drops_send_and_reports_unreachable",
             "test_wait_wakes_when_own_endpoint_killed")),
         "TestFakeTransportThreaded::test_background_waiter_wakes_on_delivery"),
    ),
}  # fmt: skip
"""Files read whole but not kept in SRC (no case comes from them): commit and test ids (the
``unittest`` mixins' inherited tests of ``test_dflash.py`` are not listed)."""


PARTLY = {
    DSPARK_UNIT: "its first 16,000 of 52,804 characters read: the draft-input batch and "
    "spec-input dataclass tests after them are not listed",
    "test/registered/unit/spec/test_dflash_compact_worker_runtime.py": "its first 16,000 of "
    "40,910 characters read: the tests after the sidecar projection test are not listed",
}
"""Files of ``LISTED`` read in part."""


def _all(path: str, reason: str) -> dict[str, str]:
    """The same reason for every listed test of ``path`` (entries after it may refine one)."""
    names = DSPARK_CHECKPOINT_TESTS if path == DSPARK_CHECKPOINT else LISTED[path][1]
    return {f"{path}::{name}": reason for name in names}


_NOT_RELEASE = "the version read asserts what 0.5.23's code does not do: "
_GLM52 = (
    _NOT_RELEASE + "0.5.23 does not read the speculators-format DSpark layout "
    "(aux_hidden_state_layer_ids, transformer_layer_config, speculators_config: none of these "
    f"keys is read by {WHEEL}/speculative/dflash_utils.py or dspark_components/dspark_config.py)"
)
_PP = (
    "pipeline-parallel and disaggregation-role gates, whatever the pair: an engine limit, not a "
    f"pair's verdict (DFLASH: {WHEEL}/arg_groups/speculative_hook.py:319-322)"
)
REVIEWED: dict[str, str] = {
    "test/registered/unit/spec/test_dflash_utils.py::"
    "test_parse_dflash_draft_config_raises_on_sample_from_anchor": _NOT_RELEASE
    + f"parse_dflash_draft_config ({WHEEL}/speculative/dflash_utils.py:588-800) does not read "
    "dflash_config.sample_from_anchor",
    "test/registered/unit/spec/test_dflash_utils.py::"
    "test_parse_dflash_draft_config_raises_on_query_zero_predicts_next": _NOT_RELEASE
    + "parse_dflash_draft_config does not read dflash_config.query_zero_predicts_next",
    f"{DOMINO}::TestDFlashDominoConfigParsing::test_unsupported_projector_type_fails": _NOT_RELEASE
    + f"only projector_type == 'domino' is validated ({WHEEL}/speculative/dflash_utils.py:734-791);"
    " any other value parses as an ordinary DFlash draft",
    f"{DOMINO}::TestDFlashDominoConfigParsing::test_causal_v5_alias_recognized": _NOT_RELEASE
    + "'causal_v5' is no Domino alias there (dflash_utils.py:734); such a checkpoint's Domino "
    f"weights are refused when loaded ({WHEEL}/models/dflash.py:923-928), which a config-only "
    "case does not reach",
    **{
        f"test/registered/unit/spec/test_dflash_attention_config.py::{t}": _NOT_RELEASE
        + "get_dflash_attention_causal_override is not in 0.5.23's dflash_utils.py; and the "
        "draft's attention causality is no draft/target pairing"
        for t in LISTED["test/registered/unit/spec/test_dflash_attention_config.py"][1][:3]
    },
    "test/registered/unit/spec/test_dflash_attention_config.py::"
    "test_sliding_window_falls_back_to_dflash_swa_window_size": _NOT_RELEASE
    + f"swa_window_size is read only for the Nemotron 3.5 layout ({WHEEL}/speculative/"
    "dflash_utils.py:409-410); and the draft's attention window is no draft/target pairing",
    "test/registered/unit/spec/test_dflash_attention_config.py::"
    "test_top_level_sliding_window_keeps_precedence": "the draft's attention window, not a "
    "draft/target pairing",
    "test/registered/unit/arg_groups/test_speculative_draft_config_tolerance.py::"
    "TestDraftConfigTolerance::test_unparseable_draft_config_is_not_fatal": _NOT_RELEASE
    + "a draft config that fails to load stops ServerArgs resolution "
    f"(_resolve_speculative_algorithm_alias, {WHEEL}/arg_groups/speculative_hook.py:90-95, "
    "unguarded)",
    **{
        "test/registered/unit/arg_groups/test_speculative_draft_config_tolerance.py::"
        f"TestDraftConfigTolerance::{t}": "the algorithm alias of Gemma 4 assistant drafts "
        f"(NEXTN/EAGLE to FROZEN_KV_MTP, {WHEEL}/arg_groups/speculative_hook.py:102-116), no "
        "draft/target config verdict; the tool has no Gemma 4 assistant format"
        for t in ("test_gemma4_draft_still_promotes", "test_parseable_non_gemma4_draft_unaffected")
    },
    **{
        f"test/registered/unit/spec/test_dflash_platform_support.py::{t}": "the device and "
        f"platform gate of DFLASH ({WHEEL}/arg_groups/speculative_hook.py:287-301), whatever "
        "the pair"
        for t in LISTED["test/registered/unit/spec/test_dflash_platform_support.py"][1]
    },
    **{
        f"test/registered/spec/dspark/test_dspark_speculators_convention.py::{t}": _NOT_RELEASE
        + "DSparkDraftConfig has no speculators_convention "
        f"({WHEEL}/speculative/dspark_components/dspark_config.py:61-69, 313-322)"
        for t in LISTED["test/registered/spec/dspark/test_dspark_speculators_convention.py"][1]
    },
    **{
        f"test/registered/unit/server_args/test_server_args_pp_speculative.py::{t}": _PP
        for t in LISTED["test/registered/unit/server_args/test_server_args_pp_speculative.py"][1]
    },
    **{
        f"test/registered/unit/spec/test_draft_model_override_args.py::{t}": "how "
        "--json-model-override-args reach the draft's config; no draft/target verdict"
        for t in LISTED["test/registered/unit/spec/test_draft_model_override_args.py"][1]
    },
    **{
        f"test/registered/spec/dflash/test_dflash.py::{t}": "a served pair on a GPU "
        "(meta-llama/Llama-3.1-8B-Instruct with z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat, "
        f"{ENGINE}=={RELEASE}:sglang/test/test_utils.py:117-119); the test writes no config and "
        "that draft's config is not in the corpus (tests/fixtures)"
        for t in LISTED["test/registered/spec/dflash/test_dflash.py"][1]
    },
    **{
        f"test/registered/spec/dspark/test_glm52_dspark_config.py::TestGLM52RedHatDSparkConfig::{t}":
            _GLM52
        for t in (n.split("::")[1] for n in
                  LISTED["test/registered/spec/dspark/test_glm52_dspark_config.py"][1][:10])
    },
    "test/registered/spec/dspark/test_glm52_dspark_config.py::TestGLM52RedHatDSparkConfig::"
    "test_generic_dspark_draft_model_is_registered": "a registry fact (DSparkDraftModel, "
    f"{WHEEL}/models/dspark.py:995 at 0.5.23 too), no pair",
    "test/registered/spec/dspark/test_glm52_dspark_config.py::TestGLM52RedHatDSparkConfig::"
    "test_hf_loader_falls_back_for_missing_top_level_model_type": _GLM52,
    **_all(
        "test/registered/unit/model_executor/model_runner_components/"
        "test_aux_hidden_state_capture.py",
        "aux-layer capture without a draft (--aux-hidden-state-capture) and the logits "
        "processor: no draft/target pair",
    ),
    **_all(
        DRAFT_MODEL,
        "the draft's construction, weight loading and greedy head with stand-in layers and toy "
        "sizes (hidden 4, vocab 128), no target",
    ),
    f"{DRAFT_MODEL}::TestDFlashDraftModel::"
    "test_explicit_target_ids_are_not_validated_against_draft_depth": "the draft alone, toy "
    "sizes (hidden 4, 6 ids over 6 layers), no target; 0.5.23 also sizes fc from the id count "
    f"({WHEEL}/models/dflash.py:745-768)",
    f"{DRAFT_MODEL}::TestDFlashDecoderLayer::"
    "test_sliding_window_falls_back_to_published_dflash_config": _NOT_RELEASE
    + f"swa_window_size is read only for the Nemotron 3.5 layout ({WHEEL}/speculative/"
    "dflash_utils.py:409-410); and the draft's attention window is no draft/target pairing",
    **_all(
        "test/registered/unit/models/test_dspark_draft_model.py",
        "the DSpark draft's Markov head, embedding sharing and quantized head with stand-ins: "
        "no draft/target config verdict",
    ),
    **_all(
        "test/registered/unit/models/test_draft_entry_hook_parity.py",
        "a registry-wide invariant of entry classes (shared-experts fusion hook), no pair",
    ),
    **_all(
        "test/registered/unit/configs/test_eagle_draft_arch.py",
        _NOT_RELEASE + "0.5.23 has no resolve_eagle_draft_arch / EAGLE_DRAFT_BASE_ARCHS "
        f"({WHEEL}/configs/model_config.py): a draft declaring LlamaForCausalLM is not "
        "re-classed as an EAGLE or EAGLE-3 head there",
    ),
    **_all(
        "test/registered/unit/configs/test_draft_hf_config_resolution.py",
        _NOT_RELEASE + "ModelConfig.get_draft_hf_config, DraftConfigReadError and "
        "_draft_is_gemma4_assistant are not in 0.5.23; the tests are about how the draft's "
        "config is read (parsers, revisions, paths), not about a pair",
    ),
    **_all(
        "test/registered/unit/models/test_dflash_head_geometry.py",
        "the draft's per-layer attention heads and the Laguna config class (stand-in "
        "configs), no pair",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_quantized_draft_layout.py",
        "a quantized draft's module names and weight loading (stand-in layers, toy sizes), no "
        "target",
    ),
    **_all(
        DSPARK_UNIT,
        "DSPARK's algorithm predicates and server flags (block-size alias, confidence "
        "threshold, pp, dp) on a stand-in ServerArgs; no draft or target config is read",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_dp_attention.py",
        "DFlash's DP-attention runtime (draft graphs, TP scopes, idle ranks, hidden rows, the "
        "embedding cache) on stand-in workers, CUDA CI; no draft/target config. (SGLang's "
        "refusal of a Domino draft under DP attention is a case from the release's code, "
        "`dflash-domino-dp-attention`)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_cpu.py",
        _NOT_RELEASE + "DFLASH on a CPU device: 0.5.23's gate admits CUDA, NPU and XPU only "
        f"({WHEEL}/arg_groups/speculative_hook.py:291-301); and the device gate, overlap "
        "schedule, draft attention backend and AMX kernels are no draft/target verdict",
    ),
    f"{SPEC_AUX}::test_integrated_mtp_resolves_draft_layer_count": "an MTP head's KV layer "
    "count (stand-in ModelConfig), no draft/target verdict; the version read also calls "
    "_resolve_eagle_aux_hidden_state without the model_config 0.5.23 requires (it fails on the "
    "wheel: engine_tests)",
    f"{DOMINO_UNIT}::TestDFlashDominoConfig::test_draft_and_verify_widths": _NOT_RELEASE
    + "DFlashDraftConfig.resolve_block_sizes is not in 0.5.23 (the test fails on the wheel: "
    "AttributeError, engine_tests); and the verify window is a server setting, no pair",
    **{
        f"{DOMINO_UNIT}::TestDFlashDominoWeights::{t}": "the Domino projector's weight loading "
        "on a stand-in model with toy sizes (hidden 8, vocabulary 31), no target; the tool "
        "checks the same tensors from a draft's header (DF056, check/rules/domino.py "
        "weight_refusals); passes on the 0.5.23 wheel (engine_tests)"
        for t in ("test_projector_weights_load_exactly",
                  "test_each_required_projector_weight_is_checked",
                  "test_projector_shape_mismatch_fails",
                  "test_projector_weights_require_domino_config")
    },
    **_all(
        "test/registered/unit/spec/test_deepseek_v4_spec_algorithm_alias.py",
        "the speculative algorithm gate of a DeepSeek V4 target, whatever the draft (0.5.23 "
        f"admits EAGLE and DSPARK only, {WHEEL}/arg_groups/deepseek_v4_hook.py:148-158, matching "
        "the raw --speculative-algorithm string), on a stand-in config naming only the "
        "architecture; the corpus has no DeepSeek V4 target to pair a draft with",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_backend_resolution.py",
        "the DFLASH draft's attention backend (trtllm_mha kept or replaced by a fallback, "
        f"{WHEEL}/arg_groups/speculative_hook.py:886-980): a backend choice, never a refusal; "
        "no draft/target verdict",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_tree_width_args.py",
        _NOT_RELEASE + "0.5.23 has no --speculative-dflash-tree-width (not in "
        f"{WHEEL}/arg_groups/speculative_hook.py); the chain-width tests resolve the block size "
        "and draft-token flags on a stand-in draft config (block size, selector), server "
        "settings, no pair",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_model_subfolder.py",
        _NOT_RELEASE + "resolve_model_subfolder and --speculative-draft-model-subfolder are "
        f"not in {WHEEL}/server_args.py; and a draft path's resolution is no pair",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_per_runner_config.py",
        "the draft runner's load format and attention backend, the scheduler's hand-over of "
        "ServerArgs: runtime plumbing on stand-ins, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_server_args_copy.py",
        _NOT_RELEASE + "draft_server_args_copy is not in 0.5.23 "
        "(speculative/draft_worker_common.py); and the draft's context length and load "
        "format are runtime plumbing, no pair",
    ),
    **_all(
        DSPARK_CHECKPOINT,
        "the DSpark draft's Markov head, candidate budgets, vocabulary mapping and weight "
        "loading with toy sizes (vocabulary 8, hidden 4) and no target config; "
        + _NOT_RELEASE + "0.5.23 has no normalize_speculators_dspark_config, "
        "validate_dspark_d2t, resolve_markov_candidate_config or --speculative-dspark-markov-"
        f"topk ({WHEEL}/configs, models/dspark.py, speculative/dspark_components/"
        "dspark_config.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_asd_dspark_settings.py",
        _NOT_RELEASE + "0.5.23 has no DSparkASDSettings (speculative/dspark_components/"
        "asd_dspark.py); and environment switches of an adaptive-draft adapter are no pair",
    ),
    **_all(
        "test/registered/unit/spec/test_block_verification_args.py",
        "--speculative-use-block-verification's algorithm, device and sampling gates on a "
        "stand-in ServerArgs, whatever the pair; 0.5.23's "
        f"{WHEEL}/arg_groups/speculative_hook.py does not resolve that flag (only the workers "
        "read it)",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_probs_reduced_vocab.py",
        "tensor numerics of EAGLE-3's reduced-vocabulary rejection sampling (CUDA CI); 0.5.23 "
        "has no scatter_draft_probs_to_target_vocab; no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_pd_disaggregation_guard.py",
        _NOT_RELEASE + "0.5.23's _handle_dflash "
        f"({WHEEL}/arg_groups/speculative_hook.py:287-445) raises nothing for a disaggregation "
        "role ('does not transfer DFLASH draft state' is not in it); and a serving role is an "
        "engine limit, whatever the pair",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_request_validation.py",
        "per-request sampling options (seeds, top-k/p, the sampling backend) under DFLASH and "
        "DSPARK: request validation, no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no dflash_request_validation module",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_compact_capability.py",
        _NOT_RELEASE + "resolve_uniform_swa_dflash_compact_capability is not in 0.5.23's "
        "speculative/dflash_utils.py; and whether a sliding-window draft may use a compact KV "
        "layout is a memory optimisation (eligible or not, the draft is served), no verdict",
    ),
    **_all(
        "test/registered/unit/spec/test_build_hot_token_lm_head.py",
        _NOT_RELEASE + "build_hot_token_lm_head is not in 0.5.23 "
        "(speculative/eagle_worker_common.py); and the tests assemble a hot-token head from "
        "toy tensors (vocabulary 1000 or 128, TP over gloo), no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/dvr/test_server_args.py",
        "the DVR algorithms' server-argument gates and defaults (chain shape, CUDA graphs, "
        "attention backends, linear-state caches) on a stand-in ServerArgs, whatever the pair; "
        + _NOT_RELEASE + "0.5.23 has no speculative/dvr package (DVR is no algorithm there, "
        f"{WHEEL}/speculative/spec_info.py), and the tool has no DVR runtime",
    ),
    **_all(
        "test/registered/unit/speculative/test_spec_info.py",
        "the speculative algorithm enum, its predicates, the worker class each algorithm and "
        "overlap setting selects, and SpecInput's token bookkeeping: no draft/target config; "
        + _NOT_RELEASE + "0.5.23's SpeculativeAlgorithm has no supports_spec_v2 and no V1 "
        f"EAGLEWorker / StandaloneWorker ({WHEEL}/speculative/spec_info.py, "
        "standalone_worker_v2.py only)",
    ),
    **_all(
        "test/registered/unit/speculative/test_spec_utils_logic.py",
        "runtime helpers on toy tensors (whether hidden states are kept, the accept-length "
        "filter, the grammar-constrained tree walk): no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_dsv4_draft_swa_sidecar.py",
        "the DeepSeek V4 KV pool's draft sliding-window scratch rows and page indices (toy "
        "tensors), KV-cache bookkeeping, no pair; "
        + _NOT_RELEASE + "DeepSeekV4TokenToKVPool.get_draft_swa_scratch_locs is not in 0.5.23",
    ),
    **_all(
        "test/registered/unit/speculative/test_eagle_info_v2.py",
        "the EAGLE V2 verify step's sampling with a custom logit processor (the method's source "
        "run on stubs), no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_construction_isolation.py",
        "process state around a draft's construction (the MoE shared-experts-fusion flag per "
        "checkpoint, the model_path record on a draft's weight update) with stand-in model "
        "classes: no draft/target config, no verdict",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_kda.py",
        "a DFlash draft's context-scanning KDA attention (linear_attn_config.context_state): "
        "numerics against a reference, the worker's row grouping, toy sizes (hidden 16), no "
        "target; " + _NOT_RELEASE + "0.5.23 has no KDA draft attention (no "
        f"parse_dflash_kda_config or DFlashKDAAttention in {WHEEL}/speculative/dflash_utils.py "
        "or models/dflash.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_draft_window.py",
        "DSpark's opt-in draft attention window (--speculative-draft-window-size): its "
        "backend gate, its validation and its effect on the draft's layers, a server setting "
        "on stand-in modules, no pair; " + _NOT_RELEASE + "0.5.23's DSpark worker has no "
        f"_configure_draft_window ({WHEEL}/speculative/dspark_components/dspark_worker_v2.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_validate_request.py",
        "per-request admission under DFLASH and DSPARK (grammar, logprobs, hidden states): "
        "request validation, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_tp_context.py",
        "which tensor-parallel group draft work runs on under DP attention (stand-in groups), "
        "parallel placement, no pair",
    ),
    **_all(
        "test/registered/unit/server_args/test_gdn_mtp_cache_mode.py",
        "--gdn-mtp-cache-mode's gates against other server settings (ReplaySSM, top-k, mamba "
        "extra buffer) and the FlashInfer GDN recovery kernel's dispatch, on a stand-in "
        "ServerArgs: server settings, whatever the pair; " + _NOT_RELEASE + "0.5.23's "
        f"ServerArgs has no _validate_gdn_mtp_cache_mode ({WHEEL}/server_args.py)",
    ),
    **_all(
        "test/registered/unit/server_args/test_speculative_admission_default.py",
        "the default max_running_requests under speculative decoding (from the decode CUDA-graph "
        "ladder, NGRAM on a dummy model path): a server setting, no pair; " + _NOT_RELEASE
        + "0.5.23 has no _fill_default_max_running_requests "
        f"({WHEEL}/arg_groups/speculative_hook.py)",
    ),
    **_all(
        "test/registered/unit/configs/test_dspark_quantization_config.py",
        "the DSpark draft's quantization and dtype apart from the target's "
        "(--speculative-draft-model-quantization unquant, a ModelSlim target), server settings "
        "the tool does not judge; its draft is speculators-format (aux_hidden_state_layer_ids "
        "[1, 3] read as target_layer_ids [0, 2]), and " + _GLM52.removeprefix(_NOT_RELEASE),
    ),
    **_all(
        "test/registered/unit/models/test_deepseek_v4_pipeline_aux_capture.py",
        "a DeepSeek V4 target's DSpark aux capture across pipeline stages (stand-in layers, "
        "6 layers, hidden 3): pipeline parallelism, no draft config; " + _NOT_RELEASE
        + "0.5.23's set_dspark_layers_to_capture refuses only layer_ids None and sets the "
        "capture up on the last pipeline stage only; an empty, repeated or out-of-range id "
        f"list passes there ({WHEEL}/models/deepseek_v4.py:4853-4861)",
    ),
    **_all(
        "test/registered/unit/models/test_dflash_quantized.py",
        "a pack-quantized (compressed-tensors W4A16) DFlash 2 draft's fc loading, toy sizes "
        "(hidden 128, vocabulary 64, 4 target layers), no target: weight loading; the fc's "
        "width against the target's captured layers is what the tool reads from the draft's "
        "header (DF005)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_dspark_verify_lengths.py",
        "sequence-length bookkeeping of the DFlash and DSpark verify steps (committed against "
        "reserved KV lengths, the ragged-verify CUDA-graph token tiers, dummy verify inputs) on "
        "stand-in batches and workers: runtime internals, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_placement_pp.py",
        "which pipeline stage builds the draft worker on a PD-prefill role (the scheduler's "
        "maybe_init_draft_worker on a stand-in record): parallel placement, whatever the pair; "
        "0.5.23 decides it by SGLANG_ENABLE_PP_SPEC, not the disaggregation role "
        f"({WHEEL}/managers/scheduler.py:1041-1050)",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_pp.py",
        "DSpark's context projection split across pipeline stages (K3's capture stream, the fc "
        "applied per stage, PD KV transfer offsets) with toy sizes and stand-in layers, no "
        "draft/target config; " + _NOT_RELEASE + "0.5.23 has no speculative/dspark_components/"
        "dspark_pp.py (its test_capture_ownership_includes_boundary_and_empty_stages refuses "
        "empty, unsorted or repeated ids in context_feature_slice, a per-stage split 0.5.23 "
        "does not make)",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_pp_context.py",
        "DSpark under pipeline parallelism on a PD-prefill role (idle lanes, owner partitions, "
        "partial projections, lifecycle-only draft models and KV pools, a DeepSeek V4 stage's "
        "share of the capture) on stand-in workers with toy sizes: parallel placement and "
        "runtime internals, no draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "dspark_components/dspark_pp.py and no resolve_single_owner_pp_rank / "
        "use_empty_draft_model_for_pp_prefill in dspark_config.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_context_boundary.py",
        "DSpark's verify window clamped at the context length and the generation budget "
        "(functions exec'd from the repository's source on toy tensors, source greps): runtime "
        "planning, no draft/target config; " + _NOT_RELEASE + "clamp_verify_lens is not in "
        f"0.5.23 ({WHEEL}/speculative/draft_worker_common.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_compact_layout.py",
        "DSpark's compact ragged verify layout (row indices, verify ids) on toy tensors: "
        "runtime internals, no draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "dspark_components/kernels/compact_layout.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_compact_physical_layout.py",
        "the compact DFlash KV layout's geometry and byte budget (owners, window, block, page "
        "rows, request generations): a memory layout, no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no speculative/dflash_compact_physical_layout.py and no "
        "--speculative-dflash-compact-cache",
    ),
    **_all(
        "test/registered/unit/spec/test_adaptive_spec_params.py",
        "the adaptive speculative step controller (accept-length EMA, hysteresis, per "
        "batch-size slots from a steps config file, CUDA-graph batch routing): a runtime tuning "
        f"policy ({WHEEL}/speculative/adaptive_spec_params.py), no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dp_prefill_spec.py",
        "per-rank token counts and phase order when some DP-attention ranks prefill while "
        "others decode (EAGLE V2 worker on stand-ins): DP scheduling, no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no speculative/dp_prefill_spec.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_dsa_ragged_graph_gate.py",
        "whether the decode CUDA-graph runner replays a ragged verify layout under DeepSeek "
        "sparse attention (stand-in backends): graph capture policy, no draft/target config; "
        + _NOT_RELEASE + "DecodeCudaGraphRunner has no "
        f"_attn_backend_supports_layout_ragged_verify_graph ({WHEEL}/model_executor/runner/"
        "decode_cuda_graph_runner.py)",
    ),
    **_all(
        "test/registered/unit/speculative/test_dspark_verify_seq_lens.py",
        "whether an attention backend adds the verify width to the sequence lengths itself "
        "(DSpark's TargetVerifyExecutor on stand-in backends): runtime internals, no "
        "draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_npu_a5_spec_contracts.py",
        "Ascend NPU reference kernels (tree mask, cache locations, retrieval links) and the NPU "
        "target-only sampling gate (tree top-k, rejection sampling, thresholds): device "
        "kernels and sampling settings, no draft/target config; " + _NOT_RELEASE + "0.5.23 has "
        "no speculative/npu_sampling.py",
    ),
    **_all(
        "test/registered/unit/speculative/test_pd_eagle_draft_proposal.py",
        "the first EAGLE draft input a PD decode builds from what the prefill sent (a one-hot "
        "proposal over the target's vocabulary, toy vocabulary 11) under rejection sampling: "
        "disaggregation runtime, no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_base_spec_worker_api.py",
        "the speculative worker base class's API (inheritance from BaseTpWorker, delegation of "
        "ranks, capacities, weight and LoRA updates to the target worker) on MagicMock "
        "workers: worker plumbing, no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_spec_worker_integration.py",
        "that the EAGLE, multi-layer EAGLE and standalone V2 workers subclass BaseSpecWorker and "
        "expose its methods, and the scheduler's use of that API on stand-ins: class "
        "structure, no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_external_corpus_remove.py",
        "the n-gram external corpus manager's add / remove / list while a corpus loads (a fake "
        "worker): a request API of the n-gram method, no draft/target config",
    ),
    **_all(
        "test/registered/unit/speculative/test_spec_prepare_swa_eviction.py",
        "sliding-window KV eviction and the decode tick on the DFlash-family decode path "
        "(spec_prepare_for_decode on a MagicMock batch): KV-cache bookkeeping, no draft/target "
        "config; " + _NOT_RELEASE + "0.5.23's DFlash-family branch calls the draft input's "
        "prepare_for_decode alone, no maybe_evict_swa and no decode_batch_idx tick "
        f"({WHEEL}/speculative/spec_utils.py:1259-1260)",
    ),
    **{
        f"test/registered/unit/speculative/dvr/{path}::{t}": "the DVR (decode-verify-"
        "rollback) algorithms' runtime: draft backends, seeded sampling and chain rejection, "
        "linear-state lifecycle and memory budgets, the worker's verify and rollback, CUDA-graph "
        "runners, on stand-ins and toy tensors (CUDA CI for most); " + _NOT_RELEASE + "0.5.23 "
        "has no speculative/dvr package and no DECODE_VERIFY_ROLLBACK algorithm "
        f"({WHEEL}/speculative/spec_info.py), and the tool has no DVR runtime"
        for path in ("test_backends.py", "test_sampling.py", "test_state.py", "test_worker.py",
                     "test_cuda_graph_runner.py")
        for t in LISTED[f"test/registered/unit/speculative/dvr/{path}"][1]
    },
    **_all(
        "test/registered/unit/spec/test_dflash_tree_sampling_admission.py",
        "per-request admission of sampling requests under a DFlash tree (request validation "
        "and the worker's batch backstop, stand-ins), no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no --speculative-dflash-tree-width (not in "
        f"{WHEEL}/arg_groups/speculative_hook.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_extend_graph_capability.py",
        "whether an attention backend captures the EAGLE draft-extend step in a CUDA graph "
        "(FlashAttention, a sliding-window pool): graph capture policy, CUDA CI, no draft/target "
        "config; " + _NOT_RELEASE + "0.5.23's attention backends have no "
        "supports_draft_extend_cuda_graph",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_dequant_probe.py",
        "whether the DSpark draft's fused KV-projection stacking can read a linear's weight "
        "(packed, bf16, fp8 with or without block scales) on stand-in modules, CUDA CI: a "
        "kernel path choice, never a refusal; no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_verify_mask_policy.py",
        "whether the DFlash verify CUDA graph carries a custom mask per attention backend, and "
        "whether the draft head is folded into the graph, on stand-ins: graph capture policy, "
        "no draft/target config; " + _NOT_RELEASE + "0.5.23 has no DFlash tree width "
        "(get_spec().speculative_dflash_tree_width)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_verify_budget.py",
        "the target verify width under --speculative-dflash-verify-budget and the Triton "
        "backend's verify metadata: a server setting and attention bookkeeping, no "
        "draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "speculative_dflash_verify_budget",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_decode_window.py",
        "the windowed draft-decode KV index kernel (StreamingLLM sink + window, CUDA) and "
        "resolve_draft_decode_window from --speculative-draft-window-size / -sink-size against "
        "a draft's own sliding window (stand-in runners): a server setting and KV bookkeeping, "
        "never a refusal; no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_spec_registry.py",
        "the speculative algorithm plugin registry (names, case, reserved names, a plugin's "
        "predicates, worker factory and overlap check) with MagicMock factories: the algorithm "
        "enum and its plugins, no draft/target config; " + _NOT_RELEASE + "the version read "
        "imports _RESERVED_NAMES, which 0.5.23's speculative/spec_registry.py does not define "
        "(it has _reserved_names())",
    ),
    **_all(
        "test/registered/unit/spec/test_eagle_utils.py",
        "the width of the target hidden states an EAGLE draft-extend step carries, from stand-in "
        "model runners (the draft's target_hidden_size times its aux-id count or "
        "num_aux_hidden_states, or the fc's width): a buffer size, never a refusal, and no "
        "target config; " + _NOT_RELEASE + "its projection-width test's fourth row (ids "
        "[2, 18, 30], hidden 4096, fc 16384) asserts the fc's 16384 where 0.5.23 computes "
        f"4096 x 3 = 12288 ({WHEEL}/speculative/eagle_utils.py:237-276)",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_shared_modules.py",
        "how a DSpark draft borrows the target's embedding and head across pipeline and tensor "
        "parallel ranks (stand-ins, a launched TP2/PP2 and PP4 group): parallel placement, no "
        "draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "dspark_components/dspark_shared_modules.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_confidence.py",
        "the DFLASH_CONFIDENCE algorithm's runtime (ragged verify widths, CUDA-graph tiers, SPS "
        "verify budgets, observers) on stand-ins and toy tensors, no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no DFLASH_CONFIDENCE algorithm "
        f"({WHEEL}/speculative/spec_info.py)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_grouped_conv.py",
        "numerics of the DFlash draft's grouped convolution (non-finite rows kept inside their "
        f"request, toy sizes; DFlashGroupedConv, {WHEEL}/models/dflash.py:520-536): no "
        "draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_extra_buffer_lazy.py",
        "--mamba-radix-cache-strategy extra_buffer_lazy under DFLASH / DSPARK for a hybrid "
        "target (PD disaggregation, track interval, page size) on a stand-in view, and the "
        "verify step's mamba-track hook: server settings and KV bookkeeping, whatever the "
        "draft; no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_base_spec_worker_weight_update.py",
        "the order of draft weight reloads and CUDA-graph recapture on a weight update "
        "(recording stand-in runners): runtime plumbing, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_acceptance_policy.py",
        "DSpark's pluggable acceptance policy seam (lifecycle hooks, the verify executor's "
        "routing to a policy or the native accept) on spy policies and toy tensors: runtime "
        "internals, no draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "dspark_components/acceptance_policy.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_mamba_checkpoint_boundary.py",
        "which mamba state checkpoint a DFlash verify commit crosses on a hybrid target "
        "(stand-in worker and batch): KV/state bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_dp_embedding.py",
        "how the DFlash worker caches the target's full embedding table under DP attention "
        "(replicated or sharded, added vocabulary rows, toy vocabulary 5-8): parallel "
        "placement, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_dp_buffers.py",
        "reuse of the DFlash worker's draft-block buffers and non-padded token count across "
        "batch sizes (stand-in worker): runtime buffers, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_expert_distribution.py",
        "that a DeepSeek V4 DSpark draft stage's MoE routing does not update the target's "
        "expert-distribution recorder (stand-in stage and recorder): runtime statistics, no "
        "draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_accepted_path_state_capture.py",
        "per-token state captures (routed experts, indexer top-k) compacted with the accepted "
        "path's KV move (toy tensors): KV-cache bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_aiter_greedy_sample_draft_contract.py",
        "the ROCm aiter greedy_sample kernel the top-k 1 EAGLE draft uses (tie-break, shapes, "
        "a vocabulary floor of 1023 x 16), AMD CI: kernel numerics, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_cache_locs_fallback.py",
        "the torch fallback of assign_extend_cache_locs on toy tensors: KV-cache bookkeeping, "
        "no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_adaptive_runtime_state.py",
        "the adaptive speculative controller's per-step runtime states (built, pruned, "
        "activated by batch size or verify feedback) on fake workers and policies: a runtime "
        "tuning policy, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_chain_speculative_sampling.py",
        "the chain speculative-sampling torch reference against analytic cases, a statistical "
        "losslessness check and the Triton kernel (toy vocabularies 4-64): sampling numerics, "
        "no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_cuda_event_ring.py",
        "reuse of CUDA events for the overlap scheduler's write-after-read fences (a ring, "
        "source greps, CUDA CI): runtime synchronisation, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_tree.py",
        "verify metadata of a DFlash beam tree (ancestor masks, links, positions, the mask "
        "kernel) from a toy beam walk: attention bookkeeping, no draft/target config; "
        + _NOT_RELEASE + "0.5.23 has no speculative/dflash_tree.py (no DFlash tree width)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_domino_kernel.py",
        "the Domino fused SiLU-fc2-argmax scoring kernel against a dense reference (random "
        "tensors, CUDA): kernel numerics, no draft/target config; " + _NOT_RELEASE + "0.5.23 "
        "has no speculative/domino_kernels.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_tree_verify.py",
        "DFlash tree verify's accept, commit layout and mamba step index against the chain "
        "(toy tensors, CUDA): runtime internals, no draft/target config; " + _NOT_RELEASE
        + "0.5.23 has no speculative/dflash_tree_verify.py (no DFlash tree width)",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_sampling.py",
        "draft-side sampling overrides (--speculative-draft-temperature / -top-k / -top-p: "
        "their inheritance from the request, the proposal distribution, their CLI bounds): "
        "sampling settings, whatever the pair; " + _NOT_RELEASE + "0.5.23 has no "
        "sampling/draft_sampling.py and no --speculative-draft-temperature",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_logits.py",
        "the DFlash 2 draft's logits and candidate selector at run time (unary logit transform, "
        "greedy and sampled path walks, a quantized or sharded target lm_head projected through "
        "its quant method, the grouped conv over block sizes) on stand-in modules with toy "
        "sizes: no draft/target config (the target head's storage is a loaded model's, not a "
        "config's)",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_greedy_draft_tp_sync.py",
        "synchronisation of greedy draft tokens across tensor-parallel ranks (a fake sync, "
        "stand-in workers): parallel runtime, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_grammar_mask.py",
        "grammar-constrained requests under DFLASH (request validation, the linear-chain "
        "vocabulary mask, the verify step's refusal of non-greedy grammar requests) on fake "
        "grammars, toy vocabulary 16: request handling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_mamba_commit.py",
        "the mamba state steps a DFlash verify commits and tracks on a hybrid target (toy "
        "lengths, stand-in worker): state bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_penalties.py",
        "frequency and repetition penalties applied to every row of a DFlash verify block and "
        "fed with committed tokens (toy vocabulary 8): sampling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_block_penalties.py",
        "position-aware penalties over a DFlash verify block (DFlashBlockPenaltyState against a "
        "token-by-token reference, toy vocabulary 16): sampling, no draft/target config; "
        + _NOT_RELEASE + "0.5.23's speculative/dflash_utils.py has no DFlashBlockPenaltyState",
    ),
    **{
        f"{path}::{t}": "logit adjustments of the DFlash / DSpark verify step (grammar masks, "
        "additive and scaling penalties, min_new_tokens counting, logit bias, target "
        "probabilities under top-k / top-p / min-p) on toy vocabularies (4-16) and stand-in "
        "sampling state: sampling, no draft/target config"
        for path in (
            "test/registered/unit/spec/test_dflash_verify_grammar_mask.py",
            "test/registered/unit/spec/test_dflash_verify_logits_adjustments.py",
            "test/registered/unit/spec/test_dflash_verify_target_probs.py",
            "test/registered/unit/spec/test_dflash_verify_penalties.py",
            "test/registered/unit/spec/test_dflash_penalizer_cumulate.py",
        )
        for t in LISTED[path][1]
    },
    **_all(
        "test/registered/unit/spec/test_custom_mask_no_leak.py",
        "the size of the EAGLE and DFlash verify custom masks across batch sizes (CUDA, idle "
        "inputs): attention bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_deterministic_fast_sample.py",
        "seeded, batch-invariant EAGLE draft proposal sampling (fast_sample, CUDA graphs, "
        "random distributions): sampling numerics, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_bcg_input_embeds.py",
        "whether prefill CUDA-graph buffers hold an input-embeddings slot for a text-only "
        "draft of a multimodal target (toy sizes): runtime buffers, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_extend_stream_order.py",
        "CUDA stream ordering of the EAGLE and multi-layer EAGLE draft-extend step (the "
        "methods' source run on stand-in streams): runtime synchronisation, no draft/target "
        "config",
    ),
    **_all(
        "test/registered/unit/spec/test_draft_tail_buffer.py",
        "the decoupled-speculation verifier's draft-tail reconciliation state machine (streamed "
        "draft tokens against committed prefixes, ranks, waiting threads): runtime transport, "
        "no draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "speculative/draft_tail_buffer.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_c128_cleanup.py",
        "DSpark's cleanup of unaccepted target C128 KV states after verify and its WAR event "
        "(stand-in worker, AMD CI): KV-cache bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_draft_sampling_mask.py",
        "the sampling-support capture of a DSpark verify with a deterministic draft against a "
        "stochastic target request (toy vocabulary 3): sampling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_grammar_mask.py",
        "DSpark's grammar vocabulary-mask geometry over the verify rows (MagicMock grammar, "
        "toy vocabulary 64): request handling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_kv_inject_hybrid_pool.py",
        "DSpark's injection of target hidden states into a hybrid (full + sliding-window) draft "
        "KV pool (recording stub): KV-cache bookkeeping, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_pd_queue.py",
        "agreement of PP/TP ranks on PD-disaggregation queue readiness and capacity under "
        "DSpark (four gloo processes, stand-in requests): disaggregation runtime, no "
        "draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "dspark_components/dspark_pd_queue.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_draft_sampling.py",
        "DSpark's draft sampling (eager and folded samplers, the corrected truncated proposal "
        "kept for verification, memory budget, CUDA-graph replay) on a stand-in Markov head, "
        "toy vocabulary 5: sampling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_decoupled_spec_hook.py",
        "the decoupled-speculation roles' server-argument gates and defaults (transport "
        "endpoints, rank, DP, page size, top-k, overlap and radix cache per role) on a stand-in "
        "ServerArgs: server settings, whatever the pair; " + _NOT_RELEASE + "0.5.23's "
        f"{WHEEL}/arg_groups/speculative_hook.py has no _handle_decoupled_spec",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_execution_phases.py",
        "the order of DSpark's decode and prefill stages (target forward, acceptance, KV "
        "commit, pipeline hand-off, failure handling) on stand-in workers and toy tensors: "
        "runtime internals, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_pdmux.py",
        "DSpark under PD multiplexing (split prefill segments, stream switches, the "
        "layer-split mode's refusal of a target model object without aux-capture support) on "
        "stand-in workers: a serving mode's runtime, no draft/target config; "
        + _NOT_RELEASE + "0.5.23's dspark_components/dspark_worker_v2.py has no PDMux path",
    ),
    **_all(
        "test/registered/unit/spec/test_dp_spec_prefill_coordination.py",
        "per-rank token counts and phase order when DP-attention ranks mix prefill and "
        "decode under EAGLE V2 (DPSpecPrefillCoordinationPlan, stand-in workers): DP "
        "scheduling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_dspark_dp_spec_prefill_coordination.py",
        "DSpark's share of DP-attention prefill/decode coordination (draft and target token "
        "counts per rank, dispatch) on stand-in workers: DP scheduling, no draft/target config",
    ),
    **_all(
        "test/registered/unit/spec/test_decoupled_slot_table.py",
        "the decoupled-speculation verifier's slot table and landing plan for streamed draft "
        "blocks (rids to pool seats, ranks, malformed blocks): runtime transport, no "
        "draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "speculative/decoupled_slot_table.py",
    ),
    **_all(
        "test/registered/unit/spec/test_dflash_compact_worker_runtime.py",
        "the DFlash worker's compact KV layout at run time (visible prefill segments, ring "
        "positions, radix-prefix restore and pin release, sidecar projection) on stand-in "
        "workers with toy sizes: a memory layout, no draft/target config; " + _NOT_RELEASE
        + "0.5.23 has no speculative/dflash_compact_physical_layout.py",
    ),
    **_all(
        "test/registered/unit/spec/test_decoupled_spec_transport.py",
        "the decoupled-speculation transport (factory, in-process fake mesh, ordering, peers, "
        "waits): runtime transport, no draft/target config; " + _NOT_RELEASE + "0.5.23 has no "
        "speculative/decoupled_spec_transport.py",
    ),
}  # fmt: skip
"""Tests read and found not applicable to 0.5.23's pair checks, with the reason."""
REVIEWED[
    "test/registered/spec/dspark/test_glm52_dspark_config.py::TestGLM52RedHatDSparkConfig::"
    "test_prefixed_target_layer_ids_must_be_non_empty"
] = (
    "holds at 0.5.23 (an empty dspark_target_layer_ids is refused, "
    f"{WHEEL}/speculative/dspark_components/dspark_config.py:299-306), but the test builds no "
    "target and the corpus has no GLM-5.2 target to pair it with"
)

UNREAD_SPEC: tuple[str, ...] = (
    "test_decode_bookkeeping_ownership",
    "test_decoupled_spec_io",
    "test_decoupled_spec_ipc_integration",
    "test_dflash_overlap_hostsync",
)
"""The files of ``test/registered/unit/spec/`` in the index's listing (its first 100 of 239,
``find_files``) not read, by name (``.py`` dropped)."""

PAST_CUT: tuple[str, ...] = ("test_spec_registry", "test_eagle_utils", "test_dspark_shared_modules")
"""Files of ``test/registered/unit/spec/`` past the listing's cut, found by exact path and read
(in ``LISTED``)."""
PAST_CUT_UNREAD: tuple[str, ...] = ("test_dspark_target_kv", "test_eagle_worker_v2_topk1_fastpath")
"""Files past the cut whose path the index confirmed, not read."""

NOT_READ = (
    "- **The 0.5.23 tag's own `test/`**: the index has no source archive of 0.5.23 (its newest "
    "is 0.5.10.post1) and the wheel's `sglang/test/` is helpers, not the tests; the repository "
    "is over `fetch`'s size limit. The index holds versions across the crawled history, none "
    "named by tag; each file above is the version the index returned (commit given).",
    "- Not read for want of time in the sessions that mined this page (issue 29), chosen last "
    "because their names and the files read beside them are about runtime internals (graphs, "
    "KV pools, sampling, verify kernels, DP/PP scheduling, disaggregation) rather than a "
    "draft/target config; a file named here may still hold a config check:",
    "  - `test/registered/unit/spec/` (239 files in the index; its listing shows the first 100, "
    f"98 of them test files, of which {98 - len(UNREAD_SPEC)} are read): not read from that "
    "listing: "
    + ", ".join(f"`{n}`" for n in UNREAD_SPEC)
    + "; the other 139 files are past the listing's cut (the index lists a folder's first 100 "
    "files, and `under` takes folders only, not a name prefix): "
    f"{len(PAST_CUT)} of them found by exact path (`find_files` with `path`, names taken from "
    "other files of the index that cite them) and read ("
    + ", ".join(f"`{n}`" for n in PAST_CUT)
    + "); found the same way and not read: "
    + ", ".join(f"`{n}`" for n in PAST_CUT_UNREAD)
    + "; the rest not found or not read;",
    "  - `test/registered/unit/speculative/` (18 files, 17 test files): none left, all 17 "
    "read (above);",
    "  - `test/registered/spec/` (149 files: `dflash/` 12, `dspark/` about 55, `eagle/` more "
    "than 30, the listing cut at 100): 3 read (above); the others, mostly GPU server tests and "
    "DSpark runtime internals, not read;",
    "  - `test/registered/unit/server_args/` (77 files, `test_server_args.py` with 1,556 stored "
    "versions): 3 read; `test/registered/unit/models/` (412 files): 6 read; "
    "`unit/model_executor/` (160): 2 read; `unit/configs/` (42): 3 read; `unit/arg_groups/` "
    "(3): 1 read; the rest not read.",
)


def _zlab_with(config: dict[str, Any]) -> dict[str, Any]:
    """The test's draft dict onto the z-lab Qwen3-8B b16 draft (its architecture, model type,
    head and MLP sizes, mask id): the test builds only the keys the parser reads. The z-lab
    draft's ``layer_types`` (5 entries) go, as the test's ``num_hidden_layers`` is 1."""
    draft = json.loads((REPO / ZLAB_DRAFT / "config.json").read_text())
    draft.pop("layer_types", None)
    for key, value in copy.deepcopy(config).items():
        if key == "dflash_config":
            draft["dflash_config"].update(value)
        else:
            draft[key] = value
    return draft


def _ordinary() -> dict[str, Any]:
    # _ordinary_dflash_config() of test_dflash_domino_config.py, written out.
    return {
        "vocab_size": 151936,
        "hidden_size": 4096,
        "num_hidden_layers": 1,
        "block_size": 16,
        "dflash_config": {"num_target_layers": 36, "target_layer_ids": [1, 9, 17, 25, 33]},
    }


def _domino() -> dict[str, Any]:
    # _domino_dflash_config(): the ordinary config plus the public b16 Domino checkpoint's keys.
    config = _ordinary()
    config["emb_dim"] = 256
    config["dflash_config"].update(
        {"projector_type": "domino", "gru_hidden_dim": 1024, "pure_draft_prefix_len": 1,
         "shift_label": True}
    )  # fmt: skip
    return config


def _domino_without(*path: str) -> dict[str, Any]:
    config = _domino()
    holder = config
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    return config


def _domino_with(key: str, value: Any) -> dict[str, Any]:
    config = _domino()
    config["dflash_config"][key] = value
    return config


_DOMINO_CHECK = f"{WHEEL}/speculative/dflash_utils.py"
DOMINO_ROWS: tuple[tuple[str, str, dict[str, Any], str | None, str], ...] = (
    ("test_ordinary_config_still_parses", "dflash-domino-ordinary-config", _ordinary(), None,
     f"{_DOMINO_CHECK}:588-800"),
    ("test_domino_config_parses", "dflash-domino-config", _domino(), None,
     f"{_DOMINO_CHECK}:734-791"),
    ("test_missing_gru_hidden_dim_fails", "dflash-domino-missing-gru-hidden-dim",
     _domino_without("dflash_config", "gru_hidden_dim"),
     "DFLASH Domino requires dflash_config.gru_hidden_dim", f"{_DOMINO_CHECK}:784-785"),
    ("test_missing_emb_dim_fails", "dflash-domino-missing-emb-dim", _domino_without("emb_dim"),
     "DFLASH Domino requires dflash_config.emb_dim", f"{_DOMINO_CHECK}:786-787"),
    ("test_unsupported_pure_draft_prefix_len_fails", "dflash-domino-pure-draft-prefix-len-2",
     _domino_with("pure_draft_prefix_len", 2),
     "DFLASH Domino currently requires pure_draft_prefix_len=1", f"{_DOMINO_CHECK}:779-783"),
    ("test_non_bool_shift_label_fails", "dflash-domino-shift-label-not-bool",
     _domino_with("shift_label", 1),
     "DFLASH Domino requires dflash_config.shift_label to be a bool", f"{_DOMINO_CHECK}:774-778"),
)  # fmt: skip
"""(test, case id, the test's draft dict, 0.5.23's message where it refuses, where 0.5.23
gives the verdict). The test itself asserts no message (``assertRaises(ValueError)``; for the
prefix length ``NotImplementedError``, where 0.5.23 raises ValueError: refused either way)."""


_WORKER = f"{WHEEL}/speculative/dflash_worker_v2.py"
_DP = ["--enable-dp-attention", "--dp-size", "2", "--tp-size", "2", "--enable-dp-lm-head"]
"""DP attention as SGLang's DFLASH accepts it at resolution (arg_groups/speculative_hook.py
:303-317: CUDA, the DP LM head, no context parallelism)."""
WORKER_ROWS: tuple[tuple[str, dict[str, Any], list[str], str | None, str], ...] = (
    ("dflash-domino-dp-attention", _domino(), _DP,
     "DFLASH with dp attention supports plain DFlash and DFlash2 drafts; Domino and LiLiCorr "
     "heads are not supported.", f"{_WORKER}:455"),
    ("dflash-plain-dp-attention", _ordinary(), _DP, None, f"{_WORKER}:455"),
    ("dflash-domino-num-draft-tokens-1", _domino(), ["--speculative-num-draft-tokens", "1"],
     "DFLASH Domino requires speculative_num_draft_tokens > 1, got 1.", f"{_WORKER}:525"),
    ("dflash-domino-vocab-other-tokenizer", {**_domino(), "vocab_size": 151669}, [],
     "DFLASH Domino requires identical target and draft vocab sizes, got target=151936, "
     "draft=151669.", f"{WHEEL}/speculative/domino_utils.py:157"),
    ("dflash-domino-vocab-padded", {**_domino(), "vocab_size": 152064}, [],
     "DFLASH Domino requires identical target and draft vocab sizes, got target=151936, "
     "draft=152064.", f"{WHEEL}/speculative/domino_utils.py:157"),
    ("dflash-plain-vocab-padded", {**_ordinary(), "vocab_size": 152064}, [], None,
     f"{WHEEL}/speculative/domino_utils.py:157"),
)  # fmt: skip
"""SGLang's Domino start-up refusals that no test read pins (issue 29, item 2): the DFlash
worker's guards when it starts (``dflash_worker_v2.py:455-460``, ``:464-490`` with
``validate_domino_runtime``, ``:525-529``), each with a plain DFlash control where the guard
is Domino's alone: (case id, the draft dict onto the z-lab draft, the server arguments, 0.5.23's
message where it refuses, the line that decides). The resolution of the server arguments
(``_handle_dflash``, arg_groups/speculative_hook.py:287-445) raises nothing of Domino's own."""


def _worker_cases() -> list[dict[str, Any]]:
    """The cases of ``WORKER_ROWS``: from the release's code, no test (``test`` names the
    line)."""
    return [
        {
            "id": case_id,
            "test": f"{where} (no test read)",
            "source": where,
            "release_check": where,
            "method": "dflash",
            "num_speculative_tokens": 15,
            "target": QWEN3_8B,
            "draft": _zlab_with(draft),
            "server_args": server_args,
            "expect": "refused" if message else "accepted",
            "expect_stage": "load" if message else None,
            "expect_match": None,
            "engine_message": message,
        }
        for case_id, draft, server_args, message, where in WORKER_ROWS
    ]


def _unit_domino(**edits: Any) -> dict[str, Any]:
    """``_domino_config`` of test_dflash_domino.py, its Domino keys onto the ordinary draft
    (the z-lab draft's sizes, not the test's toy hidden 8 / vocabulary 31): ``dflash_config``
    edits merge, other keys replace, None stays null (the test's ``None``)."""
    config = _ordinary()
    config["emb_dim"] = 5
    config["dflash_config"].update(
        {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1,
         "gru_hidden_dim": 4, "emb_dim": 5}
    )  # fmt: skip
    config["dflash_config"].update(edits.pop("dflash_config", {}))
    config.update(edits)
    return config


_NESTED_ONLY = _unit_domino()
del _NESTED_ONLY["dflash_config"]["emb_dim"]
UNIT_DOMINO_ROWS: tuple[tuple[str, str, dict[str, Any], str | None, str | None, str], ...] = (
    ("TestDFlashDominoConfig::test_top_level_emb_dim_fallback", "dflash-domino-top-level-emb-dim",
     _NESTED_ONLY, None, None, f"{_DOMINO_CHECK}:752-773"),
    ("TestDFlashDominoConfig::test_invalid_domino_config_fails_fast[0]",
     "dflash-domino-fails-fast-shift-label", _unit_domino(dflash_config={"shift_label": 1}),
     "shift_label", "DFLASH Domino requires dflash_config.shift_label to be a bool, got 1.",
     f"{_DOMINO_CHECK}:774-778"),
    ("TestDFlashDominoConfig::test_invalid_domino_config_fails_fast[1]",
     "dflash-domino-fails-fast-prefix-len",
     _unit_domino(dflash_config={"pure_draft_prefix_len": 2}),
     "pure_draft_prefix_len", "DFLASH Domino currently requires pure_draft_prefix_len=1, got 2.",
     f"{_DOMINO_CHECK}:779-783"),
    ("TestDFlashDominoConfig::test_invalid_domino_config_fails_fast[2]",
     "dflash-domino-fails-fast-gru-null", _unit_domino(dflash_config={"gru_hidden_dim": None}),
     "gru_hidden_dim", "DFLASH Domino requires dflash_config.gru_hidden_dim.",
     f"{_DOMINO_CHECK}:784-785"),
    ("TestDFlashDominoConfig::test_invalid_domino_config_fails_fast[3]",
     "dflash-domino-fails-fast-emb-null",
     _unit_domino(dflash_config={"emb_dim": None}, emb_dim=None),
     "emb_dim", "DFLASH Domino requires dflash_config.emb_dim.", f"{_DOMINO_CHECK}:786-787"),
    ("TestDFlashDominoConfig::test_invalid_domino_config_fails_fast[4]",
     "dflash-domino-block-size-1", _unit_domino(block_size=1), "block_size > 1",
     "DFLASH Domino requires block_size > 1, got 1.", f"{_DOMINO_CHECK}:788-791"),
    ("TestDFlashDominoConfig::test_conflicting_emb_dim_fails", "dflash-domino-emb-dim-conflict",
     _unit_domino(emb_dim=6), "emb_dim differs",
     "DFLASH Domino emb_dim differs between dflash_config and the top-level config: 5 != 6.",
     f"{_DOMINO_CHECK}:764-771"),
)  # fmt: skip
"""The cases of test_dflash_domino.py (sgl-project/sglang@0ac97887b, CPU CI; run against the
0.5.23 wheel by the oracle's ``--engine-tests``, where these pass): (test, case id, the draft,
the regex the test matches, 0.5.23's message, where 0.5.23 decides). The rows of
``test_invalid_domino_config_fails_fast`` are numbered in the order the test runs them."""


def _unit_domino_cases(src: Path) -> list[dict[str, Any]]:
    out = []
    for test, case_id, draft, match, message, check in UNIT_DOMINO_ROWS:
        line = line_of(src, DOMINO_UNIT, test.split("[")[0])
        out.append(
            {
                "id": case_id,
                "test": f"{DOMINO_UNIT}::{test}",
                "source": f"sgl-project/sglang@{READ[DOMINO_UNIT][:9]}:{DOMINO_UNIT}:{line}",
                "release_check": check,
                "method": "dflash",
                "num_speculative_tokens": 15,
                "target": QWEN3_8B,
                "draft": _zlab_with(draft),
                "expect": "refused" if message else "accepted",
                "expect_stage": "load" if message else None,
                "expect_match": match,
                "engine_message": message,
            }
        )
    return out


MUSE_DRAFT = "tests/fixtures/drafts/meta-models--Muse-Glimmer-30B-assistant"
MUSE_TARGET = "tests/fixtures/targets/meta-models--Muse-Glimmer-30B"
"""A Muse-Glimmer target (model_type muse_glimmer, 52 layers) and its assistant, whose ids are
the test's ``[1, 13, 25, 37, 49]``."""
MUSE_ROWS: tuple[tuple[int, str, list[int]], ...] = (
    (0, "MuseGlimmerAssistantModel", [2, 14, 26, 38, 50]),
    (2, "DFlashDraftModel", [1, 13, 25, 37, 49]),
)
"""The ``muse_glimmer`` rows of ``test_muse_target_layer_id_mapping``'s table (row, the draft's
architecture, the ids 0.5.23 resolves). No case for row 1: the Muse assistant's config under
``DFlash2DraftModel`` lacks DFlash 2's selector keys, which 0.5.23 refuses when it builds the
draft (``models/dflash.py:1270-1273``), and the corpus has no Muse DFlash 2 draft; nor for the
``qwen3`` rows (3, 4): the corpus has no Qwen3 target with the 50 layers those ids need."""


def _muse_cases(src: Path) -> list[dict[str, Any]]:
    name = "test_muse_target_layer_id_mapping"
    line = line_of(src, SPEC_AUX, name)
    draft = json.loads((REPO / MUSE_DRAFT / "config.json").read_text())
    out = []
    for row, architecture, ids in MUSE_ROWS:
        out.append(
            {
                "id": f"muse-glimmer-ids-{architecture}",
                "test": f"{SPEC_AUX}::{name}[{row}]",
                "source": f"sgl-project/sglang@{READ[SPEC_AUX][:9]}:{SPEC_AUX}:{line}",
                "release_check": f"{WHEEL}/model_executor/model_runner_components/"
                "spec_aux_hidden_state.py:17-30, 254-258; models/muse_glimmer.py:866-879",
                "method": "dflash",
                "num_speculative_tokens": 15,
                "target": MUSE_TARGET,
                "draft": {**draft, "architectures": [architecture]},
                "expect": "accepted",
                "expect_stage": None,
                "expect_match": None,
                "engine_message": None,
                # SpecAuxHiddenStateConfig.dflash_target_layer_ids, which Muse-Glimmer's hook
                # captures as they are (before layer i: hidden_states[i], models/
                # muse_glimmer.py:866-879): the aux layers, in vLLM's numbering.
                "expect_aux_layers": ids,
            }
        )
    return out


_DSPARK_MASK = f"{WHEEL}/speculative/dspark_components/dspark_config.py"


def _dspark_mask_cases(src: Path) -> list[dict[str, Any]]:
    """``test_mask_uses_input_embedding_domain`` of test_dspark_checkpoint.py, its second
    assertion alone (``part``): a mask id equal to the vocabulary size, where the draft's input
    vocabulary is the target's, refused. 0.5.23 refuses it when the DSpark worker starts
    (``resolve_runtime_config``, dspark_config.py:119-128, called from dspark_worker_v2.py:261):
    here on the SpecForge Qwen3-8B DSpark draft, whose vocabulary is Qwen3-8B's 151936. The
    test's first assertion (that id accepted when the draft's input embedding has one more row)
    is what 0.5.23 does not do, and the test as a whole cannot pass on the wheel: ``part``
    records the failure its run there must show (``release_fails``, the message's pattern),
    which ``test_agreement.py`` checks against the recorded run (``--engine-tests``)."""
    test = "TestDSparkConfiguration::test_mask_uses_input_embedding_domain"
    line = assertion_line(src, DSPARK_CHECKPOINT, test, 2)
    draft = json.loads((REPO / DSPARK_DRAFT / "config.json").read_text())
    draft["dflash_config"]["mask_token_id"] = draft["vocab_size"]
    return [
        {
            "id": "dspark-mask-outside-target-vocab",
            "test": f"{DSPARK_CHECKPOINT}::{test}",
            "source": f"sgl-project/sglang@{READ[DSPARK_CHECKPOINT][:9]}:{DSPARK_CHECKPOINT}:"
            f"{line}",
            "release_check": f"{_DSPARK_MASK}:119-128",
            "part": {
                "assertion": 2,
                "line": line,
                "why": "its first assertion gives resolve_runtime_config an input_vocab_size, "
                f"which 0.5.23's does not take ({_DSPARK_MASK}:84-89); and the version read does "
                "not import on 0.5.23 (no configs/dspark.py, models/dspark.py's "
                "validate_dspark_d2t, dspark_config.py's resolve_markov_candidate_config)",
                "release_fails": r"^ModuleNotFoundError: No module named "
                r"'sglang\.srt\.configs\.dspark'$",
            },
            "method": "dspark",
            "num_speculative_tokens": 15,
            "target": QWEN3_8B,
            "draft": draft,
            "expect": "refused",
            "expect_stage": "load",
            # the test matches "input embedding", which 0.5.23's message does not say
            "expect_match": None,
            "engine_message": f"DSpark mask_token_id={draft['vocab_size']} is outside the target "
            f"vocab size {draft['vocab_size']}.",
        }
    ]


def cases(src: Path) -> list[dict[str, Any]]:
    """The cases of the tests read, at the lines of the versions read."""
    out = _muse_cases(src)
    for name, case_id, draft, message, check in DOMINO_ROWS:
        test = f"TestDFlashDominoConfigParsing::{name}"
        out.append(
            {
                "id": case_id,
                "test": f"{DOMINO}::{test}",
                "source": f"sgl-project/sglang@{READ[DOMINO][:9]}:{DOMINO}:"
                f"{line_of(src, DOMINO, test)}",
                "release_check": check,
                "method": "dflash",
                "num_speculative_tokens": 15,  # block_size 16: SGLang verifies 16 tokens a step
                "target": QWEN3_8B,
                "draft": _zlab_with(draft),
                "expect": "refused" if message else "accepted",
                "expect_stage": "load" if message else None,
                "expect_match": None,  # the test matches none; 0.5.23's message is engine_message
                "engine_message": message,
            }
        )
    return out + _unit_domino_cases(src) + _worker_cases() + _dspark_mask_cases(src)


def tests(src: Path) -> list[TestId | str]:
    """Every test read: those of the files kept in SRC with their lines, then the others."""
    listed: list[TestId | str] = [t for path in READ for t in tests_in(src, path)]
    listed += [f"{path}::{name}" for path, (_, names) in LISTED.items() for name in names]
    return listed


def _read_paragraph() -> str:
    rows = [f"- `{p}` @ `{c[:9]}`" for p, c in READ.items()]
    rows += [
        f"- `{p}` @ `{c[:9]}` ({PARTLY.get(p, 'read whole')}, not kept)"
        for p, (c, _) in LISTED.items()
    ]
    return (
        "Read from the index's stored versions of `sgl-project/sglang` (no version is the "
        "0.5.23 tag's); a case is made only where the 0.5.23 wheel's code gives the verdict "
        "the test asserts (`release_check` in each case):\n\n"
        + "\n".join(rows)
        + "\n\nCases from the 0.5.23 wheel's code that no test read pins (SGLang's Domino "
        "start-up refusals in the DFlash worker, with plain DFlash controls; `WORKER_ROWS`): "
        + ", ".join(f"`{row[0]}` ({row[4].removeprefix(WHEEL + '/')})" for row in WORKER_ROWS)
        + "."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mine/sglang.py")
    parser.add_argument("src", type=Path, help="the test files of READ, at their commits")
    args = parser.parse_args(argv)
    page = Page(ENGINE, RELEASE, "python tools/mine/sglang.py SRC", _read_paragraph(), NOT_READ)
    for path in write(page, cases(args.src), tests(args.src), REVIEWED):
        print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
