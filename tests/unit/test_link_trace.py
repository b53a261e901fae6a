"""Mahimahi traces: parsing (malformed lines refused with their number) and rates per bin."""

from __future__ import annotations

import pytest

from sdnperf.links.trace import TraceError, parse_trace


def test_parse_and_mean_rate():
    trace = parse_trace("1\n1\n2\n\n4\n", "t")
    assert trace.opportunities_ms == (1, 1, 2, 4)
    assert trace.period_ms == 4
    assert trace.mean_mbps() == pytest.approx(4 * 1500 * 8 / 4000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\n2\n-3\n", "t:3: expected a whole number of milliseconds, got '-3'"),
        ("1\n2.5\n", "t:2: expected a whole number"),
        ("5\n4\n", "t:2: 4 ms comes after 5 ms"),
        ("\n\n", "t: no delivery opportunities"),
        ("0\n0\n", "t:2: the trace must end after 0 ms"),
    ],
)
def test_malformed_traces_are_refused_with_their_line(text, message):
    with pytest.raises(TraceError) as info:
        parse_trace(text, "t")
    assert message in str(info.value)


def test_opportunities_counted_over_loops():
    trace = parse_trace("".join(f"{ms}\n" for ms in range(1, 11)), "t")  # 1 per ms, 10 ms
    assert [trace.count_before(ms, loop=False) for ms in (0, 1, 2, 10, 11, 100)] == [
        0, 0, 1, 9, 10, 10,
    ]  # fmt: skip
    # looped: times 1..10, 11..20, ...: exactly ms - 1 opportunities before ms
    assert all(trace.count_before(ms, loop=True) == max(ms - 1, 0) for ms in range(0, 95))
    burst = parse_trace("3\n3\n5\n", "b")  # 3, 3, 5, 8, 8, 10, 13, ...
    assert [burst.count_before(ms, loop=True) for ms in (3, 4, 6, 9, 11, 14)] == [0, 2, 3, 5, 6, 8]
