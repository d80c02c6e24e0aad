"""tools/extract_engine_facts.py on small source fixtures that mimic each engine's patterns.

The fixtures (tests/fixtures/engine_src) copy the shapes the extractor relies on, not engine
code: a registry table, an interface in a class hierarchy, capture before or after a layer, a
hook inherited or delegated, an ``EntryClass`` list or name, a converter registration, a layer
input stored after the last layer. A change of style in an engine then fails here or with
``AnchorMissing``, instead of dropping facts silently.
"""

from __future__ import annotations

import dataclasses
import shutil
import zipfile
from pathlib import Path

import pytest

from dflash_check.knowledge.engines import ENGINES_BY_NAME
from dflash_check.knowledge.reviewed import Read, Reviewed
from tests.support.paths import FIXTURES
from tools.extract_engine_facts import AnchorMissing, MeaningChanged, dump, extract, main

SRC = FIXTURES / "engine_src"
EXPECTED = SRC / "expected"
ENGINES = ("vllm", "sglang", "llamacpp")


@pytest.mark.parametrize("engine", ENGINES)
def test_fixture_facts_are_regenerated_byte_for_byte(engine: str) -> None:
    expected = (EXPECTED / f"{engine}-fixture.json").read_text(encoding="utf-8")
    assert dump(extract(engine, "fixture", SRC / engine)) == expected
    assert dump(extract(engine, "fixture", SRC / engine)) == expected  # no hidden state


def test_the_command_writes_the_data_file(tmp_path: Path) -> None:
    assert main(["sglang", "fixture", str(SRC / "sglang"), "--out", str(tmp_path)]) == 0
    written = (tmp_path / "sglang-fixture.json").read_text(encoding="utf-8")
    assert written == (EXPECTED / "sglang-fixture.json").read_text(encoding="utf-8")


def test_a_wheel_reads_the_same_as_its_tree(tmp_path: Path) -> None:
    """The real runs read wheels; the archive's name and digest are the only difference."""
    wheel = tmp_path / "vllm-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for p in sorted((SRC / "vllm").rglob("*.py")):
            zf.write(p, p.relative_to(SRC / "vllm").as_posix())
    from_wheel = extract("vllm", "fixture", wheel)
    from_tree = extract("vllm", "fixture", SRC / "vllm")
    assert from_wheel["archive"] == wheel.name and len(str(from_wheel["sha256"])) == 64
    drop = {"archive", "sha256"}
    assert {k: v for k, v in from_wheel.items() if k not in drop} == {
        k: v for k, v in from_tree.items() if k not in drop
    }


def test_vllm_patterns() -> None:
    facts = extract("vllm", "fixture", SRC / "vllm")
    targets = facts["targets"]
    assert isinstance(targets, dict)
    assert targets["MixtralForCausalLM"]["capture"] is False
    # _init_model() builds the inner model: capture of the embeddings, then after each layer.
    assert [s.rsplit(":", 1)[1] for s in targets["LlamaForCausalLM"]["sites"]] == [
        "before-loop",
        "after-layer",
    ]
    # model_cls names it; the test before the layer call, and after the loop.
    assert [s.rsplit(":", 1)[1] for s in targets["DeepForCausalLM"]["sites"]] == [
        "before-layer",
        "after-loop",
    ]
    # The CUDA path of a platform package, built by the parent's __init__ through super().
    v32 = targets["DeepV32ForCausalLM"]
    assert v32["class_at"].startswith("vllm/models/deep_v32/nvidia/model.py:")
    assert [s.rsplit(":", 1)[1] for s in v32["sites"]] == ["before-layer"]
    assert v32["default_ids"]["get_eagle3_default_aux_hidden_state_layers"]["expr"] == "(1, 2, 3)"
    # Built through the registry by an annotated assignment inside a ``with`` block.
    assert targets["WrapForConditionalGeneration"]["inner_registered"] is True
    # A forward that returns super().forward(...) runs its parent's capture.
    assert targets["MistralForCausalLM"]["sites"] == targets["LlamaForCausalLM"]["sites"]
    # Served through the Transformers backend (a table read when the release has it), which
    # captures by a set_aux_hidden_state_layers of its own, not a capture helper.
    assert targets["OlmoForCausalLM"]["class"] == "transformers:TransformersForCausalLM"
    assert targets["OlmoForCausalLM"]["capture"] is True
    assert targets["OlmoForCausalLM"]["capture_hook"] == (
        "vllm/model_executor/models/transformers.py:10"
    )
    assert "capture_hook" not in targets["LlamaForCausalLM"]
    assert set(facts["speculators"]) == {"dflash", "eagle3"}
    assert facts["messages"]["no_capture_v1"] is None
    # The refusal raised, not the warning logged with the same phrase two lines below.
    assert facts["messages"]["v1_removed"] == {
        "at": "vllm/platforms/interface.py:14",
        "text": "VLLM_USE_V2_MODEL_RUNNER={value} is no longer supported: Model Runner V1 has "
        "been removed. Unset this variable.",
    }


def test_sglang_patterns() -> None:
    targets = extract("sglang", "fixture", SRC / "sglang")["targets"]
    assert isinstance(targets, dict)
    v3 = targets["DeepV3ForCausalLM"]["hooks"]
    assert v3["eagle3"] == {
        "at": "sglang/srt/models/deep.py:6",
        "inherited_from": "DeepV2ForCausalLM",
        "rule": "plus-one-if-first-is-1",
    }
    oss = targets["OssForCausalLM"]["hooks"]
    assert (oss["eagle3"]["rule"], oss["dspark"]["rule"]) == ("raw-if-max-is-n", "raw")
    assert targets["WrapForConditionalGeneration"]["hooks"]["dflash"]["rule"] == (
        "delegates:self.model"
    )
    assert targets["Qwen2ForCausalLM"]["hooks"] == {}


def test_llamacpp_patterns() -> None:
    facts = extract("llamacpp", "fixture", SRC / "llamacpp")
    builders = facts["builders"]
    assert isinstance(builders, dict)
    assert builders["src/models/mimo2.cpp"]["after_last"] == "src/models/mimo2.cpp:6"
    assert builders["src/models/qwen3.cpp"]["after_last"] is None
    assert "src/models/gemma3.cpp" not in builders
    assert facts["converters"]["Qwen3Model"]["class"] == "Qwen3Model"


@pytest.mark.parametrize(
    ("engine", "path", "old", "new", "needle"),
    [
        (
            "vllm",
            "vllm/model_executor/models/registry.py",
            "_SPECULATIVE_DECODING_MODELS",
            "_DRAFT_MODELS",
            "_SPECULATIVE_DECODING_MODELS",
        ),
        (
            "vllm",
            "vllm/model_executor/models/interfaces.py",
            "class SupportsEagle3",
            "class SupportsAux",
            "SupportsEagle3",
        ),
        (
            "vllm",
            "vllm/transformers_utils/configs/speculators/algos.py",
            "@register_speculator",
            "@register_algorithm",
            "register_speculator",
        ),
        ("sglang", "sglang/srt/models/deep.py", "set_dspark_", "configure_dspark_", "dspark"),
        ("sglang", "sglang/srt/models/llama.py", "EntryClass", "Entries", None),
        (
            "llamacpp",
            "llama_cpp_python-0.3.36/vendor/llama.cpp/conversion/qwen.py",
            "@ModelBase.register",
            "@register",
            "converter",
        ),
    ],
)
def test_a_missing_anchor_fails_loudly(
    tmp_path: Path, engine: str, path: str, old: str, new: str, needle: str | None
) -> None:
    tree = tmp_path / engine
    shutil.copytree(SRC / engine, tree)
    file = tree / path
    file.write_text(file.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    if needle is None:
        # One file's EntryClass gone: the others still register, but that file's class too
        # would vanish; every EntryClass gone is an error.
        for p in (tree / "sglang/srt/models").glob("*.py"):
            p.write_text(p.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        needle = "EntryClass"
    with pytest.raises(AnchorMissing, match=needle):
        extract(engine, "fixture", tree)
    assert main([engine, "fixture", str(tree), "--out", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()


# Three plausible upstream refactors of the reviewed vLLM code (issue 29): each changes what
# the hand-typed knowledge says, so each must stop the extraction, naming what to review.
EAGLE3_UTILS = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"
INTERFACES = "vllm/model_executor/models/interfaces.py"
PLUS_ONE = 'layer_ids = [i + 1 for i in (dflash_config.get("target_layer_ids") or [])]'


def _refactored(tmp_path: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """A copy of the vLLM fixture with ``old`` replaced by ``new`` in each named file (or in
    every file, for the key ``*``); each edit must apply."""
    tree = tmp_path / "vllm"
    shutil.copytree(SRC / "vllm", tree)
    for where, (old, new) in edits.items():
        files = sorted(tree.rglob("*.py")) if where == "*" else [tree / where]
        hits = 0
        for p in files:
            text = p.read_text(encoding="utf-8")
            hits += text.count(old)
            p.write_text(text.replace(old, new), encoding="utf-8")
        assert hits, f"{old!r} is not in the fixture"
    return tree


@pytest.mark.parametrize(
    ("edits", "error", "names"),
    [
        # The capture helper renamed everywhere: the reviewed helper is gone.
        (
            {"*": ("_maybe_add_hidden_state", "_maybe_capture_hidden_state")},
            AnchorMissing,
            ("EagleModelMixin._maybe_add_hidden_state", "capture position"),
        ),
        # Renamed at its call sites only (the old definition left behind): no site is found.
        (
            {
                "vllm/model_executor/models/llama.py": (
                    "self._maybe_add_hidden_state(",
                    "self._maybe_capture_hidden_state(",
                ),
            },
            AnchorMissing,
            ("no model calls the capture helper _maybe_add_hidden_state",),
        ),
        # The +1 for DFlash ids dropped in get_eagle3_aux_layers_from_config.
        (
            {
                EAGLE3_UTILS: (
                    PLUS_ONE,
                    'layer_ids = list(dflash_config.get("target_layer_ids") or [])',
                )
            },
            MeaningChanged,
            ("get_eagle3_aux_layers_from_config", "numbering per key", "knowledge/runtimes"),
        ),
        # The de-duplication of the capture list dropped.
        (
            {INTERFACES: ("tuple(sorted(set(layers)))", "tuple(layers)")},
            MeaningChanged,
            ("EagleModelMixin._set_aux_hidden_state_layers", "de-duplication", "DF003"),
        ),
    ],
    ids=["helper-renamed", "helper-renamed-at-call-sites", "plus-one-dropped", "dedup-dropped"],
)
def test_a_refactor_of_reviewed_code_fails_loudly(
    tmp_path: Path, edits: dict[str, tuple[str, str]], error: type, names: tuple[str, ...]
) -> None:
    tree = _refactored(tmp_path, edits)
    with pytest.raises(error) as raised:
        extract("vllm", "fixture", tree)
    for name in names:
        assert name in str(raised.value)
    assert main(["vllm", "fixture", str(tree), "--out", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()


def test_a_change_of_layout_and_wording_is_not_a_change_of_meaning(tmp_path: Path) -> None:
    """Comments, a docstring and line breaks do not change a fingerprint: the extraction is the
    same but for the lines it cites."""
    tree = _refactored(
        tmp_path,
        {
            EAGLE3_UTILS: (
                "    if not (spec_config and spec_config.draft_model_config):\n",
                '    """Which target layers to capture."""\n\n    # (re-wrapped upstream)\n'
                "    if not (\n        spec_config and spec_config.draft_model_config\n    ):\n",
            )
        },
    )
    before = extract("vllm", "fixture", SRC / "vllm")["reviewed"]
    after = extract("vllm", "fixture", tree)["reviewed"]
    assert {k: v["fingerprint"] for k, v in after.items()} == {
        k: v["fingerprint"] for k, v in before.items()
    }


def test_an_sglang_range_check_that_changes_fails_loudly(tmp_path: Path) -> None:
    """SGLang's startup check refusing N-1 too would change DF004's stage there."""
    tree = tmp_path / "sglang"
    shutil.copytree(SRC / "sglang", tree)
    utils = tree / "sglang/srt/speculative/dflash_utils.py"
    text = utils.read_text(encoding="utf-8")
    assert "val >= target_num_layers:" in text
    utils.write_text(
        text.replace("val >= target_num_layers:", "val >= target_num_layers - 1:"),
        encoding="utf-8",
    )
    with pytest.raises(MeaningChanged, match=r"DFlashDraftConfig\.resolve_target_layer_ids"):
        extract("sglang", "fixture", tree)


# -- hostile archives (issue 30): one line and exit 2/3, bounded reads, regular files only ----


def run_main(capsys: pytest.CaptureFixture[str], archive: Path, out: Path) -> tuple[int, str]:
    code = main(["vllm", "fixture", str(archive), "--out", str(out)])
    return code, capsys.readouterr().err


def test_a_missing_archive_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(capsys, tmp_path / "nope.whl", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "no such archive" in err


def test_a_file_that_is_no_archive_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "vllm.tar.gz"
    junk.write_bytes(b"not an archive at all")
    code, err = run_main(capsys, junk, tmp_path / "out")
    assert code == 3 and err.count("\n") == 1 and "not a readable zip or tar" in err
    assert not (tmp_path / "out").exists()


def test_a_fifo_or_device_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    fifo = tmp_path / "vllm.whl"
    os.mkfifo(fifo)
    code, err = run_main(capsys, fifo, tmp_path / "out")
    assert code == 3 and "not a regular file" in err
    link = tmp_path / "zero.whl"
    link.symlink_to("/dev/zero")
    code, err = run_main(capsys, link, tmp_path / "out")
    assert code == 3 and "not a regular file" in err


def test_a_link_in_a_tree_is_not_followed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(SRC / "vllm", tree)
    (tree / "zero.py").symlink_to("/dev/zero")
    (tree / "outside.py").symlink_to(tmp_path / "secret.py")
    (tmp_path / "secret.py").write_text("SECRET = 1\n")
    source = __import__("tools.extract_engine_facts", fromlist=["read_archive"]).read_archive(
        tree, (".py",)
    )
    assert "zero.py" not in source.files and "outside.py" not in source.files


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_bomb_is_refused_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A member that inflates past MAX_MEMBER is refused after MAX_MEMBER bytes at most."""
    import io
    import tarfile
    import tracemalloc

    from tools import extract_engine_facts as tool

    size = tool.MAX_MEMBER * 3
    archive = tmp_path / f"vllm.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("vllm/bomb.py", b"0" * size)
    else:
        with tarfile.open(archive, "w:gz") as tf:
            info = tarfile.TarInfo("vllm/bomb.py")
            info.size = size
            tf.addfile(info, io.BytesIO(b"0" * size))
    tracemalloc.start()
    code, err = run_main(capsys, archive, tmp_path / "out")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 3 and err.count("\n") == 1, err
    assert peak < 2 * tool.MAX_MEMBER + 8 * 2**20


def test_a_zip_member_that_lies_about_its_size_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "vllm.whl"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("vllm/a.py", b"X = 1\n" * 100)
    data = bytearray(archive.read_bytes())
    # The central directory's uncompressed size of the one member: 600 -> 6.
    at = data.rfind(b"PK\x01\x02") + 24
    data[at : at + 4] = (6).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    code, err = run_main(capsys, archive, tmp_path / "out")
    assert code == 3 and err.count("\n") == 1, err


# --- vLLM: hf_config_override's branches, each release's own lines ----------------------------


def test_vllm_hf_config_override_branches() -> None:
    """Each branch of hf_config_override with the model types or architectures it tests, its
    lines and the model type it rewrites the config to; an ``elif`` says so; an ``if`` testing
    neither is not recorded (the fixture's last one)."""
    found = extract("vllm", "fixture", SRC / "vllm")["hf_config_override"]
    assert isinstance(found, dict)
    assert found["at"] == "vllm/config/speculative.py:8-32"  # the decorator to the return
    assert found["branches"] == [
        {"lines": "14", "model_types": ["deep_dsa", "deep_v32"]},
        {"lines": "15-19", "model_types": ["deep", "deep_v32"], "sets": "deep_mtp"},
        {"lines": "20-23", "model_types": ["deep_mtp"]},
        {"lines": "24-25", "architectures": ["WrapForConditionalGeneration"]},
        {"lines": "26-27", "architectures": ["MixtralForCausalLM"], "sets": "mixtral_mtp"},
        {"lines": "28-29", "model_types": ["mixtral_mtp"], "elif": True},
    ]


def test_vllm_without_hf_config_override_fails_loudly(tmp_path: Path) -> None:
    """A release whose SpeculativeConfig has no hf_config_override is an anchor missing, not a
    release whose MTP branches are silently empty."""
    src = tmp_path / "vllm"
    shutil.copytree(SRC / "vllm", src)
    path = src / "vllm/config/speculative.py"
    path.write_text(path.read_text().replace("def hf_config_override", "def renamed"))
    with pytest.raises(AnchorMissing, match="hf_config_override"):
        extract("vllm", "fixture", src)


LLAMA = "vllm/model_executor/models/llama.py"
LAMB = "vllm/model_executor/models/lamb.py"


def _with_lamb(tmp_path: Path, helper: str, prefix: str = "Llama") -> Path:
    """The vLLM fixture plus ``lamb.py``, a copy of ``llama.py`` registered as LambForCausalLM,
    whose capture calls go to ``helper`` and whose classes are named ``prefix``... (the
    reviewer's repro of issue 29 item 4 keeps llama.py's class names)."""
    tree = _refactored(tmp_path, {})
    text = (tree / LLAMA).read_text(encoding="utf-8").replace("class Llama", f"class {prefix}")
    text = text.replace("return LlamaModel(", f"return {prefix}Model(")
    (tree / LAMB).write_text(
        text.replace("self._maybe_add_hidden_state(", f"self.{helper}("), encoding="utf-8"
    )
    registry = tree / "vllm/model_executor/models/registry.py"
    row = '    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),\n'
    registry.write_text(
        registry.read_text(encoding="utf-8").replace(
            row, row + f'    "LambForCausalLM": ("lamb", "{prefix}ForCausalLM"),\n'
        ),
        encoding="utf-8",
    )
    return tree


def test_the_copy_captures_like_the_original(tmp_path: Path) -> None:
    """Unrenamed, the copy has the original's two capture sites (the repro's baseline)."""
    targets = extract("vllm", "fixture", _with_lamb(tmp_path, "_maybe_add_hidden_state"))["targets"]
    assert [s.replace("lamb.py", "llama.py") for s in targets["LambForCausalLM"]["sites"]] == (
        targets["LlamaForCausalLM"]["sites"]
    )


def test_a_capture_helper_renamed_in_one_model_fails_naming_it(tmp_path: Path) -> None:
    """Renamed at one model's call sites (others still call it), the class would go from two
    capture sites to none while it still declares the interface: the extraction fails, naming
    the class and its file."""
    tree = _with_lamb(tmp_path, "_maybe_capture_hidden_state")
    with pytest.raises(AnchorMissing) as raised:
        extract("vllm", "fixture", tree)
    assert f"LlamaForCausalLM ({LAMB}:16)" in str(raised.value)
    assert f"({LLAMA}:" not in str(raised.value)  # the original still captures
    assert main(["vllm", "fixture", str(tree), "--out", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()


def test_a_class_reviewed_as_capturing_nothing_passes_and_a_stale_review_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tools.extract_engine_facts as extractor

    tree = _with_lamb(tmp_path, "_maybe_capture_hidden_state", prefix="Lamb")
    # Reviewed as capturing nothing: no site is the truth, and the extraction goes on.
    monkeypatch.setattr(extractor, "VLLM_NO_CAPTURE_SITE", {"LambForCausalLM": "reviewed"})
    targets = extract("vllm", "fixture", tree)["targets"]
    assert (targets["LambForCausalLM"]["capture"], targets["LambForCausalLM"]["sites"]) == (
        True,
        [],
    )
    # A class reviewed as capturing nothing that has a capture site: the review is stale.
    monkeypatch.setattr(
        extractor,
        "VLLM_NO_CAPTURE_SITE",
        {"LambForCausalLM": "reviewed", "LlamaForCausalLM": "reviewed"},
    )
    with pytest.raises(AnchorMissing, match=r"now with a capture site: LlamaForCausalLM$"):
        extract("vllm", "fixture", tree)


# A reviewed range of the engine's module naming the fixture's functions (``Reviewed.read``),
# as vLLM's rows name theirs: the extractor fingerprints what the module names.
PLATFORM = "vllm/platforms/interface.py"
BACKEND = "vllm/model_executor/models/transformers.py"
ROW = Reviewed(
    ">=0.1",
    read={
        "removed_runners": (Read(PLATFORM, "check_runner_env", ("8ae3e2b56fb119af",)),),
        "runner_short": (Read(BACKEND, "TransformersBase", ("432c6643bfbeaf1a",)),),
    },
    removed_runners={"V1": "removed"},
    runner_short="a class fingerprinted whole",
)


@pytest.fixture
def vllm_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    engines = dict(ENGINES_BY_NAME)
    engines["vllm"] = dataclasses.replace(engines["vllm"], reviewed=(ROW,))
    monkeypatch.setattr("dflash_check.knowledge.engines.ENGINES_BY_NAME", engines)


@pytest.mark.usefixtures("vllm_rows")
def test_the_functions_a_reviewed_range_names_are_fingerprinted_in_its_releases() -> None:
    covered = extract("vllm", "0.2.0", SRC / "vllm")["reviewed"]
    assert covered["check_runner_env"] == {"at": f"{PLATFORM}:9", "fingerprint": "8ae3e2b56fb119af"}
    assert covered["TransformersBase"]["fingerprint"] == "432c6643bfbeaf1a"
    # Before the range (or a release no range can place): not read there, not fingerprinted.
    for release in ("0.0.9", "fixture"):
        assert "check_runner_env" not in extract("vllm", release, SRC / "vllm")["reviewed"]


@pytest.mark.usefixtures("vllm_rows")
@pytest.mark.parametrize(
    ("where", "old", "new", "names"),
    [
        # The refusal turned into a warning: what removed_runners says no longer holds.
        (
            PLATFORM,
            "                raise ValueError(",
            "                logger.warning(",
            ("check_runner_env", f"({PLATFORM}:9)", "Release.removed_runners"),
        ),
        # A method added to a class fingerprinted whole.
        (
            BACKEND,
            "    def set_aux_hidden_state_layers(self, layers):\n",
            "    speculates = False\n\n    def set_aux_hidden_state_layers(self, layers):\n",
            ("TransformersBase", "Release.runner_short", "knowledge/engines/vllm.py"),
        ),
    ],
    ids=["function", "class"],
)
def test_a_change_in_a_function_a_reviewed_range_names_fails_listing_its_fields(
    tmp_path: Path, where: str, old: str, new: str, names: tuple[str, ...]
) -> None:
    tree = _refactored(tmp_path, {where: (old, new)})
    with pytest.raises(MeaningChanged) as raised:
        extract("vllm", "0.2.0", tree)
    for name in names:
        assert name in str(raised.value)
    assert main(["vllm", "0.2.0", str(tree), "--out", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()
    extract("vllm", "fixture", tree)  # a release the range does not cover is not judged by it
