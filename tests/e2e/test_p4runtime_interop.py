"""P4Runtime interoperability: real clients we did not write (p4runtime-shell, finsy) drive
our switch's P4Runtime server (sdnperf-switch-grpc) on 127.0.0.1.

The switch's two ports are veth ends in the root namespace; their peers live in a
network namespace this module creates (sdp4rt-<pid>), where small AF_PACKET helpers
send and capture frames. The program is rust/p4c/tests/corpus/packet_io.p4 compiled by
sdnperf-p4c (BMv2 JSON + P4Info text): table `l2` (exact dst MAC -> forward(port) or
send_to_cpu, the default), CPU port 255 with packet_in/packet_out headers.

p4runtime-shell pins protobuf < 3.21 and ships old-style generated code, so it runs in a
subprocess with the pure-Python protobuf implementation; finsy runs in-process.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.e2e.support import SEND, SNIFF

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "rust/p4c/tests/corpus/packet_io.p4"
CPU_PORT = 255
DEVICE_ID = 1
MAC1 = "00:00:00:00:00:01"
MAC2 = "00:00:00:00:00:02"
MAC_UNKNOWN = "00:00:00:00:00:99"
ETHERTYPE = 0x88B5  # IEEE local experimental: nothing else on the link uses it

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and AF_PACKET need root"),
    pytest.mark.skipif(not shutil.which("ip"), reason="needs iproute2"),
]


def _tool(name: str) -> Path:
    from sdnperf import tools

    try:
        return Path(tools.find(name))
    except tools.ToolNotFound as exc:
        pytest.skip(str(exc))


def _mac(s: str) -> bytes:
    return bytes(int(x, 16) for x in s.split(":"))


def _frame(dst: str, src: str, payload: bytes) -> bytes:
    return _mac(dst) + _mac(src) + ETHERTYPE.to_bytes(2, "big") + payload.ljust(46, b"\0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


class Lab:
    """A namespace with hosts h1/h2, our switch's ports 1/2 facing them, and the daemon."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        tag = os.getpid() % 100000
        self.ns = f"sdp4rt-{tag}"
        self.sw_if = {1: f"sdp4rt{tag}a", 2: f"sdp4rt{tag}b"}
        self.host_if = {1: "h1", 2: "h2"}
        self.proc: subprocess.Popen | None = None
        self.grpc_port = _free_port()
        self.addr = f"127.0.0.1:{self.grpc_port}"

    def setup(self):
        _ip("netns", "add", self.ns)
        _ip("-n", self.ns, "link", "set", "lo", "up")
        subprocess.run(
            ["ip", "netns", "exec", self.ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
            check=False,
        )
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                self.ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
            check=False,
        )
        for p in (1, 2):
            _ip(
                "link",
                "add",
                self.sw_if[p],
                "type",
                "veth",
                "peer",
                "name",
                f"{self.ns[:8]}{p}",
                "netns",
                self.ns,
            )
            _ip("-n", self.ns, "link", "set", f"{self.ns[:8]}{p}", "name", self.host_if[p])
            subprocess.run(
                ["sysctl", "-qw", f"net.ipv6.conf.{self.sw_if[p]}.disable_ipv6=1"], check=False
            )
            _ip("link", "set", self.sw_if[p], "up")
            _ip("-n", self.ns, "link", "set", self.host_if[p], "up")

    def start(self, binary: Path, *extra: str, argv: list[str] | None = None):
        log = open(self.tmp / "switch.log", "w")
        self.proc = subprocess.Popen(
            argv
            or [
                str(binary),
                "--grpc-port",
                str(self.grpc_port),
                "--device-id",
                str(DEVICE_ID),
                "--cpu-port",
                str(CPU_PORT),
                "-i",
                f"1@{self.sw_if[1]}",
                "-i",
                f"2@{self.sw_if[2]}",
                "--die-with-parent",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        line = self.proc.stdout.readline()
        assert line.strip() == "READY", (self.tmp / "switch.log").read_text()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def teardown(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for p in (1, 2):
            _ip("link", "del", self.sw_if[p], check=False)
        _ip("netns", "del", self.ns, check=False)

    # -- host-side packet I/O
    def sniff(self, port: int, seconds: float, ethertype: str = "88b5") -> subprocess.Popen:
        p = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.ns,
                sys.executable,
                "-c",
                SNIFF,
                self.host_if[port],
                str(seconds),
                ethertype,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout.readline().strip() == "ready"
        return p

    @staticmethod
    def frames(p: subprocess.Popen) -> list[bytes]:
        out, _ = p.communicate(timeout=30)
        return [bytes.fromhex(x) for x in out.split()]

    def send(self, port: int, *frames: bytes):
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                self.ns,
                sys.executable,
                "-c",
                SEND,
                self.host_if[port],
                *[f.hex() for f in frames],
            ],
            check=True,
        )


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("p4rt-prog")
    p4c = _tool("sdnperf-p4c")
    subprocess.run([str(p4c), str(PROGRAM), "-o", str(out)], check=True, capture_output=True)
    return out / "packet_io.p4info.txtpb", out / "packet_io.json"


@pytest.fixture
def lab(tmp_path):
    binary = _tool("sdnperf-switch-grpc")
    lab = Lab(tmp_path)
    try:
        lab.setup()
        lab.start(binary)
        yield lab
    finally:
        lab.teardown()
    assert _ip("netns", "list").stdout.find(lab.ns) < 0


# ------------------------------------------------------------------ p4runtime-shell

SHELL_SCRIPT = textwrap.dedent("""
    import json, os, sys
    os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
    import p4runtime_sh.shell as sh
    addr, p4info, bmv2, mac2, unknown_frame_ready = sys.argv[1:6]
    result = {}
    sh.setup(device_id=1, grpc_addr=addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info, bmv2))
    te = sh.TableEntry("MyIngress.l2")(action="MyIngress.forward")
    te.match["dst_mac"] = mac2
    te.action["port"] = "2"
    te.insert()
    rows = []
    for e in sh.TableEntry("MyIngress.l2").read():
        rows.append({"mac": e.match["dst_mac"].exact.value.hex(), "action": e.action.action_name if hasattr(e.action, "action_name") else "",
                     "port": e.action["port"].value.hex() if hasattr(e.action, "__getitem__") else ""})
    result["rows"] = rows
    d = sh.TableEntry("MyIngress.l2"); d.is_default = True
    result["default"] = [str(x) for x in d.read()]
    # packet-out: the frame leaves port 1
    po = sh.PacketOut(payload=bytes.fromhex(sys.argv[6]))
    po.metadata["egress_port"] = "1"
    po.metadata["_pad"] = "0"
    po.send()
    print("SENT", flush=True)
    # packet-in: the test sends a frame with an unknown destination into port 1 now
    pkts = []
    sniffer = sh.PacketIn()
    sys.stdin.readline()
    for msg in sniffer.sniff(timeout=3):
        pkts.append({"payload": msg.packet.payload.hex(),
                     "md": {m.metadata_id: m.value.hex() for m in msg.packet.metadata}})
        if pkts:
            break
    result["packet_in"] = pkts
    sh.teardown()
    print("RESULT " + json.dumps(result), flush=True)
""")


def _shell_importable() -> str:
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.environ['PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION'] = 'python'; "
            "import p4runtime_sh.shell",
        ],
        capture_output=True,
        text=True,
    )
    return "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def test_p4runtime_shell_pipeline_entries_and_packet_io(lab, compiled):
    why = _shell_importable()
    if why:
        pytest.skip(f"p4runtime-shell not importable ({why}): scripts/install.sh installs it")
    p4info, bmv2 = compiled
    out_frame = _frame(MAC1, MAC2, b"packet-out from p4runtime-shell")
    sniff1 = lab.sniff(1, 8)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SHELL_SCRIPT,
            lab.addr,
            str(p4info),
            str(bmv2),
            MAC2,
            "x",
            out_frame.hex(),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        seen = []
        while True:
            line = proc.stdout.readline()
            if not line or line.strip() == "SENT":
                break
            seen.append(line)
        assert line.strip() == "SENT", "".join(seen)
        time.sleep(0.3)
        in_frame = _frame(MAC_UNKNOWN, MAC1, b"to the controller")
        proc.stdin.write("go\n")
        proc.stdin.flush()
        for _ in range(10):
            lab.send(1, in_frame)
            time.sleep(0.2)
            if proc.poll() is not None:
                break
        out, err = proc.communicate(timeout=30)
        err = err or ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    res = [x for x in out.splitlines() if x.startswith("RESULT ")]
    assert res, out + err
    r = json.loads(res[0][len("RESULT ") :])
    assert [row["mac"] for row in r["rows"]] == ["02"], r
    assert len(r["default"]) == 1 and "send_to_cpu" in r["default"][0], r
    # packet-out came out of port 1 (packet_out header stripped by the program)
    got = Lab.frames(sniff1)
    assert any(f[: len(out_frame)] == out_frame for f in got), [f.hex() for f in got]
    # packet-in: payload is the frame, metadata ingress_port (id 1) = 1
    assert r["packet_in"], r
    pi = r["packet_in"][0]
    assert bytes.fromhex(pi["payload"])[: len(in_frame)] == in_frame
    assert pi["md"]["1"] == "01", pi
    # the entry forwards: h1 -> MAC2 arrives at h2
    sniff2 = lab.sniff(2, 1.5)
    fwd = _frame(MAC2, MAC1, b"forwarded by the entry")
    lab.send(1, fwd)
    assert any(f[: len(fwd)] == fwd for f in Lab.frames(sniff2))
    assert lab.alive()


# ------------------------------------------------------------------ finsy


def test_finsy_pipeline_entries_and_packet_io(lab, compiled):
    finsy = pytest.importorskip("finsy")
    from finsy import P4PacketOut, P4TableEntry, Switch, SwitchOptions

    p4info, bmv2 = compiled
    out_frame = _frame(MAC2, MAC1, b"packet-out from finsy")
    in_frame = _frame(MAC_UNKNOWN, MAC2, b"finsy packet-in")

    async def main():
        opts = SwitchOptions(
            p4info=p4info, p4blob=bmv2, device_id=DEVICE_ID, initial_election_id=20
        )
        sw = Switch("s1", lab.addr, opts)
        async with sw:
            # wait for finsy to push the pipeline (it does so once it is primary)
            for _ in range(50):
                cfg = await _get_cookie(sw)
                if cfg:
                    break
                await asyncio.sleep(0.1)
            await sw.insert(
                [
                    P4TableEntry(
                        "MyIngress.l2",
                        match=finsy.P4TableMatch(dst_mac=MAC1),
                        action=finsy.P4TableAction("MyIngress.forward", port=1),
                    ),
                    P4TableEntry(
                        "MyIngress.l2",
                        match=finsy.P4TableMatch(dst_mac=MAC2),
                        action=finsy.P4TableAction("MyIngress.forward", port=2),
                    ),
                ]
            )
            entries = [e async for e in sw.read(P4TableEntry("MyIngress.l2"))]
            macs = sorted(
                int(e.match_dict(sw.p4info)["dst_mac"].replace(":", ""), 16) for e in entries
            )
            sniff2 = lab.sniff(2, 3)
            await sw.write([P4PacketOut(out_frame, egress_port=2, _pad=0)])
            got_out = await asyncio.to_thread(Lab.frames, sniff2)

            async def first_packet():
                async for p in sw.read_packets():
                    return p

            task = asyncio.create_task(first_packet())
            pkt = None
            for _ in range(20):
                await asyncio.to_thread(lab.send, 2, in_frame)
                done, _ = await asyncio.wait([task], timeout=0.2)
                if done:
                    pkt = task.result()
                    break
            if pkt is None:
                task.cancel()
            return macs, got_out, pkt

    macs, got_out, pkt = asyncio.run(asyncio.wait_for(main(), 60))
    assert macs == [1, 2]
    assert any(f[: len(out_frame)] == out_frame for f in got_out), [f.hex() for f in got_out]
    assert pkt is not None, "no packet-in reached finsy"
    assert pkt.payload[: len(in_frame)] == in_frame
    assert pkt["ingress_port"] == 2
    assert lab.alive()


async def _get_cookie(sw) -> bool:
    from finsy.proto import p4r

    reply = await sw._p4client.request(
        p4r.GetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID, response_type=p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY
        )
    )
    return reply.config.HasField("cookie")


# ------------------------------------------------------------------ arbitration and errors (raw stubs)


class Ctl:
    """A bare P4Runtime controller on finsy's generated protobuf/grpc stubs."""

    def __init__(self, addr: str, election: int):
        import queue

        import grpc
        from finsy.proto import p4r
        from finsy.proto.p4.v1 import p4runtime_pb2_grpc

        self.p4r = p4r
        self.election = election
        self.channel = grpc.insecure_channel(addr)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.responses = self.stub.StreamChannel(iter(self.requests.get, None))
        self.requests.put(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=DEVICE_ID, election_id=p4r.Uint128(high=0, low=election)
                )
            )
        )

    def arbitration(self):
        for msg in self.responses:
            if msg.HasField("arbitration"):
                return msg.arbitration

    def close(self):
        self.requests.put(None)
        self.channel.close()

    def write(self, *updates, election=None):
        p4r = self.p4r
        return self.stub.Write(
            p4r.WriteRequest(
                device_id=DEVICE_ID,
                election_id=p4r.Uint128(high=0, low=election or self.election),
                updates=list(updates),
            )
        )

    def set_pipeline(self, p4info: Path, bmv2: Path):
        from finsy.proto import p4i
        from google.protobuf import text_format

        p4r = self.p4r
        info = text_format.Parse(p4info.read_text(), p4i.P4Info())
        cfg = p4r.ForwardingPipelineConfig(
            p4info=info,
            p4_device_config=bmv2.read_bytes(),
            cookie=p4r.ForwardingPipelineConfig.Cookie(cookie=42),
        )
        self.stub.SetForwardingPipelineConfig(
            p4r.SetForwardingPipelineConfigRequest(
                device_id=DEVICE_ID,
                election_id=p4r.Uint128(high=0, low=self.election),
                action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                config=cfg,
            )
        )
        return info

    def l2_insert(self, info, mac: bytes, port: int, t=None):
        p4r = self.p4r
        table = next(x for x in info.tables if x.preamble.name == "MyIngress.l2")
        fwd = next(x for x in info.actions if x.preamble.name == "MyIngress.forward")
        return p4r.Update(
            type=t or p4r.Update.INSERT,
            entity=p4r.Entity(
                table_entry=p4r.TableEntry(
                    table_id=table.preamble.id,
                    match=[p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(value=mac))],
                    action=p4r.TableAction(
                        action=p4r.Action(
                            action_id=fwd.preamble.id,
                            params=[p4r.Action.Param(param_id=1, value=bytes([port]))],
                        )
                    ),
                )
            ),
        )


def _p4_errors(exc):
    """The per-update p4.v1.Error list from a failed Write (grpc-status-details-bin)."""
    from finsy.proto import p4r
    from finsy.proto.google.rpc import status_pb2

    st = status_pb2.Status()
    for k, v in exc.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st.ParseFromString(v)
    errs = []
    for d in st.details:
        e = p4r.Error()
        d.Unpack(e)
        errs.append(e)
    return st, errs


def test_lower_election_id_cannot_write_and_primary_regains_after_reconnect(lab, compiled):
    import grpc

    p4info, bmv2 = compiled
    a = Ctl(lab.addr, 10)
    assert a.arbitration().status.code == 0  # OK: primary
    info = a.set_pipeline(p4info, bmv2)
    b = Ctl(lab.addr, 5)
    arb_b = b.arbitration()
    assert arb_b.status.code == grpc.StatusCode.ALREADY_EXISTS.value[0]  # backup
    assert arb_b.election_id.low == 10
    with pytest.raises(grpc.RpcError) as ei:
        b.write(b.l2_insert(info, _mac(MAC2), 2))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    a.write(a.l2_insert(info, _mac(MAC2), 2))
    # the primary goes away: the backup hears "no primary" and still cannot write
    a.close()
    arb_b = b.arbitration()
    assert arb_b.status.code == grpc.StatusCode.NOT_FOUND.value[0]
    with pytest.raises(grpc.RpcError) as ei:
        b.write(b.l2_insert(info, _mac(MAC1), 1))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # it comes back with its election id and is primary again
    a2 = Ctl(lab.addr, 10)
    assert a2.arbitration().status.code == 0
    assert b.arbitration().status.code == grpc.StatusCode.ALREADY_EXISTS.value[0]
    a2.write(a2.l2_insert(info, _mac(MAC1), 1))
    # forwarding state survived the controller churn
    sniff2 = lab.sniff(2, 1.5)
    fwd = _frame(MAC2, MAC1, b"after reconnect")
    lab.send(1, fwd)
    assert any(f[: len(fwd)] == fwd for f in Lab.frames(sniff2))
    a2.close()
    b.close()
    assert lab.alive()


def test_malformed_write_is_invalid_argument_and_forwarding_continues(lab, compiled):
    import grpc

    p4info, bmv2 = compiled
    c = Ctl(lab.addr, 7)
    assert c.arbitration().status.code == 0
    info = c.set_pipeline(p4info, bmv2)
    c.write(c.l2_insert(info, _mac(MAC2), 2))
    good = c.l2_insert(info, _mac(MAC1), 1)
    too_wide = c.l2_insert(info, b"\x01" * 7, 1)  # 56-bit value for a 48-bit field
    bad_port = c.l2_insert(info, _mac(MAC_UNKNOWN), 1)
    bad_port.entity.table_entry.action.action.params[0].value = b"\x7f\xff"  # > 9 bits
    with pytest.raises(grpc.RpcError) as ei:
        c.write(good, too_wide, bad_port)
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    st, errs = _p4_errors(ei.value)
    assert [e.canonical_code for e in errs] == [
        0,
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
    ]
    assert "48 bits" in errs[1].message and "9 bits" in errs[2].message
    # a request that is malformed as a whole
    with pytest.raises(grpc.RpcError) as ei:
        c.write(c.p4r.Update(type=c.p4r.Update.INSERT))
    st, errs = _p4_errors(ei.value)
    assert errs[0].canonical_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    # the good update of the failed batch went in; forwarding never stopped
    for mac, port in ((MAC2, 2), (MAC1, 1)):
        src_port = 1 if port == 2 else 2
        sniff = lab.sniff(port, 1.5)
        fwd = _frame(mac, MAC_UNKNOWN, b"still forwarding")
        lab.send(src_port, fwd)
        assert any(f[: len(fwd)] == fwd for f in Lab.frames(sniff)), mac
    c.close()
    assert lab.alive()


def test_digest_list_from_a_packet(lab, tmp_path):
    """features.p4 learns unknown source MACs with a digest: a frame into port 2 becomes a
    DigestList {srcAddr, ingress_port} on the primary's stream, which acks it."""
    p4c = _tool("sdnperf-p4c")
    subprocess.run(
        [str(p4c), str(REPO / "rust/p4rt/tests/programs/features.p4"), "-o", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    c = Ctl(lab.addr, 3)
    assert c.arbitration().status.code == 0
    info = c.set_pipeline(tmp_path / "features.p4info.txtpb", tmp_path / "features.json")
    p4r = c.p4r
    d = info.digests[0]
    c.write(
        p4r.Update(
            type=p4r.Update.INSERT,
            entity=p4r.Entity(
                digest_entry=p4r.DigestEntry(
                    digest_id=d.preamble.id, config=p4r.DigestEntry.Config(max_list_size=1)
                )
            ),
        )
    )
    lab.send(2, _frame(MAC1, "00:00:00:00:00:42", b"learn me"))
    msg = next(m for m in c.responses if m.HasField("digest"))
    members = msg.digest.data[0].struct.members
    assert members[0].bitstring == b"\x42" and members[1].bitstring == b"\x02"
    c.requests.put(
        p4r.StreamMessageRequest(
            digest_ack=p4r.DigestListAck(digest_id=d.preamble.id, list_id=msg.digest.list_id)
        )
    )
    c.close()
    assert lab.alive()


# ------------------------------------------------------------------ AF_XDP ports and the XDP fast path

ROUTED_IN = bytes.fromhex(
    "00000000000100000000000A0800450000180000000040FD64E40A0000010A000105DEADBEEF"
)
ROUTED_OUT = bytes.fromhex(
    "000000000102000000000001080045000018000000003FFD65E40A0000010A000105DEADBEEF"
)


def _ctl_line(binary: Path, sock: Path, line: str) -> str:
    r = subprocess.run(
        [str(binary), "ctl", str(sock), line], capture_output=True, text=True, timeout=10
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_af_xdp_ports_and_fast_path_follow_p4runtime_writes(tmp_path):
    """sdnperf-switch-grpc with AF_XDP ports and --xdp-fastpath: the pipeline arrives by
    P4Runtime, a route written by P4Runtime forwards in the kernel's XDP hook (the fast
    path's counters grow), and deleting it by P4Runtime makes the fast path drop."""
    import re

    binary = _tool("sdnperf-switch-grpc")
    switch_cli = _tool("sdnperf-switch")
    p4c = _tool("sdnperf-p4c")
    subprocess.run(
        [str(p4c), str(REPO / "rust/p4c/tests/corpus/basic_router.p4"), "-o", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    sock = tmp_path / "ctl.sock"
    lab = Lab(tmp_path)
    try:
        lab.setup()
        for p in (1, 2):  # an XDP redirect into a veth needs NAPI on the peer (GRO)
            subprocess.run(
                ["ip", "netns", "exec", lab.ns, "ethtool", "-K", lab.host_if[p], "gro", "on"],
                check=False,
                capture_output=True,
            )
        lab.start(
            binary, "--no-vnet", "--io", "af_xdp", "--xdp-fastpath", "--ctl-socket", str(sock)
        )
        c = Ctl(lab.addr, 9)
        assert c.arbitration().status.code == 0
        info = c.set_pipeline(
            tmp_path / "basic_router.p4info.txtpb", tmp_path / "basic_router.json"
        )
        deadline = time.time() + 5
        while (
            "fast path on" not in (tmp_path / "switch.log").read_text() and time.time() < deadline
        ):
            time.sleep(0.05)
        log = (tmp_path / "switch.log").read_text()
        assert (
            "1@" + lab.sw_if[1] + "=af_xdp" in log and "xdp fast path on for port(s) 1,2" in log
        ), log
        p4r = c.p4r
        table = next(x for x in info.tables if x.preamble.name == "MyIngress.ipv4_lpm")
        fwd = next(x for x in info.actions if x.preamble.name == "MyIngress.ipv4_forward")
        route = p4r.Entity(
            table_entry=p4r.TableEntry(
                table_id=table.preamble.id,
                match=[
                    p4r.FieldMatch(
                        field_id=1,
                        lpm=p4r.FieldMatch.LPM(value=bytes([10, 0, 1, 0]), prefix_len=24),
                    )
                ],
                action=p4r.TableAction(
                    action=p4r.Action(
                        action_id=fwd.preamble.id,
                        params=[
                            p4r.Action.Param(param_id=1, value=bytes.fromhex("000000000102")),
                            p4r.Action.Param(param_id=2, value=b"\x02"),
                        ],
                    )
                ),
            )
        )
        c.write(p4r.Update(type=p4r.Update.INSERT, entity=route))

        def fast():
            m = re.search(
                r"(on|off) forwarded=(\d+) dropped=(\d+)", _ctl_line(switch_cli, sock, "fastpath")
            )
            assert m
            return m.group(1), int(m.group(2)), int(m.group(3))

        sniff = lab.sniff(2, 1.5, "0800")
        lab.send(1, *[ROUTED_IN] * 5)
        got = [f for f in Lab.frames(sniff) if f[: len(ROUTED_OUT)] == ROUTED_OUT]
        assert len(got) == 5
        state, forwarded, dropped = fast()
        assert state == "on" and forwarded >= 5
        c.write(p4r.Update(type=p4r.Update.DELETE, entity=route))
        sniff = lab.sniff(2, 1.0, "0800")
        lab.send(1, *[ROUTED_IN] * 3)
        assert not [f for f in Lab.frames(sniff) if f[: len(ROUTED_OUT)] == ROUTED_OUT]
        assert fast()[2] >= dropped + 3  # the default action (drop) ran in the kernel
        # one switch, two front ends: an entry the ctl socket adds is what P4Runtime reads
        _ctl_line(
            switch_cli,
            sock,
            "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => 0x000000000203 1",
        )
        read = p4r.ReadRequest(
            device_id=DEVICE_ID,
            entities=[p4r.Entity(table_entry=p4r.TableEntry(table_id=table.preamble.id))],
        )
        entries = [e.table_entry for resp in c.stub.Read(read) for e in resp.entities]
        assert [(e.match[0].lpm.value, e.match[0].lpm.prefix_len) for e in entries] == [
            (bytes([10, 0, 2, 0]), 24)
        ], entries
        assert entries[0].action.action.action_id == fwd.preamble.id
        c.close()
        assert lab.alive()
    finally:
        lab.teardown()


def test_simple_switch_grpc_command_line_starts_our_switch(tmp_path, compiled):
    """The command line the P4 tutorials and p4-utils give simple_switch_grpc starts our
    switch unchanged; a P4Runtime client then sets the pipeline and an entry forwards."""
    binary = _tool("sdnperf-switch-grpc")
    p4info, bmv2 = compiled
    lab = Lab(tmp_path)
    try:
        lab.setup()
        lab.start(
            binary,
            argv=[
                str(binary),
                "-i",
                f"1@{lab.sw_if[1]}",
                "-i",
                f"2@{lab.sw_if[2]}",
                "--log-console",
                "--log-level",
                "info",
                "--thrift-port",
                str(_free_port()),
                "--device-id",
                str(DEVICE_ID),
                "--priority-queues",
                "1",
                "--no-p4",
                "--",
                "--grpc-server-addr",
                lab.addr,
                "--cpu-port",
                str(CPU_PORT),
            ],
        )
        assert "--thrift-port" in (tmp_path / "switch.log").read_text() or lab.alive()
        c = Ctl(lab.addr, 4)
        assert c.arbitration().status.code == 0
        info = c.set_pipeline(p4info, bmv2)
        c.write(c.l2_insert(info, _mac(MAC2), 2))
        sniff = lab.sniff(2, 1.5)
        fwd = _frame(MAC2, MAC1, b"tutorial style")
        lab.send(1, fwd)
        assert any(f[: len(fwd)] == fwd for f in Lab.frames(sniff))
        c.close()
        assert lab.alive()
    finally:
        lab.teardown()
    # a flag that would change behaviour and is not implemented is refused by name
    r = subprocess.run(
        [str(binary), "--nanolog", "ipc:///tmp/sdnperf-never.ipc", "-i", "1@lo"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert (
        r.returncode != 0
        and "--nanolog is not implemented" in r.stderr
        and "supported options:" in r.stderr
    )
