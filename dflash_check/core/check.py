"""Run every rule over a normalised pair and collect a ``CheckReport``."""

from __future__ import annotations

from dataclasses import replace

from dflash_check.core.model import (
    DraftView,
    ModelFiles,
    TargetView,
    normalise_draft,
    normalise_target,
)
from dflash_check.core.report import CheckReport, Finding, LayerResolution
from dflash_check.core.rules import RULES, PairContext, usable_ids
from dflash_check.core.runtimes import RuntimeProfile, select_profiles
from dflash_check.core.tokenizers import TokenizerComparison


def resolve_layers(
    draft: DraftView, target: TargetView, profiles: tuple[RuntimeProfile, ...]
) -> tuple[LayerResolution, ...]:
    """Resolve the draft's ids to each runtime's capture indices on this target."""
    ids = usable_ids(draft)
    if ids is None:
        return ()
    n = target.num_hidden_layers
    return tuple(
        LayerResolution(
            runtime=p,
            layer_ids=ids,
            capture_indices=tuple(p.capture_index(t) for t in ids),
            max_valid_id=p.max_layer_id(n),
            layers_needed=p.layers_needed(max(ids)),
            layers_present=n,
        )
        for p in profiles
    )


def check_views(
    draft: DraftView,
    target: TargetView,
    runtime: str = "portable",
    ignore: frozenset[str] = frozenset(),
    tokenizers: TokenizerComparison | None = None,
) -> CheckReport:
    """Apply every rule (except those in ``ignore``) to a normalised pair."""
    profiles = select_profiles(runtime)
    resolutions = resolve_layers(draft, target, profiles)
    ctx = PairContext(draft, target, profiles, resolutions, tokenizers)
    findings = [
        Finding(
            rule=r.id,
            severity=issue.severity or r.severity,
            runtime=issue.runtime,
            message=issue.message,
            hint=issue.hint or r.fix,
            field=issue.field,
            model=issue.model,
        )
        for r in RULES
        if r.id not in ignore
        for issue in r.check(ctx)
    ]
    return CheckReport(
        draft=draft,
        target=target,
        runtime=runtime,
        profiles=profiles,
        findings=tuple(findings),
        resolutions=resolutions,
    )


def run_check(
    draft_files: ModelFiles,
    target_files: ModelFiles,
    runtime: str = "portable",
    ignore: frozenset[str] = frozenset(),
    tokenizers: TokenizerComparison | None = None,
) -> CheckReport:
    """Normalise both models' files and check the pair."""
    report = check_views(
        normalise_draft(draft_files), normalise_target(target_files), runtime, ignore, tokenizers
    )
    # Provenance belongs to the files, not the views; attach it for the renderers.
    return replace(
        report,
        draft_revision=draft_files.revision,
        target_revision=target_files.revision,
        draft_location=draft_files.config_location,
        target_location=target_files.config_location,
        draft_fetched_bytes=draft_files.fetched_bytes,
        target_fetched_bytes=target_files.fetched_bytes,
    )
