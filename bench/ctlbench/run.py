#!/usr/bin/env python3
"""Controller benchmark figures: the probe's ceiling (echo controller) and the saturation
rate of every OpenFlow controller sdnperf can start, and the same over P4Runtime for our
P4Runtime controller, on this machine.

    .venv/bin/python bench/ctlbench/run.py                 # ~3 minutes
    .venv/bin/python bench/ctlbench/run.py --quick         # ~1 minute
    .venv/bin/python bench/ctlbench/run.py --out results/bench-ctlbench
    .venv/bin/python bench/ctlbench/run.py --protocol p4runtime   # P4Runtime figures only

1. Ceiling: our echo controller answers every packet-in at once; the probe in throughput
   mode (window 64 per switch) against it, for 1/4/16 switches and 1/2 probe threads.
2. Saturation (cbench style): each controller in throughput mode (window 64 per switch,
   as many packet-ins as it answers) with 1 and 4 switches. The answered rate is its
   saturation rate.
3. Knee (P4RCProbe style): one switch, offered rate doubled from about a quarter of the
   controller's one-switch saturation rate until less than 90 % is answered; the last
   rate answered ≥ 90 % is reported.
4. P4Runtime: the ceiling (probe devices vs our P4Runtime echo controller, 1/4 devices)
   and our P4Runtime controller (sdnperf/controllers/p4rt, app l2-learning) at saturation
   (throughput mode, 1/4 devices) and its knee (rate mode, 1 device).

Results go to a study store (OUT/study.sqlite, report.html) and a markdown table on stdout.
The machine is shared: every figure states the probe's and the controller's CPU and
whether the run was probe- or CPU-bound.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from sdnperf.ctlbench.config import CtlbenchFile  # noqa: E402
from sdnperf.ctlbench.study import ctlbench_study  # noqa: E402
from sdnperf.fidelity.environment import collect  # noqa: E402
from sdnperf.runner import StudyRunner  # noqa: E402
from sdnperf.store import Store  # noqa: E402

CONTROLLERS = [
    {"kind": "echo"},
    {"kind": "osken", "app": "l2-learning"},
    {"kind": "ovs-testcontroller"},
    {"kind": "faucet"},
]
P4RT_CONTROLLERS = [{"kind": "p4rt", "app": "l2-learning"}]


def study(name, controllers, **load):
    return CtlbenchFile.model_validate(
        {
            "study": {"name": name},
            "controller": controllers,
            "load": {"ceiling": False, "warmup": 1.0, **load},
        }
    )


def run(cfg, store, out, log):
    runner = StudyRunner(ctlbench_study(cfg, None), store, out, resume=False, log=log)
    return runner.run(ENV)[1]


def summ(r):
    return {s.metric: s.value for s in r.summaries}


def row(r, extra=""):
    s = summ(r)
    bound = (
        "probe-bound"
        if r.params.get("probe_bound")
        else ("CPU-bound (machine)" if r.cpu.cpu_bound else "")
    )
    status = "" if r.status == "ok" else f"FAILED: {r.error.splitlines()[0][:80]}"
    f = lambda k, fmt: format(s[k], fmt) if k in s else "-"  # noqa: E731
    return (
        f"| {r.architecture} | {r.params.get('switches')} | {extra} | "
        f"{f('ctl_answered_pps', ',.0f')} | {f('ctl_rtt_p50_ms', '.3f')} | "
        f"{f('ctl_rtt_p99_ms', '.3f')} | {f('ctl_probe_cpu_pct', '.0f')} | "
        f"{f('ctl_controller_cpu_pct', '.0f')} | {bound} {status} |"
    )


HEADER = (
    "| controller | switches | load | answered/s | p50 ms | p99 ms | probe CPU % | "
    "controller CPU % | note |\n|---|---|---|---|---|---|---|---|---|"
)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", default="results/bench-ctlbench")
    ap.add_argument("--quick", action="store_true", help="shorter windows, fewer points")
    ap.add_argument(
        "--only",
        help="comma-separated controller kinds (echo,osken,ovs-testcontroller,faucet,p4rt)",
    )
    ap.add_argument("--protocol", choices=["openflow13", "p4runtime", "both"], default="both")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dur = 2.0 if args.quick else 5.0
    kinds = set(args.only.split(",")) if args.only else None
    ctls = [c for c in CONTROLLERS if kinds is None or c["kind"] in kinds]
    global ENV
    ENV = collect(datapath=None)
    lines = []
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    db = out / "study.sqlite"
    if db.exists():
        db.rename(db.with_name(f"study-{time.strftime('%Y%m%d-%H%M%S')}.sqlite"))
    with Store(db) as store:
        if args.protocol in ("openflow13", "both"):
            lines += [
                "### Probe ceiling (echo controller, throughput mode, window 64/switch)",
                HEADER,
            ]
            for threads in (1, 2):
                for n in [1, 4] if args.quick else [1, 4, 16]:
                    cfg = study(
                        "bench-ctlbench",
                        [{"kind": "echo", "name": f"echo ({threads} probe thr)"}],
                        mode="throughput",
                        switches=[n],
                        duration=dur,
                        threads=threads,
                    )
                    for r in run(cfg, store, out, log):
                        lines.append(row(r, f"throughput, {threads} probe thread(s)"))
            lines += [
                "",
                "### Saturation (throughput mode, window 64/switch: as many as answered)",
                HEADER,
            ]
            saturation: dict[str, float] = {}
            for c in ctls:
                if c["kind"] == "echo":
                    continue
                cfg = study("bench-ctlbench", [c], mode="throughput", switches=[1, 4], duration=dur)
                for r in run(cfg, store, out, log):
                    lines.append(row(r, "throughput"))
                    if r.params.get("switches") == 1:
                        saturation[c["kind"]] = summ(r).get("ctl_answered_pps", 0.0)
            lines += [
                "",
                "### Knee (rate mode, 1 switch, offered rate doubled until < 90 % answered)",
                HEADER,
            ]
            for c in ctls:
                if c["kind"] == "echo":
                    continue
                lines += knee(
                    c, saturation.get(c["kind"]), 512_000, {}, "rate", store, out, log, dur
                )
        if args.protocol in ("p4runtime", "both"):
            lines += [""] + p4runtime_section(store, out, log, dur, args.quick, kinds)
    text = "\n".join(lines)
    print(text)
    (out / "bench.md").write_text(text + "\n")
    (out / "environment.json").write_text(json.dumps(ENV, indent=1, default=str))
    return 0


def p4runtime_section(store, out, log, dur, quick, kinds) -> list[str]:
    """Ceiling, saturation and knee over P4Runtime (probe devices dialled by the controller)."""
    p4 = {"protocol": "p4runtime"}
    ceiling_rows = [
        "### P4Runtime: probe ceiling (P4Runtime echo controller, throughput mode)",
        HEADER,
    ]
    lines = [
        "### P4Runtime: saturation (throughput mode; judged against the ceiling above at "
        "the same window)",
        HEADER,
    ]
    ctls = [c for c in P4RT_CONTROLLERS if kinds is None or c["kind"] in kinds]
    saturation: dict[str, float] = {}
    # window 64 as for OpenFlow; 512 too, because one device's rate is window / RTT and
    # at 64 the echo's RTT already caps the ceiling near our controller's rate
    for window in (64, 512):
        for c in ctls or [{"kind": "echo"}]:
            # one study: the ceiling runs first (1 and 4 devices), then the controller, so
            # the probe-bound rule (answered within 2x of the ceiling) applies to it
            cfg = study(
                "bench-ctlbench",
                [c],
                mode="throughput",
                switches=[1, 4],
                duration=dur,
                window=window,
                ceiling=True,
                ceiling_duration=dur,
                **p4,
            )
            for r in run(cfg, store, out, log):
                if r.params.get("ceiling"):
                    ceiling_rows.append(row(r, f"p4runtime throughput, window {window}"))
                    continue
                lines.append(row(r, f"p4runtime throughput, window {window}"))
                if r.params.get("switches") == 1:
                    saturation[c["kind"]] = max(
                        saturation.get(c["kind"], 0.0), summ(r).get("ctl_answered_pps", 0.0)
                    )
    lines = ceiling_rows + [""] + lines
    lines += [
        "",
        "### P4Runtime: knee (rate mode, 1 device, offered rate doubled until < 90 % answered)",
        HEADER,
    ]
    for c in [c for c in ctls if c["kind"] != "echo"]:
        lines += knee(
            c, saturation.get(c["kind"]), 1_024_000, p4, "p4runtime rate", store, out, log, dur
        )
    return lines


def knee(
    c: dict, saturation: float | None, max_rate: float, load: dict, what: str, store, out, log, dur
) -> list[str]:
    """Rate mode, 1 switch: double the offered rate, from about a quarter of the saturation
    rate, until < 90 % is answered; a row per step and the knee's row."""
    lines = []
    rate, last_ok = (
        float(max(25, 2 ** math.floor(math.log2(max((saturation or 100.0) / 4, 1))))),
        None,
    )
    while rate <= max_rate:
        cfg = study(
            "bench-ctlbench", [c], mode="rate", switches=[1], rate=[rate], duration=dur, **load
        )
        (r,) = run(cfg, store, out, log)
        lines.append(row(r, f"{what} {rate:g}/s"))
        if r.status != "ok" or summ(r).get("ctl_answered_pps", 0) < 0.9 * rate:
            break
        last_ok = rate
        rate *= 2
    label = CtlbenchFile.model_validate({"controller": [c], "load": load}).controller[0].label
    lines.append(
        f"| **{label}** | 1 | knee | ≥ 90 % answered up to **{last_ok or 0:g}/s** "
        "offered | | | | | |"
    )
    return lines


ENV: dict = {}

if __name__ == "__main__":
    sys.exit(main())
