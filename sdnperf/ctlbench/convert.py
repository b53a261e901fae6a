"""Probe JSON (schema sdnperf-probe/1) → RunResult: samples, summaries and the CPU mark.

Pure functions, tested without a controller. Who is the bottleneck is decided here:
`probe_bottleneck` says why a run measured the probe rather than the controller.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sdnperf.ctlbench import metrics as m
from sdnperf.samples import Better, CpuReport, RunResult, Sample, Summary

PROBE_SATURATED_PCT = 90.0  # probe CPU per thread, % of one core
CEILING_FACTOR = 2.0  # answered rate within this factor of the echo ceiling = probe-bound
SLIP_SHARE = 0.02  # rate mode: more than this share of the schedule skipped = probe-bound


@dataclass
class ControllerUsage:
    """What the runner sampled about the controller process."""

    cpu_measure_pct: float | None = None  # mean over the measurement window
    cpu_series: list[tuple[float, float]] = field(default_factory=list)  # (t from load start, %)
    rss_max_mb: float | None = None
    rss_series: list[tuple[float, float]] = field(default_factory=list)


def workload_name(mode: str, rate: float | None) -> str:
    return f"ctlbench {mode}" + (f" {rate:g} pps/switch" if mode == "rate" and rate else "")


def topology_name(switches: int) -> str:
    return f"{switches} switch" + ("es" if switches != 1 else "")


def probe_bottleneck(doc: dict, ceiling_pps: float | None) -> list[str]:
    """Reasons (in words) why this run measured the probe rather than the controller."""
    reasons = []
    cpu = doc.get("probe_cpu") or {}
    threads = max(1, min(int(cpu.get("threads") or 1), int(cpu.get("cores") or 1)))
    pct = float(cpu.get("measure_pct") or 0.0)
    if pct >= PROBE_SATURATED_PCT * threads:
        reasons.append(
            f"the probe used {pct:.0f} % CPU with {threads} thread(s): its own CPU was saturated"
        )
    totals = doc.get("totals") or {}
    slips = int(totals.get("schedule_slips") or 0)
    scheduled = slips + int(totals.get("sent") or 0)
    if slips and slips > SLIP_SHARE * scheduled:
        reasons.append(
            f"the probe fell behind its send schedule and skipped {slips} of "
            f"{scheduled} packet-ins ({slips / scheduled:.0%})"
        )
    answered = float(totals.get("answered_rate") or 0.0)
    if ceiling_pps and answered > 0 and ceiling_pps < CEILING_FACTOR * answered:
        reasons.append(
            f"the answered rate {answered:,.0f}/s is within {CEILING_FACTOR:g}× of the "
            f"probe's ceiling {ceiling_pps:,.0f}/s (echo controller)"
        )
    return reasons


def _ms(us) -> float | None:
    return None if us is None else float(us) / 1000.0


def to_run_result(
    doc: dict,
    *,
    key: str,
    controller: str,
    mode: str,
    switches: int,
    rate: float | None,
    repetition: int,
    params: dict,
    cpu: CpuReport,
    usage: ControllerUsage | None = None,
    ceiling_pps: float | None = None,
    crash: str | None = None,
    started: float = 0.0,
    finished: float = 0.0,
) -> RunResult:
    """One RunResult from one probe document. `crash` (the controller died mid-run) makes
    the run failed but keeps every sample and summary measured until then."""
    usage = usage or ControllerUsage()
    w = workload_name(mode, rate)
    samples: list[Sample] = []
    summaries: list[Summary] = []

    def summ(metric: str, value, unit: str, better: Better) -> None:
        if value is not None:
            summaries.append(Summary(w, metric, float(value), unit, better))

    series = doc.get("series") or {}
    iv = float(series.get("interval_s") or 1.0)
    phases = series.get("phase") or []
    ts = series.get("t") or []
    for metric, name, scale, unit in (
        (m.SENT, "sent", 1 / iv, "pkt/s"),
        (m.ANSWERED, "answered", 1 / iv, "pkt/s"),
        (m.OUTSTANDING, "outstanding", 1.0, "packets"),
    ):
        for i, v in enumerate(series.get(name) or []):
            samples.append(Sample(w, metric, v * scale, unit, "", _at(phases, i), _at(ts, i), i))
    for sw in doc.get("per_switch") or []:
        flow = f"dpid {sw.get('dpid')}"
        s_series = sw.get("series") or {}
        for metric, name, scale, unit in (
            (m.ANSWERED, "answered", 1 / iv, "pkt/s"),
            (m.OUTSTANDING, "outstanding", 1.0, "packets"),
        ):
            for i, v in enumerate(s_series.get(name) or []):
                samples.append(
                    Sample(w, metric, v * scale, unit, flow, _at(phases, i), _at(ts, i), i)
                )
    rtt = doc.get("rtt_us") or {}
    for _lo, hi, count in rtt.get("buckets") or []:
        samples.append(
            Sample(w, m.RTT_BUCKET, float(hi) / 1000.0, "ms", "", "measure", None, int(count))
        )
    for t, pct in usage.cpu_series:
        samples.append(Sample(w, m.CTL_CPU, pct, "%", "", "", t, None))
    for t, mb in usage.rss_series:
        samples.append(Sample(w, m.CTL_RSS, mb, "MB", "", "", t, None))

    totals = doc.get("totals") or {}
    sw_info = doc.get("switches") or {}
    sent = int(totals.get("sent") or 0)
    answered = int(totals.get("answered") or 0)
    summ(m.ANSWERED, totals.get("answered_rate"), "pkt/s", "higher")
    summ(m.SENT, totals.get("sent_rate"), "pkt/s", "higher")
    summ(m.OFFERED, totals.get("offered_rate"), "pkt/s", "higher")
    if sent:
        summ("ctl_answer_ratio_pct", 100.0 * answered / sent, "%", "higher")
        summ("ctl_loss_pct", 100.0 * int(totals.get("lost") or 0) / sent, "%", "lower")
    summ("ctl_lost", totals.get("lost"), "packets", "lower")
    if rtt.get("count"):
        summ("ctl_rtt_mean_ms", _ms(rtt.get("mean")), "ms", "lower")
        summ(m.RTT_P50, _ms(rtt.get("p50")), "ms", "lower")
        summ("ctl_rtt_p90_ms", _ms(rtt.get("p90")), "ms", "lower")
        summ(m.RTT_P99, _ms(rtt.get("p99")), "ms", "lower")
        summ("ctl_rtt_max_ms", _ms(rtt.get("max")), "ms", "lower")
    summ("ctl_fairness", totals.get("fairness_jain"), "", "higher")
    measured_out = [v for v, p in zip(series.get("outstanding") or [], phases) if p == "measure"]
    if measured_out:
        summ(m.OUTSTANDING, sum(measured_out) / len(measured_out), "packets", "lower")
    summ(m.CTL_CPU, usage.cpu_measure_pct, "%", "lower")
    summ(m.CTL_RSS, usage.rss_max_mb, "MB", "lower")
    summ(m.PROBE_CPU, (doc.get("probe_cpu") or {}).get("measure_pct"), "%", "lower")
    summ(m.CEILING, ceiling_pps, "pkt/s", "higher")
    summ("ctl_switches_ready", sw_info.get("ready"), "switches", "higher")
    summ("ctl_disconnected", sw_info.get("disconnected"), "switches", "lower")

    reasons = probe_bottleneck(doc, ceiling_pps)
    mark = cpu
    if reasons:
        why = "probe-bound: " + "; ".join(reasons)
        mark = replace(cpu, cpu_bound=True, reason="; ".join(x for x in (why, cpu.reason) if x))
    errors: list[str] = []
    if crash:
        errors.append(crash)
    status = doc.get("status")
    if status == "failed":
        errs = doc.get("errors") or []
        first = errs[0]["error"] if errs else "no switch completed the handshake"
        if doc.get("protocol") == "p4runtime":
            errors.append(
                f"no emulated P4Runtime device got a primary controller and a pipeline: {first}"
            )
        else:
            errors.append(f"no emulated switch completed the OpenFlow handshake: {first}")
    elif not crash and int(sw_info.get("disconnected") or 0):
        errs = doc.get("errors") or []
        what = (
            "P4Runtime stream(s)" if doc.get("protocol") == "p4runtime" else "switch connection(s)"
        )
        errors.append(
            f"the controller dropped {sw_info.get('disconnected')} {what}: "
            f"{errs[0]['error'] if errs else '?'} (partial results kept)"
        )
    run_params = {
        **params,
        "probe_status": status,
        "protocol": doc.get("protocol"),
        "probe_bound": bool(reasons),
        "backpressure_skipped": int(totals.get("backpressure_skipped") or 0),
        "probe_bound_reasons": reasons,
        "controller_crashed": bool(crash),
        "probe_errors": (doc.get("errors") or [])[:20],
        "window_s": doc.get("window_s"),
        "probe_config": doc.get("config"),
    }
    failed = bool(crash) or status == "failed" or int(sw_info.get("disconnected") or 0) > 0
    return RunResult(
        key=key,
        topology=topology_name(switches),
        architecture=controller,
        workload=w,
        repetition=repetition,
        params=run_params,
        status="failed" if failed else "ok",
        error="; ".join(errors),
        started=started,
        finished=finished,
        samples=samples,
        summaries=summaries,
        cpu=mark,
    )


def _at(xs: list, i: int):
    return xs[i] if i < len(xs) else None


def controller_stages(state: dict | None) -> dict | None:
    """The per-stage times our P4Runtime controller reports in its state file ("stages":
    packets, mean_us per stage), or None (another controller, or no packet-in timed)."""
    stages = (state or {}).get("stages") or {}
    return stages if stages.get("packets") else None


def stage_summaries(workload: str, stages: dict) -> list[Summary]:
    """ctl_stage_<stage>_us: mean µs per packet-in the controller spent in each stage."""
    return [
        Summary(workload, f"ctl_stage_{name}_us", float(us), "µs", "lower")
        for name, us in (stages.get("mean_us") or {}).items()
        if us is not None
    ]
