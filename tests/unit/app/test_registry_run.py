"""The registry run (``app/registry_run.py``): a registry file read into the pairs to check, then
checked, with ``--only`` and ``--strict`` applied once, for the CLI to show."""

from __future__ import annotations

import pytest

from dflash_check.app.pipeline import ModelCache
from dflash_check.app.registry_run import RegistryRequest, check_registry, read_registry
from dflash_check.errors import RegistryError
from tests.support.paths import FIXTURES

PAIRS = FIXTURES / "registry" / "pairs.yaml"
LOCAL = "*examples/Qwen3.5-4B"
"""The one pair of the fixture whose models are both local (no Hub): expected incompatible."""


def test_only_narrows_the_pairs_and_strict_marks_each() -> None:
    every = read_registry(RegistryRequest(PAIRS, "pairs"), PAIRS.read_text())
    assert every.plan is None and every.about is None and len(every.specs) > 1
    assert not any(s.strict for s in every.specs)
    one = read_registry(RegistryRequest(PAIRS, "pairs", only=LOCAL, strict=True), PAIRS.read_text())
    assert [s.target for s in one.specs] == ["../../../examples/Qwen3.5-4B"]
    assert all(s.strict for s in one.specs)


def test_a_broken_pairs_file_is_an_error_at_its_line() -> None:
    with pytest.raises(RegistryError, match=r"pairs\.yaml:2"):
        read_registry(RegistryRequest(PAIRS, "pairs"), "version: 1\npairs: 3\n")


def test_every_pair_is_checked_and_reported_once() -> None:
    request = RegistryRequest(PAIRS, "pairs", only=LOCAL, strict=True, workers=1)
    pairs = read_registry(request, PAIRS.read_text())
    seen: list[str] = []
    result = check_registry(request, pairs, ModelCache(), lambda o: seen.append(o.label))
    assert [o.label for o in result.outcomes] == seen and len(seen) == 1
    assert result.count("ok") == 1  # expected incompatible, and it is
    assert result.strict and result.file == str(PAIRS) and result.skipped == ()
