#!/usr/bin/env python3
"""Controller benchmark figures: the probe's ceiling (echo controller) and the saturation
rate of every OpenFlow controller sdnperf can start, on this machine.

    .venv/bin/python bench/ctlbench/run.py                 # ~3 minutes
    .venv/bin/python bench/ctlbench/run.py --quick         # ~1 minute
    .venv/bin/python bench/ctlbench/run.py --out results/bench-ctlbench

1. Ceiling: our echo controller answers every packet-in at once; the probe in throughput
   mode (window 64 per switch) against it, for 1/4/16 switches and 1/2 probe threads.
2. Saturation (cbench style): each controller in throughput mode (window 64 per switch,
   as many packet-ins as it answers) with 1 and 4 switches. The answered rate is its
   saturation rate.
3. Knee (P4RCProbe style): one switch, offered rate doubled from about a quarter of the
   controller's one-switch saturation rate until less than 90 % is answered; the last
   rate answered ≥ 90 % is reported.

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
from sdnperf.ctlbench.runner import CtlbenchRunner  # noqa: E402
from sdnperf.fidelity.environment import collect  # noqa: E402
from sdnperf.store import Store  # noqa: E402

CONTROLLERS = [{"kind": "echo"}, {"kind": "osken", "app": "l2-learning"},
               {"kind": "ovs-testcontroller"}, {"kind": "faucet"}]


def study(name, controllers, **load):
    return CtlbenchFile.model_validate({"study": {"name": name}, "controller": controllers,
                                        "load": {"ceiling": False, "warmup": 1.0, **load}})


def run(cfg, store, out, log):
    runner = CtlbenchRunner(cfg, store, out, log=log, environment=ENV)
    return runner.run()[1]


def summ(r):
    return {s.metric: s.value for s in r.summaries}


def row(r, extra=""):
    s = summ(r)
    bound = ("probe-bound" if r.params.get("probe_bound") else
             ("CPU-bound (machine)" if r.cpu.cpu_bound else ""))
    status = "" if r.status == "ok" else f"FAILED: {r.error.splitlines()[0][:80]}"
    f = lambda k, fmt: format(s[k], fmt) if k in s else "-"  # noqa: E731
    return (f"| {r.architecture} | {r.params.get('switches')} | {extra} | "
            f"{f('ctl_answered_pps', ',.0f')} | {f('ctl_rtt_p50_ms', '.3f')} | "
            f"{f('ctl_rtt_p99_ms', '.3f')} | {f('ctl_probe_cpu_pct', '.0f')} | "
            f"{f('ctl_controller_cpu_pct', '.0f')} | {bound} {status} |")


HEADER = ("| controller | switches | load | answered/s | p50 ms | p99 ms | probe CPU % | "
          "controller CPU % | note |\n|---|---|---|---|---|---|---|---|---|")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/bench-ctlbench")
    ap.add_argument("--quick", action="store_true", help="shorter windows, fewer points")
    ap.add_argument("--only", help="comma-separated controller kinds (echo,osken,ovs-testcontroller,faucet)")
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
        lines += ["### Probe ceiling (echo controller, throughput mode, window 64/switch)", HEADER]
        for threads in (1, 2):
            for n in ([1, 4] if args.quick else [1, 4, 16]):
                cfg = study("bench-ctlbench", [{"kind": "echo", "name": f"echo ({threads} probe thr)"}],
                            mode="throughput", switches=[n], duration=dur, threads=threads)
                for r in run(cfg, store, out, log):
                    lines.append(row(r, f"throughput, {threads} probe thread(s)"))
        lines += ["", "### Saturation (throughput mode, window 64/switch: as many as answered)", HEADER]
        saturation: dict[str, float] = {}
        for c in ctls:
            if c["kind"] == "echo":
                continue
            cfg = study("bench-ctlbench", [c], mode="throughput", switches=[1, 4], duration=dur)
            for r in run(cfg, store, out, log):
                lines.append(row(r, "throughput"))
                if r.params.get("switches") == 1:
                    saturation[c["kind"]] = summ(r).get("ctl_answered_pps", 0.0)
        lines += ["", "### Knee (rate mode, 1 switch, offered rate doubled until < 90 % answered)",
                  HEADER]
        for c in ctls:
            if c["kind"] == "echo":
                continue
            sat = saturation.get(c["kind"]) or 100.0
            rate, last_ok = float(max(25, 2 ** math.floor(math.log2(max(sat / 4, 1))))), None
            while rate <= 512_000:
                cfg = study("bench-ctlbench", [c], mode="rate", switches=[1], rate=[rate],
                            duration=dur)
                (r,) = run(cfg, store, out, log)
                lines.append(row(r, f"rate {rate:g}/s"))
                s = summ(r)
                if r.status != "ok" or s.get("ctl_answered_pps", 0) < 0.9 * rate:
                    break
                last_ok = rate
                rate *= 2
            lines.append(f"| **{CtlbenchFile.model_validate({'controller': [c]}).controller[0].label}** "
                         f"| 1 | knee | ≥ 90 % answered up to **{last_ok or 0:g}/s** offered | | | | | |")
    text = "\n".join(lines)
    print(text)
    (out / "bench.md").write_text(text + "\n")
    (out / "environment.json").write_text(json.dumps(ENV, indent=1, default=str))
    return 0


ENV: dict = {}

if __name__ == "__main__":
    sys.exit(main())
