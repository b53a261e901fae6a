"""sdnperf-switch-grpc's P4Runtime service over 127.0.0.1, without data-plane ports (no root
needed): pipeline config actions and response types, Capabilities, Read wildcards,
arbitration rules, and per-update errors. Clients: finsy's generated stubs and finsy itself.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("finsy")

from finsy.proto import p4i, p4r  # noqa: E402
from finsy.proto.google.rpc import status_pb2  # noqa: E402
from finsy.proto.p4.v1 import p4runtime_pb2_grpc  # noqa: E402
from google.protobuf import text_format  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "rust/p4c/tests/corpus/packet_io.p4"


def _tool(name: str) -> Path:
    from sdnperf import tools

    try:
        return Path(tools.find(name))
    except tools.ToolNotFound as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("p4rt")
    subprocess.run(
        [str(_tool("sdnperf-p4c")), str(PROGRAM), "-o", str(out)], check=True, capture_output=True
    )
    info = text_format.Parse((out / "packet_io.p4info.txtpb").read_text(), p4i.P4Info())
    return info, (out / "packet_io.json").read_bytes(), out


@pytest.fixture
def server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(
        [str(_tool("sdnperf-switch-grpc")), "--grpc-port", str(port), "--device-id", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "READY", p.stderr.read()
        yield f"127.0.0.1:{port}"
    finally:
        p.terminate()
        p.wait(10)
    assert p.returncode == 0


class Client:
    def __init__(self, addr, election, device_id=3):
        import queue

        self.device_id = device_id
        self.election = election
        self.channel = grpc.insecure_channel(addr)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.q = queue.Queue()
        self.responses = self.stub.StreamChannel(iter(self.q.get, None))
        self.q.put(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=device_id, election_id=p4r.Uint128(high=0, low=election)
                )
            )
        )

    def next(self):
        return next(self.responses)

    def close(self):
        self.q.put(None)
        self.channel.close()

    def set(self, action, info=None, blob=b"", cookie=None):
        cfg = p4r.ForwardingPipelineConfig(p4_device_config=blob)
        if info is not None:
            cfg.p4info.CopyFrom(info)
        if cookie is not None:
            cfg.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(
            p4r.SetForwardingPipelineConfigRequest(
                device_id=self.device_id,
                election_id=p4r.Uint128(high=0, low=self.election),
                action=action,
                config=cfg,
            )
        )

    def get(self, rt):
        return self.stub.GetForwardingPipelineConfig(
            p4r.GetForwardingPipelineConfigRequest(device_id=self.device_id, response_type=rt)
        ).config

    def write(self, *updates):
        return self.stub.Write(
            p4r.WriteRequest(
                device_id=self.device_id,
                election_id=p4r.Uint128(high=0, low=self.election),
                updates=list(updates),
            )
        )

    def read(self, *entities):
        out = []
        for r in self.stub.Read(p4r.ReadRequest(device_id=self.device_id, entities=list(entities))):
            out.extend(r.entities)
        return out


def _entry(info, mac: int, port: int):
    t = next(x for x in info.tables if x.preamble.name == "MyIngress.l2")
    a = next(x for x in info.actions if x.preamble.name == "MyIngress.forward")
    return p4r.TableEntry(
        table_id=t.preamble.id,
        match=[
            p4r.FieldMatch(
                field_id=1,
                exact=p4r.FieldMatch.Exact(value=mac.to_bytes(6, "big").lstrip(b"\0") or b"\0"),
            )
        ],
        action=p4r.TableAction(
            action=p4r.Action(
                action_id=a.preamble.id, params=[p4r.Action.Param(param_id=1, value=bytes([port]))]
            )
        ),
    )


def test_pipeline_actions_and_get_response_types(server, compiled):
    info, blob, _ = compiled
    c = Client(server, 1)
    assert c.next().arbitration.status.code == 0
    cap = c.stub.Capabilities(p4r.CapabilitiesRequest())
    assert cap.p4runtime_api_version.startswith("1.")
    # nothing loaded yet: an empty config; writes fail with FAILED_PRECONDITION
    assert not c.get(p4r.GetForwardingPipelineConfigRequest.ALL).HasField("p4info")
    with pytest.raises(grpc.RpcError) as ei:
        c.write(
            p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, 5, 1)))
        )
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    S = p4r.SetForwardingPipelineConfigRequest
    with pytest.raises(grpc.RpcError) as ei:
        c.set(S.VERIFY, info, b"{not json")
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as ei:
        c.set(S.COMMIT)
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.set(S.VERIFY, info, blob)
    c.set(S.VERIFY_AND_SAVE, info, blob, cookie=77)
    assert not c.get(p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY).HasField("cookie")
    c.set(S.COMMIT)
    G = p4r.GetForwardingPipelineConfigRequest
    assert c.get(G.COOKIE_ONLY).cookie.cookie == 77
    allc = c.get(G.ALL)
    assert allc.p4info == info and allc.p4_device_config == blob
    assert c.get(G.P4INFO_AND_COOKIE).p4_device_config == b""
    dc = c.get(G.DEVICE_CONFIG_AND_COOKIE)
    assert dc.p4_device_config == blob and not dc.HasField("p4info")
    # reconcile keeps entries, verify-and-commit starts empty
    c.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, 5, 1))))
    c.set(S.RECONCILE_AND_COMMIT, info, blob, cookie=78)
    assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1
    c.set(S.VERIFY_AND_COMMIT, info, blob, cookie=79)
    assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 0
    c.close()


def test_read_wildcards_and_batch_errors(server, compiled):
    info, blob, _ = compiled
    c = Client(server, 1)
    c.next()
    c.set(p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT, info, blob)
    ups = [
        p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, m, 1)))
        for m in range(1, 1001)
    ]
    c.write(*ups)
    assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1000  # all tables
    t = info.tables[0].preamble.id
    one = c.read(p4r.Entity(table_entry=_entry(info, 7, 0)))
    assert len(one) == 1 and one[0].table_entry.action.action.params[0].value == b"\x01"
    # one good, one duplicate, one delete of a missing entry: UNKNOWN + per-update statuses
    with pytest.raises(grpc.RpcError) as ei:
        c.write(
            p4r.Update(
                type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, 1000 + 999, 1))
            ),
            p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, 5, 1))),
            p4r.Update(
                type=p4r.Update.DELETE, entity=p4r.Entity(table_entry=_entry(info, 8888, 1))
            ),
        )
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    st = status_pb2.Status()
    for k, v in ei.value.trailing_metadata():
        if k == "grpc-status-details-bin":
            st.ParseFromString(v)
    codes = []
    for d in st.details:
        e = p4r.Error()
        d.Unpack(e)
        codes.append(e.canonical_code)
    assert codes == [0, grpc.StatusCode.ALREADY_EXISTS.value[0], grpc.StatusCode.NOT_FOUND.value[0]]
    assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=t)))) == 1001
    # a batch too large for per-update details in gRPC metadata still names its first failure
    big = [
        p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_entry(info, m, 1)))
        for m in range(1, 1001)
    ]
    with pytest.raises(grpc.RpcError) as ei:
        c.write(*big)
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    assert "1000 of 1000 updates failed; first: update 0" in ei.value.details()
    # wrong device id
    with pytest.raises(grpc.RpcError) as ei:
        c.stub.Read(
            p4r.ReadRequest(device_id=99, entities=[p4r.Entity(table_entry=p4r.TableEntry())])
        ).next()
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    c.close()


def test_arbitration_rules(server, compiled):
    info, blob, _ = compiled
    a = Client(server, 5)
    assert a.next().arbitration.status.code == 0
    # a second controller with the same election id is refused
    dup = Client(server, 5)
    with pytest.raises(grpc.RpcError) as ei:
        dup.next()
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    dup.close()
    # a higher one takes over; the old primary is told
    b = Client(server, 9)
    assert b.next().arbitration.status.code == 0
    upd = a.next().arbitration
    assert upd.status.code == grpc.StatusCode.ALREADY_EXISTS.value[0] and upd.election_id.low == 9
    with pytest.raises(grpc.RpcError) as ei:
        a.set(p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT, info, blob)
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    b.set(p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT, info, blob)
    # reads are open to backups
    assert a.read(p4r.Entity(table_entry=p4r.TableEntry())) == []
    # wrong device id in arbitration ends the stream with NOT_FOUND
    w = Client(server, 1, device_id=4)
    with pytest.raises(grpc.RpcError) as ei:
        w.next()
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    w.close()
    a.close()
    b.close()


def test_finsy_controller_connects_and_writes(server, compiled):
    import finsy

    info, blob, out = compiled

    async def main():
        opts = finsy.SwitchOptions(
            p4info=out / "packet_io.p4info.txtpb", p4blob=out / "packet_io.json", device_id=3
        )
        async with finsy.Switch("s", server, opts) as sw:
            for _ in range(50):
                if sw.is_primary:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # finsy pushes the pipeline in its ready task
            await sw.insert(
                [
                    finsy.P4TableEntry(
                        "l2",
                        match=finsy.P4TableMatch(dst_mac=0x0A),
                        action=finsy.P4TableAction("forward", port=3),
                    )
                ]
            )
            got = [e async for e in sw.read(finsy.P4TableEntry("l2"))]
            await sw.delete_all()
            left = [e async for e in sw.read(finsy.P4TableEntry("l2"))]
            return got, left

    got, left = asyncio.run(asyncio.wait_for(main(), 30))
    assert len(got) == 1 and not left


def test_idle_timeout_notification_reaches_the_primary(server, tmp_path):
    subprocess.run(
        [
            str(_tool("sdnperf-p4c")),
            str(REPO / "rust/p4rt/tests/programs/features.p4"),
            "-o",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    info = text_format.Parse((tmp_path / "features.p4info.txtpb").read_text(), p4i.P4Info())
    blob = (tmp_path / "features.json").read_bytes()
    c = Client(server, 1)
    c.next()
    c.set(p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT, info, blob)
    t = next(x for x in info.tables if x.preamble.name == "MyIngress.ipv4_lpm")
    a = next(x for x in info.actions if x.preamble.name == "MyIngress.route")
    d = next(x for x in info.digests)
    entry = p4r.TableEntry(
        table_id=t.preamble.id,
        idle_timeout_ns=50_000_000,
        match=[
            p4r.FieldMatch(
                field_id=1, lpm=p4r.FieldMatch.LPM(value=bytes([10, 0, 0, 0]), prefix_len=8)
            )
        ],
        action=p4r.TableAction(
            action=p4r.Action(
                action_id=a.preamble.id,
                params=[
                    p4r.Action.Param(param_id=1, value=b"\x01"),
                    p4r.Action.Param(param_id=2, value=b"\x01"),
                ],
            )
        ),
    )
    c.write(
        p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=entry)),
        p4r.Update(
            type=p4r.Update.INSERT,
            entity=p4r.Entity(
                digest_entry=p4r.DigestEntry(
                    digest_id=d.preamble.id, config=p4r.DigestEntry.Config(max_list_size=10)
                )
            ),
        ),
    )
    msg = c.next()
    assert msg.HasField("idle_timeout_notification"), msg
    assert msg.idle_timeout_notification.table_entry[0].match == entry.match
    got = c.read(p4r.Entity(digest_entry=p4r.DigestEntry()))
    assert [e.digest_entry.config.max_list_size for e in got] == [10]
    c.close()
