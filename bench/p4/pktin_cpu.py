"""Controller CPU per packet-in, in process and without sockets: where the microseconds go.

Builds the bytes the switch would send (HTTP/2 DATA frames, each a gRPC message with a
StreamMessageResponse{packet: PacketIn} of 60 bytes and its ingress_port), then times the
controller's own path over them in stages, each stage including the ones before it:

  framing    GrpcStream.feed: HTTP/2 frames -> gRPC messages (on_message does nothing)
  parse      + StreamMessageResponse.FromString (protobuf, upb backend)
  app        + ingress_port lookup, L2Learning.packet_in_sync, the packet-out encoded and
             queued (the full per-packet path of the `h2` transport)
  output     + GrpcStream.output(): the packet-outs framed into DATA frames for one write

The socket reads and writes (one each per batch, not per packet) and the event loop are
not included; the real-switch bench (pktin_switch.py) shows the whole process's CPU.

    .venv/bin/python bench/p4/pktin_cpu.py --packets 200000 --batch 64 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from finsy.proto import p4r  # noqa: E402

from sdnperf import p4  # noqa: E402
from sdnperf.controllers.p4rt import h2stream  # noqa: E402
from sdnperf.controllers.p4rt.client import StreamSwitchConnection  # noqa: E402
from sdnperf.controllers.p4rt.controller import Controller, _SyncOut  # noqa: E402


def wire(n: int, ingress_id: int) -> bytes:
    """n packet-ins from one source to an unknown destination (each answered by a flood)."""
    payload = bytes.fromhex("000000000002000000000001") + b"\x08\x00" + bytes(46)
    msg = p4r.StreamMessageResponse(
        packet=p4r.PacketIn(
            payload=payload, metadata=[p4r.PacketMetadata(metadata_id=ingress_id, value=b"\x01")]
        )
    )
    body = msg.SerializeToString()
    one = h2stream.frame(h2stream.DATA, 0, 1, b"\x00" + len(body).to_bytes(4, "big") + body)
    return one * n


class _Proto:
    """StreamProtocol's send while a read is being handled: queue only."""

    def __init__(self, stream):
        self.send = stream.send


def run(stage: str, ctl: Controller, data: list[bytes]) -> float:
    conn = StreamSwitchConnection("s1", "127.0.0.1:1", 1)
    sink = []
    on_message = {
        "framing": sink.append,
        "parse": lambda b: sink.append(p4r.StreamMessageResponse.FromString(b)),
    }.get(stage, conn._on_message)
    conn._h2 = stream = h2stream.GrpcStream("x", "/p", on_message)
    stream._conn_window = stream._stream_window = 1 << 40  # the bench measures us, not windows
    conn._proto = _Proto(stream)
    conn._parse = p4r.StreamMessageResponse.FromString
    conn._inbox = []
    conn.sync_out = _SyncOut(ctl, conn)
    conn.fast_packet_in = ctl._fast_packet_in
    out = stage == "output"
    pending = stream._pending  # queued packet-outs: framed by output(), else just dropped
    t0 = time.perf_counter()
    for chunk in data:
        stream.feed(chunk)
        if out:
            stream.output()
        else:
            pending.clear()
        sink.clear()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=200000)
    ap.add_argument("--batch", type=int, default=64, help="packet-ins per socket read")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    prog = p4.compiled("l2l3")
    ctl = Controller(
        {
            "app": "l2-learning",
            "p4info": str(prog.p4info),
            "device_config": str(prog.json),
            "switches": [{"name": "s1", "device_id": 1, "address": "127.0.0.1:1", "ports": [1, 2]}],
        }
    )
    chunk = wire(args.batch, ctl._ingress_ids[1])
    data = [chunk] * (args.packets // args.batch)
    n = len(data) * args.batch
    stages = ("framing", "parse", "app", "output")
    times: dict[str, list[float]] = {s: [] for s in stages}
    for _ in range(args.repeat):  # stages interleaved: slow drift of a shared machine hits all
        for stage in stages:
            times[stage].append(run(stage, ctl, data) / n * 1e6)
    results = {
        s: {
            "us_per_packet_median": round(statistics.median(t), 3),
            "min": round(min(t), 3),
            "max": round(max(t), 3),
        }
        for s, t in times.items()
    }
    print(
        json.dumps(
            {
                "packets": n,
                "batch": args.batch,
                "stages_cumulative": results,
                "implied_max_per_s_one_core": round(
                    1e6 / results["output"]["us_per_packet_median"]
                ),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
