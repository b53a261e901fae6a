"""Jitter two ways on synthetic traces with answers worked out by hand."""

import pytest

from sdnperf.workloads.jitter import (
    in_arrival_order,
    mean_abs_delay_change,
    mean_over_flows,
    rfc3550_jitter,
    rfc3550_over_flows,
    rfc3550_series,
)


def trace(delays, period=20.0, offset=0.0):
    send = [i * period for i in range(len(delays))]
    return send, [s + d + offset for s, d in zip(send, delays)]


def test_constant_delay_has_no_jitter():
    send, recv = trace([5.0] * 50)
    assert rfc3550_jitter(send, recv) == 0.0
    assert mean_abs_delay_change([5.0] * 50) == 0.0


def test_alternating_delay():
    # |D| = 1 at every step, so J_n = 1 - (15/16)^n; the mean |Δdelay| is exactly 1.
    send, recv = trace([0, 1, 0, 1])
    assert rfc3550_jitter(send, recv) == pytest.approx(1 - (15 / 16) ** 3)
    assert rfc3550_series(send, recv) == pytest.approx(
        [0, 1 / 16, 1 - (15 / 16) ** 2, 1 - (15 / 16) ** 3]
    )
    assert mean_abs_delay_change([0, 1, 0, 1]) == 1.0
    # Long enough, the smoothed estimate converges on |D|.
    send, recv = trace([0, 1] * 200)
    assert rfc3550_jitter(send, recv) == pytest.approx(1.0, abs=1e-9)


def test_clock_offset_cancels():
    delays = [3, 7, 2, 9, 4]
    a = rfc3550_jitter(*trace(delays))
    b = rfc3550_jitter(*trace(delays, offset=1e6))
    assert a == pytest.approx(b)
    # hand computation: |D| = 4, 5, 7, 5
    j = 0.0
    for d in (4, 5, 7, 5):
        j += (d - j) / 16
    assert a == pytest.approx(j)


def test_too_few_packets():
    assert rfc3550_jitter([1.0], [2.0]) is None
    assert mean_abs_delay_change([1.0]) is None
    assert mean_over_flows({"a": [1.0], "b": []}) is None
    with pytest.raises(ValueError):
        rfc3550_jitter([1, 2], [1])


def test_mean_over_flows_weighs_flows_equally():
    # flow a: |Δ| = 2, 2 -> 2; flow b: constant -> 0; flow c: one packet -> left out.
    flows = {"a": [0, 2, 0], "b": [1] * 6, "c": [5]}
    assert mean_over_flows(flows) == 1.0
    per_flow = {"a": trace([0, 1, 0, 1]), "b": trace([2, 2, 2])}
    assert rfc3550_over_flows(per_flow) == pytest.approx((1 - (15 / 16) ** 3) / 2)


def test_arrival_order():
    send, recv = in_arrival_order([(0, 10), (20, 25), (10, 30)])  # packet 3 overtook 2
    assert send == [0, 20, 10] and recv == [10, 25, 30]
