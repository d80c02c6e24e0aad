"""Draft architectures the engines register under other names, read by the format they belong to.

vLLM and SGLang register DFlash 2 and DFlash drafts under several names (Beam, Ricursive,
MiniMax, XPress); each is read by the existing format whose keys its class reads, and each
pinned release that does not register it refuses it (DF016) from its own facts. Configs are
built per test from what the class reads (no weights).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.formats import FORMATS, NOT_CHECKED_YET, normalise_draft
from dflash_check.check.report import CheckReport
from dflash_check.errors import NotADraftError
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import ENGINES, Release
from dflash_check.knowledge.registered_drafts import reads_registry
from tests.support.helpers import FIXTURES, check_files, files
from tests.support.releases import read_in

DFLASH2 = FIXTURES / "drafts" / "z-lab--Qwen3.8-27B-DFlash2"
QWEN36_27B = FIXTURES / "targets" / "Qwen--Qwen3.6-27B"

FAMILY = re.compile(r"DFlash|DSpark|XPress")


def config(folder: Path) -> dict[str, Any]:
    """Return a fixture's config.json (a fresh copy)."""
    return copy.deepcopy(json.loads((folder / "config.json").read_text()))


def _registered() -> dict[str, list[str]]:
    """Return every DFlash-family draft architecture an extracted release registers, with the
    releases (``vllm==0.34.0``) that do."""
    found: dict[str, list[str]] = {}
    for engine in ENGINES:
        if not reads_registry(engine):
            continue
        for release in engine.releases:
            for arch in facts.for_release(release).drafts:
                if FAMILY.search(arch):
                    found.setdefault(arch, []).append(release.spec)
    return found


def test_every_registered_dflash_family_draft_is_read_by_a_format() -> None:
    """Contract: a DFlash, DFlash 2 or DSpark draft architecture any extracted release registers
    is read by a format, or is named in NOT_CHECKED_YET, whose reason its message gives."""
    read = {a for f in FORMATS for a in f.architectures}
    registered = _registered()
    assert registered  # the facts were read
    unread = {a for a in registered if a not in read} - set(NOT_CHECKED_YET)
    assert not unread, f"registered but not read by any format: {sorted(unread)}"
    # Each exception is still registered somewhere and still refused by name.
    for arch, why in NOT_CHECKED_YET.items():
        assert arch in registered
        assert arch not in read  # read by a format now: drop it from NOT_CHECKED_YET
        with pytest.raises(NotADraftError) as info:
            normalise_draft(files("draft", {**config(DFLASH2), "architectures": [arch]}))
        assert f"draft architecture {arch}" in str(info.value)
        assert why in str(info.value)


def _releases(arch: str) -> list[tuple[Release, bool]]:
    """Return (release, whether it registers ``arch``) for every extracted release."""
    return [
        (r, arch in facts.for_release(r).drafts)
        for e in ENGINES
        if reads_registry(e)
        for r in e.releases
    ]


def _check(cfg: dict[str, Any], release: Release) -> CheckReport:
    return check_files(files("draft", cfg), files("target", config(QWEN36_27B)), release.spec)


@pytest.mark.parametrize(
    "arch", ["DFlash2BeamDraftModel", "DFlash2RicursiveDraftModel", "MiniMaxDFlash2DraftModel"]
)
def test_dflash2_aliases_are_read_as_dflash2_and_judged_per_release(arch: str) -> None:
    """The aliases read DFlash 2's keys from dflash_config (SGLang's classes subclass
    DFlash2DraftModel; vLLM's Beam and Ricursive read the same keys): the view is the DFlash 2
    one, and a release refuses the draft (DF016) exactly where its model registry lacks it."""
    cfg = {**config(DFLASH2), "architectures": [arch]}
    # vLLM's own Beam class also needs its logit soft cap (DF018; the fixture's layers are
    # already all sliding and non-causal).
    cfg["dflash_config"]["final_logit_softcapping"] = 30.0
    view = normalise_draft(files("draft", cfg))
    assert (view.format, view.method) == ("z-lab", "dflash2")
    assert view.target_layer_ids == (5, 19, 33, 47, 61)
    assert view.dflash2 is not None
    assert dict((n, v) for n, v, _ in view.dflash2.keys)["selector_top_k"] == 16
    releases = _releases(arch)
    assert any(held for _, held in releases) and not all(held for _, held in releases)
    for release, held in releases:
        report = _check(cfg, release)
        refused = {f.rule for f in report.findings if f.rule == "DF016"}
        assert bool(refused) is not held, (release.spec, report.findings)
        if held:
            assert report.verdict.value == "compatible", (release.spec, report.findings)


def test_a_dflash2_alias_without_its_selector_keys_fails_where_it_loads() -> None:
    """The alias is checked, not waved through: vLLM's Beam class reads selector_top_k from
    dflash_config (models/beam/nvidia/dflash2.py:373-374), so a draft without it fails DF018."""
    cfg = {**config(DFLASH2), "architectures": ["DFlash2BeamDraftModel"]}
    del cfg["dflash_config"]["selector_top_k"]
    release = next(r for r, held in _releases("DFlash2BeamDraftModel") if held)
    report = _check(cfg, release)
    assert "DF018" in {f.rule for f in report.findings}
    assert report.verdict.value == "incompatible"


# -- DSparkMiniMaxDraftModel: vLLM's Markov key ------------------------------------------------

DSPARK_EXPORT = FIXTURES / "drafts" / "sgl-project--SpecForge-qwen3.6-27b-dspark-export"


def _minimax(nested: bool = False, **markov: Any) -> dict[str, Any]:
    """Return the DSpark export re-labelled as a MiniMax draft, its Markov rank set by ``markov``
    (dotted keys; the other rank keys removed); ``nested`` moves every key but
    ``architectures`` under ``text_config``, where both engines then read them."""
    cfg = {**config(DSPARK_EXPORT), "architectures": ["DSparkMiniMaxDraftModel"]}
    for key in ("markov_rank", "dspark_markov_rank"):
        cfg.pop(key, None)
    if nested:
        cfg = {"architectures": cfg.pop("architectures"), "text_config": cfg}
    for key, value in markov.items():
        parent, _, last = key.rpartition(".")
        (cfg.setdefault(parent, {}) if parent else cfg)[last] = value
    return cfg


def _df025_vllm(cfg: dict[str, Any]) -> list[str]:
    """Return DF025's vLLM messages for a MiniMax draft on the release that loads it."""
    release = next(r for r, held in _releases("DSparkMiniMaxDraftModel") if held)
    report = _check(cfg, release)
    return [f.message for f in report.findings if f.rule == "DF025" and f.runtime == "vllm"]


@pytest.mark.parametrize(
    ("nested", "markov", "expected"),
    [
        # vLLM sets markov_rank from dspark_markov_rank (config/speculative.py:1234-1250).
        (False, {"dspark_markov_rank": 256}, None),
        (False, {"markov_rank": 256}, "reads top-level dspark_markov_rank"),
        # With a text_config, vLLM reads the draft from it: a top-level key is not seen.
        (True, {"text_config.dspark_markov_rank": 256}, None),
        (True, {"dspark_markov_rank": 256}, "reads text_config.dspark_markov_rank"),
    ],
)
def test_vllm_reads_a_minimax_dspark_rank_from_dspark_markov_rank(
    nested: bool, markov: dict[str, Any], expected: str | None
) -> None:
    """DF025 has a row for vLLM's MiniMax DSpark, so its Markov key is checked, not skipped."""
    head = "text_config.markov_head_type" if nested else "markov_head_type"
    cfg = _minimax(nested, **markov, **{head: "vanilla"})
    found = _df025_vllm(cfg)
    if expected is None:
        assert not found, found
    else:
        (message,) = found
        assert expected in message and "AttributeError" in message


# -- DSparkMiniMaxDraftModel: the whole draft read from text_config ---------------------------


def _minimax_view(cfg: dict[str, Any]) -> Any:
    return normalise_draft(files("draft", cfg))


@pytest.mark.parametrize("nested", [False, True])
def test_a_minimax_dspark_draft_is_read_at_text_config_when_it_has_one(nested: bool) -> None:
    """Both engines read a MiniMax DSpark draft's config from its text_config (vLLM
    speculative.py:1234-1250, SGLang minimax_vl.py:64-111): the same draft, flat or nested,
    reads the same, and the view names each key where it was found."""
    root = "text_config." if nested else ""
    cfg = _minimax(nested, **{f"{root}dspark_markov_rank": 256})
    if nested:
        # Decoys at the top level: no engine reads them once it has a text_config.
        cfg.update(hidden_size=64, num_hidden_layers=1, vocab_size=32, block_size=4)
    view = _minimax_view(cfg)
    assert view.config_root == root
    assert view.architectures == ("DSparkMiniMaxDraftModel",)
    assert (view.hidden_size, view.num_hidden_layers, view.vocab_size) == (5120, 5, 248320)
    assert view.target_layer_ids == (2, 17, 32, 47, 62)
    assert view.layer_ids_key == f"{root}dflash_config.target_layer_ids"
    assert view.dflash is not None and view.dspark is not None
    assert (view.dflash.block_size, view.dflash.block_size_key) == (16, f"{root}block_size")
    assert view.dflash.mask_token_key == f"{root}dflash_config.mask_token_id"
    assert view.dspark.markov_rank_key == f"{root}dspark_markov_rank"
    assert {s.key for s in view.id_sources} == {f"{root}dflash_config.target_layer_ids"}


def test_other_dspark_drafts_keep_reading_the_top_level() -> None:
    """Only the MiniMax class swaps in its text_config; a Qwen3 DSpark draft with one is read
    at the top level (dspark_config.py reads only mask and Markov keys from it)."""
    cfg = {**config(DSPARK_EXPORT), "text_config": {"hidden_size": 64, "markov_rank": 8}}
    view = _minimax_view(cfg)
    assert view.config_root == ""
    assert view.hidden_size == 5120
    # ... but for the Markov rank, which SGLang takes from text_config before the top level.
    assert view.dspark is not None and view.dspark.markov_rank_key == "text_config.markov_rank"


def test_a_nested_minimax_dspark_draft_is_judged_by_its_text_config() -> None:
    """The check compares text_config's width with the target's and names the key it read; the
    ids each engine feeds are those under text_config."""
    release = next(r for r, held in _releases("DSparkMiniMaxDraftModel") if held)
    cfg = _minimax(True, **{"text_config.dspark_markov_rank": 256})
    report = _check(cfg, release)
    assert not [f for f in report.findings if f.rule == "DF006"]
    assert {r.key for r in report.resolutions} == {"text_config.dflash_config.target_layer_ids"}
    cfg["text_config"]["hidden_size"] = 4096
    (df006,) = [f for f in _check(cfg, release).findings if f.rule == "DF006"]
    assert "hidden_size 4096" in df006.message


def test_sglang_takes_a_minimax_drafts_top_level_noise_token_first() -> None:
    """SGLang copies the top-level dspark_* keys onto text_config (minimax_vl.py:67-68); vLLM
    reads text_config alone: two different mask ids are fed to the two engines (DF026)."""
    release = next(r for r, held in _releases("DSparkMiniMaxDraftModel") if held)
    cfg = _minimax(True, dspark_noise_token_id=7, **{"text_config.dspark_markov_rank": 256})
    report = _check(cfg, release)
    told = {f.runtime: f.field for f in report.findings if f.rule == "DF026"}
    assert told.get("vllm") == "text_config.dflash_config.mask_token_id", report.findings


def _sglang_ids(cfg: dict[str, Any]) -> Any:
    """Return the ids SGLang resolves for ``cfg`` on the 64-layer target (None: none)."""
    from dflash_check.knowledge.runtimes import PROFILES_BY_NAME, resolve_ids

    return resolve_ids(PROFILES_BY_NAME["sglang"], _minimax_view(cfg), 64)


@pytest.mark.parametrize("nested", [False, True])
def test_sglang_feeds_a_minimax_draft_its_dflash_config_ids_over_dspark_target_layer_ids(
    nested: bool,
) -> None:
    """SGLang overwrites a MiniMax draft's dspark_target_layer_ids with dflash_config's
    (minimax_vl.py:92-101), where it reads dspark_target_layer_ids first for other DSpark
    drafts (dspark_config.py:299-309)."""
    root = "text_config." if nested else ""
    cfg = _minimax(nested, **{f"{root}dspark_target_layer_ids": [1, 2, 3, 4, 5]})
    resolved = _sglang_ids(cfg)
    assert resolved.key == f"{root}dflash_config.target_layer_ids"
    assert resolved.raw == (2, 17, 32, 47, 62)
    # The same keys on a plain DSpark draft: SGLang takes dspark_target_layer_ids.
    plain = {**config(DSPARK_EXPORT), "dspark_target_layer_ids": [1, 2, 3, 4, 5]}
    assert _sglang_ids(plain).raw == (1, 2, 3, 4, 5)
    # Without dflash_config's list SGLang has none (KeyError), and guesses none either.
    text = cfg["text_config"] if nested else cfg
    del text["dflash_config"]["target_layer_ids"]
    assert _sglang_ids(cfg) is None


XPRESS = ("Qwen3XPressModel", "DFlashQwen3XPressModel")


def _xpress(arch: str, **top: Any) -> dict[str, Any]:
    """An XPress draft config as vLLM's class reads it: the DFlash keys (ids, mask token and
    block size in dflash_config, its DFlashQwen3ForCausalLM parent), the xpress_* refiner keys
    it defaults, and the vocabulary it compares with the target's."""
    cfg = {**config(DFLASH2), "architectures": [arch], "xpress_rank": 256, **top}
    for key in ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k"):
        del cfg["dflash_config"][key]
    return cfg


def _target_vocab() -> int:
    target = config(QWEN36_27B)
    return int(target.get("text_config", target)["vocab_size"])


@pytest.mark.parametrize("arch", XPRESS)
def test_xpress_drafts_are_read_as_dflash_and_judged_per_release(arch: str) -> None:
    """vLLM's XPress class is DFlashQwen3ForCausalLM plus a refiner head: the view is the
    DFlash one, and a full-vocabulary draft is compatible exactly where the release's model
    registry holds the class (0.33.0, 0.34.0), refused (DF016) elsewhere."""
    cfg = _xpress(arch)
    view = normalise_draft(files("draft", cfg))
    assert (view.format, view.method) == ("z-lab", "dflash")
    assert view.target_layer_ids == (5, 19, 33, 47, 61)
    assert view.dflash2 is None
    releases = _releases(arch)
    assert any(held for _, held in releases) and not all(held for _, held in releases)
    for release, held in releases:
        report = _check(cfg, release)
        assert ("DF016" in {f.rule for f in report.findings}) is not held, release.spec
        assert held is (release.xpress is not None), release.spec
        if held:
            assert report.verdict.value == "compatible", (release.spec, report.findings)


@pytest.mark.parametrize(
    ("top", "key"),
    [
        # A reduced draft vocabulary with its d2t map, which plain DFlash could serve.
        ({"draft_vocab_size": 32000}, "draft_vocab_size"),
        # Padding only: a note for a DFlash draft, a refusal for XPress.
        ({"vocab_size": "padded"}, "vocab_size"),
    ],
)
def test_xpress_refuses_any_other_draft_vocabulary_at_load(top: dict[str, Any], key: str) -> None:
    """'XPress currently requires a full-vocab draft': vLLM's class compares draft_vocab_size
    (else vocab_size) with the target's and raises when it is built (load), padding included;
    each release cites its own lines (a release after the one read: ``read at`` it). The same
    config named DFlashDraftModel is not refused."""
    vocab = _target_vocab()
    top = {k: (vocab + 256 if v == "padded" else v) for k, v in top.items()}
    lines = {"vllm==0.33.0": ":299-304", "vllm==0.34.0": ":317-322"}
    for release, held in _releases("Qwen3XPressModel"):
        if not held:
            continue
        report = _check(_xpress("Qwen3XPressModel", **top), release)
        refusals = [f for f in report.findings if f.rule == "DF007" and f.runtime == "vllm"]
        assert len(refusals) == 1, (release.spec, report.findings)
        (found,) = refusals
        assert found.severity.value == "error" and found.stage is not None
        assert found.stage.value == "load", found
        assert found.field == key
        assert "XPress currently requires a full-vocab draft" in found.message
        assert release.xpress is not None
        assert f"qwen3_xpress.py{lines[read_in(release.xpress.full_vocab)]}" in found.message
        assert report.verdict.value == "incompatible"
        plain = _check(_xpress("DFlashDraftModel", **top), release)
        assert not any(f.rule == "DF007" and f.severity.value == "error" for f in plain.findings), (
            release.spec,
            plain.findings,
        )


def test_xpress_vocabulary_refusal_is_not_blamed_on_model_runner_v1() -> None:
    """Model Runner V1 refuses an XPress draft while the config resolves (DF016), before the
    XPress class is built, so the class's full-vocab refusal (DF007) is V2's alone."""
    cfg = _xpress("Qwen3XPressModel", vocab_size=_target_vocab() + 512)
    held = [r for r, has in _releases("Qwen3XPressModel") if has and r.has_runner("V1")]
    assert held  # a release with both the XPress class and Model Runner V1
    for release in held:
        spec = f"vllm-v1=={release.version},vllm=={release.version}"
        report = check_files(files("draft", cfg), files("target", config(QWEN36_27B)), spec)
        errors = {(f.rule, f.runtime) for f in report.findings if f.severity.value == "error"}
        assert ("DF007", "vllm") in errors, report.findings
        assert ("DF007", "vllm-v1") not in errors, report.findings
        assert ("DF016", "vllm-v1") in errors, report.findings


def _beam(**top: Any) -> dict[str, Any]:
    """A DFlash 2 Beam draft that vLLM's own class builds: the fixture (all five layers
    sliding_attention, is_causal false) plus dflash_config.final_logit_softcapping."""
    cfg = {**config(DFLASH2), "architectures": ["DFlash2BeamDraftModel"], **top}
    cfg["dflash_config"]["final_logit_softcapping"] = 30.0
    return cfg


def _without(cfg: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        cfg.pop(key, None)
    return cfg


def _no_cap(cfg: dict[str, Any]) -> dict[str, Any]:
    del cfg["dflash_config"]["final_logit_softcapping"]
    return cfg


def _text_cap(cfg: dict[str, Any]) -> dict[str, Any]:
    cfg["dflash_config"]["final_logit_softcapping"] = "thirty"
    return cfg


@pytest.mark.parametrize(
    ("case", "field", "said"),
    [
        (lambda: _no_cap(_beam()), "dflash_config.final_logit_softcapping", "KeyError"),
        (lambda: _text_cap(_beam()), "dflash_config.final_logit_softcapping", "float("),
        (lambda: _beam(is_causal=True), "is_causal", "AssertionError: is_causal is true"),
        (lambda: _without(_beam(), "is_causal"), "is_causal", "AttributeError"),
        (
            lambda: _beam(layer_types=["sliding_attention"] * 4 + ["full_attention"]),
            "layer_types",
            "layer 4 is full_attention",
        ),
        (lambda: _beam(layer_types=["sliding_attention"] * 3), "layer_types", "IndexError"),
        # No layer_types: Qwen3Config derives full_attention below max_window_layers (5 here).
        (lambda: _without(_beam(), "layer_types"), "layer_types", "layer 0 is full_attention"),
    ],
)
def test_vllm_beam_class_refuses_what_its_constructor_needs(
    case: Any, field: str, said: str
) -> None:
    """vLLM's own DFlash2BeamDraftModel class (0.33.0, 0.34.0) reads the soft cap from
    dflash_config with no default and asserts non-causal sliding layers when it is built: an
    error at load on each release that has the class, citing that release's lines; SGLang's
    Beam, an alias of its DFlash2DraftModel, is not held to it."""
    lines = {"vllm==0.33.0": ":563-566", "vllm==0.34.0": ":564-567"}
    held = [r for r, has in _releases("DFlash2BeamDraftModel") if has]
    # Keyed by the release each was read in: a later release inherits its lines (read at).
    read = {r.spec: read_in(r.beam_dflash2_contract) for r in held if r.beam_dflash2_contract}
    assert set(read.values()) == set(lines)
    for release in held:
        report = _check(case(), release)
        beam = [f for f in report.findings if f.rule == "DF018"]
        if release.engine == "sglang":
            assert not beam and report.verdict.value == "compatible", report.findings
            continue
        assert [f.field for f in beam] == [field], (release.spec, report.findings)
        assert said in beam[0].message and lines[read[release.spec]] in beam[0].message
        assert beam[0].stage is not None and beam[0].stage.value == "load"
        assert report.verdict.value == "incompatible"


def test_qwen3_derived_sliding_layers_pass_the_beam_class() -> None:
    """Without layer_types, Qwen3Config makes every layer sliding when use_sliding_window is
    set and max_window_layers is 0: the class's assert passes, so the draft is compatible."""
    cfg = _without(_beam(max_window_layers=0), "layer_types")
    for release, held in _releases("DFlash2BeamDraftModel"):
        if held and release.beam_dflash2_contract:
            report = _check(cfg, release)
            assert report.verdict.value == "compatible", (release.spec, report.findings)


def test_dflash2_no_rope_layers_per_vllm_release() -> None:
    """vLLM 0.34 renames a DFlash2DraftModel stating no_rope_layers to its Ricursive class (a
    note: what the draft needs from the target is unchanged); 0.32 and 0.33 ignore the key and
    rotate every layer (a warning: nothing fails). Without the key nothing is said."""
    cfg = {**config(DFLASH2), "no_rope_layers": [1, 3]}
    seen = {}
    vllm = [r for e in ENGINES if e.name == "vllm" for r in e.releases]
    # The warning's hint names the first release that serves the key as trained.
    first = next(r for r in vllm if r.dflash2_nope is not None and r.dflash2_nope.honoured)
    for release in vllm:
        report = _check(cfg, release)
        said = [f for f in report.findings if f.field == "no_rope_layers"]
        assert len(said) == 1 and said[0].rule == "DF018", (release.spec, report.findings)
        seen[release.spec] = said[0].severity.value
        if said[0].severity.value == "warning":
            assert said[0].hint == f"Serve the draft with vLLM {first.version} or later."
        assert report.verdict.value == "compatible", report.findings
        assert not [
            f for f in _check(config(DFLASH2), release).findings if f.field == "no_rope_layers"
        ]
    assert seen["vllm==0.34.0"] == "info" and seen["vllm==0.33.0"] == "warning", seen


@pytest.mark.parametrize("arch", XPRESS)
def test_model_runner_v1_refuses_xpress_drafts_per_release(arch: str) -> None:
    """vLLM runs XPress under method dflash and tells it by the draft's class; Model Runner V1
    of 0.33.0 refuses it while the config resolves ('Model Runner V1 does not support: xpress
    speculative decoding', config/vllm.py:3114-3115): DF016 at load. 0.32.0's V1 has no XPress
    class at all (its model registry refusal), V2 serves it, and a plain DFlash draft with the
    same keys is not refused by V1."""
    refusal = "Model Runner V1 does not support: xpress speculative decoding"
    vllm = next(e for e in ENGINES if e.name == "vllm")
    judged = 0
    for release, held in _releases(arch):
        if release.engine != "vllm":
            continue
        for runner in release.runners:
            spec = f"vllm-v1=={release.version}" if runner == "V1" else release.spec
            report = check_files(
                files("draft", _xpress(arch)), files("target", config(QWEN36_27B)), spec
            )
            df016 = [f for f in report.findings if f.rule == "DF016"]
            said = " ".join(f.message for f in df016)
            if runner == "V1" and held:
                (found,) = df016
                assert refusal in found.message and found.runtime == "vllm-v1", found
                assert found.stage_for("vllm-v1") is not None
                assert found.stage_for("vllm-v1").value == "load"
            else:
                assert refusal not in said, (spec, said)
                assert bool(df016) is (not held), (spec, report.findings)
            plain = check_files(
                files("draft", _xpress("DFlashDraftModel")),
                files("target", config(QWEN36_27B)),
                spec,
            )
            assert not [f for f in plain.findings if f.rule == "DF016"], (spec, plain.findings)
            judged += 1
    # 0.32.0 and 0.33.0 on both runners, 0.34.0 on V2: each judged.
    assert judged == sum(len(r.runners) for r in vllm.releases) >= 5


def _vllm_specs() -> list[tuple[Release, str]]:
    """(release, the -r value) for every vLLM release and runner it has."""
    vllm = next(e for e in ENGINES if e.name == "vllm")
    return [
        (r, f"vllm-v1=={r.version}" if runner == "V1" else r.spec)
        for r in vllm.releases
        for runner in r.runners
    ]


def _pair(cfg: dict[str, Any], spec: str) -> CheckReport:
    return check_files(files("draft", cfg), files("target", config(QWEN36_27B)), spec)


@pytest.mark.parametrize("arch", XPRESS)
def test_xpress_refuses_a_top_level_sample_from_anchor_per_release(arch: str) -> None:
    """vLLM's XPress speculator refuses a true top-level sample_from_anchor when Model Runner
    V2 builds it (0.33.0 :30-35, 0.34.0 :29-34): DF021 at load, citing each release's lines.
    V1 refuses the draft whole (DF016), 0.32.0 has no XPress class; a false value, or the key
    on a plain DFlash draft (vLLM reads DFlash's from dflash_config only), is not refused; with
    dflash_config's key true too, the DFlash parent's refusal alone is said (it raises first)."""
    lines = {"vllm==0.33.0": ":30-35", "vllm==0.34.0": ":29-34"}
    seen = set()
    for release, spec in _vllm_specs():
        report = _pair(_xpress(arch, sample_from_anchor=True), spec)
        found = [f for f in report.findings if f.rule == "DF021"]
        if release.xpress is not None and spec == release.spec:
            (one,) = found
            assert "not supported for XPress" in one.message and one.runtime == "vllm", one
            read = read_in(release.xpress.top_level_anchor)
            assert f"xpress/speculator.py{lines[read]}" in one.message
            assert one.stage_for("vllm") is not None and one.stage_for("vllm").value == "load"
            assert report.verdict.value == "incompatible"
            seen.add(read)
        else:
            assert not found, (spec, found)
        for quiet in (
            _xpress(arch, sample_from_anchor=False),
            _xpress("DFlashDraftModel", sample_from_anchor=True),
        ):
            assert not [f for f in _pair(quiet, spec).findings if f.rule == "DF021"], spec
        both = _xpress(arch, sample_from_anchor=True)
        both["dflash_config"]["sample_from_anchor"] = True
        said = [f.message for f in _pair(both, spec).findings if f.rule == "DF021"]
        if spec == release.spec:
            assert len(said) == 1 and "for DFlash" in said[0], (spec, said)
    assert seen == set(lines)


@pytest.mark.parametrize(
    ("topc", "refused"),
    [(0, False), ("vocab", False), (512, False), ("vocab+1", True), (-1, True), ("512", True)],
)
def test_xpress_topc_must_lie_within_the_draft_vocabulary_per_release(
    topc: Any, refused: bool
) -> None:
    """vLLM refuses a draft's xpress_topc outside 0 .. the draft vocabulary while the
    speculative config resolves (0.33.0 config/speculative.py:1623-1638, before a runner is
    picked, so its V1 too; 0.34.0 xpress/config.py:21-28): DF050 at load, per release. A
    string is not compared (TypeError). 0.32.0 has no XPress class."""
    vocab = _target_vocab()
    # "vocab" stands for the target's (= the draft's) vocabulary size, known only here.
    value = {"vocab": vocab, "vocab+1": vocab + 1}.get(topc, topc)
    where = {"vllm==0.33.0": "speculative.py:1623-1638", "vllm==0.34.0": "xpress/config.py:21-28"}
    judged = set()
    for release, spec in _vllm_specs():
        report = _pair(_xpress("Qwen3XPressModel", xpress_topc=value), spec)
        found = [f for f in report.findings if f.rule == "DF050" and f.field == "xpress_topc"]
        if refused and release.xpress is not None:
            (one,) = found
            assert where[read_in(release.xpress.topc_range)] in one.message, one.message
            assert one.stage_for(one.runtime or "") is not None
            assert one.stage_for(one.runtime or "").value == "load"
            assert report.verdict.value == "incompatible"
            judged.add(spec)
        else:
            assert not found, (spec, found)
        plain = _pair(_xpress("DFlashDraftModel", xpress_topc=value), spec)
        assert not [f for f in plain.findings if f.field == "xpress_topc"], spec
    if refused:
        # The runtimes of the releases read, and every later one (which inherits the check).
        assert {"vllm==0.33.0", "vllm-v1==0.33.0", "vllm==0.34.0"} <= judged
        assert judged == {spec for r, spec in _vllm_specs() if r.xpress is not None}
