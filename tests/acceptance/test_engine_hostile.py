"""The engine client against hostile servers: redirects, huge, trickling, deep, non-finite and
impossible answers, escape sequences, credentials in the URL (tests/support/engineserver.py faults).

Most cases run the attach flow in-process (fast); a few run the CLI to see the one error line,
the exit code and that nothing raw reaches stderr.
"""

from __future__ import annotations

import base64
import re
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from dflash_check.engines.client import MAX_DRAFT_POSITIONS
from dflash_check.engines.errors import (
    EngineError,
    EngineResponseError,
    EngineUnreachableError,
    ImplausibleAnswerError,
)
from dflash_check.engines.http import (
    ENGINE_ANSWER_BYTES,
    AnswerFormatError,
    EndpointError,
    parse_endpoint,
    parse_json,
)
from dflash_check.engines.metrics import check_counts
from dflash_check.engines.prometheus import MetricsFormatError, parse_metrics
from dflash_check.smoke.report import SpecCounts
from tests.acceptance.test_engine import KEY, TINY, attach, engine_cli, errors, fake
from tests.support.engineserver import serve
from tests.support.helpers import invoke_cli

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run_attach(url: str, engine: str, **kwargs: Any) -> Exception | None:
    """Run the attach flow; return the EngineError it raised (None when it passed)."""
    try:
        attach(url, engine, **kwargs)
    except EngineError as err:
        return err
    return None


# --- redirects and credentials ------------------------------------------------------------------


def test_cross_origin_redirect_is_refused_and_the_key_never_leaves() -> None:
    """A redirect to another origin is not followed: the other server gets no request at all."""
    with serve(fake("vllm")) as other, serve(fake("vllm", api_key=KEY)) as first:
        first.state.fault, first.state.fault_arg = "redirect", other.url
        err = run_attach(first.url, "vllm", api_key=KEY)
        assert isinstance(err, EngineResponseError), err
        assert "another origin" in str(err) and "not followed" in str(err)
        assert other.state.log == [] and other.state.auth_seen == []
        assert KEY not in str(err)


def test_same_origin_redirect_is_followed_with_the_key() -> None:
    """A redirect within the server (same scheme, host, port) is followed, key and all."""
    with serve(fake("vllm", api_key=KEY)) as server:
        server.state.fault, server.state.fault_arg = "redirect", server.url + "/moved"
        assert run_attach(server.url, "vllm", api_key=KEY) is None
        assert f"Bearer {KEY}" in server.state.auth_seen
        assert any(path == "/v1/models" for _m, path, _b in server.state.log)


def test_credentials_in_the_endpoint_are_used_and_never_shown() -> None:
    """user:password@ becomes Basic auth; messages and the report show the URL without it."""
    with serve(fake("vllm")) as server:
        url = server.url.replace("http://", "http://alice:pw-SECRET-99@")
        proc = engine_cli(url, "vllm", "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert "pw-SECRET-99" not in proc.stdout + proc.stderr
        basic = base64.b64encode(b"alice:pw-SECRET-99").decode()
        assert server.state.auth_seen[0] == f"Basic {basic}"
    # And when the server is down, the error and hint name the host only.
    err = run_attach("http://alice:pw-SECRET-99@127.0.0.1:9/", "vllm", timeout=2.0)
    assert isinstance(err, EngineUnreachableError)
    assert "pw-SECRET-99" not in str(err) + str(err.hint) and "127.0.0.1:9" in str(err)


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://[zz::1]:8000", "not a valid URL"),
        ("http://host:99999", "not a valid URL"),
        ("http://", "names no host"),
        ("ftp://host", "give a URL"),
        ("http://host/\x1b]0;x\x07", "control characters"),
    ],
)
def test_malformed_endpoints_are_refused(url: str, needle: str) -> None:
    with pytest.raises(EndpointError, match=re.escape(needle)):
        parse_endpoint(url)


def test_malformed_endpoint_and_non_finite_timeouts_are_usage_errors() -> None:
    proc = engine_cli("http://u:pw-SECRET-1@[::1", "vllm")
    assert proc.returncode == 2 and "Invalid IPv6 URL" in proc.stderr
    assert "pw-SECRET-1" not in proc.stderr and "unexpected" not in proc.stderr
    for value in ("nan", "inf"):
        proc = engine_cli("http://127.0.0.1:9", "vllm", "--engine-timeout", value)
        assert proc.returncode == 2 and "finite" in proc.stderr, proc.stderr


# --- size, time, depth -------------------------------------------------------------------------


def test_huge_answer_is_cut_off_in_bounded_memory() -> None:
    """A 64 MB /v1/models is refused past the cap, never held whole."""
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "huge", 64 << 20
        tracemalloc.start()
        try:
            err = run_attach(server.url, "vllm")
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert isinstance(err, EngineResponseError) and "larger than" in str(err), err
    assert peak < 4 * ENGINE_ANSWER_BYTES


def test_trickling_server_is_given_up_on_at_the_deadline() -> None:
    """One byte every 0.2 s: --engine-timeout 1 bounds the whole answer, not each read."""
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "trickle", 0.2
        start = time.monotonic()
        err = run_attach(server.url, "vllm", timeout=1.0)
        took = time.monotonic() - start
    assert isinstance(err, EngineUnreachableError) and "within 1 s" in str(err), err
    assert took < 1.0 + 3.0  # the deadline, the documented slack and a loaded test machine


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b'{"tp_size": Infinity}', "non-finite number Infinity"),
        (b'{"x": NaN}', "non-finite number NaN"),
        (b'{"x": 1e999}', "non-finite number 1e999"),
        (b'{"x": ' + b"9" * 5000 + b"}", "digits"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_strict_json(raw: bytes, needle: str) -> None:
    with pytest.raises(AnswerFormatError, match=needle):
        parse_json(raw)


def test_deep_json_is_one_error_line() -> None:
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "deep", 200_000
        err = run_attach(server.url, "vllm")
    assert isinstance(err, EngineResponseError), err
    assert "/v1/models did not answer valid JSON (nested too deeply)" in str(err)


# --- numbers that cannot be true ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"speculative_num_draft_tokens": 10**9}, "speculative_num_draft_tokens = 1000000000"),
        ({"tp_size": float("inf")}, "non-finite number Infinity"),
        ({"pp_size": -2}, "pp_size = -2"),
        ({"tp_size": 2.5}, "tp_size = 2.5"),
    ],
)
def test_sglang_server_info_is_bounded(extra: dict[str, Any], needle: str) -> None:
    with serve(fake("sglang")) as server:
        server.state.fault, server.state.fault_arg = "info", extra
        err = run_attach(server.url, "sglang")
    assert isinstance(err, EngineResponseError) and needle in str(err), err
    assert "/get_server_info" in str(err)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            'vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} +Inf\n',
            "vllm:spec_decode_num_drafts_total = inf is not a count",
        ),
        (
            'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="²"} 1.0\n',
            "position='²'",
        ),
        (
            'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="5000"} 1.0\n',
            "not a draft position",
        ),
        (
            "".join(
                f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{position="{i}"}} 0\n'
                for i in range(30_000)
            ),
            "more than 20000 samples",
        ),
    ],
)
def test_vllm_metrics_are_checked(extra: str, needle: str) -> None:
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "metrics", extra
        err = run_attach(server.url, "vllm")
    assert isinstance(err, EngineResponseError) and needle in str(err), err
    assert "/metrics" in str(err)


def test_metrics_parser_keeps_only_the_wanted_series() -> None:
    """200k unrelated series cost no objects; a kept series over the bound is refused."""
    text = "".join(f'other_total{{i="{i}"}} 1\n' for i in range(200_000)) + "a_total 3\n"
    assert [s.name for s in parse_metrics(text, names={"a_total"})] == ["a_total"]
    with pytest.raises(MetricsFormatError, match="more than 10 samples"):
        parse_metrics("a 1\n" * 11, names={"a"}, max_samples=10)


def test_impossible_vllm_counters_exit_3() -> None:
    """Accepted tokens 1000x the drafted ones: no verdict."""
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "scale", 1000
        proc = engine_cli(server.url, "vllm")
    assert proc.returncode == 3, proc.stderr
    (line,) = errors(proc.stderr)
    assert "counters cannot be true" in line and "accepted draft tokens but only" in line


@pytest.mark.parametrize(
    ("meta", "needle"),
    [
        ({"spec_num_correct_drafts": -5}, "accepted tokens counted negative"),
        ({"spec_verify_ct": -3}, "verify steps counted negative"),
        ({"spec_correct_drafts_histogram": [0] * 500_000}, "histogram of 500000 entries"),
        ({"spec_num_correct_drafts": 10**6, "spec_num_proposed_drafts": 10**7}, "tau"),
    ],
)
def test_impossible_sglang_counters(meta: dict[str, Any], needle: str) -> None:
    with serve(fake("sglang")) as server:
        server.state.fault, server.state.fault_arg = "meta", meta
        err = run_attach(server.url, "sglang")
    assert isinstance(err, EngineResponseError) and needle in str(err), err


def test_check_counts_accepts_real_counts_and_names_each_impossibility() -> None:
    check_counts(SpecCounts(10, 70, 30, (9, 8, 7, 4, 2, 0, 0)), 8, "x")
    bad = [
        SpecCounts(10, 70, 71),
        SpecCounts(10, 700, 200),
        SpecCounts(10, 70, 30, (11,)),
        SpecCounts(10, 70, 30, accepted_histogram=(5, 6)),
        SpecCounts(-1, 0, 0),
    ]
    for counts in bad:
        with pytest.raises(ImplausibleAnswerError):
            check_counts(counts, 8, "x")
    assert MAX_DRAFT_POSITIONS >= 64


# --- what the server says reaches the user made visible ---------------------------------------


def test_escape_sequences_from_the_server_are_made_visible() -> None:
    """An error body and model ids holding OSC/CSI sequences: stderr shows them escaped."""
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x1b]8;;http://x\x1b\\link"
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "error_body", evil.encode()
        proc = engine_cli(server.url, "vllm")
        assert proc.returncode == 3
        assert not RAW_CONTROL.search(proc.stderr), ascii(proc.stderr)
        assert "\\x1b]0;pwned\\x07" in proc.stderr and "\\u009b31m" in proc.stderr
        server.state.fault, server.state.fault_arg = "models", [evil]
        proc = engine_cli(server.url, "vllm")
        assert proc.returncode == 3 and not RAW_CONTROL.search(proc.stderr), ascii(proc.stderr)


def test_a_long_model_list_is_shortened() -> None:
    """150k models listed (near the size cap): the error names a few and the count, in a
    line of sane length."""
    with serve(fake("vllm")) as server:
        server.state.fault, server.state.fault_arg = "models", [f"m{i}" for i in range(150_000)]
        err = run_attach(server.url, "vllm")
    assert err is not None and "150000 models in all" in str(err) and len(str(err)) < 600


# --- --launch: the log, the environment's failures, the engine's session (issue 30) -----------


def test_launch_log_is_private_and_never_follows_a_planted_link(tmp_path: Path) -> None:
    """The log is created exclusively (0600) in a fresh 0700 folder; a symlink planted at the
    name the tool used to pick leaves its victim untouched."""
    import os
    import stat

    from tests.acceptance.test_engine import launch_cli

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (tmp_path / f"dflash-check-vllm-{os.getpid()}.log").symlink_to(victim)
    proc = launch_cli(tmp_path, "vllm")
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "keep me\n"
    (log,) = tmp_path.glob("dflash-check-vllm-*/vllm.log")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_open_log_refuses_an_existing_link(tmp_path: Path) -> None:
    from dflash_check.engines.errors import EngineStartError
    from dflash_check.engines.launch import open_log

    victim = tmp_path / "victim"
    victim.write_text("x")
    (tmp_path / "log").symlink_to(victim)
    with pytest.raises(EngineStartError, match="cannot create the engine log"):
        open_log(tmp_path / "log")
    assert victim.read_text() == "x"


def test_an_engine_that_exits_for_no_pair_reason_is_exit_3(tmp_path: Path) -> None:
    """`--engine-binary /bin/false` or an engine missing a library says nothing about the pair:
    exit 3 with the log's tail, not a failed smoke run (exit 1)."""
    from tests.acceptance.test_engine import launch_cli

    proc = launch_cli(tmp_path, "vllm", fault="unrelated")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "libcudart" in proc.stderr and "FAILED" not in proc.stdout + proc.stderr
    false = invoke_cli(
        "pair", str(TINY / "draft"), str(TINY / "target"), "--smoke-run", "--engine", "vllm",
        "--launch", "--engine-binary", "/bin/false", "--prompt", "1 2 3",
        env={"TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert false.returncode == 3, false.stdout + false.stderr


def test_a_worker_in_its_own_session_is_stopped_too(tmp_path: Path) -> None:
    """A worker the engine moved to its own session (setsid) does not outlive the run."""
    import os
    import time

    from tests.acceptance.test_engine import fake_binary
    from tests.support.helpers import run_cli

    pidfile = tmp_path / "worker.pid"
    env = {
        "TMPDIR": str(tmp_path),
        "FAKE_ENGINE_FAULT": "setsid-worker",
        "FAKE_ENGINE_PIDFILE": str(pidfile),
    }
    proc = run_cli(
        "pair", str(TINY / "draft"), str(TINY / "target"), "--smoke-run", "--engine", "sglang",
        "--launch", "--engine-binary", str(fake_binary(tmp_path)), "--max-new-tokens", "24",
        "--prompt", "1 2 3", env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pid = int(pidfile.read_text())

    def running() -> bool:  # a zombie no one reaped yet counts as stopped
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 10
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = running()
    if alive:
        os.kill(pid, 9)
    assert not alive, "the worker outlived dflash-check"
