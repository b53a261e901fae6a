"""Link delay and loss on the p4 architecture, configured vs measured: ping RTT added per
link delay (expected 2 x links x delay_ms, TCLink semantics) and ping loss for a per-link
loss (expected 1 - (1 - p)^(2 x links)). Without sch_netem the switch ports impair both
directions of host links. Run as root in a private network namespace:

    unshare --net --mount bash -c 'mount -t sysfs sysfs /sys; ip link set lo up; \\
        .venv/bin/python bench/p4/link_impairment.py --reps 3'
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnperf.arch.config import P4Config  # noqa: E402
from sdnperf.emulation import capabilities  # noqa: E402
from sdnperf.runner import quiet_mininet, started_network  # noqa: E402
from sdnperf.topo.registry import build_topology  # noqa: E402

TOPOS = {"single": ({"hosts": 2}, 2), "linear": ({"switches": 2}, 3)}


def ping(spec, count: int, interval: float, seed: int):
    """(min, avg RTT ms, loss fraction) of one ping series between the first and last host."""
    with tempfile.TemporaryDirectory(prefix="sdnperf-impair-") as tmp:
        config = P4Config(kind="p4", name="p4", app="proactive")
        with started_network(spec, config, Path(tmp), seed=seed, ready_timeout=90) as started:
            net = started.net
            src, dst = net.get(spec.hosts()[0]), net.get(spec.hosts()[-1])
            src.cmd(f"ping -c 3 -i 0.2 -W 2 {dst.IP()}")  # ARP first
            out = src.cmd(f"ping -q -c {count} -i {interval} -W 3 {dst.IP()}")
    sent, got = map(int, re.search(r"(\d+) packets transmitted, (\d+) received", out).groups())
    rtt = re.search(r"= ([\d.]+)/([\d.]+)/", out)
    return float(rtt.group(1)), float(rtt.group(2)), 1 - got / sent


def spread(values) -> str:
    mean = statistics.mean(values)
    return f"{mean:7.3f} (±{statistics.stdev(values):.3f})" if len(values) > 1 else f"{mean:7.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--delays", default="1,5,10", help="ms per link, comma-separated")
    ap.add_argument("--loss", type=float, default=5.0, help="%% per link and direction")
    ap.add_argument("--count", type=int, default=50, help="pings per RTT series")
    args = ap.parse_args()
    quiet_mininet()
    print(
        f"sch_netem: {'yes' if capabilities.netem().ok else 'no'} "
        "(no: the switch ports impair both directions of host links)"
    )
    print(
        "topology  links  delay/link  expected +RTT  measured +RTT min   measured +RTT avg   (ms, mean ± sd over reps)"
    )
    for topo, (params, links) in TOPOS.items():
        spec = build_topology(topo, params, seed=1)
        base = [ping(spec, args.count, 0.05, r) for r in range(args.reps)]
        for d in [float(x) for x in args.delays.split(",")]:
            runs = [
                ping(spec.with_link_defaults(None, d, 0), args.count, 0.05, r)
                for r in range(args.reps)
            ]
            add_min = [r[0] - b[0] for r, b in zip(runs, base)]
            add_avg = [r[1] - b[1] for r, b in zip(runs, base)]
            print(
                f"{topo:8}  {links:5}  {d:10g}  {2 * links * d:13g}  {spread(add_min):>18}  "
                f"{spread(add_avg):>18}"
            )
        print(
            f"{topo:8}  baseline RTT min {spread([b[0] for b in base])}, avg {spread([b[1] for b in base])}"
        )
    p = args.loss / 100
    print(f"\nloss {args.loss:g} % per link and direction, 400 pings at 10 ms:")
    for topo, (params, links) in TOPOS.items():
        spec = build_topology(topo, params, seed=1).with_link_defaults(None, 0, args.loss)
        lost = [ping(spec, 400, 0.01, r)[2] * 100 for r in range(args.reps)]
        print(
            f"{topo:8}  {links} links: expected {100 * (1 - (1 - p) ** (2 * links)):.1f} %, "
            f"measured {spread(lost)} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
