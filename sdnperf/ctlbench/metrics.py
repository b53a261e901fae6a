"""ctlbench metric names, registered in the report's metric registry at import time."""

from __future__ import annotations

from sdnperf.report.metrics import Metric, register

ANSWERED = "ctl_answered_pps"
SENT = "ctl_sent_pps"
OFFERED = "ctl_offered_pps"
OUTSTANDING = "ctl_outstanding"
RTT_P50 = "ctl_rtt_p50_ms"
RTT_P99 = "ctl_rtt_p99_ms"
RTT_BUCKET = "ctl_rtt_bucket_ms"
CTL_CPU = "ctl_controller_cpu_pct"
CTL_RSS = "ctl_controller_rss_mb"
PROBE_CPU = "ctl_probe_cpu_pct"
CEILING = "ctl_probe_ceiling_pps"

METRICS = [
    Metric(
        ANSWERED,
        "pkt/s",
        "higher",
        "answered rate",
        "Packet-ins answered per second (first PACKET_OUT or FLOW_MOD naming the packet; "
        "over P4Runtime: first packet-out carrying its frame, or table write naming its "
        "host MACs), "
        "over the measurement window, all emulated switches together. Over time: answers "
        "received per interval.",
    ),
    Metric(
        SENT,
        "pkt/s",
        "higher",
        "sent rate",
        "Packet-ins the emulated switches sent per second during the measurement window.",
    ),
    Metric(
        OFFERED,
        "pkt/s",
        "higher",
        "offered rate",
        "Rate mode: the packet-in rate asked for, rate per switch × ready switches.",
    ),
    Metric(
        "ctl_answer_ratio_pct",
        "%",
        "higher",
        "answered share",
        "Share of the packet-ins sent in the measurement window that were answered.",
    ),
    Metric(
        "ctl_loss_pct",
        "%",
        "lower",
        "unanswered share",
        "Share of the packet-ins sent in the measurement window that got no answer within "
        "the probe's timeout (or before the connection died).",
    ),
    Metric(
        "ctl_lost",
        "packets",
        "lower",
        "unanswered packet-ins",
        "Packet-ins sent in the measurement window that were never answered in time.",
    ),
    Metric(
        "ctl_rtt_mean_ms",
        "ms",
        "lower",
        "mean reaction time",
        "Mean time from sending a packet-in to the controller's first answer to it "
        "(controller processing + loopback round trip + probe queueing).",
    ),
    Metric(
        RTT_P50,
        "ms",
        "lower",
        "median reaction time",
        "Median of the packet-in → answer time, from the probe's log-bucketed histogram "
        "(≤ 6.25 % bucket width).",
    ),
    Metric(
        "ctl_rtt_p90_ms",
        "ms",
        "lower",
        "p90 reaction time",
        "90th percentile of the packet-in → answer time.",
    ),
    Metric(
        RTT_P99,
        "ms",
        "lower",
        "p99 reaction time",
        "99th percentile of the packet-in → answer time.",
    ),
    Metric(
        "ctl_rtt_max_ms", "ms", "lower", "max reaction time", "Largest packet-in → answer time."
    ),
    Metric(
        RTT_BUCKET,
        "ms",
        "lower",
        "reaction-time histogram bucket",
        "Raw sample: one bucket of the probe's reaction-time histogram; value = bucket's "
        "upper bound, seq = number of packets in it.",
    ),
    Metric(
        "ctl_fairness",
        "",
        "higher",
        "fairness (Jain)",
        "Jain's fairness index of the answered counts across emulated switches: 1 = every "
        "switch served equally, 1/n = one switch got everything.",
    ),
    Metric(
        OUTSTANDING,
        "packets",
        "lower",
        "outstanding packet-ins",
        "Packet-ins sent and not yet answered (nor given up). Per run: the mean over the "
        "measurement window's intervals, all switches; over time: at each interval's end.",
    ),
    Metric(
        CTL_CPU,
        "%",
        "lower",
        "controller CPU",
        "CPU use of the controller process and its children during the measurement window, "
        "% of one core.",
    ),
    Metric(
        CTL_RSS,
        "MB",
        "lower",
        "controller memory",
        "Largest resident set size of the controller process and its children.",
    ),
    Metric(
        PROBE_CPU,
        "%",
        "lower",
        "probe CPU",
        "CPU use of the load generator (sdnperf-probe) during the measurement window, % of "
        "one core. Near 100 % per probe thread, the probe and not the controller sets the pace.",
    ),
    Metric(
        CEILING,
        "pkt/s",
        "higher",
        "probe ceiling",
        "Answered rate the probe reaches against our echo controller (answers every "
        "packet-in at once) with the same number of switches: the fastest any controller "
        "can be measured on this machine. A result within 2× of it is probe-bound.",
    ),
    Metric(
        "ctl_switches_ready",
        "switches",
        "higher",
        "switches connected",
        "Emulated switches that completed the OpenFlow handshake (P4Runtime: devices with a "
        "primary controller and a committed pipeline).",
    ),
    Metric(
        "ctl_disconnected",
        "switches",
        "lower",
        "switches disconnected",
        "Emulated switches whose connection (P4Runtime: stream) the controller closed (or "
        "lost) during the run.",
    ),
]
for _m in METRICS:
    register(_m)
