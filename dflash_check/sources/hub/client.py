"""Talking to the Hub: the options, the bounded HTTP client given to huggingface_hub, and
whether offline mode is on (the flag or ``HF_HUB_OFFLINE``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dflash_check.sources.transport import LIMITS, make_transport


@dataclass(frozen=True)
class HubOptions:
    """How to talk to the Hub; built once from the command line."""

    token: str | None = None
    """Explicit token (``--token``); None lets huggingface_hub use ``HF_TOKEN`` or the login."""
    offline: bool = False
    """Use the cache only (``--offline``; ``HF_HUB_OFFLINE=1`` has the same effect)."""
    timeout: float = 10.0
    """Seconds to wait for each Hub response."""
    retries: int = 2
    """Extra attempts after a server error, timeout or connection failure."""
    backoff: float = 0.5
    """First wait between attempts, doubled each time."""
    on_retry: Callable[[str], None] | None = field(default=None, compare=False)
    """Told why and which attempt comes next before each retry (the CLI prints it on stderr)."""


_CLIENT_LOCK = threading.Lock()
_CLIENT_INSTALLED = False


def install_client() -> None:
    """Give huggingface_hub an HTTP client whose transport applies ``transport.bounded``."""
    global _CLIENT_INSTALLED
    with _CLIENT_LOCK:
        if _CLIENT_INSTALLED:
            return
        # huggingface_hub logs its own retries to stderr; this tool reports failures itself,
        # as one line, so its messages stay quiet unless DFLASH_CHECK_DEBUG asks for them.
        if os.environ.get("DFLASH_CHECK_DEBUG", "") in ("", "0"):
            import logging

            from huggingface_hub.utils import logging as hf_logging

            hf_logging.set_verbosity(logging.CRITICAL)
        import httpx2  # huggingface_hub's own HTTP client
        from huggingface_hub import set_client_factory
        from huggingface_hub.utils._http import hf_request_event_hook

        def factory() -> httpx2.Client:
            return httpx2.Client(
                event_hooks={"request": [hf_request_event_hook]},
                follow_redirects=True,
                timeout=None,
                transport=make_transport(),
            )

        set_client_factory(factory)
        _CLIENT_INSTALLED = True


@contextmanager
def measure() -> Iterator[list[int]]:
    """Count the body bytes this thread receives inside the block; the count is in ``box[0]``."""
    start = LIMITS.received
    box = [0]
    try:
        yield box
    finally:
        box[0] = LIMITS.received - start


def offline_mode(options: HubOptions) -> bool:
    """Return whether the cache must be used alone (flag or ``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants

    env = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    return options.offline or env or bool(constants.HF_HUB_OFFLINE)


def offline_switch(options: HubOptions) -> str:
    """Return what turned offline mode on, for hints: the flag, or the variable."""
    return "--offline" if options.offline else "HF_HUB_OFFLINE=1"


def offline_hint(options: HubOptions, then: str) -> str:
    """Return how to leave offline mode (naming what the user set) and what to run then."""
    if options.offline:
        return f"run the same command once without --offline to cache it, or {then}"
    return f"unset HF_HUB_OFFLINE (it is set in the environment) and run once online, or {then}"
