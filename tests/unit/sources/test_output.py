"""The one atomic writer (``sources/output.py``): a failed write leaves the old file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash_check.errors import CheckError


def test_output_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails half way leaves the old report in place, and no temp file."""
    from dflash_check.sources import output

    report = tmp_path / "report.json"
    report.write_text("old report")
    real = output._write_all

    def half(fd: int, data: bytes) -> None:
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output, "_write_all", half)
    with pytest.raises(CheckError, match="No space left on device"):
        output.write_report(report, "new report " * 100)
    assert report.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    monkeypatch.setattr(output, "_write_all", real)
    output.write_report(report, "new report")
    assert report.read_text() == "new report"
