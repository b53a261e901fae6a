"""Per-thread CPU and wake-ups of one p4 switch (single topology, sdnperf-switch-grpc under the
l2-learning app) while iperf3 sends UDP at RATE: where the user-space path's CPU goes.
    /work/tools/nsrun .venv/bin/python bench/lab/threads.py [RATE, default 10M]
"""

import sys
import tempfile
import time
from pathlib import Path

from mininet.log import setLogLevel

from sdnperf.arch.config import P4Config
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology


def snap(pid):
    out = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            ns = int((t / "schedstat").read_text().split()[0])
            st = dict(l.split(":\t") for l in (t / "status").read_text().splitlines() if ":\t" in l)
            name = (t / "comm").read_text().strip()
            out[t.name] = (
                name,
                ns,
                int(st["voluntary_ctxt_switches"]),
                int(st["nonvoluntary_ctxt_switches"]),
            )
        except (OSError, KeyError):
            pass
    return out


rate = sys.argv[1] if len(sys.argv) > 1 else "10M"
setLogLevel("error")
spec = build_topology("single", {"hosts": 2}, seed=1)
with started_network(
    spec,
    P4Config(kind="p4", name="p4", app="l2-learning"),
    Path(tempfile.mkdtemp(prefix="sdnperf-threads-")),
    host_offloads=False,
) as s:
    net = s.net
    h1, h2 = net.get("h1", "h2")
    h1.cmd("ping -c2", h2.IP())
    pid = s.arch.switch_pids[0]
    h2.cmd("iperf3 -s -1 -D -p 5301")
    time.sleep(0.5)
    a = snap(pid)
    t0 = time.time()
    out = h1.cmd("iperf3 -u -b", rate, "-l 1400 -t 3 -p 5301 -c", h2.IP())
    b = snap(pid)
    dt = time.time() - t0
    stats = s.arch.control_stats()
    pk = stats.get("engine_tx", 0)
    print(f"rate {rate}: {dt:.1f} s, engine_tx {pk:.0f}")
    for tid, (name, ns, v, nv) in sorted(b.items()):
        if tid in a:
            n0, ns0, v0, nv0 = a[tid]
            if ns - ns0 > 1e6 or v - v0 > 10:
                print(
                    f"  {name:16} tid {tid}: {(ns - ns0) / 1e6:8.1f} ms CPU, {(v - v0) / dt:8.0f} vol/s, {(nv - nv0) / dt:6.0f} invol/s, {(ns - ns0) / 1e3 / max(pk, 1):6.1f} µs/pkt"
                )
