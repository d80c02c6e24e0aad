"""vLLM's MTP rows (``Engine.mtp`` of ``vllm.py``): what vLLM builds from a target's own MTP
layers, one row per branch of ``SpeculativeConfig.hf_config_override``, with the refusals and
reruns of the draft length. A module of its own so that ``vllm.py`` stays one screenful per
concern (releases, stages, serving), and imported only when its ``mtp_rows`` is called (a
target asked about alone, the listings), never by a pair check.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from dflash_check.knowledge import facts
from dflash_check.knowledge.engines.interface import Engine, Release
from dflash_check.knowledge.engines.mtp_reading import (
    EngineMtp,
    MtpRefusal,
    MtpReruns,
    MtpStepLimit,
)

# What vLLM builds from a target's own MTP layers (``Engine.mtp``): its
# SpeculativeConfig.hf_config_override rewrites the target's config into its MTP draft, each
# row one branch of it (what it builds reviewed once, ``BRANCHES``; its lines each release's
# own, from its facts), cited at the release selected.
_VLLM_ASK = '--speculative-config \'{"method": "mtp", "num_speculative_tokens": {k}}\''
_VLLM_UNCHECKED = "no completeness check found in its loader (behaviour not verified)"
_SPEC = "vllm/config/speculative.py"


@dataclass(frozen=True)
class _Read:
    """What every MTP row of one release cites beside its branch: where the release reads the
    draft length, reruns the layers, takes the per-family method names, and refuses a
    checkpoint without its MTP weights: ``path:lines`` of the release read in ``_READ``, a
    citation of the release judged once ``_read`` has resolved it."""

    tokens: str
    """Where it defaults the draft length to k and refuses a count that is not a multiple."""
    refusal: str
    """Where it raises on a count that is not a multiple of k."""
    warning: str
    """Where it warns that rerun layers may lower acceptance."""
    method: str
    """Where the per-family method names become mtp."""
    missing: str | None
    """Where the DeepSeek MTP loader refuses missing layer weights; None: no such check there."""


_SPECULATOR = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
# Reviewed per range of releases, each cited in the release that was read (a later release in
# the range cites them in its own facts where they hold the same message, else "read at",
# citations.cited_in): 0.34.0 moved the draft-length checks into the speculator configs and
# dropped the DeepSeek loader's completeness check.
_READ = (
    (
        ">=0.32,<0.33",
        "0.32.0",
        _Read(
            f"{_SPEC}:1489-1501",
            f"{_SPEC}:1493-1501",
            f"{_SPEC}:1376-1385",
            f"{_SPEC}:1141-1145",
            "vllm/model_executor/models/deepseek_mtp.py:524-533",
        ),
    ),
    (
        ">=0.33,<0.34",
        "0.33.0",
        _Read(
            f"{_SPEC}:1600-1612",
            f"{_SPEC}:1604-1612",
            f"{_SPEC}:1486-1495",
            f"{_SPEC}:1246-1250",
            "vllm/model_executor/models/deepseek_mtp.py:529-538",
        ),
    ),
    (
        ">=0.34",
        "0.34.0",
        _Read(
            f"{_SPECULATOR}:276-291",
            f"{_SPECULATOR}:283-291",
            "vllm/v1/worker/gpu/spec_decode/mtp/config.py:88-97",
            f"{_SPEC}:1375-1379",
            None,
        ),
    ),
)


def _read(release: Release, engine: Engine) -> _Read:
    """What ``release``'s MTP rows cite beside their branch: the entry of its range, each text
    a citation (``engine==version:path:lines``) resolved in its own facts where it was not the
    release read (``citations.cited_in``)."""
    from dflash_check.knowledge.citations import cited_in

    read, where = next(
        (r, w) for rng, r, w in reversed(_READ) if engine.in_range(release.version, rng)
    )

    def own(path: str | None) -> str | None:
        return None if path is None else cited_in(release, engine, f"vllm=={read}:{path}")

    return _Read(
        *(own(getattr(where, f.name)) for f in fields(_Read)),  # type: ignore[arg-type]
    )


_DRAFT_CLASS = re.compile(r"\b[A-Z]\w*MTP\w*\b")
"""A draft architecture named in a row's text (``Qwen3_5MTP``, ``DeepSeekMTPModel``)."""


@dataclass(frozen=True)
class _Branch:
    """A branch of ``hf_config_override`` as reviewed: the targets it takes (the model types
    and architectures it tests) and what it builds. Its lines are each release's own, read
    from the release's facts (``branch_lines``); a release whose branches test none of
    ``match`` has no row for it."""

    match: tuple[str, ...]
    draft: str
    deepseek: bool = False
    """Whether the DeepSeek MTP loader's check of the MTP weights applies."""
    on_missing: str = _VLLM_UNCHECKED
    parse: bool = False
    """Nemotron Parse 3.5's one trained step (``_parse``)."""


BRANCHES = (
    # DeepSeek-V3.2 and GLM-5 (DSA attention) get the V3.2 class, DeepSeek-V3 the other; the
    # branch reads model_type alone: an architecture naming V3.2 beside model_type deepseek_v3
    # gets DeepSeekMTPModel (vLLM 0.34.0's test_dsa_models_select_matching_mtp).
    _Branch(
        ("deepseek_v32", "glm_moe_dsa"),
        "DeepseekV32MTPModel (layers model.layers.{N}…)",
        deepseek=True,
    ),
    _Branch(("deepseek_v3",), "DeepSeekMTPModel (layers model.layers.{N}…)", deepseek=True),
    _Branch(("deepseek_v4",), "DeepSeekV4MTPModel", on_missing="not verified"),
    _Branch(("MiMoForCausalLM",), "MiMoMTPModel"),
    _Branch(("Glm4MoeForCausalLM",), "Glm4MoeMTPModel"),
    _Branch(("nemotron_h",), "NemotronHMTPModel (when num_nextn_predict_layers > 0)"),
    _Branch(("qwen3_next",), "Qwen3NextMTP"),
    _Branch(
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "Qwen3_5MTP / Qwen3_5MoeMTP (k from mtp_num_hidden_layers, top level or text_config)",
    ),
    _Branch(("step3p5", "step3p7"), "Step3p5MTP"),
    # Step 5 from 0.33.0 on (0.32.0 has no branch for it), pinned by vLLM 0.34.0's own tests
    # (conformance/mined/mtp_cases.py).
    _Branch(
        ("step5", "step5_vl"),
        "Step5MTP (k from num_nextn_predict_layers, text_config's for step5_vl)",
    ),
    _Branch(("bailing_hybrid", "BailingMoeV2_5ForCausalLM"), "BailingMoeV25MTPModel"),
    _Branch(
        ("qwen4_exp", "qwen4_exp_text"), "Qwen4ExpMTP (k from text_config.mtp_num_hidden_layers)"
    ),
    _Branch(
        ("inkling_mm_model", "inkling_model"),
        "InklingMTPModel (k from mtp_config.num_nextn_predict_layers; none: refused)",
    ),
    _Branch(("glm5_next",), "Glm5NextMTPModel (k from text_config.num_nextn_predict_layers)"),
    _Branch(
        ("minimax_m3_vl", "MiniMaxM3SparseForConditionalGeneration"),
        "MiniMaxM3MTP (k from text_config.num_mtp_modules)",
    ),
    # Nemotron Parse 3.5: one step, keyed on the architecture and the decoder's
    # causal_vision_prefix, whatever the config counts (knowledge/mtp_layers.py, KEYED_MTP);
    # 0.32.0 has no such branch (nor registers ParseAuxMTPModel).
    _Branch(
        ("RadioMBartPrefixForCausalLM",),
        "ParseAuxMTPModel (one step, when decoder.causal_vision_prefix)",
        parse=True,
    ),
)
"""The branches of ``hf_config_override`` reviewed (what each builds holds at every release
whose facts show the branch), in the order the rows are tried."""


def _span(text: str) -> tuple[int, int]:
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def branch_lines(override: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    """Return the lines of a release's ``hf_config_override`` (its facts) that take a target
    named by ``names``: each branch testing one of them, and each later ``if`` (not an
    ``elif``, which the taken branch excludes) testing the model type a taken branch rewrote
    the config to, merged where they touch (``831,847-862``). None: no branch tests them."""
    spans: list[tuple[int, int]] = []
    rewritten: set[str] = set()
    for branch in override.get("branches", ()):
        tested = {*branch.get("model_types", ()), *branch.get("architectures", ())}
        continued = not branch.get("elif") and rewritten & set(branch.get("model_types", ()))
        if tested & set(names) or continued:
            spans.append(_span(branch["lines"]))
            if "sets" in branch:
                rewritten.add(branch["sets"])
    if not spans:
        return None
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in merged)


def _row(branch: _Branch, release: Release, lines: str, engine: Engine) -> EngineMtp:
    """One branch's row at one release: how it asks and what it builds (the draft
    architectures its text names, looked up in the release's model registry), cited in that
    release (the branch's lines from its facts, the rest through ``_read``)."""
    src, read = release.spec, _read(release, engine)
    missing = (
        "refuses to load: 'MTP speculative decoding layer {N} weights missing from "
        f"checkpoint' ({read.missing})"
        if branch.deepseek and read.missing
        else branch.on_missing
    )
    row = EngineMtp(
        "vllm",
        branch.match,
        branch.draft,
        _VLLM_ASK,
        f"default k; above k only multiples of k (the layers are rerun), {read.tokens}",
        missing,
        f"{src}:{_SPEC}:{lines}; the per-family method names (deepseek_mtp, qwen3_5_mtp, "
        f"…) are deprecated aliases of mtp, {read.method}",
        reruns=MtpReruns("must be divisible by n_predict={k}", read.refusal, read.warning),
        drafts=tuple(dict.fromkeys(_DRAFT_CLASS.findall(branch.draft))),
        releases=f"=={release.version}",
    )
    return _parse(row, release, engine) if branch.parse else row


# Nemotron Parse 3.5's one trained step: refused above it while the speculative config is
# resolved, in SpeculativeConfig itself at 0.33.0 and in the MTP speculator config (which
# SpeculativeConfig calls through speculator_config.py:222) from 0.34.0 on.
_PARSE_STEPS = MtpStepLimit(
    1,
    "Parse 3.5 has only one trained MTP step",
    (
        ("0.33.0", "vllm==0.33.0:vllm/config/speculative.py:1587-1591"),
        ("0.34.0", "vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/mtp/config.py:101-106"),
    ),
)


def _parse(row: EngineMtp, release: Release, engine: Engine) -> EngineMtp:
    """Nemotron Parse 3.5's row: more draft tokens than its one step are refused at start-up,
    not rerun: no MtpReruns (DF044/DF045 do not speak for it), a step limit instead (DF059),
    cited at a release not read through its own facts (``citations.cited_in``)."""
    from dflash_check.knowledge.citations import cited_in

    limit = _PARSE_STEPS
    if release.version not in dict(limit.read):
        own = cited_in(release, engine, limit.read[-1][1])
        limit = replace(limit, read=(*limit.read, (release.version, own)))
    return replace(
        row,
        tokens=f"only 1: more is refused at start-up (DF059, {limit.at(release.version).citation})",
        reruns=None,
        step_limit=limit,
    )


# Kimi K2 at the releases that refuse it: where the method check raises on a model type that
# hf_config_override mapped to no MTP draft (read in each; closed: the later releases accept).
_KIMI_REFUSED = {"0.32.0": "1388-1391", "0.33.0": "1498-1501"}
_KIMI_ACCEPTED = ">=0.34"
"""The releases that accept method mtp on kimi_k2 at config (read in 0.34.0)."""


def _kimi_refused(release: Release, lines: str, raised: str) -> EngineMtp:
    """A release that maps ``kimi_k2`` to no MTP draft and refuses method mtp at start-up."""
    src = f"{release.spec}:{_SPEC}"
    return EngineMtp(
        "vllm",
        ("kimi_k2",),
        f"none: vLLM {release.version}'s hf_config_override maps kimi_k2 to no MTP draft "
        "(deepseek_v3, deepseek_v32 and glm_moe_dsa only)",
        "not available",
        "-",
        "-",
        f"{src}:{lines}",
        releases=f"=={release.version}",
        refusal=MtpRefusal(
            "NotImplementedError: Unsupported speculative method: 'mtp'", f"{src}:{raised}"
        ),
    )


def _kimi_accepted(release: Release, lines: str, engine: Engine) -> EngineMtp:
    """A release that accepts method mtp on ``kimi_k2`` at config, with the target's config as
    the draft's (read in 0.34.0; a later release cites that through its own facts)."""
    from dflash_check.knowledge.citations import cited_in

    accepted = cited_in(
        release,
        engine,
        "vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/speculator_config.py:308 (the method "
        "table knows mtp), :412-426 (the target's class declares no speculator to check it "
        "against)",
    )
    return EngineMtp(
        "vllm",
        ("kimi_k2",),
        "DeepseekV3ForCausalLM, the target's own class: hf_config_override maps kimi_k2 to no "
        f"MTP draft (no n_predict), and {release.version} accepts method mtp at config with "
        "the target's config as the draft's; what its MTP speculator builds from it is not "
        "verified",
        _VLLM_ASK,
        "not read (n_predict is unset)",
        "not verified",
        f"{release.spec}:{_SPEC}:{lines} (no branch for kimi_k2); accepted at config: {accepted}",
        verified=False,
        releases=f"=={release.version}",
    )


def _kimi(release: Release, override: Mapping[str, Any], engine: Engine) -> EngineMtp | None:
    """Kimi K2 (model_type kimi_k2, DeepseekV3ForCausalLM; vLLM loads its config through
    DeepseekV3Config, knowledge/mtp_layers.py): hf_config_override maps deepseek_v3,
    deepseek_v32 and glm_moe_dsa to deepseek_mtp, not kimi_k2, so the draft config keeps the
    target's model type, which no MTP draft has. Cited at the DeepSeek branch's lines; 0.32.0
    and 0.33.0 then refuse method mtp, 0.34.0 on accept it at config. A release whose facts
    show a branch for kimi_k2 itself says that branch was not reviewed. None: the release has
    no DeepSeek branch."""
    own = branch_lines(override, ("kimi_k2",))
    if own is not None:
        return _unreviewed(release, ("kimi_k2",), own)
    lines = branch_lines(override, ("deepseek_v3",))
    if lines is None:
        return None
    raised = _KIMI_REFUSED.get(release.version)
    if raised is not None:
        return _kimi_refused(release, lines, raised)
    if engine.in_range(release.version, _KIMI_ACCEPTED):
        return _kimi_accepted(release, lines, engine)
    return _unreviewed(release, ("kimi_k2",), lines)


def _unreviewed(release: Release, match: tuple[str, ...], lines: str) -> EngineMtp:
    """A release whose facts show hf_config_override's lines for a target whose answer there
    was not reviewed: it says so, unverified, rather than another release's answer."""
    return EngineMtp(
        "vllm",
        match,
        f"not read: vLLM {release.version}'s hf_config_override at these lines was not reviewed "
        "for this target",
        "not available",
        "-",
        "-",
        f"{release.spec}:{_SPEC}:{lines}",
        verified=False,
        releases=f"=={release.version}",
    )


def unreviewed_names(override: Mapping[str, Any], drafts: Collection[str]) -> list[tuple[str, ...]]:
    """The targets a release's ``hf_config_override`` has a branch for that no reviewed branch
    (``BRANCHES``, Kimi K2) takes: each branch's model types and architectures, leaving out
    branches that test only a model type another branch rewrites the config to (the second
    half of a reviewed one) and branches for a draft's config (an architecture of the
    release's draft registry, ``drafts``: DSpark and DFlash 2 drafts are rewritten there too).
    Such a target gets "not reviewed", never "no MTP draft": the release's code does something
    with it that was not read."""
    reviewed = {name for branch in BRANCHES for name in branch.match} | {"kimi_k2"}
    branches = override.get("branches", ())
    outputs = {b["sets"] for b in branches if "sets" in b}
    found: list[tuple[str, ...]] = []
    for branch in branches:
        names = (*branch.get("model_types", ()), *branch.get("architectures", ()))
        if not names or set(names) & reviewed or set(names) <= outputs or names in found:
            continue
        if set(branch.get("architectures", ())) & set(drafts):
            continue
        found.append(names)
    return found


def _no_branch(release: Release, override: Mapping[str, Any]) -> EngineMtp:
    """A release's answer for a target its hf_config_override has no branch for (the
    function's lines, from its facts)."""
    return EngineMtp(
        "vllm",
        (),
        f"none: vLLM {release.version} maps no MTP draft for this architecture",
        "not available",
        "-",
        "-",
        f"{release.spec}:{override['at']} (hf_config_override has no branch for it)",
        releases=f"=={release.version}",
    )


def rows(engine: Engine) -> tuple[EngineMtp, ...]:
    """vLLM's MTP rows, first match wins (``Engine.mtp``): per reviewed branch, one row per
    release whose facts show it; Kimi K2's; any other target's per release; and the
    catch-all of a release whose hf_config_override was not read. Built when asked, from the
    registered releases and their facts, so that a release added (its facts and its row)
    answers with its own lines; built again only when those change."""
    releases = engine.releases
    loaded = tuple(facts.load(r.engine, r.version) for r in releases)
    # The same releases and the same loaded facts (by identity: a test that registers a
    # release or rewrites a facts file clears the loader's cache) give the same rows; a
    # check asks several times (each MTP rule's runtimes, the engines' rows).
    if (
        _BUILT
        and _BUILT[0] is releases
        and all(a is b for a, b in zip(_BUILT[1], loaded, strict=True))
    ):
        return _BUILT[2]
    built = _rows(engine, releases, loaded)
    _BUILT[:] = [releases, loaded, built]
    return built


_BUILT: list[Any] = []
"""The last rows built, after the releases and facts they were built from."""


def _rows(
    engine: Engine, releases: tuple[Release, ...], loaded: tuple[facts.ReleaseFacts | None, ...]
) -> tuple[EngineMtp, ...]:
    # Each release whose facts read its hf_config_override, with that table (a release without
    # it gets no row but the catch-all's: never another release's).
    read = [
        (release, found.hf_config_override)
        for release, found in zip(releases, loaded, strict=True)
        if found is not None and found.hf_config_override
    ]
    read_drafts = [
        found.drafts for found in loaded if found is not None and found.hf_config_override
    ]
    branch_rows = [
        _row(branch, release, lines, engine)
        for branch in BRANCHES
        for release, override in read
        if (lines := branch_lines(override, branch.match)) is not None
    ]
    kimi = [
        row for release, override in read if (row := _kimi(release, override, engine)) is not None
    ]
    unreviewed = [
        _unreviewed(release, names, lines)
        for (release, override), drafts in zip(read, read_drafts, strict=True)
        for names in unreviewed_names(override, drafts)
        if (lines := branch_lines(override, names)) is not None
    ]
    return (
        *branch_rows,
        *kimi,
        *unreviewed,
        *(_no_branch(release, override) for release, override in read),
        EngineMtp(
            "vllm",
            (),
            "none read: this release's hf_config_override was not read",
            "not available",
            "-",
            "-",
            "hf_config_override not read at this release (read at "
            + ", ".join(release.spec for release, _ in read)
            + ")",
            verified=False,
        ),
    )
