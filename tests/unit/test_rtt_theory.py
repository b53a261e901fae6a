"""The theoretical RTT of seed paper 003 against the thesis's own worked examples (§5.2.1)."""

from __future__ import annotations

import math

import pytest

from sdnperf.report.rtt_theory import (
    link_crossings,
    packet_bits,
    theoretical_rtt_ms,
    transmission_ms,
    transmissions,
)


def test_packet_is_payload_plus_ip_and_icmp_headers():
    assert packet_bits(1200) == 1228 * 8  # "we consider the packet size 1228 bytes"


@pytest.mark.parametrize(
    ("rate_mbps", "expected_ms"),
    [(1000, 0.009824), (1, 9.824), (0.1, 98.24), (0.01, 982.4)],  # §5.2.1, each link rate
)
def test_transmission_delay_per_link(rate_mbps, expected_ms):
    assert transmission_ms(1200, rate_mbps) == pytest.approx(expected_ms)


def test_unlimited_link_has_no_transmission_delay():
    assert transmission_ms(1200, None) == 0.0
    assert transmission_ms(1200, math.inf) == 0.0


@pytest.mark.parametrize(
    ("rate_mbps", "processing_ms", "expected_ms"),
    [
        # the virtual machine (processing 0.98 ms): "RTT = 9.824 * 4 + 0.98 = 40.276 ms" ...
        (None, 0.98, 0.98),
        (1000, 0.98, 1.019),
        (1, 0.98, 40.276),
        (0.1, 0.98, 393.94),
        (0.01, 0.98, 3930.58),
        # ... and the server (processing 2.16 ms)
        (1000, 2.16, 2.199),
        (1, 2.16, 41.456),
        (0.1, 2.16, 395.12),
        (0.01, 2.16, 3931.76),
    ],
)
def test_theoretical_rtt_one_switch_matches_the_thesis(rate_mbps, processing_ms, expected_ms):
    assert theoretical_rtt_ms(1200, rate_mbps, processing_ms) == pytest.approx(
        expected_ms, abs=0.001
    )


def test_chain_of_two_crosses_six_links():
    assert link_crossings(1) == 4  # "the packets cross 4 links"
    assert link_crossings(2) == 6
    # 6 × 9.824 ms + 1.66 ms (the thesis's two-switch processing, §5.2.4)
    assert theoretical_rtt_ms(1200, 1, 1.66, switches=2) == pytest.approx(60.604)


def test_transmissions_follow_the_thesis():
    # one switch: "always one greater than the number of recirculations": 1, 2, 4, 8, 16
    assert [transmissions(n) for n in (0, 1, 3, 7, 15)] == [1, 2, 4, 8, 16]
    # two switches: "the sum of recirculations in each switch plus two"
    assert transmissions(0, switches=2) == 2
    assert transmissions(1, switches=2) == 4


@pytest.mark.parametrize(
    "call",
    [
        lambda: packet_bits(-1),
        lambda: transmission_ms(1200, 0),
        lambda: link_crossings(0),
        lambda: transmissions(-1),
    ],
)
def test_bad_inputs_are_refused(call):
    with pytest.raises(ValueError):
        call()
