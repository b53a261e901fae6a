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
    Metric("rtt_ms", "ms", "lower", "RTT",
           "Round-trip time of ICMP echo requests in the steady state, i.e. after the first "
           "packet of the flow; per run, the mean over all pairs and packets."),
    Metric("rtt_first_ms", "ms", "lower", "first-packet RTT",
           "Round-trip time of the very first packet between a pair on a freshly built "
           "network (the 'cold' phase). It includes ARP resolution and, in a reactive "
           "network, the controller's flow setup."),
    Metric("rtt_min_ms", "ms", "lower", "min RTT", "Smallest steady-state round-trip time."),
    Metric("rtt_max_ms", "ms", "lower", "max RTT", "Largest steady-state round-trip time."),
    Metric("rtt_mdev_ms", "ms", "lower", "RTT deviation",
           "Mean deviation of the steady-state round-trip time, as ping reports it."),
    Metric("throughput_mbps", "Mbit/s", "higher", "throughput",
           "Goodput measured by the receiving application (iperf); time series per 1-s "
           "interval, and per run the mean over the transfer."),
    Metric("transfer_time_s", "s", "lower", "transfer time",
           "Time to complete a fixed-size transfer, from connection start to the last byte."),
    Metric("jitter_ms", "ms", "lower", "jitter",
           "Packet delay variation of a UDP stream as the receiver estimates it "
           "(RFC 3550 interarrival jitter, as iperf reports)."),
    Metric("loss_pct", "%", "lower", "loss",
           "Share of sent UDP datagrams that never arrived at the receiver."),
    Metric("reordered_pct", "%", "lower", "reordering",
           "Share of received UDP datagrams that arrived out of order."),
    Metric("bytes", "B", "higher", "bytes moved",
           "Application bytes delivered to the receiver during the run."),
]:
    register(_m)
