#!/usr/bin/env python3
"""The lab's `p4` architecture through `sdnperf run` against the bench's single-switch TCP,
in one invocation (the issue's target: the study within 10 % of the bench's `grpc` row).

1. bench row `grpc`: run.py's set-up (namespaces A, S, B; veth; static neighbours) with
   `sdnperf-switch-grpc` preloaded with l1_fwd.json, host offloads on; iperf3 for --seconds.
2. study: one switch, two hosts (`single` topology, links unshaped), architecture
   `kind = "p4"` (sdnperf-switch-grpc programmed over P4Runtime with l2l3.p4 by sdnperf's
   controller, app `proactive`: every entry written before traffic; host offloads on, as
   `host_offloads = "auto"` picks for it), workload iperf-tcp h1 -> h2 for --seconds; its
   throughput_mbps summary read back from the study's SQLite file.
Prints both and the ratio study / bench. What still differs: the program (l2l3 vs l1_fwd),
Mininet's hosts (namespaces with their own settings) and the controller's stream open beside
the switch.

Run as root:  .venv/bin/python bench/switch/study_tcp.py [--seconds 10] [--repeat 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as bench  # noqa: E402  (bench/switch/run.py: its set-up and iperf3 runner)

STUDY = """\
# written by bench/switch/study_tcp.py
[study]
name = "bench-p4-tcp"
repetitions = {repeat}
seed = 1

[topology]
kind = "single"
hosts = 2

[[architecture]]
name = "p4"
kind = "p4"
app = "proactive"

[[workload]]
name = "tcp"
kind = "iperf-tcp"
pairs = [["h1", "h2"]]
duration = {seconds}
"""


def bench_tcp(secs: int, repeat: int) -> list[float]:
    out = []
    fwd = str(bench.PROGS / "l1_fwd.json")
    for _ in range(repeat):
        with bench.Path3("switch", True) as p:
            p.start_switch(fwd, binary="grpc")
            out.append(bench.tcp(p, secs))
    return out


def study_tcp(secs: int, repeat: int, out_dir: Path) -> list[float]:
    toml = out_dir / "bench-p4-tcp.toml"
    toml.write_text(STUDY.format(seconds=secs, repeat=repeat))
    sdnperf = [sys.executable, "-m", "sdnperf.cli"]
    r = subprocess.run(
        [*sdnperf, "run", str(toml), "--out", str(out_dir), "--no-report"],
        cwd=bench.REPO,
        text=True,
    )
    if r.returncode != 0:
        sys.exit(f"study_tcp.py: sdnperf run failed ({r.returncode}); results in {out_dir}")
    db = out_dir / "bench-p4-tcp" / "study.sqlite"
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.value FROM summary s JOIN run r ON r.id = s.run_id "
            "WHERE s.metric = 'throughput_mbps' AND r.status = 'ok' ORDER BY r.repetition"
        ).fetchall()
    if not rows:
        sys.exit(f"study_tcp.py: no throughput in {db}")
    return [v / 1000 for (v,) in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=10, help="iperf3 seconds per run (default 10)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (default 1)")
    ap.add_argument("--keep", help="results folder of the study (default: a temporary one)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("study_tcp.py: run as root")
    try:
        b = bench_tcp(args.seconds, args.repeat)
    finally:
        bench.cleanup()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        s = study_tcp(args.seconds, args.repeat, Path(args.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="sdpb-study-") as d:
            s = study_tcp(args.seconds, args.repeat, Path(d))
    mb, ms = sum(b) / len(b), sum(s) / len(s)
    print(f"\nTCP, one sdnperf-switch-grpc, host offloads on, {args.seconds} s x {args.repeat}")
    print(f"  bench row grpc (run.py set-up, l1_fwd.json):       {mb:.2f} Gbit/s  {b}")
    print(f"  study, p4 architecture (sdnperf run, l2l3.p4):     {ms:.2f} Gbit/s  {s}")
    print(f"  study / bench: {ms / mb:.2f} (target >= 0.90)")


if __name__ == "__main__":
    main()
