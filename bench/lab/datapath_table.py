"""Side-by-side table of a study whose p4 architectures come in pairs, NAME (datapath =
"user") and NAME-auto (datapath = "auto"): for each workload, sweep point and pair, the
means of the metrics that say what the fast path changes (throughput, RTT, one-way delay,
jitter, retransmits), the switches' CPU (`per_role.switch`, % of a core), the packets each
path forwarded (xdp_forwarded: in the kernel; engine_tx: by the user-space engine), the
marks, and the data path the run chose with its reason (the run's facts).

    .venv/bin/python bench/lab/datapath_table.py RESULTS/STUDY/study.sqlite
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
from collections import defaultdict

METRICS = (
    "throughput_mbps",
    "rtt_ms",
    "rtt_min_ms",
    "owd_ms",
    "jitter_ms",
    "loss_pct",
    "retransmits",
    "xdp_forwarded",
    "xdp_to_engine",
    "engine_tx",
)


def fmt(values: list[float]) -> str:
    if not values:
        return "-"
    m = statistics.fmean(values)
    return f"{m:.4g}" if abs(m) < 1000 else f"{m:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("store")
    args = ap.parse_args()
    db = sqlite3.connect(args.store)
    runs = db.execute(
        "SELECT id, architecture, workload, point, status, cpu, params FROM run ORDER BY id"
    ).fetchall()
    cells: dict = defaultdict(lambda: defaultdict(list))
    chose: dict[str, set] = defaultdict(set)
    for rid, arch, workload, point, status, cpu, params in runs:
        pt = ",".join(f"{k.split('.')[-1]}={v}" for k, v in sorted(json.loads(point).items()))
        key = (workload, pt, arch)
        if status != "ok":
            cells[key]["failed"].append(1.0)
            continue
        c = json.loads(cpu)
        cells[key]["switch_cpu"].append((c.get("per_role") or {}).get("switch", 0.0))
        marks = [
            m
            for m, on in (
                ("CPU", c.get("cpu_bound")),
                ("EMU", c.get("emulator_bound")),
                ("LINK", c.get("link_breach")),
            )
            if on
        ]
        cells[key]["marks"].append(" ".join(marks) or "-")  # type: ignore[arg-type]  # the one list of words among lists of numbers
        facts = json.loads(params).get("facts") or {}
        chose[arch].add(f"{facts.get('datapath')}: {facts.get('datapath_reason')}")
        for metric, value in db.execute(
            "SELECT metric, value FROM summary WHERE run_id = ?", (rid,)
        ):
            if metric in METRICS:
                cells[key][metric].append(value)
    archs = sorted({a for (_, _, a) in cells}, key=lambda a: (a.removesuffix("-auto"), a))
    print("## data path chosen per architecture (run facts)")
    for a in archs:
        print(f"- {a}: {'; '.join(sorted(chose[a]))}")
    for workload, pt in sorted({(w, p) for (w, p, _) in cells}):
        print(f"\n## {workload} {pt}")
        shown = [
            m
            for m in ("switch_cpu", *METRICS)
            if any(cells[(workload, pt, a)].get(m) for a in archs)
        ]
        print("| arch | " + " | ".join(shown) + " | marks |")
        print("| --- " * (len(shown) + 2) + "|")
        for a in archs:
            cell = cells.get((workload, pt, a))
            if not cell:
                continue
            row = [fmt(cell.get(m, [])) for m in shown]
            marks = ",".join(cell.get("marks", [])) or ("failed" if cell.get("failed") else "-")
            print(f"| {a} | " + " | ".join(row) + f" | {marks} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
