"""Check a pair end to end: fetch both models (once each), compare tokenizers, run the rules.

This is the one place that wires the sources to the pure core; ``pair`` and ``registry`` both
call ``check_pair``. A ``ModelCache`` shared across calls fetches each distinct model once, also
when many registry pairs share it, and remembers failures so a broken model fails fast.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dflash_check.check.check import run_check
from dflash_check.check.formats.common import stated_mask_token
from dflash_check.check.report import CheckReport
from dflash_check.check.request import DEFAULT_SETTINGS, CheckSettings
from dflash_check.errors import CheckError
from dflash_check.knowledge.runtimes import SGLANG_DEFAULT_MASK_TOKEN
from dflash_check.sources.interface import ModelRef, ModelSource, Role
from dflash_check.sources.local import LocalSource
from dflash_check.views import ModelFiles

if TYPE_CHECKING:
    from dflash_check.check.target_alone import MtpReport
    from dflash_check.check.tokenizers import TokenizerComparison


@dataclass(frozen=True)
class CheckRequest:
    """One pair to check, fully parsed."""

    draft: ModelRef
    """The draft model."""
    target: ModelRef
    """The target model."""
    settings: CheckSettings = DEFAULT_SETTINGS
    """How to check it (the runtime selection, ignored rules, ``--strict``...)."""


# eq=False: a cache with locks, shared by identity; two caches are never compared.
@dataclass(eq=False)
class ModelCache:
    """Fetch each (model, role) once, across threads; failures are remembered too."""

    hub_factory: Callable[[], ModelSource] = field(default=lambda: _default_hub())
    """Builds the Hub source on first use: a check of two local folders never imports it."""
    local: ModelSource = field(default_factory=LocalSource)
    _hub: ModelSource | None = None
    _done: dict[tuple[ModelRef, Role], ModelFiles | CheckError] = field(default_factory=dict)
    _locks: dict[tuple[ModelRef, Role], threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    @property
    def hub(self) -> ModelSource:
        """Return the Hub source, building it on first use."""
        with self._guard:
            if self._hub is None:
                self._hub = self.hub_factory()
            return self._hub

    def source(self, ref: ModelRef) -> ModelSource:
        """Return the source that serves ``ref``."""
        return self.local if ref.is_local else self.hub

    def fetch(self, ref: ModelRef, role: Role) -> ModelFiles:
        """Return the model's files, fetching them on first use only."""
        key = (ref, role)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # concurrent askers of the same model wait for one fetch
            if key not in self._done:
                try:
                    self._done[key] = self.source(ref).fetch(ref, role)
                except CheckError as err:
                    self._done[key] = err
            result = self._done[key]
        if isinstance(result, CheckError):
            raise result
        return result


def _default_hub() -> ModelSource:
    """Return a Hub source with default options (imported only when a Hub model is named)."""
    from dflash_check.sources.hub import HubSource

    return HubSource()


def compare_tokenizers(
    cache: ModelCache, request: CheckRequest, draft: ModelFiles, target: ModelFiles
) -> TokenizerComparison | None:
    """Compare tokenizers when both models ship one: hashes first, vocabularies if needed."""
    if not draft.extras.get("tokenizer") or not target.extras.get("tokenizer"):
        return None
    # Imported here: most pairs ship no tokenizer on both sides, and pair's start-up pays for
    # every import (benchmarks/bench_pair.py).
    from dflash_check.check.tokenizers import TokenizerComparison, compare_vocabs

    draft_source, target_source = cache.source(request.draft), cache.source(request.target)
    if draft_source.tokenizer_fingerprint(draft) == target_source.tokenizer_fingerprint(target):
        return TokenizerComparison(same_file=True)
    return compare_vocabs(
        draft_source.tokenizer_vocab(draft),
        target_source.tokenizer_vocab(target),
        # SGLang looks the draft's mask token up in the tokenizer (DF022).
        lookup=(stated_mask_token(draft.config) or SGLANG_DEFAULT_MASK_TOKEN,),
    )


def check_pair(request: CheckRequest, cache: ModelCache | None = None) -> CheckReport:
    """Fetch, compare and check one pair; raise ``CheckError`` when it cannot be checked."""
    cache = cache or ModelCache()
    draft = cache.fetch(request.draft, "draft")
    target = cache.fetch(request.target, "target")
    tokenizers = compare_tokenizers(cache, request, draft, target)
    return run_check(draft, target, request.settings, tokenizers)


class GivenADraft(ValueError):
    """``pair MODEL`` named a draft: a forgotten TARGET, not a target without MTP layers."""


def target_alone(
    target: ModelRef,
    cache: ModelCache,
    settings: CheckSettings = DEFAULT_SETTINGS,
) -> MtpReport:
    """Answer ``pair TARGET``: the target's own MTP layers, for the engines the selection
    names. Raise ``GivenADraft`` for a draft (a usage error: its target is missing)."""
    from dataclasses import replace

    from dflash_check.check.formats import normalise_draft

    files = cache.fetch(target, "target")
    try:
        normalise_draft(replace(files, role="draft"))
    except CheckError:
        pass  # not a draft: the question stands
    else:
        # A forgotten TARGET must not read as "this model has no MTP layers".
        raise GivenADraft(
            f"{target.spec} is a draft; name its target too: dflash-check pair DRAFT TARGET"
        )
    return check_target_alone(target, cache, settings)


def _releases(settings: CheckSettings) -> dict[str, str | None] | None:
    """The engines the selection names, each at the release it selects (None: its newest): an
    engine left out says nothing, and an MTP draft a release does not register is not built.
    None for the default selection: every engine at its newest."""
    from dflash_check.knowledge.engines import registered

    chosen = settings.selection
    if chosen.portable_only:
        return None
    releases: dict[str, str | None] = {}
    for choice in chosen.choices:
        releases[choice.engine] = releases.get(choice.engine) or choice.version
    for engine in registered():
        if chosen.names_engine(engine.name):
            releases.setdefault(engine.name, None)
    return releases


def check_target_alone(
    target: ModelRef,
    cache: ModelCache | None = None,
    settings: CheckSettings = DEFAULT_SETTINGS,
) -> MtpReport:
    """Answer for a target asked about alone: its own MTP layers and what the engines the
    selection names make of them, at the releases it selects, served with its engine settings
    (the engines' own flags, ``--engine-arg``) and draft length.

    A local directory's tensor names (its index, or its headers) show whether the MTP weights
    are there; a Hub target is read from its config only (its index would cost another
    request per check, and the configs already name what the engines would build).
    """
    from dflash_check.sources.local import tensor_names

    cache = cache or ModelCache()
    files = cache.fetch(target, "target")
    if target.is_local:
        # The folder config.json was read from (a subfolder already resolved).
        names, where = tensor_names(Path(files.config_location).parent, files.who)
    else:
        names, where = None, "not read: a Hub target is checked from its config only"
    # A target asked about alone is the rare path: the pair check does not load the MTP table.
    from dflash_check.check.target_alone import check_target_mtp

    return check_target_mtp(
        files,
        names,
        where,
        settings.strict,
        settings.num_speculative_tokens,
        _releases(settings),
        settings.engine_settings,
    )
