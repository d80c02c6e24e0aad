"""NextN draft checkpoints: a target's own MTP layer, exported as a separate draft.

SGLang serves DeepSeek-V3/R1 (and GLM) multi-token prediction from a checkpoint such as
``lmsys/DeepSeek-V3-0324-NextN``: the target's config with ``architectures``
``DeepseekV3ForCausalLMNextN``, and one decoder layer whose weights keep the target's layer
index, ``model.layers.{N}`` for a target of ``N`` layers. The MTP layer concatenates the
target's embedding and last hidden state (``eh_proj``) and decodes with a vocabulary-sized
head, so hidden size, vocabulary and ``N`` must all be the target's
(sglang==0.5.23:sglang/srt/models/deepseek_nextn.py:248-326). Which releases load a checkpoint
is read from each one's model registry by its architecture (the format's lookup,
``check/formats/__init__.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dflash_check.check.formats.common import config_architectures, file_fields
from dflash_check.fields import FieldReader
from dflash_check.views import DraftView, ModelFiles, special_token_ids

ARCHITECTURE_SUFFIX = "ForCausalLMNextN"
# A string that re compiles on first use: only a NextN draft needs it, and every pair imports
# this module (the format table).
_LAYER = r"(?:^|\.)layers\.(\d+)\."


def is_nextn_architecture(name: str) -> bool:
    """Return whether an ``architectures`` entry names a NextN checkpoint."""
    return name.endswith(ARCHITECTURE_SUFFIX)


def matches(config: Mapping[str, Any]) -> bool:
    """A NextN architecture (DeepseekV3ForCausalLMNextN, Glm4MoeForCausalLMNextN, …)."""
    return config.get("speculators_model_type") is None and any(
        is_nextn_architecture(a) for a in config_architectures(config)
    )


def normalise(files: ModelFiles) -> DraftView:
    """Read a NextN checkpoint: the target's dimensions, and its layer index from the header."""
    # Defined when a draft of this method is read: a DFlash pair's start-up never pays for the
    # class (method_facets.py).
    from dflash_check.method_facets import NextNFacts

    top = FieldReader(files.who, files.config_location, files.config)
    text = top.child("text_config") or top
    hidden = text.integer("hidden_size", required=True)
    assert hidden is not None  # required=True guarantees it
    layers = text.integer("num_hidden_layers")
    indices = sorted(
        {int(m.group(1)) for name in files.tensors or () if (m := re.search(_LAYER, name))}
    )
    return DraftView(
        name=files.name,
        method="mtp",
        architectures=top.strings("architectures") or (),
        num_hidden_layers=layers,
        hidden_size=hidden,
        vocab_size=text.integer("vocab_size"),
        target_hidden_size=None,
        target_layer_ids=None,
        layer_ids_key=None,
        # Its num_hidden_layers is the depth of the target it was exported from.
        num_target_layers=layers,
        num_target_layers_key=f"{text.prefix}num_hidden_layers" if layers else None,
        max_position_embeddings=text.integer("max_position_embeddings"),
        format="nextn",
        token_ids=special_token_ids((text,)),
        nextn=NextNFacts(tuple(indices)),
        **file_fields(files),
    )
