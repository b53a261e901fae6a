"""The closing table of issue 25 from `sdnperf recirc plan --verify --json` outputs: per
target delay, switch, topology and design (N passes, hold by time) the N (or hold), the
delay achieved (median added RTT, 95 % bootstrap CI), its error, the closed loop's rounds,
and the cost (TCP/UDP throughput, UDP loss, switch CPU) beside N = 0's of the same cost
study (% of N = 0's throughput, points over its loss and CPU); the switch processes'
cpu_priority and the load average (1 min) when the row's round ended (the hold by time: the
first round's) and, where the cost was measured, as its study started and ended.

    python bench/recirc/table.py results/plan-1ms.json results/plan-5ms.json ...
    python bench/recirc/table.py --cost results/plan-5ms.json ...   (the cost table: TCP and
        every UDP workload's rate beside N = 0's, per design)
"""

from __future__ import annotations

import json
import sys

from sdnperf.studies.answers.recirculation import cost_vs_base


def _vs_base(r: dict) -> dict:
    """The plan's `cost_vs_base`, or (a plan written before it existed) computed from its
    `cost` the same way."""
    cost = r.get("cost") or {}
    if r.get("cost_vs_base") or "base" not in cost:
        return r.get("cost_vs_base") or {}
    return {d: cost_vs_base(c, cost["base"]) for d, c in cost.items() if d != "base"}


def _pct(x: float) -> str:
    """A percentage with two significant figures, never in exponent form (100, not 1e+02)."""
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.2g}"


def _mbps(x: float) -> str:
    """Mbit/s with three significant figures, whole numbers from 100 up (1290, not 1.29e+03)."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


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
        part = f"{name} {_mbps(x)}" if x is not None else f"{name} –"
        if vs.get(f"{key}_pct_of_base") is not None:
            part += f" ({_pct(vs[f'{key}_pct_of_base'])} % of N = 0)"
        parts.append(part)
    if c.get("udp_loss_pct") is not None:
        part = f"loss {_pct(c['udp_loss_pct'])} %"
        if vs.get("udp_loss_points_over_base") is not None:
            d = vs["udp_loss_points_over_base"]
            part += f" ({'+' if d >= 0 else ''}{_pct(d)})"
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
        vs = _vs_base(r)
        base = _cost(cost.get("base"))
        prio = r.get("cpu_priority", "normal")
        answer = min(r["rounds"], key=lambda x: abs(x["error_pct"]))
        lo, hi = r["achieved_median_ci_ms"]
        trail = " → ".join(
            f"{x['passes']} ({x['error_pct']:+.0f} %, load {x['load_average']})"
            for x in r["rounds"]
        )
        mark = "" if r["converged"] else " (not within 10 %)"
        if r.get("step"):  # the closed loop stopped: the target lies on a step
            (n0, n1), (e0, e1) = r["step"]["between"], r["step"]["errors_pct"]
            mark = f" (not within 10 %; on a step: N = {n0} {e0:+.0f} %, N = {n1} {e1:+.0f} %)"
            if r["step"].get("in_time"):  # the fast pings on one line: two speeds, not N
                shares = " and ".join(f"{s['slow_share_pct']:.0f} %" for s in r["step"]["speeds"])
                mark = (
                    f" (not within 10 %; no step in N, two speeds in time: N = {n0} "
                    f"{e0:+.0f} %, N = {n1} {e1:+.0f} %, {shares} of their pings slow)"
                )
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


def _udp_workloads(plan: list[dict]) -> list[str]:
    """The UDP workloads of the cost studies (e.g. udp-1m .. udp-8m, udp), by rate: names
    udp-<R>m in R's order, the others after."""
    names = {
        k.removesuffix("_mbps")
        for r in plan
        for c in r.get("cost", {}).values()
        for k in c
        if k.startswith("udp") and k.endswith("_mbps")
    }

    def rate(name: str) -> tuple[float, str]:
        tail = name.removeprefix("udp-").removesuffix("m")
        return (float(tail), name) if tail.replace(".", "", 1).isdigit() else (float("inf"), name)

    return sorted(names, key=rate)


def cost_rows(plan: list[dict], udp: list[str]) -> list[str]:
    """One row per curve and design (N = 0, N passes, hold by time) of the cost studies:
    TCP and each UDP workload's received Mbit/s (% of N = 0's) and loss, the switch CPU,
    the cost study's load average; curves whose cost was not measured are left out."""
    out = []
    for r in plan:
        cost, vs = r.get("cost") or {}, _vs_base(r)
        if not cost:
            continue
        where = f"{r['target_ms']:g} ms | {r['target']} | {r['topology']}"
        load = "{} → {}".format(*r["cost_load_average"]) if r.get("cost_load_average") else "–"
        for design, label, what in (
            ("base", "no recirculation", "N = 0"),
            ("passes", "N passes", f"N = {r.get('passes')}"),
            ("hold", "hold by time", f"{r['target_ms']:g} ms"),
        ):
            c, v = cost.get(design), vs.get(design, {})
            if not c:
                continue
            cells = []
            for w in ["tcp", *udp]:
                x = c.get(f"{w}_mbps")
                cell = "–" if x is None else _mbps(x)
                if v.get(f"{w}_pct_of_base") is not None:
                    cell += f" ({_pct(v[f'{w}_pct_of_base'])} %)"
                if c.get(f"{w}_loss_pct") is not None:
                    cell += f", loss {_pct(c[f'{w}_loss_pct'])} %"
                cells.append(cell)
            cpu = c.get("switch_cpu_pct")
            cpu_cell = "–" if cpu is None else f"{cpu:.0f}"
            if v.get("switch_cpu_points_over_base") is not None:
                cpu_cell += f" ({v['switch_cpu_points_over_base']:+.0f})"
            out.append(
                f"| {where} | {label} | {what} | " + " | ".join(cells) + f" | {cpu_cell} | "
                f"{r.get('cpu_priority', 'normal')} | {load} |"
            )
    return out


def cost_table(paths: list[str]) -> None:
    """`--cost`: the cost table (cost_rows) of the plans' JSON."""
    plan = [row for path in paths for row in _load(path) or []]
    udp = _udp_workloads(plan)
    print(
        "| target | switch | topology | design | N (or hold) | TCP Mbit/s (% of N = 0) | "
        + " | ".join(f"{w} Mbit/s (% of N = 0), loss" for w in udp)
        + " | switch CPU % of a core (points over N = 0) | switch cpu_priority | "
        "load average, cost study start → end |"
    )
    print("|" + "---|" * (9 + len(udp)))
    for line in cost_rows(plan, udp):
        print(line)


def _load(path: str) -> list[dict] | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as exc:  # a plan that stopped wrote no JSON
        print(f"note: {path}: no plan: {exc}", file=sys.stderr)
        return None


def main(paths: list[str]) -> None:
    if paths[:1] == ["--cost"]:
        cost_table(paths[1:])
        return
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
