"""Packet-in answer rate of sdnperf's P4Runtime controller from one (emulated) switch.

An emulated P4Runtime switch (grpc.aio server in this process; it accepts arbitration, the
pipeline and writes) streams packet-ins to the controller process (app l2-learning, as the
lab runs it) with a window of `--window` outstanding packet-ins, like cbench's throughput
mode: frames from `--hosts` source MACs to random destinations among them, so most are
answered by a packet-out plus a table write. Answered = packet-outs received. CPU use of
the controller and of this emulator is reported so a bench-bound run is visible.

    .venv/bin/python bench/p4/pktin_rate.py --duration 5 --window 64
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import grpc
import psutil
from finsy.proto import p4r, p4r_grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnperf import p4  # noqa: E402
from sdnperf.controllers import process  # noqa: E402


class EmulatedSwitch(p4r_grpc.P4RuntimeServicer):
    def __init__(self, window: int, frames: list[bytes]):
        self.window, self.frames = window, frames
        self.sent = self.answered = self.writes = self.updates = 0
        self.measuring = False
        self.go = asyncio.Event()
        self.stop = False
        self.pipeline = asyncio.Event()

    async def SetForwardingPipelineConfig(self, request, context):
        self.pipeline.set()
        return p4r.SetForwardingPipelineConfigResponse()

    async def Write(self, request, context):
        self.writes += 1
        self.updates += len(request.updates)
        return p4r.WriteResponse()

    async def StreamChannel(self, request_iterator, context):
        out: asyncio.Queue = asyncio.Queue()
        credits = asyncio.Semaphore(0)
        metas = [[p4r.PacketMetadata(metadata_id=1, value=bytes([port]))] for port in (1, 2, 3, 4)]

        async def reader():
            async for req in request_iterator:
                which = req.WhichOneof("update")
                if which == "arbitration":
                    await out.put(
                        p4r.StreamMessageResponse(
                            arbitration=p4r.MasterArbitrationUpdate(
                                device_id=req.arbitration.device_id,
                                election_id=req.arbitration.election_id,
                            )
                        )
                    )
                elif which == "packet":
                    if req.packet.payload[12:14] == b"\x88\xcc":
                        continue
                    self.answered += self.measuring
                    credits.release()

        task = asyncio.ensure_future(reader())
        try:
            yield await out.get()  # arbitration answer
            await self.go.wait()
            for _ in range(self.window):
                credits.release()
            n = len(self.frames)
            i = 0
            while not self.stop:
                await credits.acquire()
                i += 1
                self.sent += self.measuring
                yield p4r.StreamMessageResponse(
                    packet=p4r.PacketIn(payload=self.frames[i % n], metadata=metas[i & 3])
                )
        finally:
            task.cancel()


def frames_for(hosts: int, seed: int = 1) -> list[bytes]:
    rnd = random.Random(seed)
    macs = [bytes([0, 0, 0x10, 0, (i >> 8) & 0xFF, i & 0xFF]) for i in range(hosts)]
    return [rnd.choice(macs) + rnd.choice(macs) + b"\x08\x00" + bytes(46) for _ in range(65536)]


async def run(args) -> dict:
    prog = p4.compiled("l2l3")
    sw = EmulatedSwitch(args.window, frames_for(args.hosts))
    server = grpc.aio.server()
    p4r_grpc.add_P4RuntimeServicer_to_server(sw, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    run_dir = Path(tempfile.mkdtemp(prefix="p4-pktin-"))
    ctl = process.p4rt_controller(
        {
            "app": "l2-learning",
            "p4info": str(prog.p4info),
            "device_config": str(prog.json),
            "transport": args.transport,
            "switches": [
                {
                    "name": "s1",
                    "device_id": 1,
                    "address": f"127.0.0.1:{port}",
                    "ports": [1, 2, 3, 4],
                }
            ],
        },
        run_dir,
    )
    await asyncio.get_running_loop().run_in_executor(None, ctl.start)
    try:
        for _ in range(200):
            st = ctl.state()
            if st and st.get("ready"):
                break
            await asyncio.sleep(0.05)
        cpu_ctl, cpu_me = psutil.Process(ctl.pid), psutil.Process()
        sw.go.set()
        await asyncio.sleep(args.warmup)
        cpu_ctl.cpu_percent(), cpu_me.cpu_percent()
        sw.measuring = True
        t0 = time.monotonic()
        await asyncio.sleep(args.duration)
        sw.measuring = False
        elapsed = time.monotonic() - t0
        c_ctl, c_me = cpu_ctl.cpu_percent(), cpu_me.cpu_percent()
        sw.stop = True
        return {
            "controller": "sdnperf-p4rt l2-learning",
            "protocol": "P4Runtime",
            "transport": args.transport,
            "window": args.window,
            "hosts": args.hosts,
            "duration_s": round(elapsed, 2),
            "sent": sw.sent,
            "answered": sw.answered,
            "answered_per_s": round(sw.answered / elapsed),
            "write_rpcs": sw.writes,
            "table_updates": sw.updates,
            "controller_cpu_pct": c_ctl,
            "emulator_cpu_pct": c_me,
        }
    finally:
        ctl.stop()
        await server.stop(None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--transport", choices=["h2", "threads", "aio"], default="h2")
    args = ap.parse_args()
    for _ in range(args.repeat):
        print(json.dumps(asyncio.run(run(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
