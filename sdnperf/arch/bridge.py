"""`bridge`: the traditional network — Linux bridges with MAC learning.

Bridges are made with iproute2 (not brctl) so STP timers can be set at creation: with the
kernel defaults STP takes about 31 s to converge; we use the smallest timers the kernel
accepts (hello 1 s, forward delay 2 s, max age 6 s) and wait until every port has settled
in forwarding or blocking.
"""

from __future__ import annotations

from pathlib import Path

from mininet.node import Switch

from sdnperf.arch.base import Architecture, ArchitectureError, spanning_tree_wanted, wait_until
from sdnperf.emulation import capabilities
from sdnperf.topo.spec import TopoSpec

# Linux bridge port states, as /sys/class/net/BR/brif/PORT/state reports them.
PORT_DISABLED, PORT_LISTENING, PORT_LEARNING, PORT_FORWARDING, PORT_BLOCKING = 0, 1, 2, 3, 4
SETTLED = {PORT_DISABLED, PORT_FORWARDING, PORT_BLOCKING}
STP_TIMERS_CS = {"hello_time": 100, "forward_delay": 200, "max_age": 600}  # centiseconds


def _operstate(interface: str) -> str:
    try:
        return Path(f"/sys/class/net/{interface}/operstate").read_text().strip()
    except OSError:
        return "missing"


class LinuxBridgeSwitch(Switch):
    """A Mininet switch node backed by one Linux bridge named after the node."""

    def __init__(self, name, stp: bool = False, vlan: int | None = None, **kwargs):
        self.stp = stp
        self.vlan = vlan  # VLAN tagging chain: every port an access port of this VLAN
        super().__init__(name, **kwargs)

    # a bridge's start touches only its own bridge and ports: ParallelMininet starts
    # every bridge of a network at once
    starts_alone = True

    def start(self, _controllers):
        timers = " ".join(f"{k} {v}" for k, v in STP_TIMERS_CS.items()) if self.stp else ""
        filtering = "vlan_filtering 1" if self.vlan else ""
        # one shell round trip for the bridge and all its ports (one each made a bridge's
        # start 10x slower)
        commands = [
            f"ip link del {self.name} 2>/dev/null",
            f"ip link add name {self.name} type bridge stp_state {int(self.stp)} {timers} "
            f"{filtering}",
        ]
        for intf in self.intfList():
            if intf.name != "lo" and self.name in intf.name:
                commands.append(f"ip link set {intf} master {self.name} up")
                if self.vlan:  # tagged with the VLAN on ingress, untagged on egress
                    commands.append(f"bridge vlan del dev {intf} vid 1")
                    commands.append(
                        f"bridge vlan add dev {intf} vid {int(self.vlan)} pvid untagged"
                    )
        commands.append(f"ip link set {self.name} up")
        self.cmd("; ".join(commands))

    def port_states(self) -> list[int]:
        brif = Path(f"/sys/class/net/{self.name}/brif")
        states = []
        for port in sorted(brif.glob("*")) if brif.exists() else []:
            try:
                states.append(int((port / "state").read_text()))
            except (OSError, ValueError):
                states.append(-1)
        return states

    def ports_up(self) -> bool:
        brif = Path(f"/sys/class/net/{self.name}/brif")
        ports = list(brif.glob("*")) if brif.exists() else []
        return all(_operstate(p.name) == "up" for p in ports)

    def connected(self):
        # Without STP a port forwards once its link is up; a frame sent before that (the
        # first ARP of a workload) would be lost, so readiness waits for carrier too.
        states = self.port_states()
        if self.stp:
            return all(s in SETTLED for s in states) and self.ports_up()
        return all(s == PORT_FORWARDING for s in states) and self.ports_up()

    # the network's stop deletes the bridge with the links, in one kernel call
    # (emulation/network.py, batched_links.delete_root_ends)
    deleted_with_links = True

    def stop(self, deleteIntfs=True):
        if Path(f"/sys/class/net/{self.name}").exists():  # not deleted with the links
            self.cmd("ip link del", self.name, "2>/dev/null")
        super().stop(deleteIntfs)


class BridgeArchitecture(Architecture):
    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        if config.vlan:
            cap = capabilities.bridge_vlan_filtering()
            if not cap.ok:
                raise ArchitectureError(
                    f"architecture {config.name!r}: vlan = {config.vlan} "
                    f"needs VLAN filtering in Linux bridges: {cap.detail}"
                )
        return {"stp": spanning_tree_wanted(config.stp, spec)}

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        self.stp: bool = needs["stp"]

    def mininet_options(self) -> dict:
        stp, vlan = self.stp, self.config.vlan

        def make(name, **kwargs):
            return LinuxBridgeSwitch(name, stp=stp, vlan=vlan, **kwargs)

        return {"switch": make, "controller": None}

    def wait_ready(self, net, timeout: float) -> None:
        # With STP, ports pass listening -> learning -> forwarding (2 x forward delay); one
        # more hello of stability guards against a root change re-opening the election.
        what = "Linux bridge spanning tree to converge" if self.stp else "bridge ports to come up"
        wait_until(
            lambda: all(sw.connected() for sw in net.switches),
            timeout,
            what,
            interval=0.05,
            stable_for=1.5 if self.stp else 0.0,
        )

    def facts(self) -> dict:
        return {
            "architecture": "bridge",
            "stp": self.stp,
            "vlan": self.config.vlan,
            "stp_timers_s": {k: v / 100 for k, v in STP_TIMERS_CS.items()} if self.stp else None,
        }
