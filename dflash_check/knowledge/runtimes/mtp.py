"""MTP's rows of the runtime table: who serves a separate NextN draft checkpoint.

Only SGLang's NextN loader was read. vLLM serves MTP from the target's own checkpoint
(its ``num_nextn_predict_layers`` layers); that path and TensorRT-LLM's were not read, so they
have no row. The package (``knowledge/runtimes/__init__.py``) looks these rows up with the others.
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
        citation="sgl-project/sglang python/sglang/srt/models/deepseek_nextn.py "
        "(DeepseekV3ForCausalLMNextN: weights under model.layers.{config.num_hidden_layers}, "
        "'model.layers.61' mapped to model.decoder for DeepSeek-R1; eh_proj over the "
        "embedding and the target's hidden state; lm_head of vocab_size rows)",
        method="mtp",
    ),
)
