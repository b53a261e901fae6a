"""The theoretical ping RTT of seed paper 003 (§5.2.1), as the thesis defines it.

RTT = transmission + processing + queuing + propagation, with queuing = propagation = 0
("can be considered negligible for our purposes"). Transmission delay per link is
"Packet Size(bits) / Bandwidth(bps)" with the packet counted as the ICMP payload plus 28
bytes ("1228 bytes because ... IP header (20Bytes) and [ICMP] header (8Bytes) are added"),
and "we multiply the transmission delay by 4 because the packets cross 4 links to reach the
destination and return": a request and its reply each cross every link of the path once.
The processing delay is measured, not assumed: "the observed minimum time across these
1000 experiments" without any link rate (0.98 ms in the thesis's virtual machine, 2.16 ms
on its server).

Worked examples from the thesis (one switch, 1200-byte payload, processing 0.98 ms):
1 Gbit/s -> 1.019 ms, 1 Mbit/s -> 40.276 ms, 100 kbit/s -> 393.94 ms, 10 kbit/s ->
3930.58 ms. Pure arithmetic: no store, no plotting.
"""

from __future__ import annotations

import math

ICMP_IP_HEADERS = 28  # bytes the thesis adds to the ping payload: IPv4 (20) + ICMP (8)


def packet_bits(payload_bytes: int) -> int:
    """Bits of one echo request or reply as the thesis counts them (no Ethernet header)."""
    if payload_bytes < 0:
        raise ValueError(f"payload must be >= 0 bytes, not {payload_bytes}")
    return (payload_bytes + ICMP_IP_HEADERS) * 8


def links_on_path(switches: int) -> int:
    """Links between the two hosts through a chain of `switches` switches."""
    if switches < 1:
        raise ValueError(f"a path needs at least one switch, not {switches}")
    return switches + 1


def link_crossings(switches: int) -> int:
    """Links a ping crosses there and back: 4 through one switch (the thesis's factor),
    6 through the chain of two."""
    return 2 * links_on_path(switches)


def transmission_ms(payload_bytes: int, rate_mbps: float | None) -> float:
    """One link's transmission delay in ms; an unlimited link (None or inf) takes ~0."""
    if rate_mbps is None or math.isinf(rate_mbps):
        return 0.0
    if rate_mbps <= 0:
        raise ValueError(f"link rate must be > 0 Mbit/s, not {rate_mbps}")
    return packet_bits(payload_bytes) / (rate_mbps * 1e6) * 1e3


def theoretical_rtt_ms(
    payload_bytes: int, rate_mbps: float | None, processing_ms: float, switches: int = 1
) -> float:
    """The thesis's RTT: processing + crossings × transmission (queuing, propagation 0)."""
    return processing_ms + link_crossings(switches) * transmission_ms(payload_bytes, rate_mbps)


def transmissions(recirculations: int, switches: int = 1) -> int:
    """The thesis's "number of transmissions" (§5.2.2, §5.2.4): the times a packet crosses a
    switch's pipeline, "one more than the number of recirculations" per switch; on two
    switches "the sum of recirculations in each switch plus two" (N passes in each)."""
    if recirculations < 0:
        raise ValueError(f"recirculations must be >= 0, not {recirculations}")
    return switches * (recirculations + 1)
