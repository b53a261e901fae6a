"""Pieces both of our os-ken apps share: flow writes, packet-outs, and the state file.

The state file (path in $SDNPERF_CONTROLLER_STATE) is how the lab knows the controller is
ready: it lists the datapaths that finished their handshake, those whose table-miss entry
the switch confirmed (a barrier reply), and the links discovered, and counts packet-ins
and flow writes so runs can report control-plane load.
"""

from __future__ import annotations

import json
import os
import time

from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_3

IDLE_TIMEOUT = int(os.environ.get("SDNPERF_IDLE_TIMEOUT", "30"))
FLOW_PRIORITY = 10


class StateFile:
    """Writes controller state to a JSON file, at most every 0.2 s."""

    def __init__(self):
        self.path = os.environ.get("SDNPERF_CONTROLLER_STATE")
        self.switches: set[int] = set()
        self.programmed: set[int] = set()  # datapaths whose table-miss entry is in
        self._barriers: dict[int, int] = {}  # datapath -> xid of its table-miss barrier
        self.links: set[tuple[int, int, int, int]] = set()
        self.packet_ins = 0
        self.flow_mods = 0
        self._last_write = 0.0
        self._flusher = None

    def touch(self, force: bool = False) -> None:
        """Note a change: written now when forced or 0.2 s passed, else by the flusher."""
        path = self.path
        if not path:
            return
        if self._flusher is None:
            self._flusher = hub.spawn(self._flush_loop, path)
        now = time.monotonic()
        if force or now - self._last_write >= 0.2:
            self._write(path, now)

    def _flush_loop(self, path: str) -> None:
        # Written even when unchanged: the file's "time" tells the lab it is current.
        while True:
            hub.sleep(0.2)
            self._write(path, time.monotonic())

    def _write(self, path: str, now: float) -> None:
        self._last_write = now
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(
                {
                    "switches": sorted(self.switches),
                    "programmed": sorted(self.programmed),
                    "links": len(self.links),
                    "packet_ins": self.packet_ins,
                    "flow_mods": self.flow_mods,
                    "time": time.time(),
                },
                fh,
            )
        os.replace(tmp, path)  # atomic: the lab never reads half a file

    def table_miss_sent(self, datapath) -> None:
        """install_table_miss() sent the entry: a barrier follows it, and its reply
        (barrier_replied) says the switch has it in (a switch answers a barrier only
        after every message sent before it), so the lab waits for no fixed time."""
        barrier = datapath.ofproto_parser.OFPBarrierRequest(datapath)
        datapath.set_xid(barrier)
        self._barriers[datapath.id] = barrier.xid
        datapath.send_msg(barrier)

    def barrier_replied(self, msg) -> None:
        """A barrier reply (the apps' EventOFPBarrierReply handler): the table-miss entry
        of its datapath is in when it answers our barrier."""
        dpid = msg.datapath.id
        if self._barriers.get(dpid) == msg.xid:
            del self._barriers[dpid]
            self.programmed.add(dpid)
            self.touch(force=True)


def install_table_miss(datapath, state: StateFile | None = None) -> None:
    """Send every unmatched packet to the controller, whole (no switch buffering); with
    `state`, a barrier after it whose reply marks the datapath programmed there."""
    parser, ofp = datapath.ofproto_parser, datapath.ofproto
    actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
    add_flow(datapath, 0, parser.OFPMatch(), actions, idle_timeout=0)
    if state is not None:
        state.table_miss_sent(datapath)


def add_flow(datapath, priority, match, actions, idle_timeout=IDLE_TIMEOUT, buffer_id=None) -> None:
    parser, ofp = datapath.ofproto_parser, datapath.ofproto
    instructions = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
    kwargs = {}
    if buffer_id is not None and buffer_id != ofp.OFP_NO_BUFFER:
        kwargs["buffer_id"] = buffer_id
    datapath.send_msg(
        parser.OFPFlowMod(
            datapath=datapath,
            priority=priority,
            match=match,
            instructions=instructions,
            idle_timeout=idle_timeout,
            **kwargs,
        )
    )


def packet_out(datapath, in_port, actions, msg=None, data=None) -> None:
    """Send a packet back out: by buffer id when the switch buffered it, else with its bytes."""
    parser, ofp = datapath.ofproto_parser, datapath.ofproto
    buffer_id = msg.buffer_id if msg is not None else ofp.OFP_NO_BUFFER
    payload = None
    if buffer_id == ofp.OFP_NO_BUFFER:
        payload = data if data is not None else msg.data
    datapath.send_msg(
        parser.OFPPacketOut(
            datapath=datapath, buffer_id=buffer_id, in_port=in_port, actions=actions, data=payload
        )
    )


OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
