"""What the lab's own switches cost in CPU: µs per forwarded packet per switch at 1, 10,
100 and 1000 Mbit/s, and the idle cost of a 10- and a 100-switch network, for the Linux
bridge, Open vSwitch (userspace datapath, as the lab runs it) and our P4 switch (the `p4`
architecture: sdnperf-switch-grpc under sdnperf's P4Runtime controller).

Rate sweep: one switch, two hosts (`single`; `--rate-switches N`: a line of N switches, the
hosts at its ends), iperf3 UDP of 1400-byte datagrams at each
rate for --seconds. CPU is on-CPU time from /proc/PID/task/*/schedstat (nanoseconds, not
the 10 ms ticks of /proc/PID/stat), so other processes on a shared machine do not count.
Columns:
  switch µs/pkt   the switch processes' CPU per forwarded packet (the bridge: none, it
                  forwards in the senders' softirq context)
  path µs/pkt     switch processes + both iperf3 processes (whose system time holds the
                  kernel's forwarding work, the bridge's included), per forwarded packet
  × bridge        path µs/pkt over the bridge's at the same rate, in the same invocation
Idle: a linear network of N switches (one host each) after it is ready and 2 s of
settling; the switch processes' CPU (ms per s = per mille of a core) and wake-ups
(context switches) per second over --idle-seconds.

Run as root, inside /work/tools/nsrun on a shared machine:
    .venv/bin/python bench/lab/run.py [--seconds 5] [--idle-seconds 5] [--only rate|idle]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from mininet.log import setLogLevel

from sdnperf.arch.config import BridgeConfig, OvsStandaloneConfig, P4Config
from sdnperf.emulation import ovs
from sdnperf.emulation.cleanup import ensure_tag
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology

ARCHITECTURES = {
    "bridge": BridgeConfig(kind="bridge", name="bridge"),
    "ovs": OvsStandaloneConfig(kind="ovs-standalone", name="ovs"),
    "p4": P4Config(kind="p4", name="p4", app="topo-forwarding"),
    # the same switches with one process each instead of one for the network
    # (`switch_processes`, default shared)
    "p4-per-switch": P4Config(
        kind="p4", name="p4-per-switch", app="topo-forwarding", switch_processes="per-switch"
    ),
}
RATES_MBIT = (1, 10, 100, 1000)
IDLE_SIZES = (10, 100)
DATAGRAM = 1400


def cpu_ns(pids) -> int:
    """On-CPU nanoseconds of every thread of `pids` so far (exited threads are lost: the
    processes measured here live through the measurement)."""
    total = 0
    for pid in pids:
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def wakeups(pids) -> int:
    total = 0
    for pid in pids:
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                for line in (task / "status").read_text().splitlines():
                    if "ctxt_switches:" in line:
                        total += int(line.split()[-1])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


@contextmanager
def ovs_settings(arch_name: str):
    """OVS's stock other_config for the "ovs-stock" rows, the lab's otherwise."""
    saved = dict(ovs.USERSPACE_OTHER_CONFIG)
    if arch_name == "ovs-stock":
        ovs.USERSPACE_OTHER_CONFIG.clear()
        ovs.USERSPACE_OTHER_CONFIG.update(ovs.STOCK_USERSPACE_OTHER_CONFIG)
    try:
        yield
    finally:
        ovs.USERSPACE_OTHER_CONFIG.clear()
        ovs.USERSPACE_OTHER_CONFIG.update(saved)


def switch_pids(arch) -> list[int]:
    """The switch processes; for OVS both daemons (statistics go through ovsdb-server)."""
    pids = set(arch.processes().get("switch", []))
    if hasattr(arch, "ovs"):
        pids |= set(arch.ovs.pids().values())
    return sorted(pids)


def udp_at(h1, h2, mbit: float, seconds: float, sw: list[int]) -> dict:
    """iperf3 UDP h1 -> h2 at `mbit`; CPU of the switch processes and of both iperf3s."""
    server = h2.popen(["iperf3", "-s", "-1", "-p", "5399"])
    try:
        time.sleep(0.5)  # iperf3's server listens a moment after it starts
        t_sw = cpu_ns(sw)
        client = h1.popen(
            [
                "iperf3",
                "-u",
                "-c",
                h2.IP(),
                "-p",
                "5399",
                "-b",
                f"{mbit}M",
                "-l",
                str(DATAGRAM),
                "-t",
                str(seconds),
                "-J",
            ],
            stdout=-1,
            stderr=-1,
        )
        t_c, t_s = 0, cpu_ns([server.pid])
        last = (0, 0)
        while client.poll() is None:  # the client's CPU just before it exits
            last = (cpu_ns([client.pid]), cpu_ns([server.pid]))
            time.sleep(0.05)
        out, _ = client.communicate()
        sw_cpu = cpu_ns(sw) - t_sw
        c_cpu, s_cpu = last[0] - t_c, last[1] - t_s
    finally:
        server.kill()
        server.wait()
    res = json.loads(out)
    end = res["end"]["sum"]
    got = end["packets"] - end["lost_packets"]
    return {
        "offered_mbit": mbit,
        "received_mbit": end["bits_per_second"] * (1 - end["lost_percent"] / 100) / 1e6,
        "packets": got,
        "switch_us_per_pkt": sw_cpu / 1e3 / max(got, 1),
        "path_us_per_pkt": (sw_cpu + c_cpu + s_cpu) / 1e3 / max(got, 1),
    }


def rate_sweep(args, tmp: Path) -> dict:
    # one switch, or a line of them with the two hosts at its ends (every packet crosses
    # all of them)
    n = args.rate_switches
    spec = (
        build_topology("single", {"hosts": 2}, seed=1)
        if n == 1
        else build_topology("linear", {"switches": n}, seed=1)
    )
    out: dict = {}
    for name, config in ARCHITECTURES.items():
        with (
            ovs_settings(name),
            started_network(spec, config, tmp / f"rate-{name}", ready_timeout=120) as started,
        ):
            h1, h2 = started.net.get("h1", "h2" if n == 1 else f"h{n}")
            h1.cmd(f"ping -c 3 -i 0.2 {h2.IP()}")  # learn the path
            sw = switch_pids(started.arch)
            out[name] = [udp_at(h1, h2, r, args.seconds, sw) for r in RATES_MBIT]
    print(f"rate sweep through {n} switch(es)")
    print(
        f"{'rate Mbit/s':>11} {'arch':13} {'received':>9} {'packets':>8} "
        f"{'switch µs/pkt':>14} {'path µs/pkt':>12} {'× bridge':>9}"
    )
    for i, rate in enumerate(RATES_MBIT):
        ref = out.get("bridge", [None] * len(RATES_MBIT))[i]
        for name, rows in out.items():
            r = rows[i]
            ratio = r["path_us_per_pkt"] / ref["path_us_per_pkt"] if ref else float("nan")
            print(
                f"{rate:11} {name:13} {r['received_mbit']:9.1f} {r['packets']:8} "
                f"{r['switch_us_per_pkt']:14.2f} {r['path_us_per_pkt']:12.2f} {ratio:9.2f}",
                flush=True,
            )
    return out


def idle_cost(args, tmp: Path) -> dict:
    out: dict = {}
    print(
        f"{'switches':>8} {'arch':13} {'CPU ms/s':>9} {'per switch':>11} "
        f"{'wake-ups/s':>11} {'per switch':>11} {'ready s':>8}"
    )
    for n in IDLE_SIZES:
        spec = build_topology("linear", {"switches": n}, seed=1)
        for name, config in ARCHITECTURES.items():
            with (
                ovs_settings(name),
                started_network(spec, config, tmp / f"idle-{name}-{n}", ready_timeout=600) as st,
            ):
                time.sleep(2.0)
                sw = switch_pids(st.arch)
                c0, w0, t0 = cpu_ns(sw), wakeups(sw), time.monotonic()
                time.sleep(args.idle_seconds)
                dt = time.monotonic() - t0
                ms_s = (cpu_ns(sw) - c0) / 1e6 / dt
                w_s = (wakeups(sw) - w0) / dt
            out[f"{name}-{n}"] = {"cpu_ms_per_s": ms_s, "wakeups_per_s": w_s, "ready_s": st.ready_s}
            print(
                f"{n:8} {name:13} {ms_s:9.2f} {ms_s / n:11.3f} {w_s:11.1f} {w_s / n:11.2f} "
                f"{st.ready_s:8.1f}",
                flush=True,
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="per rate")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument(
        "--rate-switches",
        type=int,
        default=1,
        help="rate sweep through a line of N switches (hosts at its ends); default 1",
    )
    parser.add_argument("--only", choices=("rate", "idle"))
    parser.add_argument(
        "--arch",
        action="append",
        choices=[*ARCHITECTURES, "ovs-stock"],
        help="(repeat) default: all",
    )
    parser.add_argument(
        "--ovs-stock",
        action="store_true",
        help="also measure OVS with stock other_config (only userspace-tso-enable), "
        "to see what emulation/ovs.py's settings save",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        parser.error("needs root (Mininet)")
    if args.ovs_stock:
        ARCHITECTURES["ovs-stock"] = OvsStandaloneConfig(kind="ovs-standalone", name="ovs-stock")
    if args.arch:
        for name in set(ARCHITECTURES) - set(args.arch):
            del ARCHITECTURES[name]
    setLogLevel("warning")
    ensure_tag()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="sdnperf-bench-lab-") as tmp:
        if args.only in (None, "rate"):
            result["rate"] = rate_sweep(args, Path(tmp))
        if args.only in (None, "idle"):
            result["idle"] = idle_cost(args, Path(tmp))
    print(f"load average at end: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
