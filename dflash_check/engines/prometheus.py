"""Read the Prometheus text exposition format (what an engine's ``/metrics`` answers).

Only the sample lines matter to a smoke run: ``name{label="value",...} number [timestamp]``.
``# HELP`` / ``# TYPE`` comments are skipped. Both engines render this text with
``prometheus_client`` (vLLM ``vllm/v1/metrics/loggers.py``, SGLang
``python/sglang/srt/metrics/collector.py``), so the grammar here is the one that library writes
(``prometheus_client/exposition.py``); the tests parse the same text with the library's own
parser and compare. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

MAX_SAMPLES = 20_000
"""Most samples kept from one exposition (of the series asked for): a real engine's
speculative series number K per engine core; a server listing more is not believed, and its
text is not turned into that many objects."""
MAX_LABEL_CHARS = 1024
"""Longest label value kept (real ones are model names and small numbers)."""


class MetricsFormatError(ValueError):
    """A line of the exposition is not a sample, a comment or blank."""


@dataclass(frozen=True)
class Sample:
    """One sample line."""

    name: str
    """Metric name as exposed (counters end in ``_total``; ``_created`` samples are separate)."""
    labels: tuple[tuple[str, str], ...]
    """Label pairs, in the order written."""
    value: float
    """The sample's value (``NaN`` and ``±Inf`` allowed)."""

    def label(self, key: str) -> str | None:
        """Return one label's value, or None when the sample lacks it."""
        return dict(self.labels).get(key)


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


def _parse_labels(text: str, pos: int, line_no: int) -> tuple[tuple[tuple[str, str], ...], int]:
    """Parse ``{k="v",...}`` starting at the ``{``; return the pairs and the index after ``}``."""
    pairs: list[tuple[str, str]] = []
    pos += 1
    while True:
        while pos < len(text) and text[pos] in " \t,":
            pos += 1
        if pos < len(text) and text[pos] == "}":
            return tuple(pairs), pos + 1
        match = _LABEL_NAME.match(text, pos)
        if match is None or match.end() >= len(text) or text[match.end()] != "=":
            raise MetricsFormatError(f"line {line_no}: bad label at column {pos + 1}")
        pos = match.end() + 1
        if pos >= len(text) or text[pos] != '"':
            raise MetricsFormatError(f"line {line_no}: label value must be quoted")
        pos += 1
        value: list[str] = []
        while True:
            if pos >= len(text):
                raise MetricsFormatError(f"line {line_no}: unterminated label value")
            char = text[pos]
            if char == "\\" and pos + 1 < len(text):
                value.append(_ESCAPES.get(text[pos + 1], "\\" + text[pos + 1]))
                pos += 2
            elif char == '"':
                pos += 1
                break
            else:
                value.append(char)
                pos += 1
            if len(value) > MAX_LABEL_CHARS:
                raise MetricsFormatError(
                    f"line {line_no}: label value over {MAX_LABEL_CHARS} chars"
                )
        pairs.append((match.group(), "".join(value)))


def _parse_value(token: str, line_no: int) -> float:
    """Parse a sample value as Prometheus writes it (``+Inf``, ``-Inf``, ``NaN`` included)."""
    try:
        return float(token)  # float() already reads inf, +Inf, -Inf and nan
    except ValueError:
        raise MetricsFormatError(f"line {line_no}: value {token!r} is not a number") from None


def _lines(text: str) -> Iterator[str]:
    """Yield the lines of ``text`` one at a time (no list of a million lines at once).

    Split on "\n" only: str.splitlines() would also break inside label values (\x1e, \x0c…).
    """
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end]
        start = end + 1


def parse_metrics(
    text: str, names: Collection[str] | None = None, max_samples: int = MAX_SAMPLES
) -> tuple[Sample, ...]:
    """Return every sample of a text exposition (only those called one of ``names``, when
    given), in order. More than ``max_samples`` of them is a ``MetricsFormatError``."""
    samples: list[Sample] = []
    for line_no, raw in enumerate(_lines(text), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _NAME.match(line)
        if match is None:
            raise MetricsFormatError(f"line {line_no}: no metric name")
        name, pos = match.group(), match.end()
        if names is not None and name not in names:
            continue
        if len(samples) >= max_samples:
            raise MetricsFormatError(f"more than {max_samples} samples of {name}")
        labels: tuple[tuple[str, str], ...] = ()
        if pos < len(line) and line[pos] == "{":
            labels, pos = _parse_labels(line, pos, line_no)
        rest = line[pos:].split()
        if not rest or len(rest) > 2:  # value, then an optional timestamp
            raise MetricsFormatError(f"line {line_no}: expected a value after {name}")
        samples.append(Sample(name, labels, _parse_value(rest[0], line_no)))
    return tuple(samples)


def total(
    samples: Iterable[Sample], name: str, where: Mapping[str, str] | None = None
) -> float | None:
    """Return the sum of every sample called ``name`` (matching ``where``), None if none.

    Summing is right for counters split by label (vLLM writes one series per engine core under
    data parallelism); a NaN sample is skipped, as Prometheus' ``sum`` would not be.
    """
    found = False
    value = 0.0
    for s in samples:
        if s.name != name:
            continue
        if where and any(s.label(k) != v for k, v in where.items()):
            continue
        found = True
        if not math.isnan(s.value):
            value += s.value
    return value if found else None


def by_label(samples: Iterable[Sample], name: str, key: str) -> dict[str, float]:
    """Return label value -> summed value, for the samples called ``name`` that have ``key``."""
    out: dict[str, float] = {}
    for s in samples:
        label = s.label(key)
        if s.name == name and label is not None and not math.isnan(s.value):
            out[label] = out.get(label, 0.0) + s.value
    return out
