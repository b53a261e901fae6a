"""One packet-in at a time through the real switch and the controller: the time from a
frame entering port 1 (unknown destination -> packet-in) to its flood copy leaving port 2
(packet-out). Run as root in a private network namespace:

    unshare --net --mount bash -c 'mount -t sysfs sysfs /sys; ip link set lo up; \
        .venv/bin/python bench/p4/pktin_latency.py --count 50'
"""
from __future__ import annotations

import argparse
import json
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnperf import p4  # noqa: E402
from sdnperf.arch.p4 import find_grpc_daemon  # noqa: E402
from sdnperf.controllers import process  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--transport", choices=["h2", "threads", "aio"], default="h2")
    args = ap.parse_args()
    for a, b in (("lat1a", "lat1b"), ("lat2a", "lat2b")):
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        for i in (a, b):
            subprocess.run(["ip", "link", "set", i, "up"], check=True)
            Path(f"/proc/sys/net/ipv6/conf/{i}/disable_ipv6").write_text("1")
    prog = p4.compiled("l2l3")
    port = process.free_port()
    run_dir = Path(tempfile.mkdtemp(prefix="p4-lat-"))
    sw = subprocess.Popen([find_grpc_daemon(), "-i", "1@lat1b", "-i", "2@lat2b", "--cpu-port", "255",
                           "--grpc-port", str(port), "--device-id", "1", "--die-with-parent"],
                          stdout=subprocess.DEVNULL, stderr=open(run_dir / "switch.log", "w"))
    ctl = None
    try:
        time.sleep(0.5)
        ctl = process.p4rt_controller({"app": "l2-learning", "p4info": str(prog.p4info),
                                       "device_config": str(prog.json), "transport": args.transport,
                                       "switches": [{"name": "s1", "device_id": 1,
                                                     "address": f"127.0.0.1:{port}",
                                                     "ports": [1, 2]}]}, run_dir)
        ctl.start()
        while not (ctl.state() or {}).get("ready"):
            time.sleep(0.05)
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx.bind(("lat1a", 0))
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
        rx.bind(("lat2a", 0))
        lat = []
        for i in range(args.count):
            frame = bytes.fromhex("000000000002000000000001") + b"\x88\xb5" + i.to_bytes(4, "big") + bytes(42)
            t0 = time.perf_counter()
            tx.send(frame)
            while True:
                r, _, _ = select.select([rx], [], [], 1.0)
                if not r:
                    break
                data = rx.recv(2048)
                if data[14:18] == i.to_bytes(4, "big"):
                    lat.append((time.perf_counter() - t0) * 1e3)
                    break
            time.sleep(0.02)
        first = [round(x, 2) for x in lat[:5]]
        lat.sort()
        print(json.dumps({"transport": args.transport, "answered": len(lat), "sent": args.count,
                          "min_ms": round(lat[0], 3), "median_ms": round(statistics.median(lat), 3),
                          "p90_ms": round(lat[int(0.9 * (len(lat) - 1))], 3),
                          "max_ms": round(lat[-1], 3), "first_five_ms": first}))
    finally:
        if ctl is not None:
            ctl.stop()
        sw.terminate()
        sw.wait(timeout=5)
        for a in ("lat1a", "lat2a"):
            subprocess.run(["ip", "link", "del", a], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
