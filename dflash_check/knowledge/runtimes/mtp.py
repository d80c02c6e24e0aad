"""MTP's rows of the runtime table: who serves a separate NextN draft checkpoint.

Only SGLang's NextN loader was read. vLLM takes a separate checkpoint as an MTP draft too, but
builds its class from the checkpoint's ``model_type`` (``Release.draft_class_from_config``:
deepseek_v3 -> ``DeepSeekMTPModel``), not its ``*ForCausalLMNextN`` architecture; its loading
of one was not read through, and TensorRT-LLM's not at all, so they have no row. The package
(``knowledge/runtimes/__init__.py``) looks these rows up with the others.
"""

from __future__ import annotations

from dflash_check.knowledge.engines import SGLANG
from dflash_check.knowledge.runtimes.rows import RuntimeProfile

MTP_PROFILES: tuple[RuntimeProfile, ...] = (
    RuntimeProfile(
        name=SGLANG.name,
        title="SGLang (NextN draft checkpoint)",
        index_name="MTP layer model.layers.{N}, after the target's last layer",
        shift=0,
        max_id_from_end=0,
        id_readings=(),
        mask_keys=(),
        without_ids="needs no layer ids: the MTP layer reads the target's last hidden state",
        out_of_range="not applicable",
        citation="sglang==0.5.23:sglang/srt/models/deepseek_nextn.py:248-326 "
        "(DeepseekV3ForCausalLMNextN: eh_proj over the embedding and the target's hidden "
        "state, :101-104; lm_head of vocab_size rows, :294-300; 'model.layers.61' mapped to "
        "model.decoder for DeepSeek-R1, :252-259; weights under "
        "model.layers.{config.num_hidden_layers}, "
        "models/deepseek_common/deepseek_weight_loader.py:570-577)",
        method="mtp",
    ),
)
