"""Where our P4Runtime controller spends its time per packet-in, in five stages: receive
(HTTP/2 framing of the bytes read from the socket), decode (protobuf parse of the stream
message), app (the application's packet_in_sync, without the two below), encode (the
packet-out in wire form) and send (queueing it on the stream and writing to the socket).

Cheap on purpose: a few perf_counter_ns calls and integer additions per packet-in, on the
h2 transport's packet-in path (the one ctlbench exercises). The totals go into the
controller's state file ("stages"), so a benchmark can tell which stage bounds the rate —
the bottleneck analysis seed paper 002 did for ONOS.
"""

from __future__ import annotations

import time

now = time.perf_counter_ns
STAGES = ("receive", "decode", "app", "encode", "send")
RECEIVE, DECODE, APP, ENCODE, SEND = range(len(STAGES))


class StageClock:
    def __init__(self):
        self.ns = [0] * len(STAGES)
        self.packets = 0  # packet-ins timed
        self.callback_ns = 0  # time inside message callbacks (kept out of "receive")
        self.flush_ns = 0  # socket writes (part of "send", kept out of "receive")

    def snapshot(self) -> dict:
        """{"packets": n, "total_ms": {stage: ms}, "mean_us": {stage: µs per packet-in}}."""
        n = self.packets
        return {
            "packets": n,
            "total_ms": {s: round(self.ns[i] / 1e6, 3) for i, s in enumerate(STAGES)},
            "mean_us": {
                s: (round(self.ns[i] / n / 1e3, 3) if n else None) for i, s in enumerate(STAGES)
            },
        }


CLOCK = StageClock()  # one controller per process
