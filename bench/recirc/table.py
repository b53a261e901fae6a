"""The closing table of issue 25 from `sdnperf recirc plan --verify --json` outputs: per
target delay, switch, topology and design (N passes, hold by time) the N (or hold), the
delay achieved (median added RTT, 95 % bootstrap CI), its error, the closed loop's rounds,
and the cost (TCP/UDP throughput, UDP loss, switch CPU) beside N = 0's of the same cost
study (% of N = 0's throughput, points over its loss and CPU); the switch processes'
cpu_priority and the load average (1 min) when the row's round ended (the hold by time: the
first round's) and, where the cost was measured, as its study started and ended.

    python bench/recirc/table.py results/plan-1ms.json results/plan-5ms.json ...
"""

from __future__ import annotations

import json
import sys


def _cost(c: dict | None, vs: dict | None = None) -> str:
    """TCP and UDP Mbit/s, UDP loss, switch CPU; with `vs` (the plan's `cost_vs_base` of
    this design) each beside N = 0's of the same cost study: % of it, or points over it."""
    if not c:
        return "–"
    vs = vs or {}
    parts = []
    for key, name in (("tcp", "TCP"), ("udp", "UDP")):
        # a missing figure is a run that finished no measurement (the store says why)
        x = c.get(f"{key}_mbps")
        part = f"{name} {x:.3g}" if x is not None else f"{name} –"
        if vs.get(f"{key}_pct_of_base") is not None:
            part += f" ({vs[f'{key}_pct_of_base']:.2g} % of N = 0)"
        parts.append(part)
    if c.get("udp_loss_pct") is not None:
        part = f"loss {c['udp_loss_pct']:.2g} %"
        if vs.get("udp_loss_points_over_base") is not None:
            part += f" ({vs['udp_loss_points_over_base']:+.2g})"
        parts.append(part)
    if c.get("switch_cpu_pct") is not None:
        part = f"CPU {c['switch_cpu_pct']:.0f} %"
        if vs.get("switch_cpu_points_over_base") is not None:
            part += f" ({vs['switch_cpu_points_over_base']:+.0f})"
        parts.append(part)
    return ", ".join(parts)


def _cost_load(r: dict) -> str:
    """The cost study's load average (1 min) as it started and ended, when it ran."""
    got = r.get("cost_load_average")
    return f"; cost study {got[0]} → {got[1]}" if got else ""


def rows(plan: list[dict]) -> list[str]:
    out = []
    for r in plan:
        where = f"{r['target_ms']:g} ms | {r['target']} | {r['topology']}"
        if r.get("passes") is None or r.get("achieved_median_ms") is None:
            why = r.get("refused") or r.get("verify_error") or "no delay measured"
            out.append(f"| {where} | N passes | – | {why} | | | | | |")
            continue
        cost = r.get("cost", {})
        vs = r.get("cost_vs_base", {})
        base = _cost(cost.get("base"))
        prio = r.get("cpu_priority", "normal")
        answer = min(r["rounds"], key=lambda x: abs(x["error_pct"]))
        lo, hi = r["achieved_median_ci_ms"]
        trail = " → ".join(
            f"{x['passes']} ({x['error_pct']:+.0f} %, load {x['load_average']})"
            for x in r["rounds"]
        )
        mark = "" if r["converged"] else " (not within 10 %)"
        out.append(
            f"| {where} | N passes | {r['passes']} (planned {r['planned_passes']}; rounds: "
            f"{trail}) | {r['achieved_median_ms']:.3f} ({lo:.3f} .. {hi:.3f}) | "
            f"{r['error_pct']:+.1f}{mark} | SD {r['spread_ms']:.3g}, p99 "
            f"{r['achieved_p99_ms']:.3g} | {_cost(cost.get('passes'), vs.get('passes'))} (N = 0: {base}) | "
            f"{prio} | {answer['load_average']}{_cost_load(r)} |"
        )
        if r.get("hold_achieved_median_ms") is not None:
            lo, hi = r["hold_achieved_median_ci_ms"]
            out.append(
                f"| {where} | hold by time | {r['target_ms']:g} ms | "
                f"{r['hold_achieved_median_ms']:.3f} ({lo:.3f} .. {hi:.3f}) | "
                f"{r['hold_error_pct']:+.1f} | SD {r['hold_spread_ms']:.3g}, p99 "
                f"{r['hold_achieved_p99_ms']:.3g} | {_cost(cost.get('hold'), vs.get('hold'))} | {prio} | "
                f"{r['rounds'][0]['load_average']}{_cost_load(r)} |"
            )
    return out


def main(paths: list[str]) -> None:
    print(
        "| target | switch | topology | design | N (or hold) | achieved ms (median added "
        "RTT, 95 % CI) | error % | spread ms | cost at it | switch cpu_priority | load "
        "average |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        try:
            with open(path) as f:
                plan = json.load(f)
        except (OSError, ValueError) as exc:  # a plan that stopped wrote no JSON
            print(f"| {path} | – | – | – | – | no plan: {exc} | | | | | |")
            continue
        for line in rows(plan):
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
