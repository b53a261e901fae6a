"""The registry of metric names: unit, which direction is better, and what it means.

Workloads name their samples and summaries with these names; the report uses the
registry for labels and for the "how to read this" section. A new workload adds its
metrics with `register(Metric(...))` at import time (or by adding a line below).
A metric missing from the registry still works: it is shown with its stored unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdnperf.samples import Better


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    better: Better
    label: str  # short human name for axes and tables
    description: str  # one or two sentences for the report's "how to read this"


METRICS: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add (or replace) a metric definition."""
    METRICS[metric.name] = metric
    return metric


def get(name: str) -> Metric | None:
    return METRICS.get(name)


def label(name: str) -> str:
    m = METRICS.get(name)
    return m.label if m else name


for _m in [
    Metric(
        "rtt_ms",
        "ms",
        "lower",
        "RTT",
        "Round-trip time of ICMP echo requests in the steady state, i.e. after each "
        "flow's first packet; per run, the mean over every steady reply of every pair.",
    ),
    Metric(
        "rtt_first_ms",
        "ms",
        "lower",
        "first-packet RTT",
        "Round-trip time of the very first packet between a pair on a freshly built "
        "network (the 'cold' phase); per run, the mean over the pairs that got a reply. "
        "It includes ARP resolution and, in a reactive network, the controller's flow setup.",
    ),
    Metric("rtt_min_ms", "ms", "lower", "min RTT", "Smallest steady-state round-trip time."),
    Metric("rtt_max_ms", "ms", "lower", "max RTT", "Largest steady-state round-trip time."),
    Metric(
        "rtt_mdev_ms",
        "ms",
        "lower",
        "RTT deviation",
        "Mean deviation of the steady-state round-trip time, as ping defines it "
        "(sqrt(mean(x²) − mean(x)²)).",
    ),
    Metric(
        "throughput_mbps",
        "Mbit/s",
        "higher",
        "throughput",
        "Goodput measured at the receiver (iperf3). Per run: the sum over concurrent pairs "
        "of each pair's mean throughput; over time: the sum over pairs per 1-s interval.",
    ),
    Metric(
        "transfer_time_s",
        "s",
        "lower",
        "transfer time",
        "Time to complete a fixed-size transfer, as iperf3 measures it; mean over pairs.",
    ),
    Metric(
        "transfer_time_max_s",
        "s",
        "lower",
        "longest transfer time",
        "Completion time of the slowest pair's fixed-size transfer.",
    ),
    Metric(
        "retransmits",
        "packets",
        "lower",
        "TCP retransmissions",
        "TCP segments the senders retransmitted, summed over pairs.",
    ),
    Metric(
        "jitter_ms",
        "ms",
        "lower",
        "jitter",
        "Packet delay variation of a UDP stream as the receiver estimates it "
        "(RFC 3550 smoothed interarrival jitter, as iperf3 reports); mean over pairs.",
    ),
    Metric(
        "loss_pct",
        "%",
        "lower",
        "loss",
        "Share of sent packets that never arrived: ping echo requests without a reply "
        "(cold ones included), or UDP datagrams sent that did not arrive by the sender's "
        "end (iperf3's lost ones, those still on their way when the receiver stopped and "
        "those that arrived late), over all pairs.",
    ),
    Metric(
        "loss_first_pct",
        "%",
        "lower",
        "first-packet loss",
        "Share of pairs whose first (cold) ping got no reply.",
    ),
    Metric(
        "unreported_loss_pct",
        "%",
        "lower",
        "loss iperf3 does not report",
        "Share of sent UDP datagrams that had not arrived when the receiver stopped and "
        "that iperf3 did not count lost (sent after the last one to arrive: e.g. still held "
        "in a switch); part of loss_pct.",
    ),
    Metric(
        "late_pct",
        "%",
        "lower",
        "late arrivals",
        "Share of sent UDP datagrams that arrived after the sender's end (the receiver "
        "counts until the end of test reaches it: later where held packets delay it); "
        "part of loss_pct.",
    ),
    Metric(
        "reordered_pct",
        "%",
        "lower",
        "reordering",
        "Share of sent UDP datagrams that arrived out of order, over all pairs.",
    ),
    Metric(
        "bytes",
        "B",
        "higher",
        "bytes moved",
        "Application bytes delivered to the receivers during the run, summed over pairs.",
    ),
    Metric(
        "lost",
        "packet",
        "lower",
        "lost packet",
        "A raw sample marking one ping packet that got no reply (value 1).",
    ),
]:
    register(_m)


# --- application workloads (sdnperf/workloads: tcp_connect, voip, live_video, video, mixed)
for _m in [
    Metric(
        "connect_ms",
        "ms",
        "lower",
        "TCP handshake",
        "Time connect() takes for a new TCP connection (SYN sent until SYN-ACK received), "
        "timed by a probe inside the client host; per run, the mean over every connection "
        "after each pair's first.",
    ),
    Metric(
        "connect_first_ms",
        "ms",
        "lower",
        "first TCP handshake",
        "Handshake time of the first connection of each pair on a fresh network (the "
        "'cold' phase, with ARP and any reactive flow setup); mean over pairs.",
    ),
    Metric(
        "connect_p50_ms",
        "ms",
        "lower",
        "TCP handshake p50",
        "Median handshake time of the steady (not first) connections.",
    ),
    Metric(
        "connect_p95_ms",
        "ms",
        "lower",
        "TCP handshake p95",
        "95th percentile of the steady handshake times.",
    ),
    Metric("connect_max_ms", "ms", "lower", "TCP handshake max", "Longest steady handshake time."),
    Metric(
        "connect_fail_pct",
        "%",
        "lower",
        "failed connects",
        "Connections that failed, timed out or were never attempted, over all planned.",
    ),
    Metric(
        "connect_failed",
        "connection",
        "lower",
        "failed connect",
        "A raw sample marking one failed connection (value 1).",
    ),
]:
    register(_m)

for _m in [
    Metric(
        "owd_ms",
        "ms",
        "lower",
        "one-way delay",
        "Receive time minus send time of each packet (VoIP, live video; iperf3 UDP: the "
        "send stamp iperf3 writes into each datagram against a capture at the receiver's "
        "interface). All emulated hosts share one machine clock, so this one-way delay is "
        "exact, with no clock offset to correct; per run, the mean over calls/streams/pairs "
        "of their mean delay.",
    ),
    Metric(
        "owd_max_ms",
        "ms",
        "lower",
        "max one-way delay",
        "Largest one-way delay of any packet in the run.",
    ),
    Metric(
        "jitter_rfc3550_ms",
        "ms",
        "lower",
        "jitter (RFC 3550)",
        "RFC 3550 interarrival jitter: J += (|D| − J)/16 over consecutive packets in arrival "
        "order, D being the change of one-way delay; the value after the last packet, "
        "averaged over flows.",
    ),
    Metric(
        "jitter_eq1_ms",
        "ms",
        "lower",
        "jitter (Eq. 1)",
        "Seed paper 000's Eq. 1 for a UDP stream: per pair, the mean over its packets of the "
        "running RFC 3550 jitter (iperf3's value per 1-s interval, weighted by the "
        "interval's datagrams), then the mean over pairs, each pair weighing the same.",
    ),
    Metric(
        "tcp_rtt_ms",
        "ms",
        "lower",
        "TCP RTT",
        "The TCP sender's smoothed round-trip time (the kernel's, as iperf3 reports it): "
        "per run, the mean over pairs of each connection's mean; includes queueing behind "
        "the transfer's own data.",
    ),
    Metric(
        "icmp_throughput_bps",
        "bit/s",
        "higher",
        "ICMP throughput",
        "Echo replies' IP bits received by the pinging host per second (as a capture at "
        "the client shows it, seed paper 000): per run, the mean over pairs of the steady "
        "series' bits over its length (count × interval); over time, per 1-s window.",
    ),
    Metric(
        "jitter_flowmean_ms",
        "ms",
        "lower",
        "jitter (mean |Δdelay|)",
        "Per-flow mean of |delay(i) − delay(i−1)| over consecutive packets in sequence "
        "order, averaged over flows (each flow weighs the same): the form the SDN "
        "comparison literature and D-ITG report.",
    ),
    Metric(
        "mos",
        "MOS",
        "higher",
        "MOS",
        "Mean opinion score (1–4.5) estimated with the ITU-T G.107 E-model: R = 93.2 − "
        "Idd(Ta) − Ie_eff, Ta = one-way delay + packetization + look-ahead + 2×jitter, "
        "Ie_eff = Ie + (95 − Ie)·Ppl/(Ppl + Bpl) with G.113 codec values (G.711 Ie 0, "
        "Bpl 25.1; G.729 Ie 11, Bpl 19), MOS = 1 + 0.035R + R(R−60)(100−R)·7e-6; mean "
        "over calls. See sdnperf/workloads/emodel.py.",
    ),
    Metric("mos_min", "MOS", "higher", "worst-call MOS", "MOS of the worst call of the run."),
    Metric(
        "r_factor",
        "R",
        "higher",
        "E-model R",
        "Transmission rating R of the G.107 E-model (0–100), mean over calls.",
    ),
]:
    register(_m)

for _m in [
    Metric(
        "frames_lost_pct",
        "%",
        "lower",
        "frames lost",
        "Live video: share of frames with at least one packet missing at the receiver, "
        "over all frames of all streams.",
    ),
    Metric(
        "frames_late_pct",
        "%",
        "lower",
        "frames late",
        "Live video: share of frames that arrived complete but whose last packet came "
        "later than the playout deadline (playout_delay_ms after the frame's capture).",
    ),
]:
    register(_m)

register(
    Metric(
        "aggregate_mbps",
        "Mbit/s",
        "higher",
        "aggregate load",
        "Mixed workloads: the sum of the members' receiver throughput (per run: of their mean "
        "throughput; over time: per 1-s interval). Each member's own metrics appear under "
        "'MIX/MEMBER'.",
    )
)

for _m in [
    Metric(
        "startup_delay_s",
        "s",
        "lower",
        "video start-up delay",
        "HTTP adaptive streaming: time from the player's start (before its manifest "
        "request) until the first `startup_segments` segments are in and playback starts; "
        "mean over players.",
    ),
    Metric(
        "stalls",
        "count",
        "lower",
        "stalls",
        "Re-buffering events: playback ran out of buffered video before the next segment "
        "arrived; summed over players.",
    ),
    Metric(
        "stall_time_s",
        "s",
        "lower",
        "stall time",
        "Total time the picture was frozen re-buffering after start-up, summed over players.",
    ),
    Metric(
        "bitrate_mbps",
        "Mbit/s",
        "higher",
        "video bitrate",
        "Mean bitrate of the segments the adaptation rule chose (throughput rule: highest "
        "≤ 0.8 × harmonic mean of the last 3 download rates; buffer rule: BBA-0); mean "
        "over players.",
    ),
    Metric(
        "bitrate_switches",
        "count",
        "lower",
        "bitrate switches",
        "Times consecutive segments were fetched at different bitrates, summed over players.",
    ),
    Metric(
        "segment_time_s",
        "s",
        "lower",
        "segment download time",
        "Time to download one video segment over HTTP; mean over all segments.",
    ),
    Metric(
        "segment_time_max_s",
        "s",
        "lower",
        "longest segment download",
        "Longest segment download time of any player.",
    ),
    Metric(
        "buffer_s",
        "s",
        "higher",
        "playout buffer",
        "Seconds of video buffered ahead of playback, after each segment download.",
    ),
    Metric("stall_s", "s", "lower", "stall", "One re-buffering event and its duration."),
]:
    register(_m)

register(
    Metric(
        "retransmit_pct",
        "%",
        "lower",
        "TCP retransmissions (%)",
        'TCP "packet loss" as the senders see it (seed paper 000\'s Tables 2, 5, 6): '
        "retransmitted segments over all data segments sent, R / (R + ceil(bytes / MSS)), "
        "all pairs together; an upper bound when segments ran short of the MSS.",
    )
)
for _m in [
    Metric(
        "arp_frames_per_s",
        "frames/s",
        "lower",
        "ARP frames",
        "ARP frames a ping client's interface carried per second (a tcpdump there), the mean "
        "over clients; seed paper 000 Fig. 4c-d lists them at its throughput drops.",
    ),
    Metric(
        "lldp_frames_per_s",
        "frames/s",
        "lower",
        "LLDP frames",
        "LLDP frames (a controller's topology discovery) a ping client's interface carried "
        "per second, the mean over clients (000 Fig. 4c-d).",
    ),
]:
    register(_m)
