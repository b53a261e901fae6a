"""sdnperf's P4Runtime controller: one process, one gRPC connection per switch.

    python -m sdnperf.controllers.p4rt --config controller.json [--wait-for-config]

(--wait-for-config: started before the file is written, it reads it once a line arrives on
stdin; the lab's `p4` architecture starts it so while Mininet builds the network.)

controller.json (written by the lab, sdnperf/arch/p4.py):
    {"app": "l2-learning" | "topo-forwarding" | "proactive" | "runtime-json",
     "p4info": "l2l3.p4info.txtpb", "device_config": "l2l3.json",   # not for runtime-json
     "runtime_dir": "dir with sN-runtime.json",                      # runtime-json only
     "state_file": "controller-state.json", "status_port": 40123,
     "election_id": 1, "probe_interval": 1.0,
     "params": [{"table": ..., "action": ..., ...}],   # the program's run-time params (params.py)
     "transport": "h2" | "threads" | "aio",     # how the stream is carried (TRANSPORTS below)
     "switches": [{"name": "s1", "device_id": 1, "address": "127.0.0.1:50001",
                   "ports": [1, 2, 3]}],
     "links": [{"a": "s1", "a_port": 2, "b": "s2", "b_port": 1}],   # proactive only
     "hosts": [{"mac": "00:00:00:00:00:01", "switch": "s1", "port": 1}]}

It connects to every switch, becomes primary, pushes the pipeline, lets the app write its
entries, then answers packet-ins. The state file (same as our os-ken apps': switches,
links, packet_ins, flow_mods, time; plus `ready`) is rewritten every 0.2 s; the lab polls
it. `status_port` (127.0.0.1) is opened at start-up so the lab sees the process is up;
a connection to it gets the state JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

from sdnperf.controllers.p4rt import apps as apps_mod
from sdnperf.controllers.p4rt import runtime_json, stages
from sdnperf.controllers.p4rt.client import (
    StreamSwitchConnection,
    SwitchConnection,
    ThreadedSwitchConnection,
)
from sdnperf.controllers.p4rt.params import param_updates
from sdnperf.controllers.p4rt.schema import Schema
from sdnperf.controllers.p4rt.topology import Topology
from sdnperf.p4 import compile_file

log = logging.getLogger("sdnperf.p4rt")
# "transport" in the config: how the stream is carried (unary RPCs are grpcio in all three)
TRANSPORTS = {
    "h2": StreamSwitchConnection,  # own HTTP/2 framing, event-loop thread
    "threads": ThreadedSwitchConnection,  # grpcio sync API + a reader thread
    "aio": SwitchConnection,
}  # grpc.aio


class StateFile:
    """The JSON state our os-ken apps write too; atomically replaced, at most every 0.2 s."""

    def __init__(self, path: str | None):
        self.path = path
        self.switches: set[int] = set()
        self.links: set[tuple] = set()
        self.packet_ins = 0
        self.flow_mods = 0
        self.ready = False
        self.error: str | None = None
        self.lock = threading.Lock()
        self._last = 0.0

    def snapshot(self) -> dict:
        return {
            "switches": sorted(self.switches),
            "links": len(self.links),
            "packet_ins": self.packet_ins,
            "flow_mods": self.flow_mods,
            "ready": self.ready,
            "error": self.error,
            "time": time.time(),
            "stages": stages.CLOCK.snapshot(),
        }  # per packet-in stage times (stages.py)

    def touch(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= 0.2:
            self.write()

    def write(self) -> None:
        self._last = time.monotonic()
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.snapshot(), fh)
        os.replace(tmp, self.path)


class Controller(apps_mod.Fabric):
    def __init__(self, config: dict):
        self.config = config
        if config.get("transport", "h2") not in TRANSPORTS:
            raise ValueError(
                f"transport: {config['transport']!r} is not one of {', '.join(TRANSPORTS)}"
            )
        self.state: StateFile = StateFile(config.get("state_file"))
        names = {}
        self.topology = Topology()
        for sw in config["switches"]:
            dev = int(sw["device_id"])
            names[sw["name"]] = dev
            self.topology.ports[dev] = sorted(int(p) for p in sw.get("ports", []))
        for link in config.get("links", []):
            self.topology.links.append(
                (names[link["a"]], int(link["a_port"]), names[link["b"]], int(link["b_port"]))
            )
        for h in config.get("hosts", []):
            self.topology.hosts.append((h["mac"], names[h["switch"]], int(h["port"])))
        self.names = names
        self.conns: dict[int, SwitchConnection] = {}
        self.pipelines: dict[int, tuple[Schema, object, bytes]] = {}
        app = config.get("app", "l2-learning")
        if app == "runtime-json":
            self._load_runtime_files()
            self.schema = next(iter(self.pipelines.values()))[0] if self.pipelines else None
        else:
            self.schema = Schema.from_file(config["p4info"])
            device_config = Path(config["device_config"]).read_bytes()
            for dev in self.topology.ports:
                self.pipelines[dev] = (self.schema, self.schema.p4info, device_config)
        self._decoders = {dev: s.packet_in_decoder() for dev, (s, _, _) in self.pipelines.items()}
        # the fast path reads only this field of a packet-in's metadata
        self._ingress_ids = {
            dev: s.packet_metadata.get("packet_in", {}).get("ingress_port", (None,))[0]
            for dev, (s, _, _) in self.pipelines.items()
        }
        self._packet_out_ids = {}
        for dev, (s, _, _) in self.pipelines.items():
            fields = s.packet_metadata.get("packet_out", {})
            self._packet_out_ids[dev] = fields
        self.app = self._make_app(app)
        # checked here, before any switch is touched
        self.param_updates = {
            dev: param_updates(s, config.get("params", []))
            for dev, (s, _, _) in self.pipelines.items()
        }

    def _load_runtime_files(self) -> None:

        files = runtime_json.files_for(self.config["runtime_dir"], list(self.names))
        self.runtime_files = {}
        for name, path in files.items():
            rf = runtime_json.load(path)
            p4info, device_json = rf.p4info, rf.bmv2_json
            if device_json is not None and device_json.suffix == ".p4":
                prog = compile_file(device_json)
                device_json, p4info = prog.json, p4info or prog.p4info
            if p4info is None or device_json is None:
                if not self.config.get("p4info"):
                    raise runtime_json.RuntimeFileError(f"{path.name}: needs p4info and bmv2_json")
                p4info = p4info or Path(self.config["p4info"])
                device_json = device_json or Path(self.config["device_config"])
            schema = Schema.from_file(p4info)
            dev = self.names[name]
            self.pipelines[dev] = (schema, schema.p4info, Path(device_json).read_bytes())
            rf.build_updates(schema)  # every entry checked before any switch is touched
            self.runtime_files[dev] = (rf, schema)

    def _make_app(self, app: str):
        if app == "l2-learning":
            return apps_mod.L2Learning(self)
        if app == "topo-forwarding":
            return apps_mod.TopoForwarding(self, float(self.config.get("probe_interval", 1.0)))
        if app == "proactive":
            return apps_mod.Proactive(self)
        if app == "runtime-json":
            return apps_mod.RuntimeFiles(self, self.runtime_files)
        raise ValueError(f"unknown app {app!r}")

    # -- Fabric -----------------------------------------------------------------------------
    async def packet_out(self, device: int, payload: bytes, port: int = 0, group: int = 0) -> None:
        from finsy.proto import p4r

        fields = self._packet_out_ids[device]
        msg = p4r.PacketOut(payload=payload)
        if "egress_port" in fields:
            msg.metadata.add(metadata_id=fields["egress_port"][0], value=_enc(port))
        if group and "mcast_grp" in fields:
            msg.metadata.add(metadata_id=fields["mcast_grp"][0], value=_enc(group))
        await self.conns[device].packet_out(msg)

    async def write(self, device: int, updates: list, wait: bool = True) -> None:
        await self.conns[device].write(updates, wait=wait)

    # -- running ----------------------------------------------------------------------------
    def _on_packet_in(self, conn: SwitchConnection, packet):
        meta = self._decoders[conn.device_id](packet)
        return self.app.packet_in(conn.device_id, meta.get("ingress_port", 0), packet.payload)

    def _fast_packet_in(self, conn, packet) -> bool:
        """Per-packet path for apps with packet_in_sync (see client.fast_packet_in): runs on
        the connection's reader (thread or socket callback), nothing awaited."""
        dev = conn.device_id
        mid, port = self._ingress_ids[dev], 0
        for m in packet.metadata:
            if m.metadata_id == mid:
                port = int.from_bytes(m.value, "big")
                break
        self.app.packet_in_sync(dev, port, packet.payload, conn.sync_out)
        return True

    async def _bring_up(self, sw: dict) -> None:
        dev = int(sw["device_id"])
        cls = TRANSPORTS[self.config.get("transport", "h2")]
        conn = cls(
            sw["name"],
            sw["address"],
            dev,
            election_id=int(self.config.get("election_id", 1)),
            on_packet_in=self._on_packet_in,
        )
        self.conns[dev] = conn
        if hasattr(self.app, "packet_in_sync") and cls is not SwitchConnection:
            conn.sync_out = _SyncOut(self, conn)
            conn.fast_packet_in = self._fast_packet_in
        await conn.connect(timeout=float(self.config.get("connect_timeout", 30)))
        _schema, p4info, device_config = self.pipelines[dev]
        await conn.set_pipeline(p4info, device_config, cookie=int(time.time()))
        if self.param_updates[dev]:
            await self.write(dev, self.param_updates[dev])
        await self.app.switch_ready(dev)
        self.state.switches.add(dev)
        self.state.touch(force=True)
        log.info("%s (device %d) ready", sw["name"], dev)

    async def run(self) -> None:
        server = None
        if self.config.get("status_port"):
            server = await asyncio.start_server(
                self._status, "127.0.0.1", int(self.config["status_port"])
            )
        self.state.write()
        flusher = asyncio.get_running_loop().create_task(self._flush_loop())
        try:
            await asyncio.gather(*(self._bring_up(sw) for sw in self.config["switches"]))
            await self.app.start()
            while True:
                if not self.state.ready and self.app.ready():
                    self.state.ready = True
                    self.state.touch(force=True)
                await self.app.tick()
                await asyncio.sleep(0.1)
        except Exception as exc:
            self.state.error = f"{type(exc).__name__}: {exc}"
            self.state.write()
            raise
        finally:
            flusher.cancel()
            for conn in self.conns.values():
                await conn.close()
            if server is not None:
                server.close()

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            self.state.write()  # written even when unchanged: "time" says it is current

    async def _status(self, reader, writer) -> None:
        writer.write(json.dumps(self.state.snapshot()).encode() + b"\n")
        try:
            await writer.drain()
        finally:
            writer.close()


class _SyncOut:
    """packet_out / write for packet_in_sync, queued without waiting (thread-safe), one per
    connection. A packet-out is encoded by hand from cached pieces: the payload field, then
    the metadata serialized once per (port, group) — protobuf's encoding of a message is
    the concatenation of its fields, so this is exactly PacketOut's wire form."""

    def __init__(self, controller: "Controller", conn):
        self.ids, self.conn = controller._packet_out_ids[conn.device_id], conn
        self._meta: dict[tuple[int, int], bytes] = {}
        self._raw = hasattr(conn, "send_serialized")  # else it wants message objects

    def _metadata(self, port: int, group: int) -> bytes:
        from finsy.proto import p4r

        pkt = p4r.PacketOut()
        if "egress_port" in self.ids:
            pkt.metadata.add(metadata_id=self.ids["egress_port"][0], value=_enc(port))
        if group and "mcast_grp" in self.ids:
            pkt.metadata.add(metadata_id=self.ids["mcast_grp"][0], value=_enc(group))
        data = pkt.SerializeToString()
        if len(self._meta) < 4096:  # ports x groups: small; bounded anyway
            self._meta[(port, group)] = data
        return data

    def encode(self, payload: bytes, port: int = 0, group: int = 0) -> bytes:
        """StreamMessageRequest{packet: PacketOut{payload, metadata}} in wire form."""
        t0 = stages.now()
        meta = self._meta.get((port, group)) or self._metadata(port, group)
        n = len(payload)
        inner = _PAYLOAD_TAG + (bytes((n,)) if n < 128 else _varint(n)) + payload + meta
        n = len(inner)
        data = _PACKET_TAG + (bytes((n,)) if n < 128 else _varint(n)) + inner
        stages.CLOCK.ns[stages.ENCODE] += stages.now() - t0
        return data

    def packet_out(self, payload: bytes, port: int = 0, group: int = 0) -> None:
        data = self.encode(payload, port, group)
        if self._raw:
            self.conn.send_serialized(data)
        else:
            from finsy.proto import p4r

            self.conn.send_request(p4r.StreamMessageRequest.FromString(data))

    def write(self, updates: list) -> None:
        self.conn.submit_threadsafe(updates)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(message, field: str) -> bytes:
    """Key byte(s) of a length-delimited field, from the descriptor (not hard-coded)."""
    return _varint(message.DESCRIPTOR.fields_by_name[field].number << 3 | 2)


def _tags():
    from finsy.proto import p4r

    return _tag(p4r.StreamMessageRequest, "packet"), _tag(p4r.PacketOut, "payload")


_PACKET_TAG, _PAYLOAD_TAG = _tags()


def _enc(n: int) -> bytes:
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m sdnperf.controllers.p4rt", description="sdnperf's P4Runtime controller"
    )
    p.add_argument("--config", required=True, help="controller JSON (see module docstring)")
    p.add_argument("--verbose", action="store_true")
    p.add_argument(
        "--wait-for-config",
        action="store_true",
        help="read the config only once a line arrives on stdin (the lab starts the "
        "controller, whose imports take a second, while it builds the network the config "
        "describes); end of input before it: exit",
    )
    args = p.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    if args.wait_for_config and not sys.stdin.readline():
        return 0  # the lab stopped before the network was built: nothing to control
    try:
        config = json.loads(Path(args.config).read_text())
        controller = Controller(config)
    except Exception as exc:
        print(f"p4rt controller: {args.config}: {exc}", file=sys.stderr)
        return 2

    async def runner():
        task = asyncio.current_task()
        assert task is not None  # asyncio.run runs runner() as a task
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            await controller.run()
        except asyncio.CancelledError:
            pass

    try:
        asyncio.run(runner())
    except Exception as exc:
        log.error("controller failed: %s", exc)
        return 1
    return 0
