"""The smoke run on the CPU, with the tiny trained pair in tests/fixtures/tiny."""

from __future__ import annotations

import functools
import json
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import QWEN35_4B, REPO, SEED_DRAFT, run_cli
from tests.support.no_torch import BLOCK_TORCH

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)  # as OMP_NUM_THREADS=1 does for the CLI subprocesses (conftest.py)

from dflash_check.smoke.run import SmokeOptions, run_smoke  # noqa: E402
from dflash_check.sources.interface import parse_model_ref  # noqa: E402

TINY = REPO / "tests" / "fixtures" / "tiny"
DRAFT, TARGET = TINY / "draft", TINY / "target"
PROMPTS = ("1 2 3", "5 10 15", "7 9", "40 43 46", "3 8 13 18")
LIMIT = 59


def progression_prompts(n: int, seed: int = 1) -> tuple[str, ...]:
    """Return ``n`` prompts of three terms of random progressions (mod 59)."""
    rng = random.Random(seed)
    prompts = []
    for _ in range(n):
        a, d = rng.randrange(1, LIMIT), rng.randrange(1, 7)
        prompts.append(" ".join(str((a + k * d) % LIMIT) for k in range(3)))
    return tuple(prompts)


@pytest.fixture(scope="module", autouse=True)
def _load_each_model_once() -> Iterator[None]:
    """Load the tiny target and each draft once per module: decoding never changes weights
    (KV caches are per decode), and loading is most of an in-process run's time."""
    from dflash_check.smoke import run as module

    real_target, real_draft = module.load_target, module.load_draft
    module.load_target = functools.cache(real_target)  # type: ignore[assignment]
    module.load_draft = functools.cache(real_draft)  # type: ignore[assignment]
    yield
    module.load_target, module.load_draft = real_target, real_draft


def smoke(draft: Path = DRAFT, **kwargs: object):
    """Run the smoke decode in-process on the tiny pair (one timed run unless asked)."""
    kwargs.setdefault("repeats", 1)
    options = SmokeOptions(device="cpu", max_new_tokens=40, **kwargs)  # type: ignore[arg-type]
    return run_smoke(parse_model_ref(str(draft)), parse_model_ref(str(TARGET)), options)


def shifted_draft(tmp_path: Path, shift: int) -> Path:
    """Copy the tiny draft with its target_layer_ids shifted by ``shift``."""
    folder = tmp_path / f"draft{shift:+d}"
    shutil.copytree(DRAFT, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["dflash_config"]["target_layer_ids"] = [
        t + shift for t in cfg["dflash_config"]["target_layer_ids"]
    ]
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@dataclass(frozen=True)
class Ran:
    """What a CLI run left: exit code and the two streams (as subprocess.run names them)."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str) -> Ran:
    """Run the CLI in-process, so torch and the tiny models load once for the whole module
    (the Hub test below runs it as a subprocess, as a user would)."""
    from typer.testing import CliRunner

    from dflash_check.cli import app

    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def smoke_cli(draft: Path, prompts: tuple[str, ...], *extra: str) -> Ran:
    """Run `pair DRAFT TINY-TARGET --smoke-run --device cpu` with prompts, as a user would."""
    args = ["pair", str(draft), str(TARGET), "--smoke-run", "--device", "cpu", *extra]
    if "--timing-repeats" not in extra:
        args += ["--timing-repeats", "1"]  # the timing itself is tested in-process
    for p in prompts:
        args += ["--prompt", p]
    return cli(*args)


def test_tiny_pair_passes_the_static_check() -> None:
    """The fixture pair is a valid pair: the smoke run would run on it."""
    proc = run_cli("pair", str(DRAFT), str(TARGET), "-f", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["findings"] == []


def test_smoke_run_through_the_cli() -> None:
    """--smoke-run: exit 0, lossless, tau well above 1, the JSON fields all there."""
    proc = smoke_cli(DRAFT, PROMPTS, "--max-new-tokens", "40", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    smoke_json = json.loads(proc.stdout)["smoke"]
    assert smoke_json["lossless"] is True and smoke_json["passed"] is True
    assert smoke_json["device"] == "cpu" and smoke_json["dtype"] == "float32"
    assert smoke_json["block_size"] == 8
    assert smoke_json["mean_acceptance_length"] >= 3.0
    assert len(smoke_json["acceptance_rate_per_position"]) == 7
    for key in ("tokens_per_second", "baseline_tokens_per_second", "speedup"):
        assert smoke_json[key] > 0
    case = smoke_json["cases"][0]
    assert case["prompt"] == PROMPTS[0]
    assert case["prompt_token_ids"][0] == 2  # <bos>
    # the first token comes from the prefill; each verify step commits the rest
    assert 1 + sum(case["acceptance_lengths"]) == len(case["output_token_ids"])
    assert case["lossless"] is True


def test_table_report_has_the_histogram() -> None:
    """The human report shows the smoke verdict, tau and a histogram."""
    proc = smoke_cli(DRAFT, ("1 2 3",), "--max-new-tokens", "24")
    assert proc.returncode == 0, proc.stderr
    assert "smoke run passed: cpu, float32, block 8, 1 prompt; lossless" in proc.stdout
    assert "acceptance lengths:" in proc.stdout and "│" in proc.stdout
    assert "median of 1 timed run after a warm-up" in " ".join(proc.stdout.split())


def test_lossless_on_many_prompts() -> None:
    """Greedy speculative output equals plain greedy output on 24 prompts; tau >= 3."""
    report = smoke(prompts=progression_prompts(24))
    assert [c.lossless for c in report.cases] == [True] * 24
    assert report.mean_acceptance_length >= 3.0, report.histogram()
    assert report.passed


def test_block_size_override_changes_the_steps() -> None:
    """--block-size 2 drafts one token per step: tau is at most 2."""
    report = smoke(prompts=PROMPTS, block_size=2)
    assert report.block_size == 2 and report.lossless is True
    assert report.mean_acceptance_length <= 2.0
    assert all(d <= 1 for c in report.cases for d in c.drafted)


def test_sampling_stays_in_the_vocabulary() -> None:
    """With a temperature, outputs are sampled (not compared) and stay within the vocab."""
    report = smoke(prompts=PROMPTS, temperature=0.8, seed=3)
    assert report.lossless is None
    vocab = json.loads((TARGET / "config.json").read_text())["vocab_size"]
    for case in report.cases:
        assert case.output_token_ids and all(0 <= t < vocab for t in case.output_token_ids)
        assert 1 + sum(case.acceptance_lengths) == len(case.output_token_ids)
    again = smoke(prompts=PROMPTS, temperature=0.8, seed=3)
    assert [c.output_token_ids for c in again.cases] == [c.output_token_ids for c in report.cases]


def test_shifted_layer_ids_collapse_acceptance(tmp_path: Path) -> None:
    """Layer ids off by one (the vLLM bug before #40727): lossless still, tau collapses."""
    good = smoke(prompts=progression_prompts(12))
    bad = smoke(draft=shifted_draft(tmp_path, -1), prompts=progression_prompts(12))
    assert bad.lossless is True  # the target verifies everything: output stays correct
    assert bad.mean_acceptance_length < 0.6 * good.mean_acceptance_length
    assert bad.mean_acceptance_length < 2.0


def test_min_acceptance_catches_the_shift(tmp_path: Path) -> None:
    """The static check passes the shifted draft; --min-acceptance fails it (exit 1)."""
    draft = shifted_draft(tmp_path, -1)
    proc = smoke_cli(
        draft,
        progression_prompts(6),
        "--max-new-tokens",
        "40",
        "--min-acceptance",
        "2.5",
        "-f",
        "json",
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "compatible"  # configs agree: only running it tells
    assert report["smoke"]["passed"] is False and report["smoke"]["lossless"] is True


def test_static_failure_skips_the_smoke_run() -> None:
    """A broken pair is not run unless --force; with --force it fails in one line."""
    proc = cli("pair", str(SEED_DRAFT), str(QWEN35_4B), "--smoke-run", "--device", "cpu")
    assert proc.returncode == 1
    assert "Smoke run skipped" in proc.stderr
    forced = cli(
        "pair", str(SEED_DRAFT), str(QWEN35_4B), "--smoke-run", "--force", "--device", "cpu"
    )
    assert forced.returncode == 3 and "Traceback" not in forced.stderr
    assert len([x for x in forced.stderr.splitlines() if x.startswith("Error:")]) == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_requested_without_cuda() -> None:
    """--device cuda where there is none: a clear line, exit 3."""
    proc = cli("pair", str(DRAFT), str(TARGET), "--smoke-run", "--device", "cuda")
    assert proc.returncode == 3
    assert "CUDA is not available" in proc.stderr and "Traceback" not in proc.stderr


def test_dflash2_without_its_fields_is_refused_by_name(tmp_path: Path) -> None:
    """A DFlash2 draft lacking its conv/selector keys: one line naming the field, exit 3."""
    folder = tmp_path / "dflash2"
    shutil.copytree(DRAFT, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["architectures"] = ["DFlash2DraftModel"]
    (folder / "config.json").write_text(json.dumps(cfg))
    proc = cli("pair", str(folder), str(TARGET), "--smoke-run", "--force", "--device", "cpu")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert "DFlash2DraftModel" in proc.stderr and "conv_kernel_size" in proc.stderr


def test_missing_extra_says_what_to_install() -> None:
    """Without torch: one line with the exact pip command, exit 3; the check itself works."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH, "pair", str(DRAFT), str(TARGET), "--smoke-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3
    # Run from this checkout: the hint installs the extra into it, not from a package index.
    assert "pip install -e '" in proc.stderr and "[smoke]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    plain = subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH, "pair", str(DRAFT), str(TARGET)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 0


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the reference uses past_key_values
def test_matches_the_reference_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same output tokens and acceptance lengths as z-lab's dflash_generate, where installed."""
    import time

    dflash = pytest.importorskip("dflash.model")
    # The reference times with torch.cuda.synchronize(); on the CPU a plain clock does.
    monkeypatch.setattr(dflash, "_cuda_time", time.perf_counter)
    from transformers import AutoModelForCausalLM

    from dflash_check.smoke.decode import speculative_decode
    from dflash_check.smoke.run import load_draft

    target = AutoModelForCausalLM.from_pretrained(str(TARGET), dtype=torch.float32).eval()
    reference = dflash.DFlashDraftModel.from_pretrained(str(DRAFT), dtype=torch.float32).eval()
    ours, block, mask = load_draft(DRAFT, torch, torch.device("cpu"), torch.float32, None)
    for prompt in progression_prompts(6):
        ids = [2, *[5 + int(w) for w in prompt.split()]]
        ref = dflash.dflash_generate(
            reference, target, torch.tensor([ids]), 40, [3], return_stats=True
        )
        mine = speculative_decode(target, ours, ids, 40, {3}, block, mask)
        assert ref.output_ids[0, len(ids) :].tolist() == mine.output_ids
        assert list(ref.acceptance_lengths) == mine.acceptance_lengths


def test_chat_template_is_applied_when_present(tmp_path: Path) -> None:
    """A tokenizer with a chat template formats prompts through it, unless told not to."""
    from transformers import AutoTokenizer

    from dflash_check.smoke.run import encode

    folder = tmp_path / "target"
    shutil.copytree(TARGET, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    # A template that appends the word "0" after the user's message.
    config["chat_template"] = "{{ messages[0]['content'] }} 0"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    raw = encode(tokenizer, "1 2 3", chat_template=False)
    templated = encode(tokenizer, "1 2 3", chat_template=True)
    assert raw == [2, 6, 7, 8]
    assert templated[-1] == 5 and templated[-4:-1] == [6, 7, 8]


def test_failed_smoke_run_in_ci_formats(tmp_path: Path) -> None:
    """A failing smoke run is a DF092 result in GitHub annotations (and exit 1)."""
    draft = shifted_draft(tmp_path, -1)
    proc = smoke_cli(
        draft,
        progression_prompts(3),
        "--max-new-tokens",
        "24",
        "--min-acceptance",
        "2.5",
        "-f",
        "github",
    )
    assert proc.returncode == 1
    assert "title=DF092::" in proc.stdout and "below --min-acceptance 2.5" in proc.stdout


def test_smoke_run_from_the_hub(tmp_path: Path) -> None:
    """Hub repos: the smoke run downloads configs, tokenizer and safetensors, nothing else."""
    from tests.support.hubserver import serve

    with serve() as hub:
        hub.add("tiny/draft", DRAFT)
        hub.add(
            "tiny/target",
            {
                **{p.name: p.read_bytes() for p in TARGET.iterdir()},
                "pytorch_model.bin": b"pickle: never fetched",
            },
        )
        proc = run_cli(
            "pair",
            "tiny/draft",
            "tiny/target",
            "--smoke-run",
            "--device",
            "cpu",
            "--prompt",
            "1 2 3",
            "--max-new-tokens",
            "16",
            "-f",
            "json",
            env=hub.env(tmp_path / "home"),
        )
        fetched = {r.path.rsplit("/", 1)[-1] for r in hub.state.log if r.method == "GET"}
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["smoke"]["lossless"] is True
    assert "pytorch_model.bin" not in fetched and "model.safetensors" in fetched


def test_subfolder_draft_smoke_run(tmp_path: Path) -> None:
    """A draft stored in a subfolder of another folder (DIR:SUBFOLDER) runs the smoke decode."""
    shutil.copytree(DRAFT, tmp_path / "repo" / "dflash")
    proc = cli(
        "pair",
        f"{tmp_path / 'repo'}:dflash",
        str(TARGET),
        "--smoke-run",
        "--device",
        "cpu",
        "--max-new-tokens",
        "16",
        "--min-acceptance",
        "1",
        "-f",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["smoke"]["lossless"] is True


def test_speculators_draft_is_reported_unsupported(tmp_path: Path) -> None:
    """A speculators-format draft: the smoke run says it is not supported yet (exit 3)."""
    folder = tmp_path / "speculators"
    shutil.copytree(DRAFT, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["speculators_model_type"] = "dflash"
    cfg["transformer_layer_config"] = {"hidden_size": cfg["hidden_size"]}
    (folder / "config.json").write_text(json.dumps(cfg))
    proc = cli("pair", str(folder), str(TARGET), "--smoke-run", "--device", "cpu", "--force")
    assert proc.returncode == 3, proc.stderr
    assert "speculators-format drafts are not supported by the smoke run yet" in proc.stderr


def test_default_prompts_suit_the_tokenizer() -> None:
    """The tiny tokenizer knows no English: the built-in prompts give way to number prompts,
    the report says so, and the run shows the pair's real acceptance."""
    from dflash_check.smoke.run import NUMBER_PROMPTS

    report = smoke(repeats=1)
    assert tuple(c.prompt for c in report.cases) == NUMBER_PROMPTS
    assert report.prompts_note is not None and "unknown tokens" in report.prompts_note
    assert report.mean_acceptance_length >= 3.0 and report.passed


def test_timing_is_repeated_and_summarised() -> None:
    """Each decode is timed `repeats` times after a warm-up; speeds use the median."""
    from statistics import median

    report = smoke(prompts=PROMPTS[:2], repeats=3)
    assert report.repeats == 3
    for case in report.cases:
        assert len(case.timings) == len(case.baseline_timings) == 3
        assert case.seconds == median(case.timings)
    assert len(report.speedups) == 3
    assert report.speedup == median(report.speedups)
