"""Hub access through the real huggingface_hub client and the real CLI, on a loopback Hub."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.helpers import (
    FIXTURES,
    QWEN3_4B,
    QWEN35_4B,
    SEED_DRAFT,
    draft_config,
    invoke_cli,
    run_cli,
)
from tests.support.hfenv import hf_environment
from tests.support.hubserver import GOOD_TOKEN, LoopbackHub, commit_of, read_folder, serve

DRAFT = "z-lab/Qwen3-4B-DFlash-b16"
RIGHT = "Qwen/Qwen3-4B"
WRONG = "Qwen/Qwen3.5-4B"


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """A loopback Hub serving the seed pair's models."""
    with serve() as server:
        server.add(DRAFT, SEED_DRAFT)
        server.add(RIGHT, QWEN3_4B)
        server.add(WRONG, QWEN35_4B)
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HF_HOME."""
    return tmp_path / "hf_home"


def cli(hub: LoopbackHub, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process against the loopback Hub (huggingface_hub pointed at it and
    at ``home`` as a new process would be)."""
    return invoke_cli(*args, env={**hub.env(home), **env})


def cli_process(
    hub: LoopbackHub, home: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess against the loopback Hub: for what only a process
    shows (everything it writes, huggingface_hub's own logging included)."""
    return run_cli(*args, env={**hub.env(home), **env})


def fetch(hub: LoopbackHub, home: Path, repo_id: str, filename: str) -> None:
    """Put one file in ``home``'s cache with huggingface_hub alone (as another tool would)."""
    from huggingface_hub import hf_hub_download

    with hf_environment(hub.env(home)):
        hf_hub_download(repo_id, filename)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """Assert exit 3 with exactly one 'Error:' line and no traceback; return that line."""
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, proc.stderr
    # Retry status lines ("Hub: …; retrying (2/3)") come first; then error, hint, debug hint.
    final = [line for line in proc.stderr.strip().splitlines() if not line.startswith("Hub: ")]
    assert len(final) <= 3, proc.stderr
    return lines[0]


def test_online_verdicts_and_provenance(hub: LoopbackHub, home: Path) -> None:
    """Right pair exits 0, wrong pair exits 1; JSON records commits and bytes."""
    ok = cli_process(hub, home, "pair", DRAFT, RIGHT, "-f", "json")  # the real process, once
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert report["draft"]["revision"] == commit_of(read_folder(SEED_DRAFT))
    assert report["target"]["revision"] == commit_of(read_folder(QWEN3_4B))
    assert 0 < report["draft"]["fetched_bytes"] < 200_000
    bad = cli(hub, home, "pair", DRAFT, WRONG, "-f", "json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["verdict"] == "incompatible"


def test_only_headers_are_read(hub: LoopbackHub, home: Path) -> None:
    """Every safetensors request is a ranged read of the header; nothing else is fetched."""
    assert cli(hub, home, "pair", DRAFT, RIGHT).returncode == 0
    weights = [r for r in hub.state.log if r.path.endswith(".safetensors") and r.method == "GET"]
    assert weights and all(r.range and r.range.startswith("bytes=0-") for r in weights)
    files = {
        r.path.rsplit("/", 1)[-1]
        for r in hub.state.log
        if r.method == "GET" and "/resolve/" in r.path
    }
    assert files == {"config.json", "model.safetensors"}


def test_pinned_revision(hub: LoopbackHub, home: Path) -> None:
    """repo@tag, --draft-revision and a commit id each pin the draft's files."""
    shifted = draft_config()
    shifted["dflash_config"]["target_layer_ids"] = [2, 10, 18, 26, 35]
    v0 = {**read_folder(SEED_DRAFT), "config.json": json.dumps(shifted).encode()}
    hub.add(DRAFT, {}, revisions={"main": read_folder(SEED_DRAFT), "v0": v0})
    assert cli(hub, home, "pair", DRAFT, RIGHT).returncode == 0
    pinned = cli(hub, home, "pair", f"{DRAFT}@v0", RIGHT, "-f", "json")
    assert pinned.returncode == 1
    assert json.loads(pinned.stdout)["draft"]["revision"] == commit_of(v0)
    assert cli(hub, home, "pair", DRAFT, RIGHT, "--draft-revision", "v0").returncode == 1
    assert cli(hub, home, "pair", f"{DRAFT}@{commit_of(v0)}", RIGHT).returncode == 1


def test_offline_rerun_gives_the_same_verdict(hub: LoopbackHub, home: Path) -> None:
    """After one online run, --offline and HF_HUB_OFFLINE=1 agree with it, with no request."""
    online = cli(hub, home, "pair", DRAFT, WRONG, "-f", "json")
    pinned = cli(hub, home, "pair", f"{DRAFT}@main", RIGHT, "-f", "json")
    seen = len(hub.state.log)
    offline = cli(hub, home, "pair", DRAFT, WRONG, "-f", "json", "--offline")
    env_offline = cli(hub, home, "pair", f"{DRAFT}@main", RIGHT, "-f", "json", HF_HUB_OFFLINE="1")
    assert len(hub.state.log) == seen
    for before, after in ((online, offline), (pinned, env_offline)):
        assert after.returncode == before.returncode
        a, b = json.loads(before.stdout), json.loads(after.stdout)
        assert (a["verdict"], a["findings"]) == (b["verdict"], b["findings"])
        assert a["draft"]["revision"] == b["draft"]["revision"]


def test_offline_cache_miss(hub: LoopbackHub, home: Path) -> None:
    """Offline with a cold cache names the missing file and how to warm the cache."""
    line = one_error_line(cli(hub, home, "pair", DRAFT, RIGHT, "--offline"))
    assert "config.json is not in the Hugging Face cache" in line
    proc = cli(hub, home, "pair", DRAFT, RIGHT, "--offline")
    assert "once without --offline" in proc.stderr and "HF_HUB_OFFLINE" not in proc.stderr
    by_env = cli(hub, home, "pair", DRAFT, RIGHT, HF_HUB_OFFLINE="1")
    assert "config.json is not in the Hugging Face cache" in one_error_line(by_env)
    assert "unset HF_HUB_OFFLINE" in by_env.stderr and "--offline" not in by_env.stderr


def test_repo_not_found(hub: LoopbackHub, home: Path) -> None:
    """An unknown repo: one line, exit 3."""
    line = one_error_line(cli(hub, home, "pair", "nobody/nothing", RIGHT))
    assert "draft nobody/nothing: repository not found" in line


def test_revision_not_found(hub: LoopbackHub, home: Path) -> None:
    """An unknown revision."""
    line = one_error_line(cli(hub, home, "pair", DRAFT, f"{RIGHT}@no-such-branch"))
    assert f"target {RIGHT}@no-such-branch: revision not found" in line


def test_file_not_found(hub: LoopbackHub, home: Path) -> None:
    """A repo without config.json."""
    hub.add("org/empty", {"README.md": b"# nothing"})
    line = one_error_line(cli(hub, home, "pair", DRAFT, "org/empty"))
    assert "target org/empty: config.json not found in the repository" in line


def test_gated_repo(hub: LoopbackHub, home: Path) -> None:
    """Gated: say so and how to request access; with a granted token it works."""
    hub.add("meta/gated", QWEN3_4B, gated=True)
    proc = cli(hub, home, "pair", DRAFT, "meta/gated")
    line = one_error_line(proc)
    assert "gated" in line
    assert "https://huggingface.co/meta/gated" in proc.stderr
    assert cli(hub, home, "pair", DRAFT, "meta/gated", "--token", GOOD_TOKEN).returncode == 0
    assert cli(hub, home, "pair", DRAFT, "meta/gated", HF_TOKEN=GOOD_TOKEN).returncode == 0


def test_private_repo_without_token_looks_missing(hub: LoopbackHub, home: Path) -> None:
    """Private and missing are indistinguishable without auth; the hint mentions tokens."""
    hub.add("me/private", QWEN3_4B, private=True)
    proc = cli(hub, home, "pair", DRAFT, "me/private")
    assert "repository not found" in one_error_line(proc)
    assert "HF_TOKEN" in proc.stderr
    assert cli(hub, home, "pair", DRAFT, "me/private", HF_TOKEN=GOOD_TOKEN).returncode == 0


def test_unauthorised(hub: LoopbackHub, home: Path) -> None:
    """A 403 on files is an access problem, not 'not found'."""
    hub.add("org/forbidden", QWEN3_4B, fault="403")
    line = one_error_line(cli(hub, home, "pair", DRAFT, "org/forbidden"))
    assert "refused access to config.json (HTTP 403)" in line


def test_server_error_then_success(hub: LoopbackHub, home: Path) -> None:
    """One 500 is retried with backoff and the check succeeds."""
    hub.add("org/flaky", QWEN3_4B, fault="500-once")
    assert cli(hub, home, "pair", DRAFT, "org/flaky").returncode == 0


def test_connection_dropped_before_an_answer_is_retried(hub: LoopbackHub, home: Path) -> None:
    """A server that closes a kept-alive connection as the request goes out (its idle
    timeout) never answered it: the request is sent again, and the check succeeds."""
    hub.add("org/drops", QWEN3_4B, fault="drop-once")
    proc = cli(hub, home, "pair", DRAFT, "org/drops")
    assert proc.returncode == 0, proc.stderr
    assert hub.state.repos["org/drops"].failures == 1
    assert "the connection broke while fetching config.json; retrying (2/3)" in proc.stderr


def test_server_error_persists(hub: LoopbackHub, home: Path) -> None:
    """A 500 that persists: bounded retries, then one line."""
    hub.add("org/down", QWEN3_4B, fault="500")
    proc = cli(hub, home, "pair", DRAFT, "org/down")
    line = one_error_line(proc)
    assert "HTTP 500" in line and "after 3 attempts" in line
    assert hub.state.repos["org/down"].failures == 3
    retries = [line for line in proc.stderr.splitlines() if line.startswith("Hub: ")]
    assert [r.rsplit(" ", 1)[-1] for r in retries] == ["(2/3)", "(3/3)"], proc.stderr
    assert "HTTP 500" in retries[0] and "retry later" in proc.stderr


def test_timeout(hub: LoopbackHub, home: Path) -> None:
    """A Hub slower than --timeout."""
    hub.state.slow_seconds = 3
    hub.add("org/slow", QWEN3_4B, fault="slow")
    # The draft is a local folder: the tight deadline applies to the slow Hub alone, not to
    # fetching a healthy draft on a loaded machine.
    proc = cli(hub, home, "pair", str(SEED_DRAFT), "org/slow", "--timeout", "0.5")
    line = one_error_line(proc)
    assert "no answer from the Hub after 0.5 s" in line
    # The wait is announced before each retry, not left as silence.
    assert "Hub: target org/slow: no answer from the Hub after 0.5 s" in proc.stderr
    assert "retrying (2/3)" in proc.stderr and "raise --timeout" in proc.stderr


def test_connection_refused(home: Path) -> None:
    """Nothing listens at HF_ENDPOINT."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = invoke_cli(
        "pair",
        DRAFT,
        RIGHT,
        env={
            "HF_ENDPOINT": f"http://127.0.0.1:{port}",
            "HF_HOME": str(home),
            "HF_HUB_CACHE": str(home / "hub"),
        },
    )
    assert "cannot connect to the Hub" in one_error_line(proc)
    hint = next(line for line in proc.stderr.splitlines() if line.startswith("Hint:"))
    assert "HTTPS_PROXY" in hint and f"HF_ENDPOINT (now http://127.0.0.1:{port})" in hint
    assert "--offline" in hint


def test_debug_shows_the_transport_cause(home: Path) -> None:
    """DFLASH_CHECK_DEBUG=1 prints the chain down to the transport's own error; same exit."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(home)}
    proc = run_cli("pair", DRAFT, RIGHT, env={**env, "DFLASH_CHECK_DEBUG": "1"})
    assert proc.returncode == 3
    assert "ConnectError" in proc.stderr and "direct cause" in proc.stderr


def test_truncated_json(hub: LoopbackHub, home: Path) -> None:
    """A config.json cut short is malformed JSON, named."""
    files = read_folder(QWEN3_4B)
    hub.add("org/cut", {"config.json": files["config.json"][:100]})
    line = one_error_line(cli(hub, home, "pair", DRAFT, "org/cut"))
    assert "target org/cut" in line and "config.json: malformed JSON" in line


def test_short_body(hub: LoopbackHub, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A body shorter than its Content-Length is a broken transfer, not a verdict."""
    # huggingface_hub resumes a broken download five times, a second apart; the pause is its
    # own, not what is tested (the run is in-process, so its module's clock can be stubbed).
    clock = SimpleNamespace(**{**vars(time), "sleep": lambda seconds: None})
    monkeypatch.setattr("huggingface_hub.file_download.time", clock)
    hub.add("org/short", QWEN3_4B, fault="short-body")
    proc = cli(hub, home, "pair", DRAFT, "org/short")
    line = one_error_line(proc)
    assert "target org/short" in line


def test_invalid_safetensors_header(hub: LoopbackHub, home: Path) -> None:
    """A draft whose model.safetensors is not safetensors."""
    files = {**read_folder(SEED_DRAFT), "model.safetensors": b"\xff" * 64}
    hub.add("org/bad-header", files)
    line = one_error_line(cli(hub, home, "pair", "org/bad-header", RIGHT))
    assert "model.safetensors: not a safetensors file" in line


def test_token_never_printed(hub: LoopbackHub, home: Path) -> None:
    """Neither --token nor HF_TOKEN shows up in any output, even with debug tracebacks (those
    runs in real processes: everything they write counts, huggingface_hub's logging too)."""
    hub.add("meta/gated", QWEN3_4B, gated=True)
    runs = [
        cli(hub, home, "pair", DRAFT, "meta/gated", "--token", GOOD_TOKEN, "-f", "json"),
        cli(hub, home, "pair", DRAFT, "nobody/x", "--token", GOOD_TOKEN),
        cli_process(
            hub, home, "pair", DRAFT, "nobody/x", "--token", GOOD_TOKEN, DFLASH_CHECK_DEBUG="1"
        ),
        cli_process(
            hub, home, "pair", DRAFT, "meta/gated", HF_TOKEN=GOOD_TOKEN, DFLASH_CHECK_DEBUG="1"
        ),
        cli(hub, home, "pair", DRAFT, "nobody/x", "-f", "json", HF_TOKEN=GOOD_TOKEN),
    ]
    assert runs[0].returncode == 0
    for proc in runs:
        assert GOOD_TOKEN not in proc.stdout + proc.stderr
    for path in home.rglob("*"):
        if path.is_file() and path.suffix == ".json":
            assert GOOD_TOKEN not in path.read_text(errors="replace")


def test_base_model_warning(hub: LoopbackHub, home: Path) -> None:
    """The card's base_model names another target: a warning naming both."""
    hub.add(DRAFT, SEED_DRAFT, card_data={"base_model": "Qwen/Qwen3-4B"})
    hub.add("mirror/Qwen3-4B-copy", QWEN3_4B)
    proc = cli(hub, home, "pair", DRAFT, "mirror/Qwen3-4B-copy", "-f", "json")
    assert proc.returncode == 0
    (finding,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "DF014"]
    assert "Qwen/Qwen3-4B" in finding["message"] and "mirror/Qwen3-4B-copy" in finding["message"]
    assert cli(hub, home, "pair", DRAFT, RIGHT, "--strict").returncode == 0


def tokenizer_json(vocab: dict[str, int]) -> bytes:
    """Return a minimal tokenizer.json."""
    return json.dumps({"model": {"type": "WordLevel", "vocab": vocab}, "added_tokens": []}).encode()


def test_tokenizers_compared(hub: LoopbackHub, home: Path) -> None:
    """Same tokenizer file: no finding, nothing downloaded; other ids: DF015 error."""
    same = tokenizer_json({"a": 0, "b": 1})
    other = tokenizer_json({"a": 0, "c": 1})
    hub.add(DRAFT, {**read_folder(SEED_DRAFT), "tokenizer.json": same})
    hub.add("org/same-tok", {**read_folder(QWEN3_4B), "tokenizer.json": same})
    hub.add("org/other-tok", {**read_folder(QWEN3_4B), "tokenizer.json": other})
    assert cli(hub, home, "pair", DRAFT, "org/same-tok").returncode == 0
    assert not [r for r in hub.state.log if r.method == "GET" and "tokenizer" in r.path]
    proc = cli(hub, home, "pair", DRAFT, "org/other-tok", "-f", "json")
    assert proc.returncode == 1
    (finding,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "DF015"]
    assert 'id 1 is "b" for the draft, "c" for the target' in finding["message"]


def test_pinned_commit_is_served_from_the_cache(hub: LoopbackHub, home: Path) -> None:
    """A commit id is immutable: once cached, re-checking it sends no request at all."""
    draft_commit = commit_of(read_folder(SEED_DRAFT))
    target_commit = commit_of(read_folder(QWEN3_4B))
    args = ("pair", f"{DRAFT}@{draft_commit}", f"{RIGHT}@{target_commit}", "-f", "json")
    first = cli(hub, home, *args)
    seen = len(hub.state.log)
    second = cli(hub, home, *args)
    assert len(hub.state.log) == seen
    assert first.returncode == second.returncode == 0
    assert json.loads(second.stdout)["draft"]["fetched_bytes"] == 0


def test_offline_reads_the_header_of_cached_full_weights(hub: LoopbackHub, home: Path) -> None:
    """Offline, with full weights in the HF cache but no manifest, the header is read there."""
    import shutil

    assert cli(hub, home, "pair", DRAFT, RIGHT).returncode == 0
    fetch(hub, home, DRAFT, "model.safetensors")
    shutil.rmtree(home / "dflash-check")
    proc = cli(hub, home, "pair", DRAFT, RIGHT, "--offline", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["draft"]["fc_weight_shape"] == [2560, 12800]


MIMO_REPO = "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash"


def test_subfolder_draft_on_the_hub(hub: LoopbackHub, home: Path) -> None:
    """REPO:SUBFOLDER and --draft-subfolder fetch the draft from dflash/ of the repo, also
    offline afterwards; the repo root (which has no config.json) is not the draft."""
    from tests.support.helpers import FIXTURES

    hub.add(MIMO_REPO, FIXTURES / "hub" / MIMO_REPO)
    hub.add("XiaomiMiMo/MiMo-V2.5-Pro", FIXTURES / "hub" / "XiaomiMiMo" / "MiMo-V2.5-Pro")
    target = "XiaomiMiMo/MiMo-V2.5-Pro"
    proc = cli(hub, home, "pair", f"{MIMO_REPO}:dflash", target, "-r", "vllm", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["draft"]["config"].endswith(":dflash/config.json")
    assert any(
        "/resolve/" in r.path and r.path.endswith("/dflash/config.json") for r in hub.state.log
    )
    flag = cli(
        hub,
        home,
        "pair",
        MIMO_REPO,
        target,
        "--draft-subfolder",
        "dflash",
        "-r",
        "vllm",
        "--offline",
    )
    assert flag.returncode == 0, flag.stderr
    line = one_error_line(cli(hub, home, "pair", MIMO_REPO, target))
    assert "config.json not found in the repository" in line


def test_offline_with_only_configs_cached(hub: LoopbackHub, home: Path) -> None:
    """Offline with only config.json in the cache: the verdict a local folder without
    safetensors gets. The seed mismatch still exits 1 (the configs prove it) and the right
    pair exits 0, each with the fc width listed as not checked; --strict fails the right pair
    on that warning (DF010)."""

    for repo in (DRAFT, WRONG, RIGHT):
        fetch(hub, home, repo, "config.json")
    proc = cli(hub, home, "pair", DRAFT, WRONG, "--offline", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "incompatible"
    (not_checked,) = report["not_checked"]
    assert not_checked["rule"] == "DF005" and "offline cache" in not_checked["reason"]
    right = cli(hub, home, "pair", DRAFT, RIGHT, "--offline", "-f", "json")
    assert right.returncode == 0, right.stderr
    report = json.loads(right.stdout)
    assert report["verdict"] == "compatible"
    (not_checked,) = report["not_checked"]
    assert not_checked["rule"] == "DF005" and "offline cache" in not_checked["reason"]
    assert [f["rule"] for f in report["findings"] if f["severity"] == "warning"] == ["DF010"]
    # Nothing was asked of the Hub offline: the header is never fetched behind the flag.
    requests = len(hub.state.log)
    table = cli(hub, home, "pair", DRAFT, RIGHT, "--offline")
    assert table.returncode == 0, table.stderr
    assert "DF005 not checked" in table.stdout and "offline cache" in table.stdout
    strict = cli(hub, home, "pair", DRAFT, RIGHT, "--offline", "--strict")
    assert strict.returncode == 1, strict.stderr
    assert "DF010" in strict.stdout
    assert len(hub.state.log) == requests


def test_config_only_cache_matches_a_local_folder_without_safetensors(
    hub: LoopbackHub, home: Path, tmp_path: Path
) -> None:
    """The seed pair, cached online with the draft's config.json only, then checked offline:
    the same verdict, warnings and not-checked rules as the draft's folder without its
    safetensors file (exit 0; --strict exit 1), with the reason naming the offline cache."""
    import shutil

    local = tmp_path / "draft-without-safetensors"
    local.mkdir()
    shutil.copy(SEED_DRAFT / "config.json", local / "config.json")
    for repo in (DRAFT, RIGHT):
        fetch(hub, home, repo, "config.json")

    def summary(proc: subprocess.CompletedProcess[str]) -> tuple:
        report = json.loads(proc.stdout)
        rules = sorted((f["rule"], f["severity"]) for f in report["findings"])
        return report["verdict"], rules, [n["rule"] for n in report["not_checked"]]

    hub_run = cli(hub, home, "pair", DRAFT, RIGHT, "--offline", "-f", "json")
    local_run = cli(hub, home, "pair", str(local), RIGHT, "--offline", "-f", "json")
    assert (hub_run.returncode, local_run.returncode) == (0, 0), hub_run.stderr
    assert (
        summary(hub_run) == summary(local_run) == ("compatible", [("DF010", "warning")], ["DF005"])
    )
    (not_checked,) = json.loads(hub_run.stdout)["not_checked"]
    assert "offline cache" in not_checked["reason"]
    for args in ((), ("--strict",)):
        hub_table = cli(hub, home, "pair", DRAFT, RIGHT, "--offline", *args)
        local_table = cli(hub, home, "pair", str(local), RIGHT, "--offline", *args)
        assert hub_table.returncode == local_table.returncode == (1 if args else 0)
        assert "DF005 not checked" in hub_table.stdout
        assert "offline cache" in hub_table.stdout


def test_target_alone_from_the_hub_reads_its_config_only(hub: LoopbackHub, home: Path) -> None:
    """pair TARGET on a Hub target: its MTP layers from config.json, no safetensors request."""
    hub.add("deepseek-ai/DeepSeek-V3", FIXTURES / "targets" / "deepseek-ai--DeepSeek-V3")
    proc = cli(hub, home, "pair", "deepseek-ai/DeepSeek-V3", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["kind"], report["mtp"]["layer_names"]) == ("mtp", "model.layers.61")
    assert report["tensors"] is None and "config only" in report["tensors_note"]
    assert not [r for r in hub.state.log if r.path.endswith((".safetensors", ".index.json"))]


def test_df004_help_names_the_target_the_card_names(hub: LoopbackHub, home: Path) -> None:
    """With base_model on the card and num_target_layers in the config, DF004's help names
    that target (issue 31), not 'any target with at least N layers'."""
    hub.add(DRAFT, SEED_DRAFT, card_data={"base_model": "Qwen/Qwen3-4B"})
    proc = cli(hub, home, "pair", DRAFT, WRONG, "-f", "json")
    assert proc.returncode == 1
    (df004,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "DF004"]
    assert df004["hint"].startswith(
        "Pair the draft with the target it was trained for, Qwen/Qwen3-4B (36 layers; "
        "base_model, num_target_layers)."
    )
    assert "at least" not in df004["hint"]
