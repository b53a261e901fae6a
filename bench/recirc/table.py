"""The closing table of issue 25 from `sdnperf recirc plan --verify --json` outputs: per
target delay, switch, topology and design (N passes, hold by time) the N (or hold), the
delay achieved (median added RTT, 95 % bootstrap CI), its error, the closed loop's rounds,
and the cost (TCP/UDP throughput, UDP loss, switch CPU) beside N = 0's; the switch
processes' cpu_priority and the load average (1 min) when the row's round ended (the hold
by time: the first round's).

    python bench/recirc/table.py results/plan-1ms.json results/plan-5ms.json ...
"""

from __future__ import annotations

import json
import sys


def _cost(c: dict | None) -> str:
    if not c:
        return "–"
    parts = []
    for key, fmt in (("tcp_mbps", "TCP {:.3g}"), ("udp_mbps", "UDP {:.3g}")):
        # a missing figure is a run that finished no measurement (the store says why)
        parts.append(fmt.format(c[key]) if c.get(key) is not None else fmt[:3] + " –")
    if c.get("udp_loss_pct") is not None:
        parts.append(f"loss {c['udp_loss_pct']:.2g} %")
    if c.get("switch_cpu_pct") is not None:
        parts.append(f"CPU {c['switch_cpu_pct']:.0f} %")
    return ", ".join(parts)


def rows(plan: list[dict]) -> list[str]:
    out = []
    for r in plan:
        where = f"{r['target_ms']:g} ms | {r['target']} | {r['topology']}"
        if r.get("passes") is None or r.get("achieved_median_ms") is None:
            why = r.get("refused") or r.get("verify_error") or "no delay measured"
            out.append(f"| {where} | N passes | – | {why} | | | | | |")
            continue
        cost = r.get("cost", {})
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
            f"{r['achieved_p99_ms']:.3g} | {_cost(cost.get('passes'))} (N = 0: {base}) | "
            f"{prio} | {answer['load_average']} |"
        )
        if r.get("hold_achieved_median_ms") is not None:
            lo, hi = r["hold_achieved_median_ci_ms"]
            out.append(
                f"| {where} | hold by time | {r['target_ms']:g} ms | "
                f"{r['hold_achieved_median_ms']:.3f} ({lo:.3f} .. {hi:.3f}) | "
                f"{r['hold_error_pct']:+.1f} | SD {r['hold_spread_ms']:.3g}, p99 "
                f"{r['hold_achieved_p99_ms']:.3g} | {_cost(cost.get('hold'))} | {prio} | "
                f"{r['rounds'][0]['load_average']} |"
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
