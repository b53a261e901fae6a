"""Packet-in answer rate of the `p4` and `openflow` architectures side by side, with the
same load and the same count: our P4Runtime controller (l2-learning) with our P4 switch,
and our os-ken l2-learning app with Open vSwitch (userspace datapath) over OpenFlow 1.3.

A `single` topology with two hosts is built by the lab for each architecture in turn
(fresh network per repetition). h1 sends `--rate` frames/s from a MAC no host has to a
MAC no host has, so every frame misses the switch's tables, becomes a packet-in and is
answered by a flooding packet-out; answered/s = frames the switch sent to h2 (tx of its
port toward h2) per second. Controller and switch CPU are reported. Needs root, Mininet
and a private namespace:

    unshare --net --mount bash -c 'mount -t sysfs sysfs /sys; ip link set lo up; \\
        .venv/bin/python bench/p4/pktin_arch.py --rate 40000 --seconds 5 --repeat 3'
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from sdnperf.arch.config import OpenflowConfig, P4Config  # noqa: E402
from sdnperf.runner import started_network  # noqa: E402
from sdnperf.topo.registry import build_topology  # noqa: E402

# locally administered MACs no host has: every frame is a miss, every answer a flood
FRAME = bytes.fromhex("020000000099020000000001") + b"\x08\x00" + bytes(46)
ARCHS = {
    "p4": lambda: P4Config(kind="p4", name="p4", app="l2-learning"),
    "openflow": lambda: OpenflowConfig(
        kind="openflow", name="openflow", controller="osken", app="l2-learning"
    ),
}


def counter(iface: str, which: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/{which}").read_text())


def port_toward(net, host: str) -> str:
    """The switch-side interface of the link to `host` (lives in our namespace)."""
    h = net.get(host)
    link = h.intf().link
    return (link.intf2 if link.intf1.node is h else link.intf1).name


def one_run(kind: str, args, run_dir: Path) -> dict:
    spec = build_topology("single", {"hosts": 2}, seed=1)
    with started_network(spec, ARCHS[kind](), run_dir, ready_timeout=90) as started:
        arch, net = started.arch, started.net
        pids = arch.processes()
        procs = {
            role: psutil.Process(pids[role][0])
            for role in ("controller", "switch")
            if pids.get(role)
        }
        port_in, port_out = port_toward(net, "h1"), port_toward(net, "h2")
        for p in procs.values():
            p.cpu_percent()
        stats0 = arch.control_stats()
        offered0, answered0 = counter(port_in, "rx_packets"), counter(port_out, "tx_packets")
        t0 = time.monotonic()
        sender = net.get("h1").popen(
            [
                sys.executable,
                str(REPO / "bench/p4/pktin_switch.py"),
                "--send",
                net.get("h1").intf().name,
                "--rate",
                str(args.rate),
                "--seconds",
                str(args.seconds),
                "--frame-hex",
                FRAME.hex(),
            ]
        )
        sender.wait(timeout=args.seconds + 30)
        elapsed = time.monotonic() - t0
        cpu = {role: p.cpu_percent() for role, p in procs.items()}
        time.sleep(0.5)  # answers in flight
        offered = counter(port_in, "rx_packets") - offered0
        answered = counter(port_out, "tx_packets") - answered0
        stats = arch.control_stats()
    return {
        "arch": kind,
        "controller": "sdnperf-p4rt l2-learning" if kind == "p4" else "os-ken l2-learning",
        "rate": args.rate,
        "seconds": args.seconds,
        "offered": offered,
        "answered": answered,
        # per second of sending (the sender's own start-up is not load)
        "answered_per_s": round(answered / args.seconds),
        "wall_s": round(elapsed, 2),
        "packet_ins": stats.get("packet_ins", 0) - stats0.get("packet_ins", 0),
        "controller_cpu_pct": cpu.get("controller"),
        "switch_cpu_pct": cpu.get("switch"),
        "loadavg_1min": round(psutil.getloadavg()[0], 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    ap.add_argument("--rate", type=float, default=40000, help="frames/s offered by h1")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3, help="fresh networks per architecture")
    ap.add_argument(
        "--arch",
        action="append",
        choices=list(ARCHS),
        help="architecture(s) to run (default: both, interleaved)",
    )
    args = ap.parse_args()
    kinds = args.arch or list(ARCHS)
    base = Path(tempfile.mkdtemp(prefix="p4-pktin-arch-"))
    rates: dict[str, list[int]] = {k: [] for k in kinds}
    for i in range(args.repeat):
        for kind in kinds:  # interleaved: both see the same machine load over time
            r = one_run(kind, args, base / f"{kind}-{i}")
            rates[kind].append(r["answered_per_s"])
            print(json.dumps(r), flush=True)
    summary = {
        k: {
            "mean": round(statistics.mean(v)),
            "stdev": round(statistics.stdev(v)) if len(v) > 1 else None,
            "min": min(v),
            "max": max(v),
        }
        for k, v in rates.items()
    }
    if "p4" in rates and "openflow" in rates and summary["openflow"]["mean"]:
        summary["ratio_p4_over_openflow"] = round(
            summary["p4"]["mean"] / summary["openflow"]["mean"], 2
        )
    print(json.dumps({"summary": summary, "rate": args.rate, "seconds": args.seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
