"""The facets of a draft's view (``views.DraftView``) that a plain DFlash draft does not have:
DFlash 2's, DSpark's, EAGLE-3's and NextN's own keys.

They sit apart from ``views.py`` so that a check of a DFlash draft never defines them: each
format's normaliser imports this module when it reads a draft of such a method, and every frozen
class defined at import costs ``pair`` start-up time (``benchmarks/bench_pair.py``;
``tests/acceptance/test_imports.py`` holds it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Eagle3Facts:
    """What an EAGLE-3 head states beyond the common facts: the keys its runtimes size it by."""

    num_aux_hidden_states: int | None = None
    """``num_aux_hidden_states``: vLLM sizes fc by it before any id list."""
    num_aux_layers: int | None = None
    """``num_aux_layers``: vLLM's Qwen3 EAGLE-3 model sizes fc by it first."""
    d2t: tuple[str, tuple[int, ...]] | None = None
    """(dtype, shape) of the ``d2t`` draft-to-target id map in the header."""
    t2d: tuple[str, tuple[int, ...]] | None = None
    """(dtype, shape) of the ``t2d`` target-to-draft mask in the header."""
    lm_head_rows: int | None = None
    """Rows of the head's own ``lm_head.weight`` (its draft vocabulary), from the header."""
    rope: tuple[tuple[str, str], ...] = ()
    """(key, JSON text) of ``rope_theta`` and ``rope_scaling`` as the head states them."""
    layer_model_type: str | None = None
    """``model_type`` of the head's decoder layer (speculators: ``transformer_layer_config``)."""
    use_aux_hidden_state: bool = True
    """``eagle_config.use_aux_hidden_state``: False makes it an EAGLE-1/2-style head."""


@dataclass(frozen=True)
class DFlash2Facts:
    """What a DFlash 2 draft states beyond the DFlash facts: its convolution and selector keys."""

    keys: tuple[tuple[str, int | None, str | None], ...] = ()
    """DFlash 2's convolution and selector keys: (name, value, dotted key where found)."""
    stated: tuple[tuple[str, str], ...] = ()
    """(dotted key, its value as JSON) for the keys vLLM's Beam class reads besides those
    (``BEAM_KEYS`` in ``check/formats/zlab.py``), where the config states them."""


@dataclass(frozen=True)
class DSparkFacts:
    """What a DSpark draft states beyond the DFlash facts: its Markov head and every mask id."""

    markov_rank: int | None = None
    """DSpark's Markov-head rank as SGLang resolves it (``dspark_markov_rank``, the nested
    ``dspark_config`` / ``dflash_config``, ``text_config``, then the top level)."""
    markov_rank_key: str | None = None
    """Where ``markov_rank`` was found."""
    markov_head_type: str | None = None
    """DSpark's Markov-head type (``vanilla``, ``gated``, ``rnn``), resolved like the rank."""
    markov_head_type_key: str | None = None
    """Where ``markov_head_type`` was found."""
    markov_rank_keys: tuple[str, ...] = ()
    """Every dotted key that states a Markov rank (engines read different ones: vLLM's model
    classes only a top-level ``markov_rank`` or ``dspark_markov_rank``)."""
    mask_sources: tuple[tuple[str, int], ...] = ()
    """Every mask token id the config states (dotted key, id): engines take them in different
    orders (``dspark_noise_token_id`` first in SGLang, last in vLLM)."""
    omni_contract: tuple[tuple[str, str, str], ...] = ()
    """The values vLLM's Qwen3-Omni DSpark contract reads, as the JSON states them (name, dotted
    key where found, the value as JSON text: unvalidated, and hashable), each resolved in vLLM's
    own order; a name it does not find is absent (``check/rules/omni_dspark.py`` judges them)."""
    mla_contract: tuple[tuple[str, str], ...] = ()
    """The top-level values vLLM's MLA DSpark config reads (name, the value as JSON text), for
    the names the draft states (``check/rules/mla_dspark.py`` judges them)."""
    minimax_contract: tuple[tuple[str, str, str], ...] = ()
    """For a ``DSparkMiniMaxDraftModel`` draft, the values SGLang's translation of it reads
    (name, dotted key where found, the value as JSON text, a stated null included), each where
    SGLang takes it; a name it does not find is absent (``check/rules/minimax_dspark.py``)."""


@dataclass(frozen=True)
class NextNFacts:
    """What a NextN (MTP) checkpoint states beyond the common facts: where its layer sits."""

    layers: tuple[int, ...] = ()
    """Decoder-layer indices the checkpoint's weights carry (its MTP layer sits at the
    target's N), from the header."""
