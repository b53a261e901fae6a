"""The answer of `controller-capacity` (one store per southbound protocol and load): per
controller, the load it answered in full, the most it answered, its reaction time from the
lowest to the highest load, outstanding packets and CPU there, and runs near the probe's
own ceiling (whose numbers measure the probe, not the controller)."""

from __future__ import annotations

from collections import defaultdict

from sdnperf.studies.answers.common import MIN_REPETITIONS, mean, mean_text

FULL_PCT = 99.0  # "answered every packet-in": at least this share answered


def _not_ready(run, m: dict) -> str:
    """Why part of this run's set-up never came up, in words; '' when all of it did."""
    switches = run.params.get("switches")
    ready = m.get("ctl_switches_ready")
    parts = []
    if switches and ready is not None and ready < switches:
        parts.append(f"only {ready:.0f} of {switches} emulated switches became ready")
    if m.get("ctl_disconnected"):
        parts.append(f"the controller dropped {m['ctl_disconnected']:.0f} connection(s)")
    errors = run.params.get("probe_errors") or []
    if parts and errors:
        first = errors[0].get("error", "") if isinstance(errors[0], dict) else str(errors[0])
        if first:
            parts.append(f"first error: {first}")
    return "; ".join(parts)


def answer(store, study_id: int) -> list[str]:
    runs = {
        r.id: r for r in store.runs(study_id) if r.status == "ok" and not r.params.get("ceiling")
    }
    metric: defaultdict[int, dict[str, float]] = defaultdict(dict)
    for s in store.summaries(study_id):
        if s.run_id in runs and s.value == s.value:
            metric[s.run_id][s.metric] = s.value
    per_ctl = defaultdict(list)
    for rid, run in runs.items():
        m = metric[rid]
        # the configured load (switches × rate): a switch the controller never served still
        # counts as offered load, as P4RCProbe counts it
        offered = (
            run.params["rate_per_switch"] * run.params["switches"]
            if run.params.get("rate_per_switch")
            else m.get("ctl_offered_pps")
        )
        if offered is None or "ctl_answered_pps" not in m:
            continue
        per_ctl[run.architecture].append((offered, run, m))
    out = []
    # runs whose set-up failed outright (no switch connected, connections dropped) first
    for run in store.runs(study_id):
        if run.status == "failed" and not run.params.get("ceiling"):
            where = (
                f" at {run.params.get('switches')} switch(es) × "
                f"{run.params.get('rate_per_switch'):g}/s"
                if run.params.get("rate_per_switch")
                else ""
            )
            out.append(
                f"{run.architecture}{where}: the run failed, so it gives no rate: "
                f"{run.error or 'no reason recorded'}."
            )
    for ctl, pts in sorted(per_ctl.items()):
        proto = pts[0][1].params.get("protocol", "")
        # set-up first: a load where switches never connected measures a connection limit
        broken = [(p, why) for p in pts if (why := _not_ready(p[1], p[2]))]
        for p, why in sorted(broken, key=lambda x: x[0][0]):
            out.append(
                f"{ctl}{f' ({proto})' if proto else ''} at {load(p)}: {why}, so its rates at that load measure "
                "how many connections it took, not how many packet-ins it can answer "
                "(left out below)."
            )
        bad = {id(p) for p, _ in broken}
        good = [p for p in pts if id(p) not in bad]
        if not good:
            out.append(
                f"{ctl} ({proto}): no load where every switch came up; no capacity to report."
            )
            continue
        out.append(capacity_sentence(ctl, proto, good))
        staged = [p for p in good if any(k.startswith("ctl_stage_") for k in p[2])]
        if staged:
            staged.sort(key=lambda p: p[0])
            out.append(f"{ctl}: " + stage_sentence(staged[-1][2], staged[-1][0]))
    return out


def load(p) -> str:
    return f"{p[1].params.get('switches')} switch(es) × {p[1].params.get('rate_per_switch'):g}/s"


def capacity_sentence(ctl: str, proto: str, pts: list) -> str:
    """The loads it answered in full, the most it answered and the highest load, each as the
    mean over that load's repetitions with its n and CI (common.mean_text)."""
    loads: dict = defaultdict(list)  # (offered, switches) -> points
    for p in pts:
        loads[(p[0], p[1].params.get("switches", 0))].append(p)
    keys = sorted(loads)

    def answered(key):
        return [p[2]["ctl_answered_pps"] for p in loads[key]]

    def ratio(key):
        return 100.0 * mean(answered(key)) / key[0] if key[0] else 0.0

    full = [k for k in keys if ratio(k) >= FULL_PCT]
    best = max(keys, key=lambda k: mean(answered(k)))
    lo, hi = keys[0], keys[-1]
    text = f"{ctl} ({proto}): " if proto else f"{ctl}: "
    text += (
        f"answered ≥ {FULL_PCT:g} % of packet-ins up to {max(k[0] for k in full):,.0f}/s offered"
        if full
        else f"answered < {FULL_PCT:g} % of packet-ins at every load"
    )
    text += (
        f"; the most it answered was {mean_text(answered(best), 'packet-ins/s', 4)} ({load(loads[best][0])}, "
        f"{ratio(best):.0f} % of offered)"
    )
    if hi != best:
        text += (
            f"; at the highest load, {hi[0]:,.0f}/s offered, it answered "
            f"{mean_text(answered(hi), 'packet-ins/s', 4)} ({ratio(hi):.0f} %)"
        )

    def metric_mean(key, name):
        vals = [p[2][name] for p in loads[key] if name in p[2]]
        return mean(vals) if vals else None

    p50_lo, p50_hi = metric_mean(lo, "ctl_rtt_p50_ms"), metric_mean(hi, "ctl_rtt_p50_ms")
    if p50_lo is not None and p50_hi is not None:
        p99 = metric_mean(hi, "ctl_rtt_p99_ms")
        text += (
            f"; median reaction time {p50_lo:.3g} ms at {lo[0]:,.0f}/s offered, "
            f"{p50_hi:.3g} ms (p99 {p99 if p99 is not None else float('nan'):.3g} ms) "
            f"at {hi[0]:,.0f}/s"
        )
    outstanding = metric_mean(hi, "ctl_outstanding")
    if outstanding is not None:
        text += f"; {outstanding:,.0f} packet-ins outstanding at the end of the highest load"
    cpu = metric_mean(hi, "ctl_controller_cpu_pct")
    if cpu is not None:
        text += f"; controller CPU {cpu:.0f} % of one core there"
    bound = [p for p in pts if p[1].params.get("probe_bound")]
    if bound:
        text += (
            f" ({len(bound)} of {len(pts)} runs near the probe's ceiling: those measure "
            "the probe, not the controller)"
        )
    reps = min(len(v) for v in loads.values())
    if reps < MIN_REPETITIONS:
        text += (
            f". With n = {reps} per load these are single measurements: run at least "
            f"{MIN_REPETITIONS} repetitions to get their spread"
        )
    return text + "."


STAGES = ("receive", "decode", "app", "encode", "send")


def stage_sentence(m: dict, offered: float) -> str:
    """Where the controller's time per packet-in goes at one load (controllers/p4rt/stages.py)."""
    us = {s: m[f"ctl_stage_{s}_us"] for s in STAGES if f"ctl_stage_{s}_us" in m}
    total = sum(us.values())
    parts = ", ".join(f"{s} {v:.3g} µs" for s, v in us.items())
    top = max(us, key=us.__getitem__)
    return (
        f"stage breakdown at {offered:,.0f}/s offered (mean per packet-in): {parts}; "
        f"{total:.3g} µs in all, at most {1e6 / total:,.0f} packet-ins/s on one core; "
        f"the largest stage is {top} ({100 * us[top] / total:.0f} %)"
    )
