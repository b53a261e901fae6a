"""The AF_XDP ports of one switch process share one XDP program (rust/switch
ports/afxdp.rs `Root`): the kernel's XDP dispatcher waits for an RCU grace period at every
program it has not seen attached and at every program's last detachment, so a program per
port made a campus's start, each pipeline and its tear-down wait ~46 times. Checked end to
end: every switch port of a shared process carries the same program, before and after the
controller's pipeline brings the fast path (a tail call, not a re-attachment), packets
still forward in the kernel, and the network goes without leaving an interface."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sdnperf.arch.config import P4Config
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]


def xdp_program_ids(names: list[str]) -> dict[str, int | None]:
    """Interface -> id of its attached XDP program (None: none), from `ip -j link`."""
    out = json.loads(subprocess.run(["ip", "-d", "-j", "link"], capture_output=True).stdout)
    ids: dict[str, int | None] = {}
    for link in out:
        if link["ifname"] in names:
            ids[link["ifname"]] = link.get("xdp", {}).get("prog", {}).get("id")
    return ids


def test_one_program_for_every_port_of_a_shared_process(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    cfg = P4Config(kind="p4", name="p4", app="l2-learning", datapath="xdp")
    with started_network(spec, cfg, tmp_path / "run", host_offloads=False) as started:
        arch, net = started.arch, started.net
        ports = [i.name for sw in net.switches for i in sw.intfList() if i.name != "lo"]
        assert len(arch.switch_pids) == 1  # one shared process (the default)
        ids = xdp_program_ids(ports)
        assert set(ids) == set(ports)
        assert len(set(ids.values())) == 1 and None not in ids.values(), ids
        assert net.pingAll(timeout=2) == 0.0
        h1, h3 = net.get("h1", "h3")
        out = h1.cmd("ping", "-c", "100", "-i", "0.005", "-q", h3.IP())
        assert " 0% packet loss" in out, out
        stats = arch.control_stats()
        # the fast path runs (tail-called), and the attached program did not change
        assert stats["xdp_forwarded"] >= 3 * 2 * 100, stats
        assert xdp_program_ids(ports) == ids
    assert not [p for p in ports if Path(f"/sys/class/net/{p}").exists()]
