"""Packet delay variation ("jitter") two ways, as pure functions on packet traces.

1. **RFC 3550 interarrival jitter** (section 6.4.1, what RTP receivers and iperf3 report).
   For consecutive packets i, j in *arrival* order, with send times S and receive times R,
       D(i, j) = (R_j - R_i) - (S_j - S_i) = delay_j - delay_i
       J <- J + (|D(i, j)| - J) / 16
   starting from J = 0. It is a smoothed running estimate; we report its value after the
   last packet. Clocks need not agree: an offset cancels in D.
2. **Mean |Δdelay| per flow, averaged over flows** (the form the SDN comparison literature
   uses, and D-ITG's "average jitter"): for each flow, the mean over consecutive received
   packets (in sequence order) of |delay_j - delay_i|; then the plain mean of the per-flow
   values, so every flow weighs the same whatever its packet count.

3. **000's Eq. 1** (Fernando et al. 2025): (1/M) Σ_f (Σ_i J_fi / N_f), the mean over the
   M flows of each flow's mean per-packet jitter J_fi, where a packet's jitter is the
   running RFC 3550 estimate after it (what Wireshark's RTP analysis lists per packet).
   `eq1_over_flows` takes per flow (J, packets) pairs: J values each standing for that
   many packets (iperf3 reports the running estimate once per interval with the
   interval's datagram count, so each interval's value is weighted by its packets).

All take times in any unit and answer in that unit. A flow with fewer than two packets
has no jitter (None) and is left out of the average.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def rfc3550_jitter(send: Sequence[float], recv: Sequence[float]) -> float | None:
    """RFC 3550 interarrival jitter after the last packet; packets given in arrival order."""
    if len(send) != len(recv):
        raise ValueError(f"send and receive times differ in length ({len(send)} vs {len(recv)})")
    if len(send) < 2:
        return None
    j = 0.0
    for i in range(1, len(send)):
        d = (recv[i] - recv[i - 1]) - (send[i] - send[i - 1])
        j += (abs(d) - j) / 16.0
    return j


def rfc3550_series(send: Sequence[float], recv: Sequence[float]) -> list[float]:
    """The running RFC 3550 estimate after each packet (first value 0), for time series."""
    out = [0.0] if send else []
    j = 0.0
    for i in range(1, len(send)):
        d = (recv[i] - recv[i - 1]) - (send[i] - send[i - 1])
        j += (abs(d) - j) / 16.0
        out.append(j)
    return out


def mean_abs_delay_change(delays: Sequence[float]) -> float | None:
    """Mean |delay_j - delay_i| over consecutive packets of one flow (in sequence order)."""
    if len(delays) < 2:
        return None
    return sum(abs(delays[i] - delays[i - 1]) for i in range(1, len(delays))) / (len(delays) - 1)


def mean_over_flows(per_flow_delays: Mapping[str, Sequence[float]]) -> float | None:
    """The per-flow mean |Δdelay|, averaged over the flows that have one."""
    values = [
        v for v in (mean_abs_delay_change(d) for d in per_flow_delays.values()) if v is not None
    ]
    return sum(values) / len(values) if values else None


def rfc3550_over_flows(
    per_flow: Mapping[str, tuple[Sequence[float], Sequence[float]]],
) -> float | None:
    """RFC 3550 jitter per flow ((send, recv) in arrival order), averaged over flows."""
    values = [v for v in (rfc3550_jitter(s, r) for s, r in per_flow.values()) if v is not None]
    return sum(values) / len(values) if values else None


def in_arrival_order(packets: Iterable[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Split (send, recv) pairs into two lists sorted by receive time."""
    ordered = sorted(packets, key=lambda p: p[1])
    return [p[0] for p in ordered], [p[1] for p in ordered]


def eq1_over_flows(per_flow: Mapping[str, Sequence[tuple[float, int]]]) -> float | None:
    """000's Eq. 1: mean over flows of the packet-weighted mean jitter of each flow.

    per_flow: flow -> [(jitter, packets it stands for), ...]. A flow with no packets is
    left out; None when no flow has any."""
    values = []
    for points in per_flow.values():
        packets = sum(n for _, n in points if n > 0)
        if packets:
            values.append(sum(j * n for j, n in points if n > 0) / packets)
    return sum(values) / len(values) if values else None
