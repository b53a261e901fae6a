"""The P4Runtime controller without switches: value encoding, runtime files, LLDP probes,
paths, the proactive plan, the apps' decisions (fake fabric) and the state file."""

from __future__ import annotations

import asyncio
import json

import pytest

from sdnperf import p4
from sdnperf.controllers.p4rt import apps, runtime_json
from sdnperf.controllers.p4rt.controller import StateFile
from sdnperf.controllers.p4rt.schema import Schema, SchemaError, encode, to_int
from sdnperf.controllers.p4rt.topology import (
    Topology,
    lldp_probe,
    parse_lldp_probe,
    path_hops,
    proactive_plan,
)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    import os

    os.environ.setdefault("SDNPERF_P4_CACHE", str(tmp_path_factory.mktemp("p4cache")))
    try:
        return Schema.from_file(p4.compiled("l2l3").p4info)
    except p4.P4ProgramError as exc:
        pytest.skip(str(exc))


def test_canonical_encoding():
    assert encode(0, 9) == b"\x00"
    assert encode(255, 9) == b"\xff"
    assert encode(256, 9) == b"\x01\x00"
    assert encode("00:00:00:00:00:01", 48) == b"\x01"
    assert encode("10.0.1.1", 32) == bytes([10, 0, 1, 1])
    assert to_int("0x1f") == 31
    with pytest.raises(SchemaError, match="does not fit in 9 bits"):
        encode(512, 9)
    with pytest.raises(SchemaError, match="cannot read"):
        to_int("nope")


def test_table_entry_by_short_names(schema):
    e = schema.table_entry(
        "flow_pair", {"eth_src": "00:00:00:00:00:01", "eth_dst": 2}, "forward", {"port": 3}
    )
    assert e.table_id == schema.table("L2L3Ingress.flow_pair").id
    assert [m.exact.value for m in e.match] == [b"\x01", b"\x02"]
    assert e.action.action.params[0].value == b"\x03"
    with pytest.raises(SchemaError, match="not an action of table"):
        schema.table_entry(
            "flood_table", {"in_port": 1}, "route", {"src_mac": 1, "dst_mac": 2, "port": 3}
        )
    with pytest.raises(SchemaError, match="missing parameter"):
        schema.table_entry("dmac", {"eth_dst": 1}, "forward", {})


def test_lpm_is_canonical(schema):
    e = schema.table_entry("ipv4_lpm", {"dst_addr": ["10.0.1.77", 24]}, "drop")
    assert e.match[0].lpm.value == bytes([10, 0, 1, 0]) and e.match[0].lpm.prefix_len == 24
    assert not schema.table_entry("ipv4_lpm", {"dst_addr": "0.0.0.0/0"}, "drop").match


METER_P4INFO = """
meters { preamble { id: 352321537 name: "MyIngress.port_policer" } spec { unit: PACKETS } size: 8 }
"""


def test_meter_entry_by_name_sets_resets_and_reads():
    schema = Schema.from_text(METER_P4INFO)
    config = {"cir": 1, "cburst": 2, "pir": 3, "pburst": 4}
    entry = schema.meter_entry("port_policer", 7, config).meter_entry
    assert (entry.meter_id, entry.index.index) == (352321537, 7)
    assert (entry.config.cir, entry.config.cburst, entry.config.pir, entry.config.pburst) == (
        1,
        2,
        3,
        4,
    )
    # without a config: the reset (or the Read) of the cell; without an index, of them all
    assert not schema.meter_entry("MyIngress.port_policer", 0).meter_entry.HasField("config")
    assert not schema.meter_entry("port_policer", None).meter_entry.HasField("index")
    with pytest.raises(SchemaError, match=r"index 8 outside 0\.\.7"):
        schema.meter_entry("port_policer", 8)
    with pytest.raises(SchemaError, match=r"unknown config field\(s\) \['rate'\]"):
        schema.meter_entry("port_policer", 0, {"rate": 5})
    with pytest.raises(SchemaError, match="no meter named 'policer'"):
        schema.meter_entry("policer", 0)


def _write_runtime(tmp_path, doc, name="s1-runtime.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_runtime_file_loads_and_builds(schema, tmp_path):
    prog = p4.compiled("l2l3")
    path = _write_runtime(
        tmp_path,
        {
            "target": "bmv2",
            "p4info": str(prog.p4info),
            "bmv2_json": str(prog.json),
            "table_entries": [
                {
                    "table": "L2L3Ingress.dmac",
                    "default_action": True,
                    "action_name": "L2L3Ingress.drop",
                    "action_params": {},
                },
                {
                    "table": "L2L3Ingress.dmac",
                    "match": {"eth_dst": "00:00:00:00:00:02"},
                    "action_name": "L2L3Ingress.forward",
                    "action_params": {"port": 2},
                },
                {
                    "table": "L2L3Ingress.ipv4_lpm",
                    "match": {"dst_addr": ["10.0.2.0", 24]},
                    "action_name": "L2L3Ingress.route",
                    "action_params": {
                        "src_mac": "00:00:00:00:01:00",
                        "dst_mac": "00:00:00:00:02:00",
                        "port": 3,
                    },
                },
            ],
            "multicast_group_entries": [
                {
                    "multicast_group_id": 1,
                    "replicas": [
                        {"egress_port": 1, "instance": 1},
                        {"egress_port": 2, "instance": 1},
                    ],
                }
            ],
            "clone_session_entries": [
                {"clone_session_id": 100, "replicas": [{"egress_port": 3, "instance": 1}]}
            ],
        },
    )
    rf = runtime_json.load(path)
    assert rf.p4info == prog.p4info and len(rf.table_entries) == 3
    updates = rf.build_updates(schema)
    kinds = [u.entity.WhichOneof("entity") for u in updates]
    assert kinds == ["packet_replication_engine_entry"] * 2 + ["table_entry"] * 3
    assert updates[2].type == updates[2].MODIFY and updates[2].entity.table_entry.is_default_action
    mc = updates[0].entity.packet_replication_engine_entry.multicast_group_entry
    assert [r.egress_port for r in mc.replicas] == [1, 2]


@pytest.mark.parametrize(
    "doc,message",
    [
        (
            {"table_entries": [{"match": {}}]},
            r"table_entries\[0\]: expected an object with \"table\"",
        ),
        (
            {"table_entries": [{"table": "dmac", "match": {}}]},
            r"table_entries\[0\]: no action_name",
        ),
        ({"tables": []}, "unknown key"),
        ({"p4info": "missing.txt"}, "p4info: 'missing.txt' not found"),
        (
            {"multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"instance": 1}]}]},
            r"replicas\[0\]: no egress_port",
        ),
    ],
)
def test_runtime_file_errors_name_the_entry(tmp_path, doc, message):
    with pytest.raises(runtime_json.RuntimeFileError, match=message):
        runtime_json.load(_write_runtime(tmp_path, doc))


def test_runtime_file_bad_names_are_reported_with_the_entry(schema, tmp_path):
    rf = runtime_json.load(
        _write_runtime(
            tmp_path,
            {
                "table_entries": [
                    {
                        "table": "dmac",
                        "match": {"eth_dst": 1},
                        "action_name": "forward",
                        "action_params": {"port": 1},
                    },
                    {"table": "nosuch", "match": {}, "action_name": "drop"},
                ]
            },
        )
    )
    with pytest.raises(runtime_json.RuntimeFileError, match=r"table_entries\[1\]: no table named"):
        rf.build_updates(schema)


def test_invalid_json_names_line(tmp_path):
    p = tmp_path / "s1-runtime.json"
    p.write_text('{\n  "table_entries": [,]\n}')
    with pytest.raises(runtime_json.RuntimeFileError, match=r"s1-runtime.json:2:"):
        runtime_json.load(p)


def test_runtime_files_for_switches(tmp_path):
    for n in ("s1", "s2"):
        _write_runtime(tmp_path, {}, f"{n}-runtime.json")
    assert set(runtime_json.files_for(tmp_path, ["s1", "s2"])) == {"s1", "s2"}
    with pytest.raises(runtime_json.RuntimeFileError, match="s3-runtime.json"):
        runtime_json.files_for(tmp_path, ["s1", "s3"])


def test_lldp_probe_round_trip():
    frame = lldp_probe(7, 3)
    assert frame[12:14] == b"\x88\xcc"
    assert parse_lldp_probe(frame) == (7, 3)
    assert parse_lldp_probe(frame[:20]) is None
    assert parse_lldp_probe(b"\x00" * 12 + b"\x08\x00" + b"\x00" * 30) is None


def ring() -> Topology:
    # s1 - s2 - s3 - s4 - s1 (a loop); a host on port 1 of each switch
    t = Topology(ports={d: [1, 2, 3] for d in (1, 2, 3, 4)})
    t.links = [(1, 2, 2, 3), (2, 2, 3, 3), (3, 2, 4, 3), (4, 2, 1, 3)]
    t.hosts = [(f"00:00:00:00:00:0{d}", d, 1) for d in (1, 2, 3, 4)]
    return t


def test_path_hops_on_ring():
    g = ring().graph()
    assert path_hops(g, 1, 2, 1) == [(1, 2), (2, 1)]
    assert path_hops(g, 1, 1, 1) == [(1, 1)]
    assert len(path_hops(g, 1, 3, 1)) == 3
    assert path_hops(g, 1, 9, 1) is None


def test_proactive_plan_breaks_loops():
    t = ring()
    plan = proactive_plan(t)
    assert len(plan["dmac"]) == 16  # 4 hosts x 4 switches
    assert (1, "00:00:00:00:00:01", 1) in plan["dmac"]
    assert (1, "00:00:00:00:00:02", 2) in plan["dmac"]
    dropped = [(d, p) for d, p, g in plan["flood"] if g is None]
    assert len(dropped) == 2  # the one non-tree link, both ends
    # a broadcast never leaves through a port where it would loop, nor back to its own port
    for dev, gid, members in plan["groups"]:
        assert gid - 1000 not in members
        assert not set((dev, m) for m in members) & set(dropped)


class FakeFabric(apps.Fabric):
    def __init__(self, topology, schema):
        self.topology, self.schema = topology, schema
        self.state = StateFile(None)
        self.outs, self.writes = [], []

    async def packet_out(self, device, payload, port=0, group=0):
        self.outs.append((device, port, group, payload[:12]))

    async def write(self, device, updates, wait=True):
        self.writes.append((device, [u.entity.table_entry.table_id for u in updates], updates))


def frame(dst: int, src: int) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + b"\x08\x00" + b"\x00" * 46


def test_l2_learning_floods_then_installs(schema):
    fab = FakeFabric(Topology(ports={1: [1, 2, 3]}), schema)
    app = apps.L2Learning(fab)
    asyncio.run(app.switch_ready(1))
    groups = fab.writes.pop()[2]
    assert len(groups) == 3
    asyncio.run(app.packet_in(1, 1, frame(0xFFFFFFFFFFFF, 1)))  # broadcast from h1
    assert fab.outs[-1][:3] == (1, 0, 1)  # flooded: group 1
    asyncio.run(app.packet_in(1, 2, frame(1, 2)))  # h2 -> h1, h1 known
    assert fab.outs[-1][:3] == (1, 1, 0)
    dev, tables, ups = fab.writes[-1]
    assert tables == [schema.table("flow_port").id]
    assert ups[0].type == ups[0].INSERT
    assert fab.state.packet_ins == 2 and fab.state.flow_mods == 1
    asyncio.run(app.packet_in(1, 2, frame(1, 2)))  # same again: no new write
    assert fab.state.flow_mods == 1


def test_topo_forwarding_discovers_and_installs_paths(schema):
    t = ring()
    fab = FakeFabric(Topology(ports=t.ports), schema)
    app = apps.TopoForwarding(fab)
    asyncio.run(app.start())
    probes = [o for o in fab.outs if o[3][:6] == bytes.fromhex("0180c200000e")]
    assert len(probes) == 12  # every port of every switch
    for a, pa, b, pb in t.links:  # the probes arrive at the neighbours, both directions
        asyncio.run(app.packet_in(b, pb, lldp_probe(a, pa)))
        asyncio.run(app.packet_in(a, pa, lldp_probe(b, pb)))
    assert len(fab.state.links) == 8
    fab.outs.clear()
    asyncio.run(app.packet_in(1, 1, frame(0xFFFFFFFFFFFF, 1)))  # ARP broadcast from h1
    assert sorted((d, p) for d, p, _, _ in fab.outs) == [(2, 1), (3, 1), (4, 1)]  # edges only
    asyncio.run(app.packet_in(1, 1, frame(0xFFFFFFFFFFFF, 1)))  # the same frame again: dropped
    assert len(fab.outs) == 3
    fab.outs.clear()
    asyncio.run(app.packet_in(3, 1, frame(1, 3)))  # h3 -> h1: path s3 .. s1 (3 switches)
    written = [d for d, _, _ in fab.writes]
    assert len(written) == 3 and written[-1] == 3 and 1 in written  # last hop first
    assert fab.outs == [
        (3, t.graph()[3][path_hops(t.graph(), 3, 1, 1)[1][0]]["port"][3], 0, frame(1, 3)[:12])
    ]
    # a packet arriving on a link port never teaches a host location
    asyncio.run(app.packet_in(2, 2, frame(0xFFFFFFFFFFFF, 9)))
    assert bytes.fromhex("000000000009") not in app.hosts


def test_proactive_app_writes_everything_before_ready(schema):
    fab = FakeFabric(ring(), schema)
    app = apps.Proactive(fab)
    assert not app.ready()
    for d in (1, 2, 3, 4):
        asyncio.run(app.switch_ready(d))
    assert app.ready()
    assert fab.state.flow_mods == sum(len(w[2]) for w in fab.writes)


def test_state_file_is_what_the_lab_reads(tmp_path):
    path = tmp_path / "state.json"
    s = StateFile(str(path))
    s.switches |= {2, 1}
    s.links.add((1, 2, 2, 3))
    s.packet_ins, s.flow_mods = 5, 3
    s.touch(force=True)
    doc = json.loads(path.read_text())
    assert doc["switches"] == [1, 2] and doc["links"] == 1
    assert doc["packet_ins"] == 5 and doc["flow_mods"] == 3 and doc["time"] > 0


def test_l2_learning_sync_path_matches_async(schema):
    fab = FakeFabric(Topology(ports={1: [1, 2, 3]}), schema)
    app = apps.L2Learning(fab)

    class Out:
        def __init__(self):
            self.outs, self.writes = [], []

        def packet_out(self, payload, port=0, group=0):
            self.outs.append((port, group))

        def write(self, updates):
            self.writes.append(updates)

    out = Out()
    app.packet_in_sync(1, 1, frame(0xFFFFFFFFFFFF, 1), out)
    app.packet_in_sync(1, 2, frame(1, 2), out)
    app.packet_in_sync(1, 2, frame(1, 2), out)
    assert out.outs == [(0, 1), (1, 0), (1, 0)]
    assert len(out.writes) == 1 and fab.state.flow_mods == 1 and fab.state.packet_ins == 3


def test_hand_encoded_packet_out_is_protobufs(schema, tmp_path):
    """controller._SyncOut writes PacketOut bytes itself: they must parse to the message
    protobuf would build (payloads shorter and longer than a one-byte length)."""
    from finsy.proto import p4r

    from sdnperf.controllers.p4rt.controller import _SyncOut

    class Conn:
        device_id = 1

    class Ctl:
        _packet_out_ids = {1: schema.packet_metadata["packet_out"]}

    out = _SyncOut(Ctl(), Conn())
    for payload, port, group in [
        (b"\x01" * 60, 3, 0),
        (b"\x02" * 1500, 0, 7),
        (b"", 300, 0),
        (b"\x03" * 127, 2, 65535),
    ]:
        msg = p4r.StreamMessageRequest.FromString(out.encode(payload, port, group))
        want = p4r.StreamMessageRequest(packet=schema.packet_out(payload, egress_port=port))
        if group:
            want.packet.metadata.add(
                metadata_id=schema.packet_metadata["packet_out"]["mcast_grp"][0],
                value=group.to_bytes((group.bit_length() + 7) // 8, "big"),
            )
        assert msg == want


def test_exact_entry_builder_matches_table_entry(schema):
    from finsy.proto import p4r

    from sdnperf.controllers.p4rt.client import update
    from sdnperf.controllers.p4rt.schema import SchemaError

    assert (apps._INSERT, apps._MODIFY) == (p4r.Update.INSERT, p4r.Update.MODIFY)
    build = schema.exact_entry_builder(
        "flow_port", ("eth_dst", "in_port", "eth_src"), "forward", ("port",)
    )
    src, dst = bytes.fromhex("000000000001"), bytes.fromhex("0a0000000002")
    for kind, port in (("INSERT", 2), ("MODIFY", 0)):
        got = build(getattr(p4r.Update, kind), (dst, 1, src), (port,))
        want = update(
            kind,
            schema.table_entry(
                "flow_port",
                {"eth_dst": dst, "in_port": 1, "eth_src": src},
                "forward",
                {"port": port},
            ),
        )
        assert got == want
    with pytest.raises(SchemaError, match="does not fit in 9 bits"):
        build(p4r.Update.INSERT, (dst, 1, src), (512,))
    with pytest.raises(SchemaError, match="every key field"):
        schema.exact_entry_builder("flow_port", ("eth_dst",), "forward", ("port",))
    with pytest.raises(SchemaError, match="parameters are"):
        schema.exact_entry_builder("flow_port", ("eth_dst", "in_port", "eth_src"), "forward", ())
