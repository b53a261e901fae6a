"""Packet-in answer rate with the real switch: sdnperf-switch-grpc + sdnperf's P4Runtime
controller (l2-learning), frames sent into port 1 of the switch.

Every frame has the same unknown destination, so each one is a packet-in and each
packet-in is answered by a packet-out (flood group = port 2). Answered/s = frames that
come out of port 2 per second; offered = frames that entered port 1; packet_ins = what the
controller counted. The switch drops packet-ins it cannot queue for the controller, so an
offered load above the controller's capacity measures that capacity.

Load: `--rate N` paces N frames/s from this process (a few % of a core);
`--rate 0` runs `sdnperf-switch blast` instead, as fast as it can (a whole core on its
own, taken from the controller on a small machine). Must run as root in a private
network namespace:

    unshare --net --mount bash -c 'mount -t sysfs sysfs /sys; ip link set lo up; \
        .venv/bin/python bench/p4/pktin_switch.py --seconds 5 --rate 40000 --repeat 3'

`--py-spy FILE` records the controller with py-spy (if installed) during the first run
(collapsed stacks, one line per stack: `py-spy record --format raw`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from one_switch import switch_and_controller  # noqa: E402

from sdnperf import tools  # noqa: E402

FRAME = bytes.fromhex("000000000002000000000001") + b"\x08\x00" + bytes(46)


def rx(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets").read_text())


def paced_send(iface: str, rate: float, seconds: float, frame: bytes = FRAME) -> None:
    """`rate` frames/s into `iface` for `seconds`, in bursts every 0.5 ms."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    send = s.send
    t0 = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic() - t0
        if now >= seconds:
            break
        due = int(now * rate) - sent
        for _ in range(due):
            try:
                send(frame)
            except OSError:  # ENOBUFS: the veth queue is full, the frame is not offered
                pass
        sent += due
        time.sleep(0.0005)
    s.close()


def one_run(args, ctl, sw, seconds: float) -> dict:
    pc, ps, me = psutil.Process(ctl.pid), psutil.Process(sw.pid), psutil.Process()
    pc.cpu_percent(), ps.cpu_percent(), me.cpu_percent()
    before_in, before_out, before_offered = ctl.state()["packet_ins"], rx("pin2a"), rx("pin1b")
    spy = None
    if args.py_spy:
        spy = subprocess.Popen(
            [
                args.py_spy_bin,
                "record",
                "--pid",
                str(ctl.pid),
                "--format",
                "raw",
                "--threads",
                "--nonblocking",
                "--rate",
                "250",
                "--duration",
                str(max(1, int(seconds) - 1)),
                "--output",
                args.py_spy,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        args.py_spy = None  # first run only
    load0 = psutil.getloadavg()[0]
    t0 = time.monotonic()
    if args.rate > 0:
        paced_send("pin1a", args.rate, seconds)
    else:
        subprocess.run(
            [
                tools.find("sdnperf-switch"),
                "blast",
                "pin1a",
                "--seconds",
                str(seconds),
                "--dst-mac",
                "0x000000000002",
                "--src-mac",
                "0x000000000001",
            ],
            capture_output=True,
        )
    elapsed = time.monotonic() - t0
    c_ctl, c_sw, c_me = pc.cpu_percent(), ps.cpu_percent(), me.cpu_percent()
    time.sleep(0.5)  # answers still in flight
    if spy is not None:
        spy.wait(timeout=30)
    answered = rx("pin2a") - before_out
    st = ctl.state()
    # packet-outs the controller dropped because the switch read its stream too slowly
    dropped = [
        line.rsplit(": ", 1)[1].split()[0]
        for line in ctl.log_path.read_text().splitlines()
        if "packet-outs dropped" in line
    ]
    return {
        "controller": "sdnperf-p4rt l2-learning",
        "switch": "sdnperf-switch-grpc",
        "transport": args.transport,
        "load": f"paced {args.rate:.0f}/s" if args.rate > 0 else "blast",
        "seconds": round(elapsed, 2),
        "offered": rx("pin1b") - before_offered,
        "packet_ins": st["packet_ins"] - before_in,
        "answered": answered,
        "answered_per_s": round(answered / elapsed),
        "controller_packet_outs_dropped_at_least": int(dropped[-1]) if dropped else 0,
        "controller_cpu_pct": c_ctl,
        "switch_cpu_pct": c_sw,
        "sender_cpu_pct": c_me if args.rate > 0 else None,
        "loadavg_1min": round(load0, 2),
        "cpus": psutil.cpu_count(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    ap.add_argument("--seconds", type=float, default=5.0, help="length of one run")
    ap.add_argument(
        "--rate",
        type=float,
        default=40000,
        help="frames/s offered by the paced sender; 0 = sdnperf-switch blast",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs against the same controller")
    ap.add_argument("--transport", choices=["h2", "threads", "aio"], default="h2")
    ap.add_argument("--py-spy", metavar="FILE", help="py-spy collapsed stacks of the first run")
    ap.add_argument(
        "--send",
        metavar="IFACE",
        help="only send: --rate frames/s of FRAME_HEX "
        "into IFACE for --seconds (pktin_arch.py runs this inside a Mininet host)",
    )
    ap.add_argument("--frame-hex", default=FRAME.hex(), help="the frame --send sends")
    args = ap.parse_args()
    if args.send:
        paced_send(args.send, args.rate, args.seconds, bytes.fromhex(args.frame_hex))
        return 0
    if args.py_spy:
        args.py_spy_bin = shutil.which("py-spy")
        if not args.py_spy_bin:
            ap.error("--py-spy: py-spy is not on PATH (pip install py-spy)")
    if Path("/sys/class/net/pin1a").exists():
        print("pin1a exists: run me in a private namespace (see --help)", file=sys.stderr)
        return 2
    with switch_and_controller("pin", args.transport) as (sw, ctl, run_dir):
        for _ in range(args.repeat):
            print(json.dumps(one_run(args, ctl, sw, args.seconds)), flush=True)
            time.sleep(0.5)
    # the daemon's exit counters: packet-ins it could not queue for the controller
    # (packet_in_dropped) and port drops say where unanswered frames went
    counters = [
        line.strip()
        for line in (run_dir / "switch.log").read_text().splitlines()
        if "counters" in line or line.strip().startswith("port ")
    ]
    print(json.dumps({"switch_exit_counters": counters}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
