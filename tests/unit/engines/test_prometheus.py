"""The Prometheus text parser agrees with prometheus_client's own parser."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from dflash_check.engines.prometheus import MetricsFormatError, by_label, parse_metrics, total


def reference(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    """Return the samples prometheus_client's parser reads from ``text``."""
    return [
        (s.name, tuple(s.labels.items()), s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def ours(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    """Return the samples our parser reads, in the same shape."""
    return [(s.name, s.labels, s.value) for s in parse_metrics(text)]


def same(a: list, b: list) -> bool:
    """Compare sample lists, NaN equal to NaN and label order ignored."""
    if len(a) != len(b):
        return False
    for (n1, l1, v1), (n2, l2, v2) in zip(a, b, strict=True):
        if n1 != n2 or sorted(l1) != sorted(l2):
            return False
        if not (v1 == v2 or (math.isnan(v1) and math.isnan(v2))):
            return False
    return True


def test_vllm_style_exposition() -> None:
    """Counters with _total/_created, a label named position, a histogram, odd label values."""
    reg = CollectorRegistry()
    c = Counter("vllm:spec_decode_num_accepted_tokens_per_pos", "x", ["model_name", "position"],
                registry=reg)  # fmt: skip
    c.labels(model_name='/models/a "b"\\c\nd', position="0").inc(7)
    c.labels(model_name="m", position="1").inc(2.5)
    Gauge("sglang:spec_accept_length", "y", registry=reg).set(float("nan"))
    Histogram("lat_seconds", "z", buckets=(0.1, 1.0), registry=reg).observe(0.3)
    text = generate_latest(reg).decode()
    assert same(ours(text), reference(text))
    samples = parse_metrics(text)
    name = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
    assert by_label(samples, name, "position") == {"0": 7.0, "1": 2.5}
    assert total(samples, name) == 9.5
    assert total(samples, name, {"position": "1"}) == 2.5
    assert total(samples, "absent_total") is None


label_values = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x85\u2028\u2029"),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.tuples(label_values, st.floats(min_value=0, max_value=1e12, allow_nan=False)),
        min_size=1,
        max_size=5,
        unique_by=lambda t: t[0],
    )
)
def test_agrees_with_prometheus_client(values: list[tuple[str, float]]) -> None:
    """Any label value and counter value prometheus_client writes, we read the same."""
    reg = CollectorRegistry()
    c = Counter("sglang:generation_tokens", "h", ["model_name"], registry=reg)
    for label, value in values:
        c.labels(model_name=label).inc(value)
    text = generate_latest(reg).decode()
    assert same(ours(text), reference(text))


@pytest.mark.parametrize(
    "bad",
    ["{x} 1", "m{a=b} 1", 'm{a="b} 1', "m", "m 1 2 3", "m notanumber", 'm{a="b"'],
)
def test_malformed_lines_are_refused(bad: str) -> None:
    """A line that is not a sample is an error naming the line, not a silent zero."""
    with pytest.raises(MetricsFormatError, match="line 2"):
        parse_metrics("# HELP ok fine\n" + bad + "\n")


def test_timestamps_and_special_values() -> None:
    """A trailing timestamp is skipped; +Inf, -Inf and NaN are read as floats."""
    samples = parse_metrics("a 1 1700000000000\nb +Inf\nc -Inf\nd NaN\n")
    assert [s.value for s in samples[:3]] == [1.0, math.inf, -math.inf]
    assert math.isnan(samples[3].value)
    assert total(samples, "d") == 0.0  # NaN skipped, series present
