"""Read models from the Hugging Face Hub through huggingface_hub, kilobytes at a time.

What is fetched, and nothing else:

* ``model_info`` (the repo's file list, resolved commit, gated flag, card ``base_model``);
* ``config.json`` through ``hf_hub_download``, so it lands in the standard HF cache;
* for a draft, the safetensors *header* of the file holding ``fc.weight`` (ranged reads), and
  ``model.safetensors.index.json`` when the checkpoint is sharded.

The facts beyond ``config.json`` are kept in a small manifest per (repo, commit) under
``$HF_HOME/dflash-check/`` so that ``--offline`` / ``HF_HUB_OFFLINE=1`` can re-check a pair from
the cache alone. Every huggingface_hub exception is translated once, in ``errors``, into the
``HubError`` tree; nothing above this package sees a transport exception.

The package, by role: ``client`` (options, installing the bounded HTTP client, offline mode),
``errors`` (the translation), ``manifest`` (the facts
cached per repo and commit, and the HF cache's folders), ``source`` (``HubSource``, the
``ModelSource`` that fetches).
"""

from __future__ import annotations

from dflash_check.sources.hub.client import HubOptions
from dflash_check.sources.hub.source import HubSource

__all__ = ["HubOptions", "HubSource"]
