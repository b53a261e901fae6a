"""The answer of `architectures-campus`: per architecture, the first packet's RTT against
the steady RTT, TCP throughput, UDP jitter and loss, each with its spread and ranked."""

from __future__ import annotations

from sdnperf.samples import Better
from sdnperf.studies.answers.common import (
    RANK_NOTE,
    by,
    mean_text,
    more_repetitions,
    ranked,
    values,
)


def _arch(run) -> str:
    return run.architecture


def answer(store, study_id: int) -> list[str]:
    out = []
    first_runs = values(store, study_id, "rtt_first_ms", "ping")
    steady_runs = values(store, study_id, "rtt_ms", "ping")
    first, steady = by(first_runs, _arch), by(steady_runs, _arch)
    hint = ""
    if first:
        out.append(f"First packet RTT (lowest first): {ranked(first, 'ms', 'lower')}.")
        # each run's first RTT over its own steady RTT, so the ratio carries n and a CI
        steady_of = {run.id: v for run, v in steady_runs if v > 0}
        ratios = by(
            [(run, v / steady_of[run.id]) for run, v in first_runs if run.id in steady_of], _arch
        )
        if ratios:
            out.append(
                "First packet RTT against the steady RTT of the same run: "
                + ", ".join(f"{a} {mean_text(ratios[a], '×')}" for a in sorted(ratios))
                + "."
            )
        hint = more_repetitions(first, "lower")
    if steady:
        out.append(f"Steady RTT (lowest first): {ranked(steady, 'ms', 'lower')}.")
        hint = hint or more_repetitions(steady, "lower")
    ranked_metrics: list[tuple[str, str, str, str, Better]] = [
        ("tcp", "throughput_mbps", "TCP throughput", "Mbit/s", "higher"),
        ("udp", "jitter_ms", "UDP jitter", "ms", "lower"),
        ("udp", "loss_pct", "UDP loss", "%", "lower"),
    ]
    for workload, metric, what, unit, better in ranked_metrics:
        groups = by(values(store, study_id, metric, workload), _arch)
        if groups:
            out.append(f"{what} (best first): {ranked(groups, unit, better)}.")
            hint = hint or more_repetitions(groups, better)
    if out:
        out.append(f"In the rankings, {RANK_NOTE}.")
    if hint:
        out.append(hint)
    return out
