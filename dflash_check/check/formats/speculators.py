"""Speculators-format DFlash-family drafts (``speculators_model_type`` ``dflash``, ``dflash2``,
``dspark``), as vLLM serves them.

Source: ``vllm-project/speculators@c05b95b3`` (``src/speculators/convert/dflash/converter.py``
writes the format; ``algos.py`` in vLLM's speculators loader maps it back). The draft's own
dimensions sit under ``transformer_layer_config``; ``aux_hidden_state_layer_ids`` are vLLM aux
indices (``t + 1`` for DFlash layer id ``t``), so they are converted here, once, to the common
numbering; ``mask_token_id`` and ``block_size`` sit at the top level, where vLLM reads them.
vLLM's ``dflash2`` and ``dspark`` loaders map the same keys (``dflash2`` calls the ``dflash``
loader, then names the draft ``DFlash2DraftModel``; ``dspark`` maps the ids to top-level
``target_layer_ids`` as ``k - 1``): vllm==0.34.0:vllm/transformers_utils/configs/speculators/
algos.py:98-118, :121-175 (the loaders of every release with data: ``knowledge/data``).
"""

from __future__ import annotations

from dflash_check.check.formats.common import (
    file_fields,
    first_null,
    first_value,
    id_sources,
    speculators_layer,
    speculators_verifier,
    stated_type,
    token_id_facts,
)
from dflash_check.fields import FieldReader
from dflash_check.knowledge.runtimes import read_id_keys
from dflash_check.knowledge.runtimes.rows import AUX_READING, SPECULATORS_AUX_IDS
from dflash_check.views import (
    DFlashFacts,
    DraftView,
    ModelFiles,
    special_token_ids,
)

MODEL_TYPE = "dflash"
METHODS: dict[str, str] = {"dflash": "dflash", "dflash2": "dflash2", "dspark": "dspark"}
"""speculators_model_type -> the drafting method the vLLM loader of that name builds."""
AUX_KEY = SPECULATORS_AUX_IDS
# vLLM aux index k is the residual stream after k layers: DFlash id t = k - AUX_SHIFT (the
# runtime table's aux reading, to_output = AUX_READING).
AUX_SHIFT = -AUX_READING


def normalise(files: ModelFiles) -> DraftView:
    """Build the view of a speculators-format DFlash draft."""
    top = FieldReader(files.who, files.config_location, files.config)
    layer = speculators_layer(top, files, "draft")
    hidden = layer.integer("hidden_size", required=True)
    assert hidden is not None  # required=True guarantees it
    aux = top.integers(AUX_KEY)
    ids = None if aux is None else tuple(k - AUX_SHIFT for k in aux)
    conversion = None
    if aux is not None:
        conversion = (
            f"{AUX_KEY} [{', '.join(map(str, aux))}] are vLLM aux indices (t + {AUX_SHIFT}); "
            f"as DFlash layer ids: [{', '.join(map(str, ids or ()))}]"
        )
    mask, mask_key = first_value((top,), "mask_token_id")
    block, block_key = first_value((top,), "block_size")
    ntl, ntl_key = first_value((top,), "num_target_layers")
    verifier = speculators_verifier(top)
    tokens = special_token_ids((layer, top))
    # Absent, the type is read as DFlash (DFlashSpeculator) for the rules; which engine loads
    # the draft is looked up by the stated type alone (speculators_model_type below).
    method = METHODS.get(str(top.data.get("speculators_model_type")), "dflash")
    facts = DFlashFacts(
        block_size=block,
        block_size_key=block_key,
        mask_token_id=mask,
        mask_token_key=mask_key,
        mask_null_key=first_null((top,), "mask_token_id"),
        # vLLM's loader copies it into dflash_config.sample_from_anchor (speculators/algos.py).
        sample_from_anchor_key="sample_from_anchor" if top.data.get("sample_from_anchor") else None,
    )
    # This reader takes no DFlash 2 or DSpark key of the format: those facets are empty.
    dflash2 = dspark = None
    if method in ("dflash2", "dspark"):
        # Defined only when such a draft is read: a DFlash pair's start-up never pays for the
        # classes (method_facets.py).
        from dflash_check.method_facets import DFlash2Facts, DSparkFacts

        dflash2 = DFlash2Facts() if method == "dflash2" else None
        dspark = DSparkFacts() if method == "dspark" else None
    return DraftView(
        name=files.name,
        method=method,  # type: ignore[arg-type]
        architectures=top.strings("architectures") or (),
        num_hidden_layers=layer.integer("num_hidden_layers"),
        hidden_size=hidden,
        vocab_size=layer.integer("vocab_size") or top.integer("vocab_size"),
        # null means "the verifier's hidden size" in the speculators format: nothing to compare.
        target_hidden_size=top.integer("target_hidden_size"),
        target_layer_ids=ids,
        layer_ids_key=AUX_KEY if aux is not None else None,
        num_target_layers=ntl,
        max_position_embeddings=layer.integer("max_position_embeddings"),
        format="speculators",
        speculators_model_type=stated_type(top),
        layer_ids_conversion=conversion,
        layer_ids_null_key=first_null((top,), AUX_KEY),
        num_target_layers_key=ntl_key,
        verifier=verifier,
        verifier_key="speculators_config.verifier.name_or_path" if verifier else None,
        draft_vocab_size=top.integer("draft_vocab_size"),
        token_ids=token_id_facts(mask_key, mask, tokens),
        id_sources=id_sources(top, read_id_keys()),
        # vLLM's speculators loader lifts transformer_layer_config to the top level.
        layer_types=layer.strings("layer_types"),
        sliding_window=layer.integer("sliding_window"),
        dflash=facts,
        dflash2=dflash2,
        dspark=dspark,
        **file_fields(files),
    )
