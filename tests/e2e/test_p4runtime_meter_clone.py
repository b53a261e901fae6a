"""Meters and clone sessions over P4Runtime through the real components: our switch
(sdnperf-switch-grpc as the `p4` architecture starts it, a Mininet P4Switch node in the
shared switch process), the product's P4Runtime client (sdnperf/controllers/p4rt) and
tests/e2e/data/meter_clone.p4 compiled by our compiler.

One switch, hosts h1, h2, h3 on its ports 1, 2, 3 (each host in its own network
namespace). The test writes the entry that sends what enters port 1 out of port 2. The
program's meter (one cell per ingress port) drops what it colours red; every frame it lets
through is cloned to session 7, which the test points at port 3 (h3)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from sdnperf.controllers.p4rt.client import StreamSwitchConnection, WriteError, update
from sdnperf.controllers.p4rt.schema import Schema, clone_session
from tests.e2e.support import NEEDS_MININET, SEND, SNIFF, switch_binary

pytestmark = NEEDS_MININET

PROGRAM = Path(__file__).parent / "data" / "meter_clone.p4"
DEVICE_ID = 1
SESSION = 7  # the program's MIRROR_SESSION
MIRROR_PORT = 3  # h3
ETHERTYPE = 0x88B5  # IEEE local experimental: nothing else on the links uses it
BURST = 10  # frames h1 sends at once


@dataclass
class Lab:
    net: object  # a started Mininet
    schema: Schema
    bmv2_json: bytes
    address: str  # the switch's P4Runtime server


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    from mininet.net import Mininet
    from mininet.topo import SingleSwitchTopo

    from sdnperf import p4
    from sdnperf.arch.p4 import CPU_PORT, GRPC_DAEMON
    from sdnperf.controllers.process import free_port
    from sdnperf.emulation.p4switch import P4Switch, SharedSwitchProcess  # imports Mininet

    binary = switch_binary(GRPC_DAEMON)
    program = p4.compile_file(PROGRAM, switch_binary("sdnperf-p4c"))
    schema = Schema.from_file(program.p4info)
    run_dir = str(tmp_path_factory.mktemp("meter-clone"))
    port = free_port()
    switch = partial(
        P4Switch,
        grpc_port=port,
        device_id=DEVICE_ID,
        cpu_port=CPU_PORT,
        binary=binary,
        log_dir=run_dir,
        shared=SharedSwitchProcess(binary, run_dir),
    )
    net = Mininet(topo=SingleSwitchTopo(3), switch=switch, controller=None)
    try:
        net.start()
        for h in net.hosts:  # no IPv6 chatter through the meter's cells
            h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        net.get("s1").wait_listening()
        yield Lab(net, schema, program.json.read_bytes(), f"127.0.0.1:{port}")
    finally:
        net.stop()


def _frame(tag: bytes) -> bytes:
    dst, src = bytes.fromhex("020000000002"), bytes.fromhex("020000000001")
    return dst + src + ETHERTYPE.to_bytes(2, "big") + tag.ljust(46, b"\0")


def exchange(net, tag: bytes, frames: int = BURST) -> dict[str, int]:
    """h1 sends `frames` copies of a frame tagged `tag` at once: how many of them h2 and
    h3 received (each sniffing in its own namespace for 1.5 s)."""
    frame = _frame(tag)
    sniffers = {}
    for name in ("h2", "h3"):
        host = net.get(name)
        p = host.popen(
            [sys.executable, "-c", SNIFF, host.defaultIntf().name, "1.5", f"{ETHERTYPE:04x}"],
            text=True,
        )
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        sniffers[name] = p
    h1 = net.get("h1")
    sender = h1.popen(
        [sys.executable, "-c", SEND, h1.defaultIntf().name, *[frame.hex()] * frames], text=True
    )
    _, err = sender.communicate(timeout=30)
    assert sender.returncode == 0, err
    got = {}
    for name, p in sniffers.items():
        out, _ = p.communicate(timeout=30)
        got[name] = sum(bytes.fromhex(x)[: len(frame)] == frame for x in out.split())
    return got


async def programmed(lab: Lab, election_id: int):
    """The product's client (its default transport), primary, with the pipeline set and
    the entry port 1 -> port 2."""
    conn = StreamSwitchConnection("s1", lab.address, DEVICE_ID, election_id=election_id)
    await conn.connect(timeout=20)
    await conn.set_pipeline(lab.schema.p4info, lab.bmv2_json)
    entry = lab.schema.table_entry("ports", {"ingress_port": 1}, "forward", {"port": 2})
    await conn.write([update("INSERT", entry)])
    return conn


def test_meter_config_is_read_back_and_polices_the_port(lab):
    meter = partial(lab.schema.meter_entry, "port_policer")

    async def main():
        conn = await programmed(lab, election_id=10)
        try:
            # unconfigured, the cell lets everything through
            assert not (await conn.read([meter(1)]))[0].meter_entry.HasField("config")
            before = await asyncio.to_thread(exchange, lab.net, b"unmetered")
            # packets: 1/s committed with a burst of 2, 3/s peak with a burst of 4
            config = {"cir": 1, "cburst": 2, "pir": 3, "pburst": 4}
            await conn.write([update("MODIFY", meter(1, config))])
            cells = {
                e.meter_entry.index.index: e.meter_entry for e in await conn.read([meter(None)])
            }
            got = cells[1].config
            assert (got.cir, got.cburst, got.pir, got.pburst) == (1, 2, 3, 4), cells[1]
            assert [i for i, c in sorted(cells.items()) if c.HasField("config")] == [1]
            metered = await asyncio.to_thread(exchange, lab.net, b"metered")
            # a MODIFY without a config resets the cell
            await conn.write([update("MODIFY", meter(1))])
            assert not (await conn.read([meter(1)]))[0].meter_entry.HasField("config")
            after = await asyncio.to_thread(exchange, lab.net, b"reset")
        finally:
            await conn.close()
        return before, metered, after

    before, metered, after = asyncio.run(main())
    assert before["h2"] == BURST, before
    # the peak bucket (4) lets 4 of a burst through (2 green, 2 yellow); a refill takes
    # 1/3 s, so a starved switch may let one or two more through, never the whole burst
    assert 4 <= metered["h2"] <= 6, metered
    assert after["h2"] == BURST, after


def test_clone_session_copies_to_its_port_until_deleted(lab):
    async def main():
        conn = await programmed(lab, election_id=11)
        seen = {}
        try:
            seen["none"] = await asyncio.to_thread(exchange, lab.net, b"no session")
            session = clone_session(SESSION, [MIRROR_PORT])
            await conn.write([update("INSERT", session)])
            read = await conn.read([clone_session(0, [])])
            entry = read[0].packet_replication_engine_entry.clone_session_entry
            assert len(read) == 1 and entry.session_id == SESSION, read
            assert [r.egress_port or int.from_bytes(r.port, "big") for r in entry.replicas] == [
                MIRROR_PORT
            ], entry
            seen["session"] = await asyncio.to_thread(exchange, lab.net, b"cloned")
            with pytest.raises(WriteError) as dup:
                await conn.write_now([update("INSERT", session)])
            assert dup.value.errors == [(0, f"ALREADY_EXISTS: clone session {SESSION} exists")]
            await conn.write([update("DELETE", clone_session(SESSION, []))])
            assert await conn.read([clone_session(0, [])]) == []
            seen["deleted"] = await asyncio.to_thread(exchange, lab.net, b"deleted")
            with pytest.raises(WriteError) as gone:
                await conn.write_now([update("DELETE", clone_session(SESSION, []))])
            assert gone.value.errors == [(0, f"NOT_FOUND: no clone session {SESSION}")]
        finally:
            await conn.close()
        return seen

    seen = asyncio.run(main())
    assert seen["none"] == {"h2": BURST, "h3": 0}, seen
    assert seen["session"] == {"h2": BURST, "h3": BURST}, seen
    assert seen["deleted"] == {"h2": BURST, "h3": 0}, seen
