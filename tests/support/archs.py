"""Tiny random-weight targets of every architecture family the smoke run must decode.

Each entry is a transformers model type with the smallest config that still has the family's
distinguishing layers: sliding windows shorter than the decode (with sinks for gpt-oss),
hybrid linear attention (Gated DeltaNet), shared-KV layers (Gemma 4), MLA (DeepSeek-V3), MoE
routing. All share the 64-token vocabulary of tests/fixtures/tiny, so the tiny tokenizer serves
every one of them. Built at test time from a fixed seed (a fraction of a second each).

The oracle drafter drives the decoder with the target's own greedy continuation and a planted
miss per block, so every acceptance length (none, partial, full) is exercised on every
architecture; random drafts would only ever get zero tokens accepted.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from dflash_check.smoke.decode import Proposal
from tests.support.paths import FIXTURES

TINY = FIXTURES / "tiny"
VOCAB = 64
WINDOW = 6  # shorter than every decode below, so windows slide and get rolled back

COMMON: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 512,
    "bos_token_id": 2,
    "eos_token_id": 3,
    "pad_token_id": 0,
    "tie_word_embeddings": False,
}
LINEAR = {
    "linear_num_value_heads": 4,
    "linear_num_key_heads": 2,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_conv_kernel_dim": 4,
}
MLA: dict[str, Any] = {  # DeepSeek-V3-style latent attention and MoE, shared by V3 and V3.2
    "head_dim": None,
    "num_key_value_heads": 4,  # MLA: one latent shared by every head
    "first_k_dense_replace": 1,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 16,
    "n_shared_experts": 1,
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "n_group": 1,
    "topk_group": 1,
}
HYBRID_LAYERS = ["linear_attention", "linear_attention", "full_attention"] * 2
SLIDING_LAYERS = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]


@dataclass(frozen=True)
class Arch:
    """One architecture of the matrix."""

    name: str
    model_type: str
    config: dict[str, Any]
    composite: bool = False
    """The config nests the text model under ``text_config`` (a multimodal wrapper)."""


MATRIX: tuple[Arch, ...] = (
    Arch("qwen3", "qwen3", {"num_hidden_layers": 4}),
    Arch("llama", "llama", {"num_hidden_layers": 4}),
    Arch(
        "qwen3_moe",
        "qwen3_moe",
        {
            "num_hidden_layers": 4,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 16,
        },
    ),
    Arch(
        "gpt_oss",
        "gpt_oss",
        {
            "num_hidden_layers": 4,
            "num_local_experts": 4,
            "num_experts_per_tok": 2,
            "sliding_window": WINDOW,
            "layer_types": SLIDING_LAYERS,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        },
    ),
    Arch(
        "gemma3",
        "gemma3_text",
        {
            "num_hidden_layers": 4,
            "sliding_window": WINDOW,
            "layer_types": SLIDING_LAYERS,
            "query_pre_attn_scalar": 8,
        },
    ),
    Arch(
        "gemma4",
        "gemma4_text",
        {
            "num_hidden_layers": 4,
            "sliding_window": WINDOW,
            "layer_types": SLIDING_LAYERS,
            "num_kv_shared_layers": 2,
            "vocab_size_per_layer_input": VOCAB,
            "hidden_size_per_layer_input": 8,
            "global_head_dim": 8,
        },
    ),
    Arch(
        "qwen3_next",
        "qwen3_next",
        {
            "num_hidden_layers": 6,
            "layer_types": HYBRID_LAYERS,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 16,
            "shared_expert_intermediate_size": 16,
            **LINEAR,
        },
    ),
    Arch(
        "qwen3_5", "qwen3_5_text", {"num_hidden_layers": 6, "layer_types": HYBRID_LAYERS, **LINEAR}
    ),
    Arch(
        "qwen3_5_vl",
        "qwen3_5",
        {
            "text_config": {
                **COMMON,
                "num_hidden_layers": 6,
                "layer_types": HYBRID_LAYERS,
                **LINEAR,
            },
            "vision_config": {
                "depth": 1,
                "hidden_size": 16,
                "intermediate_size": 16,
                "num_heads": 2,
                "out_hidden_size": 32,
                "patch_size": 4,
                "spatial_merge_size": 1,
                "temporal_patch_size": 1,
            },
        },
        composite=True,
    ),
    Arch(
        "deepseek_v3",
        "deepseek_v3",
        {
            "num_hidden_layers": 3,
            **MLA,
        },
    ),
    Arch(
        "deepseek_v32",
        "deepseek_v32",
        {
            "num_hidden_layers": 2,
            **MLA,
            "index_n_heads": 2,
            "index_head_dim": 16,
            # Random indexer scores are ReLU'd and tie at zero, and top-k breaks ties by shape
            # (block vs single token), in any decode. Selecting every key keeps the decode
            # comparable while the indexer keys are still cached, cropped and checked.
            "index_topk": 512,
        },
    ),
    Arch(
        "minimax_m2",
        "minimax_m2",
        {"num_hidden_layers": 3, "num_local_experts": 4, "num_experts_per_tok": 2, "rotary_dim": 4},
    ),
    Arch(
        "lfm2",
        "lfm2",
        {
            "num_hidden_layers": 4,
            "layer_types": ["conv", "full_attention", "conv", "full_attention"],
            "conv_L_cache": 3,
            "block_ff_dim": 64,
        },
    ),
    Arch(
        "falcon_h1",
        "falcon_h1",
        {
            "num_hidden_layers": 3,
            "mamba_d_ssm": 32,
            "mamba_n_heads": 4,
            "mamba_d_head": 8,
            "mamba_d_state": 8,
            "mamba_n_groups": 1,
            "mamba_chunk_size": 16,
        },
    ),
    Arch(
        "granitemoehybrid",
        "granitemoehybrid",
        {
            "num_hidden_layers": 3,
            "layer_types": ["mamba", "attention", "mamba"],
            "mamba_n_heads": 4,
            "mamba_d_head": 16,
            "mamba_d_state": 8,
            "mamba_n_groups": 1,
            "mamba_chunk_size": 16,
            "num_local_experts": 2,
            "num_experts_per_tok": 1,
            "shared_intermediate_size": 32,
        },
    ),
    Arch(
        "jamba",
        "jamba",
        {
            "num_hidden_layers": 2,
            "attn_layer_period": 2,
            "attn_layer_offset": 1,
            "expert_layer_period": 2,
            "num_experts": 2,
            "mamba_d_state": 8,
            "mamba_expand": 2,
            "mamba_dt_rank": 8,
            "use_mamba_kernels": False,
        },
    ),
    Arch("olmo_hybrid", "olmo_hybrid", {"num_hidden_layers": 3}),
)
BY_NAME = {a.name: a for a in MATRIX}
RECURRENT = (
    "qwen3_next",
    "qwen3_5",
    "qwen3_5_vl",
    "falcon_h1",
    "granitemoehybrid",
    "jamba",
    "olmo_hybrid",
)
"""Architectures with a recurrent state: rolled back from the states the cache records per token
(transformers 5.25 and later), else by restore + replay."""


def build_target(arch: Arch, seed: int = 0) -> Any:
    """Return the tiny random target of ``arch`` (float32, eval mode)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    values = arch.config if arch.composite else {**COMMON, **arch.config}
    values = {k: v for k, v in values.items() if v is not None}
    config = AutoConfig.for_model(arch.model_type, **values)
    torch.manual_seed(seed)
    if arch.composite:
        from transformers import AutoModelForImageTextToText

        model = AutoModelForImageTextToText.from_config(config)
    else:
        model = AutoModelForCausalLM.from_config(config)
    # Random init leaves near-uniform logits; a larger embedding spreads them so that greedy
    # choices are far from ties (the decode must be lossless, not lucky).
    with torch.no_grad():
        model.get_input_embeddings().weight.mul_(8.0)
        model.get_output_embeddings().weight.mul_(8.0)
        for module in model.modules():
            # Linear-attention and state-space layers: a slow decay and a louder output, as in
            # trained models, so that a state polluted by rejected tokens changes the output.
            a_log = getattr(module, "A_log", None)
            out = getattr(module, "out_proj", None)
            if isinstance(a_log, torch.nn.Parameter) and isinstance(out, torch.nn.Linear):
                a_log.fill_(-3.0)
                out.weight.mul_(4.0)
    return model.float().eval()


def text_config(model: Any) -> Any:
    """Return the decoder config of a model (the text config of a multimodal wrapper)."""
    return model.config.get_text_config(decoder=True)


def draft_config(model: Any, layer_ids: list[int], block_size: int = 4) -> dict[str, Any]:
    """Return a DFlash draft config that reads ``layer_ids`` of ``model``."""
    text = text_config(model)
    return {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": text.hidden_size,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "max_position_embeddings": 512,
        "vocab_size": VOCAB,
        "num_target_layers": text.num_hidden_layers,
        "attention_bias": False,
        "tie_word_embeddings": False,
        "dflash_config": {
            "target_layer_ids": layer_ids,
            "block_size": block_size,
            "mask_token_id": 4,
        },
    }


def save_pair(model: Any, folder: Path, block_size: int = 4, seed: int = 1) -> tuple[Path, Path]:
    """Save ``model`` with the tiny tokenizer, and a random DFlash draft for it, under ``folder``.

    Returns (draft dir, target dir), as a user would have them on disk.
    """
    from safetensors.torch import save_file

    from dflash_check.smoke.draft_model import DFlashDraft, DraftConfig

    target_dir, draft_dir = folder / "target", folder / "draft"
    model.save_pretrained(str(target_dir), safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(TINY / "target" / name, target_dir / name)
    layers = text_config(model).num_hidden_layers
    cfg = draft_config(model, [1, layers - 2], block_size)
    torch.manual_seed(seed)
    draft = DFlashDraft(DraftConfig.from_dict(cfg))
    draft_dir.mkdir(parents=True)
    (draft_dir / "config.json").write_text(json.dumps(cfg, indent=2))
    save_file(
        {k: v.contiguous() for k, v in draft.state_dict().items()}, draft_dir / "model.safetensors"
    )
    return draft_dir, target_dir


class OracleDrafter:
    """Proposes the target's own greedy continuation, with a planted miss per block.

    ``plan[k]`` is how many draft tokens of step k are right before the planted miss (cycled);
    a value of at least ``block_size - 1`` means the whole block is right.
    """

    def __init__(self, truth: list[int], plan: list[int], vocab: int = VOCAB) -> None:
        self.truth, self.plan, self.vocab = truth, plan, vocab
        self.step = 0

    def begin(self, prompt_ids: list[int], hidden_states: tuple[torch.Tensor, ...]) -> None:
        self.step = 0

    def propose(
        self, block: torch.Tensor, start: int, temperature: float, generator: Any
    ) -> Proposal:
        size = block.shape[1]
        right = self.truth[start + 1 : start + size]
        good = self.plan[self.step % len(self.plan)]
        self.step += 1
        tokens = list(right)
        if good < len(tokens):
            tokens[good] = (tokens[good] + 1) % self.vocab  # the planted miss
        return Proposal(torch.tensor(tokens, dtype=torch.long, device=block.device))

    def commit(self, hidden_states: tuple[torch.Tensor, ...], produced: int) -> None:
        pass


def oracle_lengths(n_prompt: int, max_new: int, block: int, plan: list[int]) -> list[int]:
    """Return the acceptance lengths the oracle plan must produce (no stop tokens)."""
    lengths, start, step, end = [], n_prompt, 0, n_prompt + max_new
    while start + 1 < end:
        size = min(block, end - start)
        good = min(plan[step % len(plan)], size - 1)
        produced = min(good + 1, end - start - 1)
        lengths.append(produced)
        start, step = start + produced, step + 1
    return lengths


def build_dflash2_draft(folder: Path, seed: int = 0) -> Path:
    """Write a DFlash2 draft derived from the tiny trained DFlash draft, in z-lab's format.

    Its convolutions start at the identity plus small random taps and dynamic kernels, and its
    candidate selector has random codebooks: the draft still predicts the tiny target well
    (blocks get accepted), while every DFlash2 part changes what it proposes. Codebooks are
    stored as bare tensors, as z-lab's checkpoints do.
    """
    from safetensors.torch import load_file, save_file

    cfg = json.loads((TINY / "draft" / "config.json").read_text())
    cfg["architectures"] = ["DFlash2DraftModel"]
    cfg["dflash_config"].update(
        conv_kernel_size=2, conv_group_size=16, selector_rank=8, selector_top_k=4
    )
    hidden, vocab, layers = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    groups = hidden // 16
    state = load_file(str(TINY / "draft" / "model.safetensors"))
    gen = torch.Generator().manual_seed(seed)

    def noise(*shape: int, std: float) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) * std

    for layer in range(layers):
        for conv in ("attention_conv", "mlp_conv"):
            base = noise(2, 2, hidden, std=0.05)
            base[:, 0] += 1.0  # tap 0 (the position itself) starts near the identity
            state[f"layers.{layer}.{conv}.base_kernel"] = base
            state[f"layers.{layer}.{conv}.kernel_projection.weight"] = noise(
                2 * 2 * groups, hidden, std=0.02
            )
    state["candidate_selector.predecessor_codebook"] = noise(vocab, 8, std=0.5)
    state["candidate_selector.successor_codebook"] = noise(vocab, 8, std=0.5)
    state["candidate_selector.hidden_projection.weight"] = noise(8, hidden, std=0.2)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    save_file({k: v.contiguous() for k, v in state.items()}, str(folder / "model.safetensors"))
    return folder
