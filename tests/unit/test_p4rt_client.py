"""The P4Runtime client and the controller process against an in-process P4Runtime server
written for this test (arbitration, pipeline, Write with per-update errors, packet I/O)."""

from __future__ import annotations

import asyncio
import json
import sys

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc, rpc_status
from google.protobuf import any_pb2

from sdnperf import p4
from sdnperf.controllers.p4rt.client import (
    StreamSwitchConnection,
    SwitchConnection,
    ThreadedSwitchConnection,
    WriteError,
    update,
)
from sdnperf.controllers.p4rt.schema import Schema


class FakeSwitch(p4r_grpc.P4RuntimeServicer):
    def __init__(self):
        self.pipeline = None
        self.entries = {}
        self.writes = []
        self.packet_outs = []
        self.streams = []

    async def SetForwardingPipelineConfig(self, request, context):
        self.pipeline = request.config
        return p4r.SetForwardingPipelineConfigResponse()

    async def Write(self, request, context):
        self.writes.append(len(request.updates))
        errors, failed = [], False
        for u in request.updates:
            key = (
                u.entity.SerializeToString()
                if u.entity.WhichOneof("entity") != "table_entry"
                else bytes(u.entity.table_entry.table_id.to_bytes(4, "big"))
                + b"".join(m.SerializeToString() for m in u.entity.table_entry.match)
            )
            if u.type == p4r.Update.INSERT and key in self.entries:
                errors.append(p4r.Error(canonical_code=6, message="entry exists"))
                failed = True
                continue
            self.entries[key] = u
            errors.append(p4r.Error(canonical_code=0))
        if failed:
            status = rpc_status.Status(code=2, message="batch failed")
            for e in errors:
                a = any_pb2.Any()
                a.Pack(e)
                status.details.append(a)
            await context.abort(
                grpc.StatusCode.UNKNOWN,
                "batch failed",
                trailing_metadata=(("grpc-status-details-bin", status.SerializeToString()),),
            )
        return p4r.WriteResponse()

    async def Read(self, request, context):
        """The written entities of each queried kind, over two responses; meter 99 is
        unknown (a refused Read)."""
        found = []
        for q in request.entities:
            kind = q.WhichOneof("entity")
            if kind == "meter_entry" and q.meter_entry.meter_id == 99:
                await context.abort(grpc.StatusCode.NOT_FOUND, "unknown meter id 99")
            found += [
                u.entity for u in self.entries.values() if u.entity.WhichOneof("entity") == kind
            ]
        yield p4r.ReadResponse(entities=found[:1])
        yield p4r.ReadResponse(entities=found[1:])

    async def StreamChannel(self, request_iterator, context):
        queue: asyncio.Queue = asyncio.Queue()
        self.streams.append(queue)

        async def reader():
            async for req in request_iterator:
                which = req.WhichOneof("update")
                if which == "arbitration" and req.arbitration.device_id != 1:
                    await queue.put(f"unknown device id {req.arbitration.device_id}")
                elif which == "arbitration":
                    resp = p4r.StreamMessageResponse(
                        arbitration=p4r.MasterArbitrationUpdate(
                            device_id=req.arbitration.device_id,
                            election_id=req.arbitration.election_id,
                        )
                    )
                    await queue.put(resp)
                elif which == "packet":
                    self.packet_outs.append(req.packet)
            await queue.put(None)

        task = asyncio.ensure_future(reader())
        try:
            while True:
                msg = await queue.get()
                if msg is None:
                    return
                if isinstance(msg, str):
                    await context.abort(grpc.StatusCode.NOT_FOUND, msg)
                yield msg
        finally:
            task.cancel()

    async def send_packet_in(self, payload: bytes, port: int):
        msg = p4r.StreamMessageResponse(
            packet=p4r.PacketIn(
                payload=payload, metadata=[p4r.PacketMetadata(metadata_id=1, value=bytes([port]))]
            )
        )
        for q in self.streams:
            await q.put(msg)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    import os

    os.environ.setdefault("SDNPERF_P4_CACHE", str(tmp_path_factory.mktemp("p4cache")))
    try:
        return p4.compiled("l2l3")
    except p4.P4ProgramError as exc:
        pytest.skip(str(exc))


async def _serve(fake):
    server = grpc.aio.server()
    p4r_grpc.add_P4RuntimeServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


@pytest.mark.parametrize(
    "cls", [SwitchConnection, ThreadedSwitchConnection, StreamSwitchConnection]
)
def test_connect_pipeline_write_batches_and_errors(program, cls, caplog):
    schema = Schema.from_file(program.p4info)

    async def main():
        fake = FakeSwitch()
        server, port = await _serve(fake)
        got = []
        conn = cls("s1", f"127.0.0.1:{port}", 1, on_packet_in=lambda c, pkt: got.append(pkt))
        try:
            await conn.connect(timeout=5)
            await conn.set_pipeline(schema.p4info, program.json.read_bytes(), cookie=7)
            assert fake.pipeline.cookie.cookie == 7
            entries = [
                update("INSERT", schema.table_entry("dmac", {"eth_dst": i}, "forward", {"port": 1}))
                for i in range(1, 2501)
            ]
            futs = [conn.submit([e]) for e in entries]  # submitted at once: batched
            await asyncio.gather(*futs)
            assert sum(fake.writes) == 2500 and len(fake.writes) <= 4
            with pytest.raises(WriteError, match="ALREADY_EXISTS"):
                await conn.write([entries[5]])
            conn.submit_nowait([entries[6]])  # nobody waits: the failure is logged
            for _ in range(100):
                if conn.write_errors >= 2:
                    break
                await asyncio.sleep(0.02)
            assert (
                "1 queued write(s) failed so far" in caplog.text and "ALREADY_EXISTS" in caplog.text
            )
            await conn.packet_out(schema.packet_out(b"\x01" * 60, egress_port=3))
            await fake.send_packet_in(b"\x02" * 60, 4)
            for _ in range(50):
                if got and fake.packet_outs:
                    break
                await asyncio.sleep(0.02)
            assert got[0].payload == b"\x02" * 60
            assert fake.packet_outs[0].metadata[0].value == b"\x03"
        finally:
            await conn.close()
            await server.stop(None)

    asyncio.run(main())


@pytest.mark.parametrize(
    "cls", [SwitchConnection, ThreadedSwitchConnection, StreamSwitchConnection]
)
def test_read_gathers_every_response_and_names_a_refusal(program, cls):
    from sdnperf.controllers.p4rt.client import P4RuntimeError
    from sdnperf.controllers.p4rt.schema import clone_session

    schema = Schema.from_file(program.p4info)

    async def main():
        fake = FakeSwitch()
        server, port = await _serve(fake)
        conn = cls("s1", f"127.0.0.1:{port}", 1)
        try:
            await conn.connect(timeout=5)
            entries = [
                schema.table_entry("dmac", {"eth_dst": i}, "forward", {"port": i}) for i in (1, 2)
            ]
            session = clone_session(5, [3])
            await conn.write([update("INSERT", e) for e in (*entries, session)])
            got = await conn.read([p4r.TableEntry(table_id=schema.table("dmac").id)])
            assert [e.table_entry for e in got] == entries
            assert await conn.read([clone_session(5, [])]) == [session]
            with pytest.raises(P4RuntimeError, match="s1: Read failed: NOT_FOUND: unknown meter"):
                await conn.read([p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=99))])
        finally:
            await conn.close()
            await server.stop(None)

    asyncio.run(main())


def test_stream_refused_names_the_grpc_status(program):
    """A stream the server ends at once (wrong device id): the error carries its status."""
    from sdnperf.controllers.p4rt.client import P4RuntimeError

    async def main():
        server, port = await _serve(FakeSwitch())
        conn = StreamSwitchConnection("s7", f"127.0.0.1:{port}", 7)
        try:
            with pytest.raises(P4RuntimeError, match=r"NOT_FOUND \(5\): unknown device id 7"):
                await conn.connect(timeout=3)
        finally:
            await conn.close()
            await server.stop(None)

    asyncio.run(main())


@pytest.mark.parametrize("transport", ["h2", "threads", "aio"])
def test_controller_process_l2_learning(program, tmp_path, transport):
    """The real controller process against the fake switch: pipeline, groups, state file,
    a packet-in answered by a packet-out and an entry, on each stream transport."""
    import subprocess

    async def main():
        fake = FakeSwitch()
        server, port = await _serve(fake)
        state = tmp_path / "state.json"
        cfg = {
            "app": "l2-learning",
            "p4info": str(program.p4info),
            "transport": transport,
            "device_config": str(program.json),
            "state_file": str(state),
            "switches": [
                {"name": "s1", "device_id": 1, "address": f"127.0.0.1:{port}", "ports": [1, 2, 3]}
            ],
        }
        (tmp_path / "c.json").write_text(json.dumps(cfg))
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sdnperf.controllers.p4rt",
            "--config",
            str(tmp_path / "c.json"),
            stderr=subprocess.PIPE,
        )
        try:
            for _ in range(200):
                if state.exists() and json.loads(state.read_text()).get("ready"):
                    break
                await asyncio.sleep(0.05)
            doc = json.loads(state.read_text())
            assert doc["switches"] == [1] and doc["ready"]
            assert fake.pipeline is not None and len(fake.entries) == 3  # 3 flood groups
            h1, h2 = bytes.fromhex("000000000001"), bytes.fromhex("000000000002")
            await fake.send_packet_in(b"\xff" * 6 + h1 + b"\x08\x06" + b"\x00" * 46, 1)
            await fake.send_packet_in(h1 + h2 + b"\x08\x06" + b"\x00" * 46, 2)
            for _ in range(100):
                if len(fake.packet_outs) >= 2 and len(fake.entries) >= 4:
                    break
                await asyncio.sleep(0.05)
            assert len(fake.packet_outs) == 2 and len(fake.entries) == 4
            await asyncio.sleep(0.3)
            doc = json.loads(state.read_text())
            assert doc["packet_ins"] == 2 and doc["flow_mods"] == 1
        finally:
            proc.terminate()
            _, err = await asyncio.wait_for(proc.communicate(), 10)
            await server.stop(None)
        assert proc.returncode == 0, err.decode()

    asyncio.run(main())


def test_unknown_transport_is_named(program, tmp_path, capsys):
    from sdnperf.controllers.p4rt.controller import main

    cfg = {
        "app": "l2-learning",
        "p4info": str(program.p4info),
        "transport": "carrier-pigeon",
        "device_config": str(program.json),
        "switches": [{"name": "s1", "device_id": 1, "address": "127.0.0.1:1", "ports": [1]}],
    }
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    assert main(["--config", str(tmp_path / "c.json")]) == 2
    assert "transport: 'carrier-pigeon' is not one of h2, threads, aio" in capsys.readouterr().err


def test_h2_transport_wants_host_and_port():
    from sdnperf.controllers.p4rt.client import P4RuntimeError

    async def main():
        conn = StreamSwitchConnection("s1", "unix:/tmp/p4rt.sock", 1)
        with pytest.raises(
            P4RuntimeError, match="needs a HOST:PORT address, got 'unix:/tmp/p4rt.sock'"
        ):
            await conn.connect(timeout=1)

    asyncio.run(main())
