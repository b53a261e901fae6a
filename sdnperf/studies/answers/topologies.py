"""The answer of `topologies-traffic`: per topology, the P4Runtime architecture against the
OpenFlow one (the baseline) on each traffic type, alone and in the mix."""

from __future__ import annotations

from sdnperf.studies.answers.common import versus

BASELINE = "openflow"
ITEMS = (
    ("ping", "rtt_first_ms", "first ping", "ms", "lower"),
    ("ping", "rtt_ms", "ping RTT", "ms", "lower"),
    ("tcp", "throughput_mbps", "TCP (1 GB; 1200 s on the Internet topology)", "Mbit/s", "higher"),
    ("udp", "owd_ms", "UDP one-way delay", "ms", "lower"),
    ("cdn", "jitter_eq1_ms", "live stream jitter (Eq. 1)", "ms", "lower"),
    ("udp", "jitter_ms", "UDP jitter", "ms", "lower"),
    ("udp", "loss_pct", "UDP loss", "%", "lower"),
    ("video", "startup_delay_s", "video start-up (buffering) delay", "s", "lower"),
    ("video", "stall_time_s", "video stalls", "s", "lower"),
    ("mix/syn", "connect_ms", "mixed: SYN delay", "ms", "lower"),
    ("mix/voip", "jitter_rfc3550_ms", "mixed: VoIP jitter", "ms", "lower"),
    ("mix/voip", "mos", "mixed: VoIP MOS", "MOS", "higher"),
    ("mix/video", "startup_delay_s", "mixed: video start-up delay", "s", "lower"),
    ("mix", "aggregate_mbps", "mixed: aggregate throughput", "Mbit/s", "higher"),
)


def answer(store, study_id: int) -> list[str]:
    return versus(store, study_id, BASELINE, ITEMS)
