"""The answer of `architectures-campus`: per architecture, the first packet's RTT against
the steady RTT, TCP throughput, UDP jitter and loss, each with its spread and ranked."""

from __future__ import annotations

from sdnperf.studies.answers.common import by, mean, mean_text, ranking, values


def _arch(run) -> str:
    return run.architecture


def answer(store, study_id: int) -> list[str]:
    out = []
    first = by(values(store, study_id, "rtt_first_ms", "ping"), _arch)
    steady = by(values(store, study_id, "rtt_ms", "ping"), _arch)
    if first:
        parts = []
        for arch in ranking(first, "lower"):
            text = f"{arch} {mean_text(first[arch], 'ms')}"
            if arch in steady and mean(steady[arch]) > 0:
                text += f", {mean(first[arch]) / mean(steady[arch]):.3g}× its steady RTT"
            parts.append(text)
        out.append("First packet RTT (lowest first): " + "; ".join(parts) + ".")
    if steady:
        out.append(
            "Steady RTT (lowest first): "
            + "; ".join(f"{a} {mean_text(steady[a], 'ms')}" for a in ranking(steady, "lower"))
            + "."
        )
    for workload, metric, what, unit, better in (
        ("tcp", "throughput_mbps", "TCP throughput", "Mbit/s", "higher"),
        ("udp", "jitter_ms", "UDP jitter", "ms", "lower"),
        ("udp", "loss_pct", "UDP loss", "%", "lower"),
    ):
        groups = by(values(store, study_id, metric, workload), _arch)
        if groups:
            order = ranking(groups, better)
            out.append(
                f"{what} (best first): "
                + "; ".join(f"{a} {mean_text(groups[a], unit)}" for a in order)
                + "."
            )
    return out
