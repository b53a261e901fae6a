"""The answer of `controller-capacity` (one store per southbound protocol and load): per
controller, the load it answered in full, the most it answered, its reaction time from the
lowest to the highest load, outstanding packets and CPU there, and runs near the probe's
own ceiling (whose numbers measure the probe, not the controller)."""

from __future__ import annotations

from collections import defaultdict

FULL_PCT = 99.0  # "answered every packet-in": at least this share answered


def answer(store, study_id: int) -> list[str]:
    runs = {
        r.id: r for r in store.runs(study_id) if r.status == "ok" and not r.params.get("ceiling")
    }
    metric = defaultdict(dict)
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
    for ctl, pts in sorted(per_ctl.items()):
        pts.sort(key=lambda p: (p[0], p[1].params.get("switches", 0)))
        proto = pts[0][1].params.get("protocol", "")

        def ratio(m, offered):
            return 100.0 * m["ctl_answered_pps"] / offered if offered else 0.0

        full = [p for p in pts if ratio(p[2], p[0]) >= FULL_PCT]
        best = max(pts, key=lambda p: p[2]["ctl_answered_pps"])
        lo, hi = pts[0], pts[-1]

        def load(p):
            return f"{p[1].params.get('switches')} switch(es) × {p[1].params.get('rate_per_switch'):g}/s"

        text = f"{ctl} ({proto}): "
        text += (
            f"answered ≥ {FULL_PCT:g} % of packet-ins up to {max(p[0] for p in full):,.0f}/s offered"
            if full
            else f"answered < {FULL_PCT:g} % of packet-ins at every load"
        )
        text += (
            f"; the most it answered was {best[2]['ctl_answered_pps']:,.0f}/s ({load(best)}, "
            f"{ratio(best[2], best[0]):.0f} % of offered)"
        )
        if hi is not best:
            text += (
                f"; at the highest load, {hi[0]:,.0f}/s offered, it answered "
                f"{hi[2]['ctl_answered_pps']:,.0f}/s ({ratio(hi[2], hi[0]):.0f} %)"
            )
        if "ctl_rtt_p50_ms" in lo[2] and "ctl_rtt_p50_ms" in hi[2]:
            text += (
                f"; median reaction time {lo[2]['ctl_rtt_p50_ms']:.3g} ms at {lo[0]:,.0f}/s offered, "
                f"{hi[2]['ctl_rtt_p50_ms']:.3g} ms (p99 {hi[2].get('ctl_rtt_p99_ms', float('nan')):.3g} ms) "
                f"at {hi[0]:,.0f}/s"
            )
        if "ctl_outstanding" in hi[2]:
            text += f"; {hi[2]['ctl_outstanding']:,.0f} packet-ins outstanding at the end of the highest load"
        if "ctl_controller_cpu_pct" in hi[2]:
            text += f"; controller CPU {hi[2]['ctl_controller_cpu_pct']:.0f} % of one core there"
        bound = [p for p in pts if p[1].params.get("probe_bound")]
        if bound:
            text += (
                f" ({len(bound)} of {len(pts)} runs near the probe's ceiling: those measure "
                "the probe, not the controller)"
            )
        out.append(text + ".")
        staged = [p for p in pts if any(k.startswith("ctl_stage_") for k in p[2])]
        if staged:
            out.append(f"{ctl}: " + stage_sentence(staged[-1][2], staged[-1][0]))
    return out


STAGES = ("receive", "decode", "app", "encode", "send")


def stage_sentence(m: dict, offered: float) -> str:
    """Where the controller's time per packet-in goes at one load (controllers/p4rt/stages.py)."""
    us = {s: m[f"ctl_stage_{s}_us"] for s in STAGES if f"ctl_stage_{s}_us" in m}
    total = sum(us.values())
    parts = ", ".join(f"{s} {v:.3g} µs" for s, v in us.items())
    top = max(us, key=us.get)
    return (
        f"stage breakdown at {offered:,.0f}/s offered (mean per packet-in): {parts}; "
        f"{total:.3g} µs in all, at most {1e6 / total:,.0f} packet-ins/s on one core; "
        f"the largest stage is {top} ({100 * us[top] / total:.0f} %)"
    )
