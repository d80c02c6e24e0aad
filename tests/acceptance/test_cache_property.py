"""Property: no sequence of earlier runs, interrupted or not, changes a later verdict.

Random sequences of `pair` checks (straight and swapped, pinned to commits, offline, after a
simulated crash or disk fault that truncates, deletes or leaves half-written files in the
cache) run in-process against one HF_HOME and a loopback Hub. Each result must equal the
clean-cache result of the same check. Offline, two more answers are allowed, never another
verdict: a "not in the cache" or "damaged cache" error (the cache may simply lack the facts),
and, when the draft's config is cached but its safetensors header never was, the verdict that
config-only cache gives on a clean HF_HOME, with DF005 listed as not checked (what a local
folder without safetensors gets).

DFLASH_CHECK_PROPERTY_EXAMPLES sets the number of sequences (default 40; 300 take about
90 s on two shared cores).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dflash_check.app.pipeline import CheckRequest, ModelCache, check_pair
from dflash_check.errors import CheckError, ConfigError, NotCachedError
from dflash_check.sources.hub import HubOptions, HubSource
from dflash_check.sources.interface import parse_model_ref
from dflash_check.sources.safetensors_header import encode_header
from tests.support.helpers import QWEN3_4B, QWEN35_4B, SEED_DRAFT, fc_tensors, seed_draft_config
from tests.support.hubserver import LoopbackHub, commit_of, read_folder, serve

EXAMPLES = int(os.environ.get("DFLASH_CHECK_PROPERTY_EXAMPLES", "40"))


def bad_fc() -> dict[str, bytes]:
    """The seed draft with an fc one target layer too narrow."""
    cfg = seed_draft_config()
    return {
        "config.json": json.dumps(cfg).encode(),
        "model.safetensors": encode_header(fc_tensors(cfg, fc_in=4 * 2560)),
    }


REPOS = {
    "z-lab/Qwen3-4B-DFlash-b16": read_folder(SEED_DRAFT),
    "org/bad-fc-DFlash": bad_fc(),
    "Qwen/Qwen3-4B": read_folder(QWEN3_4B),
    "Qwen/Qwen3.5-4B": read_folder(QWEN35_4B),
}
PAIRS = [
    ("z-lab/Qwen3-4B-DFlash-b16", "Qwen/Qwen3-4B"),  # compatible
    ("org/bad-fc-DFlash", "Qwen/Qwen3-4B"),  # DF005
    ("z-lab/Qwen3-4B-DFlash-b16", "Qwen/Qwen3.5-4B"),  # layer range
]


@pytest.fixture(scope="module")
def hub() -> Iterator[LoopbackHub]:
    """One loopback Hub for the whole module."""
    with serve() as server:
        for repo_id, files in REPOS.items():
            server.add(repo_id, files)
        yield server


@contextmanager
def hf_at(hub: LoopbackHub, home: Path) -> Iterator[None]:
    """Point huggingface_hub (already imported) at the loopback Hub and at ``home``."""
    from huggingface_hub import constants

    with (
        mock.patch.object(constants, "ENDPOINT", hub.url),
        mock.patch.object(
            constants,
            "HUGGINGFACE_CO_URL_TEMPLATE",
            hub.url + "/{repo_id}/resolve/{revision}/{filename}",
        ),
        mock.patch.object(constants, "HF_HOME", str(home)),
        mock.patch.object(constants, "HF_HUB_CACHE", str(home / "hub")),
    ):
        yield


def spec(repo_id: str, pinned: bool) -> str:
    """Return ``repo_id``, pinned to its commit when asked."""
    return f"{repo_id}@{commit_of(REPOS[repo_id])}" if pinned else repo_id


def outcome(draft: str, target: str, offline: bool) -> tuple[str, ...]:
    """Run one check as a fresh CLI run would; return its verdict and rules, or its error."""
    source = HubSource(HubOptions(offline=offline, timeout=5, retries=0))
    request = CheckRequest(parse_model_ref(draft), parse_model_ref(target))
    try:
        report = check_pair(request, ModelCache(hub_factory=lambda: source))
    except CheckError as err:
        return ("error", type(err).__name__)
    rules = sorted({f.rule for f in report.findings})
    not_checked = sorted(f"not checked {n.rule}" for n in report.not_checked)
    return ("verdict", report.verdict.value, *rules, *not_checked)


def damage(home: Path, choice: int, how: str) -> None:
    """Simulate a killed run or a disk fault on one file of the cache."""
    files = sorted(p for p in home.rglob("*") if p.is_file() and not p.is_symlink())
    if not files:
        return
    victim = files[choice % len(files)]
    if how == "truncate":
        victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 3])
    elif how == "delete":
        victim.unlink()
    elif how == "empty":
        victim.write_bytes(b"")
    else:  # a write that never finished: a stray temp file beside the real one
        (victim.parent / f".{victim.name}.123.456.tmp").write_bytes(b'{"version": 2, "rep')
        (victim.parent / f"{victim.name}.incomplete").write_bytes(b"{")


FAULTS = ["truncate", "delete", "empty", "tmp"]
step = st.tuples(
    st.integers(0, len(PAIRS) - 1),  # which pair
    st.booleans(),  # swapped
    st.booleans(),  # pinned
    st.booleans(),  # offline
    st.none()
    | st.tuples(st.integers(0, 200), st.sampled_from(["truncate", "delete", "empty", "tmp"])),
)


@pytest.fixture(scope="module")
def clean(hub: LoopbackHub) -> dict[tuple[int, bool], tuple[str, ...]]:
    """The clean-cache result of every pair, straight and swapped."""
    results = {}
    for index, (draft, target) in enumerate(PAIRS):
        for swapped in (False, True):
            home = Path(tempfile.mkdtemp(prefix="clean-hf-"))
            try:
                with hf_at(hub, home):
                    a, b = (target, draft) if swapped else (draft, target)
                    results[(index, swapped)] = outcome(a, b, offline=False)
            finally:
                shutil.rmtree(home, ignore_errors=True)
    assert results[(0, False)][:2] == ("verdict", "compatible")
    assert "DF005" in results[(1, False)]
    assert results[(0, True)] == ("error", "NotADraftError")
    return results


@pytest.fixture(scope="module")
def config_only(hub: LoopbackHub) -> dict[tuple[int, bool], tuple[str, ...]]:
    """The offline result of every pair when a clean HF_HOME holds the two config.json files
    only (the draft's safetensors header never fetched)."""
    from huggingface_hub import hf_hub_download

    results = {}
    for index, (draft, target) in enumerate(PAIRS):
        for swapped in (False, True):
            home = Path(tempfile.mkdtemp(prefix="config-only-hf-"))
            try:
                with hf_at(hub, home):
                    a, b = (target, draft) if swapped else (draft, target)
                    for repo_id in (a, b):
                        hf_hub_download(repo_id, "config.json")
                    results[(index, swapped)] = outcome(a, b, offline=True)
            finally:
                shutil.rmtree(home, ignore_errors=True)
    # The configs clear the seed pair and the bad-fc draft alike: only the header tells
    # them apart, so both are "compatible" with the fc width listed as not checked.
    for index in (0, 1):
        assert results[(index, False)] == ("verdict", "compatible", "DF010", "not checked DF005")
    assert results[(2, False)][:2] == ("verdict", "incompatible")
    assert "not checked DF005" in results[(2, False)]
    return results


def test_no_sequence_of_runs_changes_a_verdict(
    hub: LoopbackHub,
    clean: dict[tuple[int, bool], tuple[str, ...]],
    config_only: dict[tuple[int, bool], tuple[str, ...]],
) -> None:
    """Random run sequences on one HF_HOME give the clean-cache verdicts."""
    allowed_offline = {("error", NotCachedError.__name__), ("error", ConfigError.__name__)}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
    )
    @given(st.lists(step, min_size=1, max_size=6))
    def sequence(steps: list) -> None:
        home = Path(tempfile.mkdtemp(prefix="prop-hf-"))
        try:
            with hf_at(hub, home):
                for index, swapped, pinned, offline, fault in steps:
                    if fault is not None:
                        damage(home, *fault)
                    draft, target = PAIRS[index]
                    a, b = (target, draft) if swapped else (draft, target)
                    got = outcome(spec(a, pinned), spec(b, pinned), offline)
                    want = clean[(index, swapped)]
                    if offline and got != want:
                        # Offline may know less (a header never cached: its rules not
                        # checked, other notes), but never give another verdict than the
                        # clean one or the config-only one, which says DF005 was not checked.
                        same_verdict = got[:2] == want[:2]
                        fc_unchecked = "not checked DF005" in got
                        as_config_only = (
                            fc_unchecked and got[:2] == config_only[(index, swapped)][:2]
                        )
                        assert same_verdict or as_config_only or got in allowed_offline, (
                            steps,
                            got,
                            want,
                        )
                    else:
                        assert got == want, (steps, got, want)
        finally:
            shutil.rmtree(home, ignore_errors=True)

    sequence()
