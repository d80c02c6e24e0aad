"""The JSON report: one object with a ``schema_version``, stable for machines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dflash_check.check.report import CheckReport, Finding, LayerResolution
from dflash_check.knowledge.outcomes import Stage, earliest
from dflash_check.knowledge.runtimes import RuntimeProfile
from dflash_check.render.diagnostics import Diagnostic, counts, grouped
from dflash_check.views import DFlashFacts, DraftView, TargetView

if TYPE_CHECKING:  # types only: a plain check never loads these modules
    from dflash_check.method_facets import Eagle3Facts
    from dflash_check.smoke.report import SmokeReport

SCHEMA_VERSION = 3
"""3: a pair's report names the engine settings it was judged with (``engine_settings``).
2: one finding per problem with the runtimes it applies to, and a ``summary`` of counts
(1 had one finding per runtime and no counts). docs/report.schema.json describes it."""


def _list(values: tuple[Any, ...] | None) -> list[Any] | None:
    """Return a tuple as a JSON list (None stays null)."""
    return None if values is None else list(values)


def _tensor(fact: tuple[str, tuple[int, ...]] | None) -> dict[str, Any] | None:
    """Return a header tensor's (dtype, shape) as ``{"dtype", "shape"}`` (None stays null)."""
    return None if fact is None else {"dtype": fact[0], "shape": list(fact[1])}


def eagle3_dict(e: Eagle3Facts) -> dict[str, Any]:
    """Return an EAGLE-3 head's own facts as plain JSON data."""
    return {
        "num_aux_hidden_states": e.num_aux_hidden_states,
        "num_aux_layers": e.num_aux_layers,
        "d2t": _tensor(e.d2t),
        "t2d": _tensor(e.t2d),
        "lm_head_rows": e.lm_head_rows,
        "rope": dict(e.rope),
        "layer_model_type": e.layer_model_type,
        "use_aux_hidden_state": e.use_aux_hidden_state,
    }


def draft_dict(d: DraftView) -> dict[str, Any]:
    """Return the draft view as plain JSON data: schema 2's ``draft`` object, field by field.

    Schema 2 published every field the view had when it was built with ``asdict``, in that
    order; they are kept, in that order, so that version 2 stays what it was (a field is
    dropped or moved only with a new ``SCHEMA_VERSION``). The facets are flattened back into
    it: a method's keys are null or empty for a draft without that method's facet.
    """
    f = d.dflash or DFlashFacts()  # null and empty for a draft of another method
    k = d.dspark  # None for a draft of another method: its keys are null and empty
    return {
        "name": d.name,
        "method": d.method,
        "architectures": list(d.architectures),
        "num_hidden_layers": d.num_hidden_layers,
        "hidden_size": d.hidden_size,
        "vocab_size": d.vocab_size,
        "target_hidden_size": d.target_hidden_size,
        "target_layer_ids": _list(d.target_layer_ids),
        "layer_ids_key": d.layer_ids_key,
        "block_size": f.block_size,
        "block_size_key": f.block_size_key,
        "mask_token_id": f.mask_token_id,
        "mask_token_key": f.mask_token_key,
        "num_target_layers": d.num_target_layers,
        "max_position_embeddings": d.max_position_embeddings,
        "fc_weight_name": d.fc_weight_name,
        "fc_weight_shape": _list(d.fc_weight_shape),
        "has_safetensors": d.has_safetensors,
        "base_model": list(d.base_model),
        "format": d.format,
        "layer_ids_conversion": d.layer_ids_conversion,
        "layer_ids_null_key": d.layer_ids_null_key,
        "mask_null_key": f.mask_null_key,
        "num_target_layers_key": d.num_target_layers_key,
        "verifier": d.verifier,
        "verifier_key": d.verifier_key,
        "draft_vocab_size": d.draft_vocab_size,
        "token_ids": dict(d.token_ids),
        "vocab_tensor": list(d.vocab_tensor) if d.vocab_tensor else None,
        "has_d2t": d.has_d2t,
        "unverified_reason": d.unverified_reason,
        "dflash2_keys": [list(key) for key in d.dflash2.keys] if d.dflash2 else [],
        # Every id key as the config states it (EAGLE-3 heads may state several).
        "id_sources": [{"key": s.key, "ids": _list(s.ids)} for s in d.id_sources],
        "layer_types": _list(d.layer_types),
        "sliding_window": d.sliding_window,
        "dflash2_tensors": [[name, list(shape)] for name, shape in d.dflash2_tensors],
        "sample_from_anchor_key": f.sample_from_anchor_key,
        "mask_token": f.mask_token,
        "model_type": d.model_type,
        "markov_rank": k.markov_rank if k else None,
        "markov_rank_key": k.markov_rank_key if k else None,
        "markov_head_type": k.markov_head_type if k else None,
        "markov_head_type_key": k.markov_head_type_key if k else None,
        "markov_rank_keys": list(k.markov_rank_keys) if k else [],
        "has_lm_head": d.has_lm_head,
        "mask_sources": [list(s) for s in k.mask_sources] if k else [],
        "eagle3": None if d.eagle3 is None else eagle3_dict(d.eagle3),
        "nextn_layers": list(d.nextn.layers) if d.nextn else [],
        "top_level_keys": list(f.top_level_keys),
    }


def target_dict(t: TargetView) -> dict[str, Any]:
    """Return the target view as plain JSON data: schema 2's ``target`` object."""
    return {
        "name": t.name,
        "architectures": list(t.architectures),
        "model_type": t.model_type,
        "nested": t.nested,
        "num_hidden_layers": t.num_hidden_layers,
        "layers_key": t.layers_key,
        "hidden_size": t.hidden_size,
        "vocab_size": t.vocab_size,
        "max_position_embeddings": t.max_position_embeddings,
        "token_ids": dict(t.token_ids),
        "family": t.family,
        "model_types": list(t.model_types),
        "lm_head_quantization": t.lm_head_quantization,
        "rope": dict(t.rope),
    }


def finding_dict(f: Finding) -> dict[str, Any]:
    """Return a finding as plain JSON data."""
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "runtime": f.runtime,
        "message": f.message,
        "hint": f.hint,
        "field": f.field,
        "model": f.model,
        # When the engine shows the error: load, first-decode or silent (null: not an error,
        # or not known).
        "stage": f.stage.value if f.stage is not None else None,
    }


def problem_dict(report: CheckReport, d: Diagnostic, group: tuple[Finding, ...]) -> dict[str, Any]:
    """Return one problem as the table shows it: once, with the runtimes it applies to, and
    each runtime's own wording under ``messages`` (one entry when they all say the same)."""
    every = list(report.runtime_verdicts)
    by_message: dict[str, list[str]] = {}
    for f in group:
        by_message.setdefault(f.message, []).extend([f.runtime] if f.runtime else every)
    messages = [{"runtimes": rts, "message": m} for m, rts in by_message.items()]
    stages = problem_stages(report, group, every)
    return {
        "rule": d.rule,
        "severity": d.severity.value,
        "runtimes": list(d.runtimes) or every,
        "every_runtime": not d.runtimes,
        "message": messages[0]["message"] if len(messages) == 1 else d.headline or d.rule,
        "messages": messages,
        "hint": d.hint,
        "field": d.field,
        "model": d.model,
        # When each engine shows the error: load, first-decode or silent (the earliest under
        # "stage"; null: not an error, or not known).
        "stage": stage.value
        if (stage := earliest(stages.values()) or earliest(f.stage for f in group))
        else None,
        "stages": {runtime: s.value for runtime, s in stages.items()},
    }


def problem_stages(
    report: CheckReport, group: tuple[Finding, ...], every: list[str]
) -> dict[str, Stage]:
    """Return runtime -> when it shows the problem: a finding about every runtime takes each
    runtime's own stage (``Finding.stage_for``), as the runtimes' verdicts do, so that the
    problem's stage and ``runtime_releases`` never disagree."""
    stages: dict[str, Stage] = {}
    for f in group:
        runtimes = [f.runtime] if f.runtime else [r for r in every if report.applies(f, r)]
        for runtime in runtimes:
            stage = earliest((stages.get(runtime), f.stage_for(runtime)))
            if stage is not None:
                stages[runtime] = stage
    return stages


def resolution_dict(r: LayerResolution) -> dict[str, Any]:
    """Return one runtime's layer resolution as plain JSON data."""
    return {
        "index_name": r.runtime.index_name,
        "key": r.key,
        "raw_ids": list(r.raw_ids),
        "guessed": r.guessed,
        "layer_ids": list(r.layer_ids),
        "capture_indices": list(r.capture_indices),
        "max_valid_id": r.max_valid_id,
        "layers_needed": r.layers_needed,
        "layers_present": r.layers_present,
        "out_of_range": list(r.out_of_range),
        # The HF hidden_states indices the runtime feeds (t + 1 for layer output t).
        "hidden_states": list(r.hidden_states),
    }


def release_dict(report: CheckReport, p: RuntimeProfile) -> dict[str, Any]:
    """Return the engine release a runtime's verdict is for, its runner and its failure stage."""
    rel = p.release
    stage = report.runtime_stages.get(p.name)
    return {
        "engine": p.engine_name,
        "release": rel.spec if rel else None,
        "version": rel.version if rel else None,
        "runner": p.runner,
        "runner_choice": rel.runner_choice if rel else None,
        "stage": stage.value if stage is not None else None,
        "stage_text": stage.text if stage is not None else None,
    }


def report_dict(report: CheckReport) -> dict[str, Any]:
    """Return the whole report as the JSON object docs/report.schema.json describes."""
    problems = grouped(report, short=False)
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": report.verdict.value,
        "verdict_text": report.verdict_text,
        "strict": report.strict,
        "runtime": report.selection.spec,
        "num_speculative_tokens": report.num_speculative_tokens,
        "speculative_method": report.speculative_method,
        # Only what differs from each engine's defaults: {} for a pair given no settings.
        "engine_settings": report.engine_settings.stated(),
        "draft": {
            **draft_dict(report.draft),
            "revision": report.draft_revision,
            "config": report.draft_location,
            "fetched_bytes": report.draft_fetched_bytes,
        },
        "target": {
            **target_dict(report.target),
            "revision": report.target_revision,
            "config": report.target_location,
            "fetched_bytes": report.target_fetched_bytes,
        },
        "runtimes": {name: v.value for name, v in report.runtime_verdicts.items()},
        "layer_resolution": {r.runtime.name: resolution_dict(r) for r in report.resolutions},
        # Which release of which engine each verdict is for, and when a failing one fails.
        "runtime_releases": {p.name: release_dict(report, p) for p in report.profiles},
        "summary": {**counts(tuple(d for d, _ in problems)), "problems": len(problems)},
        "findings": [problem_dict(report, d, group) for d, group in problems],
        "not_checked": [{"rule": n.rule, "reason": n.reason} for n in report.not_checked],
        # Rules asked to be ignored, and what they found: never counted, always listed.
        "ignored_rules": list(report.ignored),
        "suppressed": [
            {
                "rule": f.rule,
                "severity": f.severity.value,
                "runtime": f.runtime,
                "message": f.message,
                "hint": f.hint,
            }
            for f in report.suppressed
        ],
        "identity": [
            {"fact": e.fact, "draft": e.draft, "target": e.target, "agrees": e.agrees}
            for e in report.identity
        ],
        # The check names a smoke run by what it reads of it (SmokeResult); this is the run.
        "smoke": smoke_run(report.smoke),
    }


def smoke_run(smoke: object) -> dict[str, Any] | None:
    """Return the smoke run as JSON data when the report has one (a ``SmokeReport``), else
    None."""
    if smoke is None:
        return None
    from dflash_check.smoke.report import SmokeReport  # here: a plain check never loads it

    return smoke_dict(smoke) if isinstance(smoke, SmokeReport) else None


def bundled_dict(smoke: SmokeReport) -> dict[str, Any] | None:
    """Return ``--compare-bundled``'s measurement (null when not asked for)."""
    b = smoke.bundled
    if b is None:
        return None
    return {
        "tau": b.tau,
        "prompts": b.prompts,
        "block_size": b.block_size,
        "lossless": b.lossless,
        "why_not": b.why_not,
    }


def smoke_dict(smoke: SmokeReport) -> dict[str, Any]:
    """Return the smoke run as plain JSON data."""
    return {
        "device": smoke.device,
        "dtype": smoke.dtype,
        "block_size": smoke.block_size,
        "temperature": smoke.temperature,
        "lossless": smoke.lossless,
        "mean_acceptance_length": round(smoke.mean_acceptance_length, 4),
        "min_acceptance": smoke.min_acceptance,
        "min_acceptance_reason": smoke.min_acceptance_reason,
        "min_acceptance_source": smoke.min_acceptance_source,
        "bundled": bundled_dict(smoke),
        "passed": smoke.passed,
        "acceptance_rate_per_position": [round(r, 4) for r in smoke.acceptance_rate_per_position],
        "acceptance_length_histogram": {str(k): v for k, v in smoke.histogram().items()},
        "tokens_per_second": round(smoke.tokens_per_second, 2),
        # null, not 0: without a plain decode there is no baseline speed and no speedup.
        "baseline_tokens_per_second": round(smoke.baseline_tokens_per_second, 2)
        if smoke.has_baseline
        else None,
        "speedup": round(smoke.speedup, 3) if smoke.has_baseline else None,
        "draft_architecture": smoke.draft_architecture,
        "rollbacks": [{"layers": r.layers, "method": r.method} for r in smoke.rollbacks],
        "replays": smoke.replays,
        "replayed_tokens": smoke.replayed_tokens,
        "peak_memory_bytes": smoke.peak_memory_bytes,
        "timing": {
            "repeats": smoke.repeats,
            "warmup": True,
            "statistic": "median",
            "speedups": [round(x, 3) for x in smoke.speedups],
        },
        "prompts_note": smoke.prompts_note,
        "engine": engine_dict(smoke),
        "failure": None
        if smoke.failure is None
        else {
            "stage": smoke.failure.stage,
            "message": smoke.failure.message,
            "root_cause": smoke.failure.root_cause,
            "log": smoke.failure.log,
        },
        "cases": [
            {
                "prompt": c.prompt,
                "prompt_token_ids": list(c.prompt_token_ids),
                "output_token_ids": list(c.output_token_ids),
                "acceptance_lengths": list(c.acceptance_lengths),
                "lossless": c.lossless,
                "seconds": round(c.seconds, 6),
                "baseline_seconds": round(c.baseline_seconds, 6),
                "timings": [round(t, 6) for t in c.timings],
                "baseline_timings": [round(t, 6) for t in c.baseline_timings],
            }
            for c in smoke.cases
        ],
    }


def engine_dict(smoke: SmokeReport) -> dict[str, Any] | None:
    """Return which engine produced the smoke run and its counter totals (None: bundled)."""
    run, counts = smoke.engine, smoke.counts
    if run is None:
        return None
    return {
        "engine": run.engine,
        "mode": run.mode,
        "version": run.version,
        "endpoint": run.endpoint,
        "served_model": run.served_model,
        "draft_model": run.draft_model,
        "draft_verified": run.draft_evidence is not None,
        "draft_evidence": run.draft_evidence,
        "draft_match": run.draft_match,
        "tensor_parallel_size": run.tensor_parallel,
        "pipeline_parallel_size": run.pipeline_parallel,
        "baseline_endpoint": run.baseline_endpoint,
        "lossless_checked": run.baseline_endpoint is not None,
        "counters": None
        if counts is None
        else {
            "verify_steps": counts.steps,
            "drafted_tokens": counts.drafted_tokens,
            "accepted_tokens": counts.accepted_tokens,
            "accepted_per_position": list(counts.accepted_per_position),
            "accepted_histogram": list(counts.accepted_histogram),
        },
    }


def error_dict(message: str, hint: str | None, kind: str) -> dict[str, Any]:
    """Return the JSON object printed when a pair could not be checked (exit 3)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": "unknown",
        "error": {"kind": kind, "message": message, "hint": hint},
    }


def render_json(report: CheckReport) -> str:
    """Render a report as indented JSON."""
    return json.dumps(report_dict(report), indent=2) + "\n"
