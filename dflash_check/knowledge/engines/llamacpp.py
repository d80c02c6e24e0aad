"""llama.cpp: its commits read, what was reviewed in its code per range, and its stages.

At 0c1e57098 DFlash extracts the *input* of layer t + 1, no NextN path: t = N-1 aborts at the
first decode unless the model builds one after its last layer (DeepSeek-V4, Nemotron-H,
MiMo-V2); for t >= N the capture cannot be turned on, an abort at load. Both ran
(conformance).
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from dflash_check.knowledge.engines.handling import DraftHandling
from dflash_check.knowledge.engines.interface import (
    Engine,
    FamilyKey,
    ProfileKey,
    Release,
    Stage,
)
from dflash_check.knowledge.reviewed import Reviewed, inherit

if TYPE_CHECKING:
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp

_LLAMA_REPO = "ggml-org/llama.cpp"
_LLAMA_0C1E_SRC = "vendor/llama.cpp/"

RELEASES = (
    Release("llamacpp", "001d906a"),
    Release(
        "llamacpp",
        "0c1e57098",
        aliases=("llama-cpp-python-0.3.36", "0.3.36"),
        distributions=("llama-cpp-python",),
        read_from="llama-cpp-python==0.3.36",
    ),
)

_LLAMA_0C1E_DFLASH = MappingProxyType(
    {
        "max_id_from_end": 2,
        "out_of_range": "GGML_ASSERT 't_layer_inp[il] != nullptr && \"layer input "
        "tensor is null\"' when the first decode builds the graph (t = N-1 has no "
        "layer input on most families); past the last layer (t >= N) GGML_ASSERT "
        "'lid <= model.hparams.n_layer()' when the draft is attached, at load",
        "missing_layer_stage": "load",
        "mask_default": "mask id -1 (none in the GGUF), and the first draft aborts: "
        "GGML_ABORT 'get_sub_batch: failed to add embedding'",
        "id_keys": ("dflash_config.target_layer_ids", "target_layer_ids"),
        "citation": "llama-cpp-python==0.3.36:" + _LLAMA_0C1E_SRC + "conversion/"
        "qwen.py:735-738 (ids: the nested key, else the top-level one; + 1), :696-698 "
        "(mask: nested only); common/speculative.cpp:1056-1059 (capture turned on, "
        "at load: tools/server/server-context.cpp:1242); src/llama-context.cpp:1240 "
        "(t >= N); src/llama-graph.cpp:1381-1387, src/models/qwen3.cpp:72 (t = N-1, "
        "first decode); common/speculative.cpp:997, :1209, common/common.cpp:2165-2167 "
        "(mask id -1, first draft)",
    }
)
"""The llamacpp DFlash row as 0c1e57098's code reads drafts (``at_release``)."""
REVIEWED = (
    Reviewed(">=001d906a", repository=_LLAMA_REPO),
    Reviewed(
        "<0c1e57098",
        notes="read at the commit on GitHub; an id of N-1 reads the NextN (post-norm) embeddings",
    ),
    Reviewed(
        ">=0c1e57098",
        overrides=MappingProxyType({ProfileKey("dflash", "llamacpp"): _LLAMA_0C1E_DFLASH}),
        family_overrides=MappingProxyType(
            {
                # These models also build the input of layer N (after the last layer). Its
                # DeepSeek-V4 model does too, but no target family here is DeepSeek-V4
                # (knowledge/families.py), so a key for it could never apply.
                FamilyKey("dflash", family): MappingProxyType({"max_id_from_end": 1})
                for family in ("nemotron_h", "mimo_v2")
            }
        ),
        notes="the llama.cpp vendored by llama-cpp-python 0.3.36 (its CHANGELOG); an id of N-1 "
        "aborts unless the target's model builds the input of a layer past the last; the "
        "converter takes a top-level target_layer_ids when dflash_config has none",
    ),
)
"""What was reviewed in llama.cpp's code, per range of commits (``knowledge/reviewed.py``)."""

_S, _D = Stage.SILENT, Stage.FIRST_DECODE
STAGES = MappingProxyType(
    {
        "llamacpp": MappingProxyType(
            {
                # Negative ids read -1 as the embeddings, and a vocabulary mismatch and a
                # repeated id run silently (the draft borrows the target's head; run on
                # 0c1e57098).
                "DF002": _S,
                "DF007": _S,
                "DF036": _S,
                # An id past the layers fails when the first decode reads the layer (0c1e57098
                # refuses a layer the target lacks at load already: its profile's
                # missing_layer_stage); a missing mask token loads with mask id -1 and aborts
                # on the first draft block.
                "DF004": _D,
                "DF032": _D,
                "DF008": _D,
            }
        ),
    }
)
"""Runtime -> rule -> stage, where llama.cpp differs from the rule's default."""


@cache
def mtp_rows(_engine: Engine) -> tuple[EngineMtp, ...]:
    """What llama.cpp builds from a target's own MTP layers (``Engine.mtp``): not read."""
    # Its class is defined when asked: a pair check never reads the rows.
    from dflash_check.knowledge.engines.mtp_reading import EngineMtp

    return (
        EngineMtp(
            "llamacpp",
            (),
            "not verified: whether llama.cpp drafts from a GGUF's NextN layers was not read",
            "not verified",
            "not verified",
            "not verified",
            "ggml-org/llama.cpp (not read)",
            verified=False,
            builds=False,
        ),
    )


# The rules' questions (handling.py): its converter writes the GGUF from the draft's tensors,
# so a vocabulary tensor of the target's size decides the vocabulary, not the config (DF007;
# issue 29's runs on 0c1e57098).
HANDLING = DraftHandling(vocab_from_tensors=True)

ENGINE = Engine(
    "llamacpp",
    "llama.cpp",
    _LLAMA_REPO,
    inherit(RELEASES, REVIEWED),
    ("dflash", "eagle3"),
    stages=STAGES,
    mtp_rows=mtp_rows,
    handling=HANDLING,
)
