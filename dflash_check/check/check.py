"""Run every rule over a normalised pair and collect a ``CheckReport``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dflash_check.check import rules
from dflash_check.check.formats import format_named, normalise_draft
from dflash_check.check.report import (
    CheckReport,
    Evidence,
    Finding,
    LayerResolution,
    NotChecked,
    Severity,
)
from dflash_check.check.request import DEFAULT_SETTINGS, CheckSettings
from dflash_check.check.rules import PairContext, name_relation
from dflash_check.check.target import normalise_target
from dflash_check.errors import ConfigError
from dflash_check.knowledge.outcomes import stage_of
from dflash_check.knowledge.runtimes import (
    RuntimeProfile,
    method_rows,
    method_rows_title,
    on_family,
    resolve_ids,
)
from dflash_check.knowledge.selection import Selection, select_profiles
from dflash_check.views import DraftView, ModelFiles, TargetView

if TYPE_CHECKING:
    from dflash_check.check.tokenizers import TokenizerComparison


def profiles_for(
    selection: Selection, draft: DraftView, target: TargetView | None = None
) -> tuple[RuntimeProfile, ...]:
    """Return the runtimes to check, each as it behaves on the target's family: the
    selection, and for ``portable`` only the runtimes that load the draft's format, or all of
    them when none does (a runtime named explicitly is kept, and DF016 says why it cannot load
    the draft)."""
    profiles = select_profiles(selection, draft.method)
    rows = {p.name for p in method_rows(draft.method)}
    foreign = [c.runtime for c in selection.choices if c.runtime not in rows]
    if foreign:
        # A runtime with no row for this method (the z-lab reference for an EAGLE-3 head,
        # SpecForge's EAGLE-3 reading for a DFlash draft) cannot be judged, only refused.
        kind = method_rows_title(draft.method)
        raise ConfigError(
            f"draft {draft.name}: runtime {', '.join(foreign)} has no reading of {kind} in "
            f"this tool's table",
            hint=f"runtimes for {kind}: {', '.join(sorted(rows))} (or portable)",
        )
    if selection.portable:
        fmt = format_named(draft.format)
        loading = tuple(p for p in profiles if fmt.loads(p.name, draft, p.release))
        # No runtime loads it (a NextN architecture no release registers): every runtime is
        # judged, so that each one's refusal (DF016) is the answer, not a pass on none.
        profiles = loading or profiles
    family = target.family if target is not None else None
    return tuple(on_family(p, family) for p in profiles)


def rules_not_checked(draft: DraftView) -> tuple[NotChecked, ...]:
    """Return the rules the available files could not settle: the fc width (DF005, DF034 for
    an EAGLE-3 head, whose width rule needs no id list)."""
    eagle3 = draft.method == "eagle3"
    if draft.fc_weight_shape is not None or not (eagle3 or draft.target_layer_ids):
        return ()
    reason = draft.fc_unverified("no safetensors header")
    return (NotChecked("DF034" if eagle3 else "DF005", f"fc width: {reason}"),)


def identity_evidence(
    draft: DraftView, target: TargetView, tokenizers: TokenizerComparison | None
) -> tuple[Evidence, ...]:
    """Collect what says which target the draft was built for, next to the given target."""
    out = [
        Evidence(
            "num_target_layers",
            None if draft.num_target_layers is None else str(draft.num_target_layers),
            f"{target.num_hidden_layers} layers",
            None
            if draft.num_target_layers is None
            else draft.num_target_layers == target.num_hidden_layers,
        )
    ]
    for base in draft.base_model:
        out.append(
            Evidence("base_model", base, target.name, name_relation(base, target.name) != "other")
        )
    if not draft.base_model:
        out.append(Evidence("base_model", None, target.name, None))
    out.append(
        Evidence(
            "verifier",
            draft.verifier,
            target.name,
            None
            if draft.verifier is None
            else name_relation(draft.verifier, target.name) != "other",
        )
    )
    if tokenizers is None:
        out.append(Evidence("tokenizer", None, "not compared", None))
    elif tokenizers.same_file:
        out.append(Evidence("tokenizer", "same tokenizer.json hash", "same", True))
    else:
        out.append(
            Evidence(
                "tokenizer",
                f"{tokenizers.differing_ids} of {tokenizers.compared_ids} ids differ",
                "compared id by id",
                tokenizers.differing_ids == 0,
            )
        )
    return tuple(out)


def resolve_layers(
    draft: DraftView, target: TargetView, profiles: tuple[RuntimeProfile, ...]
) -> tuple[LayerResolution, ...]:
    """Resolve, per runtime, the ids it reads from the draft to its capture indices on this
    target (runtimes that end up with no list have no resolution; the rules say why)."""
    n = target.num_hidden_layers
    out = []
    for p in profiles:
        read = resolve_ids(p, draft, n)
        if read is None:
            continue
        out.append(
            LayerResolution(
                runtime=p,
                layer_ids=read.ids,
                capture_indices=tuple(p.capture_index(t) for t in read.ids),
                max_valid_id=p.max_layer_id(n),
                layers_needed=p.layers_needed(max(read.ids)),
                layers_present=n,
                key=read.key,
                raw_ids=read.raw,
                guessed=read.guessed,
            )
        )
    return tuple(out)


def check_views(
    draft: DraftView,
    target: TargetView,
    settings: CheckSettings = DEFAULT_SETTINGS,
    tokenizers: TokenizerComparison | None = None,
) -> CheckReport:
    """Apply every rule (except the ignored ones) to a normalised pair; the engine's draft
    length, when given, is checked against the draft's block size."""
    profiles = profiles_for(settings.selection, draft, target)
    resolutions = resolve_layers(draft, target, profiles)
    ctx = PairContext(
        draft,
        target,
        profiles,
        resolutions,
        tokenizers,
        settings.num_speculative_tokens,
        settings.speculative_method,
        settings.engine_settings,
    )
    every = [
        Finding(
            rule=r.id,
            severity=issue.severity or r.severity,
            runtime=issue.runtime,
            message=issue.message,
            hint=issue.hint or r.fix,
            field=issue.field,
            model=issue.model,
            stage=issue.stage or stage_of(r.id, issue.runtime)
            if (issue.severity or r.severity) is Severity.ERROR
            else None,
            stage_fixed=issue.stage is not None,
        )
        for r in rules.RULES  # read at call time: the one table, tests may extend it
        if draft.method in r.methods
        for issue in r.check(ctx)
        # A rule says what one engine does without asking whether that engine is selected:
        # an issue about a runtime left out of the check is not this check's.
        if issue.runtime is None or issue.runtime in ctx.selected
    ]
    # An ignored rule still runs: its findings are kept as suppressed, so that every format
    # can say what a clean verdict did not count (as SARIF ``suppressions`` and ruff's noqa).
    findings = [f for f in every if f.rule not in settings.ignore]
    suppressed = tuple(f for f in every if f.rule in settings.ignore)
    return CheckReport(
        draft=draft,
        target=target,
        selection=settings.selection,
        profiles=profiles,
        findings=tuple(findings),
        resolutions=resolutions,
        not_checked=tuple(n for n in rules_not_checked(draft) if n.rule not in settings.ignore),
        identity=identity_evidence(draft, target, tokenizers),
        strict=settings.strict,
        num_speculative_tokens=settings.num_speculative_tokens,
        speculative_method=settings.speculative_method,
        engine_settings=settings.engine_settings,
        ignored=tuple(sorted(settings.ignore)),
        suppressed=suppressed,
    )


def run_check(
    draft_files: ModelFiles,
    target_files: ModelFiles,
    settings: CheckSettings = DEFAULT_SETTINGS,
    tokenizers: TokenizerComparison | None = None,
) -> CheckReport:
    """Normalise both models' files and check the pair."""
    report = check_views(
        normalise_draft(draft_files), normalise_target(target_files), settings, tokenizers
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
