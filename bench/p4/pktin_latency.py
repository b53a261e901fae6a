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
import sys
import time

from one_switch import switch_and_controller


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--transport", choices=["h2", "threads", "aio"], default="h2")
    args = ap.parse_args()
    with switch_and_controller("lat", args.transport):
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx.bind(("lat1a", 0))
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
        rx.bind(("lat2a", 0))
        lat = []
        for i in range(args.count):
            frame = (
                bytes.fromhex("000000000002000000000001")
                + b"\x88\xb5"
                + i.to_bytes(4, "big")
                + bytes(42)
            )
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
        print(
            json.dumps(
                {
                    "transport": args.transport,
                    "answered": len(lat),
                    "sent": args.count,
                    "min_ms": round(lat[0], 3),
                    "median_ms": round(statistics.median(lat), 3),
                    "p90_ms": round(lat[int(0.9 * (len(lat) - 1))], 3),
                    "max_ms": round(lat[-1], 3),
                    "first_five_ms": first,
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
