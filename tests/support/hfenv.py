"""Make the huggingface_hub imported in this process see an environment as a new process would.

huggingface_hub reads ``HF_ENDPOINT``, ``HF_HOME``, ``HF_HUB_CACHE``, ``HF_HUB_OFFLINE``, the
token paths … into ``huggingface_hub.constants`` once, at import, and a few of its modules copy
some of them (``from ..constants import HF_HUB_CACHE``). Setting the variables in a test is
therefore not enough to point an in-process CLI run at the loopback Hub and a fresh cache:
``hf_environment`` evaluates ``constants.py`` again under the environment given, patches every
value that differs (in ``constants`` and in each loaded huggingface_hub module holding a copy),
and puts everything back afterwards. It also drops huggingface_hub's shared HTTP client (its
kept-alive connections belong to the previous test's server) and the project's
once-per-process client installation, so each run starts as a fresh process would.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from types import ModuleType
from typing import Any
from unittest import mock

_SCALARS = (str, bool, int, float, type(None))


def _fresh_constants() -> ModuleType:
    """Return ``huggingface_hub.constants`` evaluated again under the current environment,
    without replacing the module everyone imported."""
    spec = importlib.util.find_spec("huggingface_hub.constants")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _changed(current: ModuleType, fresh: ModuleType) -> dict[str, tuple[Any, Any]]:
    """Return name -> (old, new) for each environment-derived constant whose value differs."""
    out = {}
    for name, new in vars(fresh).items():
        if not name.isupper() or not isinstance(new, _SCALARS):
            continue
        old = getattr(current, name, None)
        if old != new:
            out[name] = (old, new)
    return out


@contextmanager
def hf_environment(env: Mapping[str, str]) -> Iterator[None]:
    """Set ``env`` in ``os.environ`` and point huggingface_hub (imported here, if not yet) at
    it for the duration of the block, as if the process had started with it."""
    import huggingface_hub.utils  # noqa: F401 - its modules take their copies of the originals
    from huggingface_hub import close_session, constants
    from huggingface_hub.utils import logging as hf_logging

    from dflash_check.sources.hub import client

    verbosity = hf_logging.get_verbosity()
    with ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, env))
        stack.enter_context(mock.patch.object(client, "_CLIENT_INSTALLED", False))
        changed = _changed(constants, _fresh_constants())
        holders = [constants] + [
            module
            for name, module in list(sys.modules.items())
            if name.startswith("huggingface_hub.")
            and module is not None
            and module is not constants
        ]
        for module in holders:
            for name, (old, new) in changed.items():
                if name in vars(module) and vars(module)[name] == old:
                    stack.enter_context(mock.patch.object(module, name, new))
        # huggingface_hub.model_info & co. are methods of one HfApi built at import, with the
        # endpoint of that moment.
        hf_api = sys.modules.get("huggingface_hub.hf_api")
        if "ENDPOINT" in changed and hf_api is not None and hasattr(hf_api, "api"):
            stack.enter_context(mock.patch.object(hf_api.api, "endpoint", changed["ENDPOINT"][1]))
        stack.callback(hf_logging.set_verbosity, verbosity)
        stack.callback(close_session)  # after the block, before the patches are undone
        close_session()
        yield
