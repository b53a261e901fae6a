"""Packet-in answer rate with the real switch: sdnperf-switch-grpc + sdnperf's P4Runtime
controller (l2-learning), frames blasted into port 1 of the switch.

Every frame has the same unknown destination, so each one is a packet-in and each
packet-in is answered by a packet-out (flood group = port 2). Answered/s = frames that
come out of port 2 per second; offered = frames blasted; packet_ins = what the controller
counted. Must run as root in a private network namespace:

    unshare --net --mount bash -c 'mount -t sysfs sysfs /sys; ip link set lo up; \
        .venv/bin/python bench/p4/pktin_switch.py --seconds 5'
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnperf import p4  # noqa: E402
from sdnperf.arch.p4 import find_grpc_daemon  # noqa: E402
from sdnperf.controllers import process  # noqa: E402


def sh(*cmd):
    subprocess.run(cmd, check=True)


def rx(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets").read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    if Path("/sys/class/net/pin1a").exists():
        print("pin1a exists: run me in a private namespace (see --help)", file=sys.stderr)
        return 2
    for a, b in (("pin1a", "pin1b"), ("pin2a", "pin2b")):
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        for i in (a, b):
            sh("ip", "link", "set", i, "up")
            Path(f"/proc/sys/net/ipv6/conf/{i}/disable_ipv6").write_text("1")
    prog = p4.compiled("l2l3")
    port = process.free_port()
    run_dir = Path(tempfile.mkdtemp(prefix="p4-pktin-sw-"))
    sw = subprocess.Popen([find_grpc_daemon(), "-i", "1@pin1b", "-i", "2@pin2b", "--cpu-port", "255",
                           "--grpc-port", str(port), "--device-id", "1", "--die-with-parent"],
                          stdout=subprocess.DEVNULL, stderr=open(run_dir / "switch.log", "w"))
    ctl = None
    try:
        time.sleep(0.5)
        ctl = process.p4rt_controller({"app": "l2-learning", "p4info": str(prog.p4info),
                                       "device_config": str(prog.json),
                                       "switches": [{"name": "s1", "device_id": 1,
                                                     "address": f"127.0.0.1:{port}",
                                                     "ports": [1, 2]}]}, run_dir)
        ctl.start()
        for _ in range(200):
            st = ctl.state()
            if st and st.get("ready"):
                break
            time.sleep(0.05)
        else:
            raise SystemExit(f"controller not ready:\n{ctl.log_tail()}")
        pc, ps = psutil.Process(ctl.pid), psutil.Process(sw.pid)
        pc.cpu_percent(), ps.cpu_percent()
        before_in, before_out = ctl.state()["packet_ins"], rx("pin2a")
        sent_before = rx("pin1b")
        t0 = time.monotonic()
        subprocess.run([p4.find_tool("sdnperf-switch", "SDNPERF_SWITCH_BIN"), "blast", "pin1a",
                        "--seconds", str(args.seconds), "--dst-mac", "0x000000000002",
                        "--src-mac", "0x000000000001"], capture_output=True)
        elapsed = time.monotonic() - t0
        time.sleep(0.5)
        answered = rx("pin2a") - before_out
        st = ctl.state()
        print(json.dumps({
            "controller": "sdnperf-p4rt l2-learning", "switch": "sdnperf-switch-grpc",
            "seconds": round(elapsed, 2), "offered": rx("pin1b") - sent_before,
            "packet_ins": st["packet_ins"] - before_in, "answered": answered,
            "answered_per_s": round(answered / elapsed),
            "controller_cpu_pct": pc.cpu_percent(), "switch_cpu_pct": ps.cpu_percent(),
            "cpus": psutil.cpu_count()}))
    finally:
        if ctl is not None:
            ctl.stop()
        sw.terminate()
        sw.wait(timeout=5)
        for a in ("pin1a", "pin2a"):
            subprocess.run(["ip", "link", "del", a], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
