"""The report a person reads: answer first, one block per problem, nothing split across lines.

Rendered at 60, 80 and 120 columns, as a terminal of that width would show it, and compared
with golden files at 80 and 120.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dflash_check.app.pipeline import CheckRequest, check_pair
from dflash_check.check.report import CheckReport
from dflash_check.render.diagnostics import diagnostics, summary_line, wrap
from dflash_check.render.table import render_text
from dflash_check.smoke.report import SmokeCase, SmokeReport
from dflash_check.sources.interface import parse_model_ref
from tests.support.helpers import QWEN3_4B, QWEN35_4B, REPO, SEED_DRAFT, invoke_cli, settings
from tests.support.hubserver import LoopbackHub, serve

SEED = ("examples/Qwen3-4B-DFlash-b16", "examples/Qwen3.5-4B")
GOLDEN = REPO / "tests" / "golden"


def seed_report(target: Path = QWEN35_4B, runtime: str = "portable") -> CheckReport:
    """Return the seed pair's report, checked from the example directories."""
    request = CheckRequest(
        parse_model_ref(str(SEED_DRAFT.relative_to(REPO))),
        parse_model_ref(str(target.relative_to(REPO))),
        settings(runtime),
    )
    return check_pair(request)


def tokens(text: str) -> set[str]:
    """Return the whitespace-separated tokens of ``text`` (a clause's closing colon aside: a
    merged block ends its headline where the runtimes' messages start to differ)."""
    return {t.rstrip(":") for t in text.split()}


def flat(text: str) -> str:
    """Return ``text`` with every run of whitespace (line breaks, indents) as one space."""
    return " ".join(text.split())


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; UPDATE_GOLDEN=1 rewrites it."""
    import os

    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed (UPDATE_GOLDEN=1 to accept)"


@pytest.fixture(scope="module")
def report() -> CheckReport:
    """The seed pair (32-layer target), the report the README opens with."""
    return seed_report()


@pytest.mark.parametrize("width", [60, 80, 120])
def test_no_word_is_split_and_lines_fit(report: CheckReport, width: int) -> None:
    """Every token of every message, hint and field survives whole; lines fit the width."""
    out = render_text(report, width)
    got = tokens(out)
    for f in report.findings:
        for text in (f.message, f.hint, f.field or ""):
            missing = tokens(text) - got
            assert not missing, (width, missing)
    for line in out.splitlines():
        # A line is wider only when it is one unbreakable token after its indent.
        assert len(line) <= width or len(line.split()) <= 2, (width, line)
        assert not re.match(r"\s*[,;:)]", line), line  # no line starts mid-sentence


def test_answer_first_at_80_columns(report: CheckReport) -> None:
    """At 80 columns: at most 42 lines (40, and the two that say when each engine fails);
    the first 10 hold the verdict, 32 and 35."""
    out = render_text(report, 80)
    lines = out.splitlines()
    assert len(lines) <= 42, out
    assert lines[0].startswith("incompatible on all 6 runtimes: ")
    head = flat("\n".join(lines[:10]))
    assert "has 32 layers" in head
    assert "≥ 35 layers" in head and "sglang" in head
    assert "36-layer target" in head


def test_each_problem_once(report: CheckReport) -> None:
    """DF004 fails six runtimes: one block, listing both thresholds with their runtimes."""
    out = render_text(report, 80)
    assert out.count("error[DF004]") == 1
    assert flat(out).count("which the target does not have") == 1
    start = out.index("error[DF004]")
    block = out[start : out.index("\n\n", start)]
    # llama.cpp 0c1e57098 (the newest known) has no input of layer N on Qwen3.
    assert "= reference, vllm, trtllm, mlx accept ids up to N-1 = 31" in flat(block)
    assert "= sglang, llamacpp accept ids up to N-2 = 30" in flat(block)
    assert "--> examples/Qwen3-4B-DFlash-b16/config.json: dflash_config.target_layer_ids" in block
    help_text = flat(block[block.index("= help:") :])
    # The fix is the target the draft was trained for, not any target with enough layers.
    assert "Pair the draft with the 36-layer target it was trained for" in help_text
    assert "at least 35 layers" not in help_text


def test_one_count_everywhere(report: CheckReport) -> None:
    """The table, the JSON run's stderr and the diagnostics agree; plurals are right."""
    assert len(diagnostics(report)) == 4
    assert summary_line(report) == "incompatible (3 errors, 1 warning)"
    assert "3 errors, 1 warning" in render_text(report, 80)
    proc = invoke_cli("pair", *SEED, "-f", "json")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "dflash-check: incompatible (3 errors, 1 warning)"
    data = json.loads(proc.stdout)
    assert len(data["findings"]) == 4  # one per problem, with its runtimes, as the table
    assert data["summary"] == {"errors": 3, "warnings": 1, "notes": 0, "problems": 4}


def test_compatible_report_is_short() -> None:
    """The right target: the verdict and the layer sentence, no blocks."""
    out = render_text(seed_report(QWEN3_4B), 80)
    assert out.startswith("compatible on all 6 runtimes: ")
    assert "no findings" in out and "[DF" not in out
    assert len(out.splitlines()) <= 8


def test_verbose_keeps_the_tables(report: CheckReport) -> None:
    """--verbose adds the side-by-side models, the per-runtime resolution and the picture."""
    out = render_text(report, 120, verbose=True)
    # Each runtime's indices name their numbering: t+1 (hidden_states) or t (layer output).
    assert re.search(r"vllm +aux layer +t\+1 \[2, 10, 18, 26, 34\] +0–31 \(N-1\)", out)
    assert re.search(r"trtllm +capture after( layer)? +t \[1, 9, 17, 25, 33\] +0–31", out)
    assert "✗ missing: [33]" in out
    assert "░ past the target's last layer" in out  # the picture's every mark is explained
    assert out.count("error[DF004]") == 1
    narrow = render_text(report, 80, verbose=True)
    for word in ("Qwen3_5ForConditionalGeneration", "(text_config.num_hidden_layers)"):
        assert word in narrow.split(), word  # stacked, not folded mid-word
    assert re.search(
        r"sglang +t\+1 \[2, 10, 18, 26, 34\] +0–30 \(N-2\) +≥ 35 layers +incompatible", narrow
    )
    assert "index of id t: each runtime's own numbering" in narrow
    assert max(len(line) for line in narrow.splitlines()) <= 80, narrow


def test_wrap_keeps_short_lists_and_bounds_whole() -> None:
    """A short id list and a '≥ N' bound never straddle two lines."""
    text = "the draft taps [1, 9, 17, 25, 33] and needs ≥ 35 layers on this target"
    for width in range(10, 60):
        for line in wrap(text, width):
            assert line.count("[") == line.count("]")
            assert not line.endswith("≥") and not line.startswith("35")


@pytest.mark.parametrize("width", [80, 120])
def test_table_golden(width: int) -> None:
    """The default report of the seed pair, as a terminal of that width shows it."""
    proc = invoke_cli("pair", *SEED, env={"COLUMNS": str(width)})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    check_golden(f"pair.table.{width}.txt", proc.stdout)


def test_registry_table_golden_80() -> None:
    """The registry table at 80 columns: one line per pair, full ids, details for failures."""
    proc = invoke_cli(
        "registry", "tests/fixtures/registry/pairs.yaml", "-j", "1", env={"COLUMNS": "80"}
    )
    assert proc.returncode == 1  # a pair not as expected outranks one not checked
    for line in proc.stdout.splitlines():
        assert len(line) <= 80 or len(line.split()) <= 2, line
    from dflash_check.app.pairs_run import load_pairs

    words = proc.stdout.split()
    for spec in load_pairs(REPO / "tests/fixtures/registry/pairs.yaml"):
        assert spec.draft in words and spec.target in words  # full ids, never broken
    assert "../hub/z-lab/gpt-oss-20b-DFlash ->" in proc.stdout
    assert proc.stderr.count("5 pairs, 3 as expected, 1 not as expected, 1 not checked") == 1
    assert "pairs, 3 as expected" not in proc.stdout  # the summary is printed once, on stderr
    check_golden("registry.table.80.txt", proc.stdout)


def test_no_color_when_not_a_terminal() -> None:
    """Piped output has no escape codes, NO_COLOR or not."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "dflash_check", "pair", *SEED],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "\x1b[" not in proc.stdout


# -- command line: runtimes, --output, explain, help -----------------------------------------


@pytest.mark.parametrize(
    "args",
    [("-r", "vllm", "-r", "sglang"), ("-r", "vllm,sglang"), ("--runtime", "vllm, sglang")],
)
def test_runtime_takes_a_list(args: tuple[str, ...]) -> None:
    """Repeated and comma-separated --runtime both mean a list; no value is dropped."""
    proc = invoke_cli("pair", *SEED, *args, "-f", "json")
    assert proc.returncode == 1, proc.stderr
    assert list(json.loads(proc.stdout)["runtimes"]) == ["vllm", "sglang"]


def test_runtime_portable_wins_and_unknown_is_refused() -> None:
    """'portable' among the values means every runtime; a typo gets the closest name."""
    proc = invoke_cli("pair", *SEED, "-r", "vllm", "-r", "portable", "-f", "json")
    assert len(json.loads(proc.stdout)["runtimes"]) == 6
    bad = invoke_cli("pair", *SEED, "-r", "vllm,sglan")
    assert bad.returncode == 2
    assert "unknown runtime 'sglan'" in bad.stderr and "did you mean 'sglang'" in bad.stderr


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """A loopback Hub with the seed pair, to prove what was (not) fetched."""
    from tests.support.hubserver import SEED_REPOS

    with serve() as server:
        for repo, folder in SEED_REPOS.items():
            server.add(repo, folder)
        yield server


@pytest.mark.parametrize("extra", [(), ("--smoke-run",), ("-f", "json")])
def test_output_to_missing_directory_fails_before_any_work(
    hub: LoopbackHub, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """A missing --output directory: exit 2 before any work (the Hub never asked, no model
    read). Shown by what was touched, not by a clock: a loaded machine makes any time bound
    flaky."""
    proc = invoke_cli(
        "pair",
        "z-lab/Qwen3-4B-DFlash-b16",
        "Qwen/Qwen3-4B",
        "-o",
        str(tmp_path / "missing" / "x.json"),
        *extra,
        env=hub.env(tmp_path / "home"),
    )
    assert proc.returncode == 2, proc.stderr
    assert "does not exist" in proc.stderr
    assert hub.state.log == []
    from dflash_check.sources.local import LocalSource

    def no_read(*_args: object) -> None:
        raise AssertionError("a model was read before the --output path was checked")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LocalSource, "fetch", no_read)
        local = invoke_cli("pair", *SEED, "-o", str(tmp_path / "missing" / "x.json"), *extra)
    assert local.returncode == 2, local.stderr


def test_output_directory_or_unwritable_is_refused(tmp_path: Path) -> None:
    """--output naming a directory is a usage error too."""
    proc = invoke_cli("pair", *SEED, "-o", str(tmp_path))
    assert proc.returncode == 2 and "is a directory" in proc.stderr


@pytest.mark.parametrize("fmt", ["table", "json", "sarif"])
def test_output_is_honoured_by_every_format(tmp_path: Path, fmt: str) -> None:
    """The report goes to the file, a one-line summary to stderr, nothing to stdout."""
    out = tmp_path / "report.out"
    proc = invoke_cli("pair", *SEED, "-f", fmt, "-o", str(out))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip() == (
        f"dflash-check: incompatible (3 errors, 1 warning); report written to {out}"
    )
    text = out.read_text()
    assert ("error[DF004]" if fmt == "table" else "DF004") in text


def test_json_error_goes_to_the_output_file(tmp_path: Path) -> None:
    """A pair that cannot be checked: with -f json -o, the error object is the file."""
    out = tmp_path / "report.json"
    proc = invoke_cli("pair", str(tmp_path / "nowhere"), SEED[1], "-f", "json", "-o", str(out))
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.startswith("Error: draft ")
    error = json.loads(out.read_text())
    assert error["verdict"] == "unknown" and "directory not found" in error["error"]["message"]


def test_explain_a_rule() -> None:
    """`explain DF004` (and `rules DF004`): why, runtimes and fix, exit 0."""
    from dflash_check.check.rules import RULES_BY_ID

    rule = RULES_BY_ID["DF004"]
    proc = invoke_cli("explain", "DF004", env={"COLUMNS": "80"})
    assert proc.returncode == 0
    text = flat(proc.stdout)
    assert flat(f"why: {rule.why}") in text
    assert flat(f"fix: {rule.fix}") in text
    assert f"runtimes: {', '.join(rule.runtimes)}" in text
    assert invoke_cli("rules", "df004", env={"COLUMNS": "80"}).stdout == proc.stdout
    by_name = invoke_cli("explain", "layer-id-out-of-range", env={"COLUMNS": "80"})
    assert by_name.stdout == proc.stdout


@pytest.mark.parametrize(
    ("query", "close"), [("DF04", "DF004"), ("DF999", None), ("fc-widht", "fc-width")]
)
def test_explain_unknown_rule_is_a_usage_error(query: str, close: str | None) -> None:
    """An unknown id: exit 2, with the closest match when there is one."""
    proc = invoke_cli("explain", query)
    assert proc.returncode == 2
    assert f"no rule {query!r}" in proc.stderr
    if close:
        assert f"did you mean {close}?" in proc.stderr


def test_rules_lists_why_and_fix_for_every_rule() -> None:
    """`rules` shows why and fix for every rule, DF090-DF092 included."""
    from dflash_check.check.rules import ALL_RULES

    out = invoke_cli("rules", "--long", env={"COLUMNS": "80"}).stdout
    for r in ALL_RULES:
        assert f"{r.id}  {r.severity.value}  {r.name}" in out
    assert out.count("  why: ") == len(ALL_RULES)
    ids = [line.split()[0] for line in out.splitlines() if line.startswith("DF")]
    assert ids == sorted(r.id for r in ALL_RULES)


def test_rules_is_one_line_per_rule_sorted_by_id() -> None:
    """`rules`: one line per rule within the width, by id; the names are never cut."""
    from dflash_check.check.rules import ALL_RULES

    out = invoke_cli("rules", env={"COLUMNS": "80"}).stdout
    lines = [line for line in out.splitlines() if line.startswith("DF")]
    assert [line.split()[0] for line in lines] == sorted(r.id for r in ALL_RULES)
    assert all(len(line) <= 80 for line in lines)
    by_id = {r.id: r for r in ALL_RULES}
    for line in lines:
        assert line.split()[2] == by_id[line.split()[0]].name
    assert "why:" not in out
    data = json.loads(invoke_cli("rules", "-f", "json").stdout)
    assert {"DF090", "DF091", "DF092"} <= {r["id"] for r in data["rules"]}


def test_help_shows_usage_exit_codes_and_revisions() -> None:
    """--help: `[DRAFT] TARGET`, the exit codes, and the @REVISION form."""
    out = invoke_cli("pair", "--help", env={"COLUMNS": "120"}).stdout
    assert "pair [OPTIONS] [DRAFT] TARGET" in out
    assert "{" not in out.split("\n", 3)[1]
    # typer before 0.28 reflows the epilog into one paragraph: the words, not the line breaks
    flat = " ".join(out.split())
    assert "Exit codes:" in flat and "3 could not check" in flat
    assert "ORG/NAME@REVISION" in out


def test_install_hint_matches_the_installation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout gets `pip install -e`, a clone install its path, an index install the extra."""
    from dflash_check.smoke import install

    monkeypatch.chdir(REPO)
    assert install.extra_install_hint("smoke") == "pip install -e '.[smoke]'"

    class FakeDist:
        def __init__(self, direct: str | None) -> None:
            self.direct = direct

        def read_text(self, name: str) -> str | None:
            return self.direct

    monkeypatch.setattr(install, "_source_tree", lambda: None)
    clone = json.dumps({"url": "file:///home/me/dflash-check", "dir_info": {}})
    monkeypatch.setattr(install.metadata, "distribution", lambda name: FakeDist(clone))
    assert install.extra_install_hint("smoke") == "pip install '/home/me/dflash-check[smoke]'"
    monkeypatch.setattr(install.metadata, "distribution", lambda name: FakeDist(None))
    assert install.extra_install_hint("smoke") == "pip install 'dflash-check[smoke]'"


def smoke_fixture() -> SmokeReport:
    """Return a smoke run with fixed numbers (as the tiny pair gives), for the golden file."""
    cases = tuple(
        SmokeCase(
            prompt=p,
            prompt_token_ids=(2, 6, 7, 8),
            output_token_ids=tuple(range(17)),
            baseline_token_ids=tuple(range(17)),
            acceptance_lengths=(8, 6, 2),
            drafted=(7, 7, 7),
            lossless=True,
            seconds=0.04,
            baseline_seconds=0.1,
            timings=(0.05, 0.04, 0.04),
            baseline_timings=(0.1, 0.1, 0.12),
        )
        for p in ("1 2 3", "5 10 15")
    )
    return SmokeReport("cpu", "float32", 8, 0.0, 1.5, cases, repeats=3)


def test_smoke_report_golden() -> None:
    """The smoke section at 80 columns: verdict, tau, the labelled speedup, the histogram."""
    from dataclasses import replace

    report = replace(seed_report(QWEN3_4B), smoke=smoke_fixture())
    out = render_text(report, 80)
    text = flat(out)
    assert "smoke run passed: cpu, float32, block 8, 2 prompts; lossless" in text
    assert "Measured speedup 2.50x" in text and "median of 3 timed runs" in text
    assert "range 2.00–3.00x" in text
    check_golden("pair.smoke.80.txt", out)


def test_findings_that_name_their_runtime_merge_into_one(tmp_path: Path) -> None:
    """DF009 for llama.cpp 001d906a and mlx differ only in the runtime named: one headline
    naming both (vLLM reads a top-level mask since vllm-project/vllm#46995; llama.cpp
    0c1e57098 says what it does instead, a mask id of -1, so its finding stands apart)."""
    from tests.support.helpers import draft_config, write_draft

    cfg = draft_config()
    cfg["mask_token_id"] = cfg["dflash_config"].pop("mask_token_id")
    draft = write_draft(tmp_path / "draft", cfg)
    pinned = "vllm,llamacpp==001d906a,mlx"
    refs = parse_model_ref(str(draft)), parse_model_ref(str(QWEN3_4B))
    report = check_pair(CheckRequest(*refs, settings(pinned)))
    assert [f.runtime for f in report.findings if f.rule == "DF009"] == ["llamacpp", "mlx"]
    (diag,) = [d for d in diagnostics(report) if d.rule == "DF009"]
    assert diag.runtimes == ("llamacpp", "mlx") and diag.per_runtime == ()
    assert "but each of llamacpp and mlx reads only dflash_config.mask_token_id" in diag.headline
    assert flat(render_text(report, 60)).count("error[DF009]") == 1
