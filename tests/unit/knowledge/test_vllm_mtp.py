"""vLLM's MTP rows (``knowledge/engines/vllm_mtp.py``) as the release selected has them: a row
read in some releases only answers there, with that release's own lines; Kimi K2 (model_type
``kimi_k2``, which ``hf_config_override`` maps to no MTP draft) per release."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dflash_check.check.report import Verdict
from dflash_check.check.target_alone import check_target_mtp
from dflash_check.knowledge import facts
from dflash_check.knowledge.engines import VLLM, Release
from dflash_check.knowledge.engines.vllm_mtp import branch_lines, unreviewed_names
from tests.support.helpers import files, invoke_cli, write_model
from tests.support.releases import add_next_vllm, citations_not_of, copy_facts

# moonshotai's Kimi K2 layout as vLLM loads it (DeepseekV3Config), stating no MTP count: the
# oracle's case code-mtp-kimi-k2-no-key (conformance/mined/code_cases.py).
KIMI_K2: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "kimi_k2",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "vocab_size": 163840,
}
# An architecture no vLLM release maps to an MTP draft, stating one MTP layer.
UNKNOWN = KIMI_K2 | {
    "architectures": ["SomeNewForCausalLM"],
    "model_type": "some_new",
    "num_nextn_predict_layers": 1,
}
REFUSED = "NotImplementedError: Unsupported speculative method: 'mtp'"


def _pair(tmp_path: Path, config: dict[str, Any], release: str) -> tuple[int, dict[str, Any]]:
    """``pair TARGET -r vllm==release`` as JSON: the exit code and the report."""
    folder = write_model(tmp_path / "target", config)
    ran = invoke_cli(
        "pair", str(folder), "-r", f"vllm=={release}", "--num-speculative-tokens", "1",
        "--format", "json",
    )  # fmt: skip
    return ran.returncode, json.loads(ran.stdout)


def _vllm_row(report: dict[str, Any]) -> dict[str, Any]:
    (row,) = [r for r in report["engines"] if r["engine"] == "vllm"]
    return row


def _refuses(release: Release) -> bool:
    """Whether the release's Kimi K2 row refuses method mtp (read from the rows, so that a
    release added with its own row needs no edit here)."""
    report = check_target_mtp(
        files("target", KIMI_K2), None, "", releases={"vllm": release.version}
    )
    return any(r.refusal is not None for r in report.engines)


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.version)
@pytest.mark.parametrize("config", [KIMI_K2, UNKNOWN], ids=["kimi_k2", "unmapped"])
def test_each_release_row_says_and_cites_its_own_release(
    release: Release, config: dict[str, Any], tmp_path: Path
) -> None:
    """The row a target gets names and cites the release selected, never another one (vLLM
    0.34.0's row once said 'vLLM 0.33.0 maps no MTP draft', citing 0.33.0)."""
    _, report = _pair(tmp_path, config, release.version)
    row = _vllm_row(report)
    text = f"{row['draft']} {row['citation']}"
    assert f"{release.spec}:vllm/config/speculative.py:" in row["citation"], text
    assert citations_not_of(release, text) == [], text
    # A reviewed text may say which release it was read at; no other release is named.
    bare = re.sub(r"read at \S+", "", text)
    others = [v for v in VLLM.versions if v != release.version and v in bare]
    assert others == [], text


def test_kimi_k2_is_refused_at_start_up_where_the_release_refuses_the_method(
    tmp_path: Path,
) -> None:
    """vLLM 0.32.0 and 0.33.0 map kimi_k2 to no MTP draft and raise on method mtp while the
    speculative config resolves: an error at load, in vLLM's words, citing the release."""
    refusing = [r for r in VLLM.releases if _refuses(r)]
    assert [r.version for r in refusing] == ["0.32.0", "0.33.0"]
    for release in refusing:
        code, report = _pair(tmp_path / release.version, KIMI_K2, release.version)
        errors = [f for f in report["findings"] if f["severity"] == "error"]
        assert code == 1 and report["verdict"] == "incompatible"
        assert [(f["rule"], f["runtime"], f["stage"]) for f in errors] == [
            ("DF063", "vllm", "load")
        ]
        assert REFUSED in errors[0]["message"]
        assert f"{release.spec}:vllm/config/speculative.py:" in errors[0]["message"]
        # The error says it: no DF043 warning beside it.
        assert [f["rule"] for f in report["findings"]] == ["DF063"]


def test_kimi_k2_on_vllm_0_34_is_accepted_at_config_as_its_own_class(tmp_path: Path) -> None:
    """vLLM 0.34.0 accepts method mtp on kimi_k2 at config with the target's own config as the
    draft's: compatible, the row names DeepseekV3ForCausalLM and says what is not verified."""
    code, report = _pair(tmp_path, KIMI_K2, "0.34.0")
    row = _vllm_row(report)
    assert code == 0 and report["verdict"] == "compatible"
    assert row["draft"].startswith("DeepseekV3ForCausalLM, the target's own class")
    assert "not verified" in row["draft"] and row["verified"] is False
    assert row["citation"].startswith("vllm==0.34.0:vllm/config/speculative.py:847-862")
    assert [f["rule"] for f in report["findings"]] == ["DF043"]  # a warning: not verified


def test_a_release_whose_rows_were_not_read_claims_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release added with facts that do not hold its hf_config_override gets no other
    release's row: the catch-all says it was not read (and refuses nothing)."""
    new = add_next_vllm(
        copy_facts(tmp_path / "data", monkeypatch),
        monkeypatch,
        lambda raw: raw.pop("hf_config_override"),
    )
    report = check_target_mtp(files("target", UNKNOWN), None, "", releases={"vllm": new.version})
    (row,) = report.engines
    assert row.verified is False and row.refusal is None
    assert "not read at this release" in row.citation
    assert report.verdict is Verdict.COMPATIBLE


# The fixture targets of the families vLLM builds an MTP draft for (one branch of
# hf_config_override each): DeepSeek-V3, Qwen3.5 (and its 3.6 and NVFP4 kin), Nemotron-H, Step.
_TARGETS = Path(__file__).parents[2] / "fixtures" / "targets"
FAMILY_TARGETS = [
    "deepseek-ai--DeepSeek-V3",
    "Qwen--Qwen3.5-27B",
    "Qwen--Qwen3.6-27B",
    "nvidia--Qwen3.6-27B-NVFP4",
    "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "stepfun-ai--Step-3.7-Flash",
]


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.version)
@pytest.mark.parametrize("target", FAMILY_TARGETS)
def test_each_family_row_cites_the_release_selected(release: Release, target: str) -> None:
    """A family's row (its branch of hf_config_override, the draft length, the reruns, the
    loader) cites the release selected, never another one (every release once cited 0.33.0's
    lines)."""
    ran = invoke_cli(
        "pair", str(_TARGETS / target), "-r", release.spec, "--format", "json"
    )  # fmt: skip
    row = _vllm_row(json.loads(ran.stdout))
    assert not row["draft"].startswith("none"), row["draft"]
    assert row["citation"].startswith(f"{release.spec}:vllm/config/speculative.py:"), row
    text = json.dumps(row, ensure_ascii=False)
    assert citations_not_of(release, text) == [], text
    assert f"{release.spec}:" in row["tokens"], row["tokens"]


def test_a_branch_a_release_lacks_does_not_apply_there(tmp_path: Path) -> None:
    """Step 5's branch is in 0.33.0 on (its facts show it), not in 0.32.0: at a release without
    it the row is the release's own 'no branch' answer, cited there."""
    step5 = UNKNOWN | {"architectures": ["Step5ForCausalLM"], "model_type": "step5"}
    drafts = {}
    for release in VLLM.releases:
        _, report = _pair(tmp_path / release.version, step5, release.version)
        row = _vllm_row(report)
        assert citations_not_of(release, f"{row['draft']} {row['citation']}") == []
        drafts[release.version] = row["draft"]
    assert drafts["0.32.0"] == "none: vLLM 0.32.0 maps no MTP draft for this architecture"
    assert [v for v, d in drafts.items() if d.startswith("Step5MTP")] == [
        r.version for r in VLLM.releases if VLLM.in_range(r.version, ">=0.33")
    ]


def test_a_branch_s_lines_follow_the_model_type_it_rewrites_not_an_elif() -> None:
    """A branch's lines are those testing its names, plus a later ``if`` testing the model type
    it rewrote the config to (not an ``elif``, which the taken branch excludes), merged where
    they touch; read from each release's facts (vLLM 0.34.0: the use_v32_mtp test at 831, the
    mapping to deepseek_mtp at 847-852 and its branch at 853-862)."""
    override = {
        "branches": [
            {"lines": "14", "model_types": ["deep_dsa", "deep_v32"]},
            {"lines": "15-19", "model_types": ["deep", "deep_v32"], "sets": "deep_mtp"},
            {"lines": "20-23", "model_types": ["deep_mtp"]},
            {"lines": "26-27", "architectures": ["MixtralForCausalLM"], "sets": "mixtral_mtp"},
            {"lines": "28-29", "model_types": ["mixtral_mtp"], "elif": True},
        ]
    }
    assert branch_lines(override, ("deep_v32",)) == "14-23"
    assert branch_lines(override, ("deep",)) == "15-23"
    assert branch_lines(override, ("MixtralForCausalLM",)) == "26-27"
    assert branch_lines(override, ("qwen3_next",)) is None
    read = facts.for_release(VLLM.release("0.34.0")).hf_config_override
    assert branch_lines(read, ("deepseek_v32", "glm_moe_dsa")) == "831,847-862"
    assert branch_lines(read, ("deepseek_v3",)) == "847-862"


def test_a_release_with_its_own_kimi_branch_says_it_was_not_reviewed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release whose facts show a branch for kimi_k2 itself gets neither the refusal nor
    the acceptance read in earlier releases: its row says the branch was not reviewed."""

    def kimi_branch(raw: dict[str, Any]) -> None:
        raw["hf_config_override"]["branches"].append(
            {"lines": "2000-2010", "model_types": ["kimi_k2"], "sets": "kimi_k2_mtp"}
        )

    new = add_next_vllm(copy_facts(tmp_path / "data", monkeypatch), monkeypatch, kimi_branch)
    report = check_target_mtp(files("target", KIMI_K2), None, "", releases={"vllm": new.version})
    (row,) = report.engines
    assert row.verified is False and row.refusal is None
    assert row.draft.startswith(f"not read: vLLM {new.version}'s hf_config_override")
    assert row.citation == f"{new.spec}:vllm/config/speculative.py:2000-2010"


@pytest.mark.parametrize("release", VLLM.releases, ids=lambda r: r.version)
def test_a_target_with_a_branch_nobody_reviewed_is_not_said_to_have_none(
    release: Release,
) -> None:
    """A model type the release's hf_config_override has a branch for (its facts), which no
    reviewed branch takes, gets "not reviewed" (unverified), never "maps no MTP draft": the
    release does something with it that was not read (hy_v3, kimi_k3, ernie4_5_moe ...)."""
    read = facts.for_release(release)
    types = [n for names in unreviewed_names(read.hf_config_override, read.drafts) for n in names]
    model_type = next(n for n in types if n.islower())  # a model type, not an architecture
    config = UNKNOWN | {"model_type": model_type}
    report = check_target_mtp(files("target", config), None, "", releases={"vllm": release.version})
    (row,) = report.engines
    assert "was not reviewed for this target" in row.draft, row.draft
    assert row.verified is False and row.refusal is None
    assert f"{release.spec}:vllm/config/speculative.py:" in row.citation
