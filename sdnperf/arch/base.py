"""The architecture seam: how switches forward and who controls them.

The runner (sdnperf/runner.py, `started_network`) drives every architecture through the
same steps, each exactly once, in this order:
    check(config, spec)  (a classmethod, pure) refuse combinations that cannot work, or say
                         what the architecture needs of the topology (e.g. spanning tree);
                         the runner calls it and hands the answer to __init__
    prepare()          start daemons / controllers that must exist before the network
    mininet_options()  the switch (and controller) classes Mininet builds the network with
    network_started(net) last steps that need the built network (e.g. port numbers)
    wait_ready(net)    block until the data plane forwards (STP converged, switches connected,
                       links discovered)
    ... the workload runs; processes(), facts(), control_stats(), check_alive() ...
    before_network_stop()  (only when a network was built) let go of the switches
    stop()             stop everything prepare() started (also after a failure in any step)
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Callable

from sdnperf.topo.spec import TopoSpec


class ArchitectureError(RuntimeError):
    """A study asks for something this architecture cannot do here (said in words)."""


class Architecture(ABC):
    @classmethod
    def controller_sees_packets(cls, config) -> bool:
        """True when first packets travel through a controller (packet-in/packet-out).

        Such packets must carry complete checksums: a host's checksum offload leaves them
        partial, and a switch that hands them to a controller (OVS userspace datapath, our
        P4 switch's CPU port) forwards them broken, so the lab turns host offloads off
        (study.host_offloads)."""
        return False

    @classmethod
    def needs_mtu_frames(cls, config) -> bool:
        """True when the switches may read frames only up to the MTU (p4 with its XDP fast
        path: AF_XDP ports), so hosts must not send offloaded super-packets
        (study.host_offloads "auto" turns them off)."""
        return False

    @classmethod
    def impairs_links_itself(cls, config) -> bool:
        """True when this architecture emulates link delay/loss in its own switches, so a
        study with delay/loss runs on a kernel without sch_netem (p4 on our switch)."""
        return False

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        """Raise ArchitectureError when this architecture cannot run on `spec`; else what it
        needs of the topology (handed to __init__ as `needs`). No side effects: the runner
        calls it for every architecture before a study starts, and again for each run."""
        return {}

    @classmethod
    def network_spec(cls, config, spec: TopoSpec) -> TopoSpec:
        """The topology the network is built from: the study's, unless the architecture
        changes it (`direct` takes the switch out). Pure, called after `check`."""
        return spec

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        """Only records; nothing starts before prepare(). `needs` is check()'s answer."""
        self.config = config
        self.spec = spec
        self.run_dir = Path(run_dir)
        self.needs = needs
        # Seeds what the architecture itself randomises (p4: its switches' link loss). The
        # runner sets it from the study seed and the repetition: repeatable, different per
        # repetition, the same for every architecture of one repetition.
        self.seed = seed
        # whether hosts send offloaded super-packets (the runner sets it before prepare())
        self.host_offloads = True

    @property
    def name(self) -> str:
        return self.config.name

    def prepare(self) -> None:
        """Start what must run before Mininet builds the network."""

    @abstractmethod
    def mininet_options(self) -> dict:
        """Keyword arguments for mininet.net.Mininet: at least `switch`, `controller`."""

    def network_started(self, net) -> None:
        """Called once Mininet has built and started the network (ports are numbered)."""

    def wait_ready(self, net, timeout: float) -> None:
        """Block until the data plane forwards."""

    def processes(self) -> dict[str, list[int]]:
        """role -> PIDs, for the CPU sampler ("switch", "controller")."""
        return {}

    def facts(self) -> dict:
        """Conditions to record with each run (datapath, controller, STP, ...)."""
        return {"architecture": self.config.kind}

    def check_alive(self) -> None:
        """Raise ArchitectureError if a process this architecture started has died."""

    def control_stats(self) -> dict[str, float]:
        """Control-plane counters at the end of a run (packet-ins, flow writes), if known."""
        return {}

    def run_facts(self) -> dict:
        """Facts only the end of a run knows (read after control_stats; p4: the data path
        its counters say forwarded), merged over facts()."""
        return {}

    def before_network_stop(self) -> None:
        """Called once before the network is torn down (p4: its controller closes the
        P4Runtime streams, which would hold the switches' graceful shutdown)."""

    def stop(self) -> None:
        """Stop everything prepare() started, after the network is gone (OVS: Mininet
        deletes its bridges through the daemons). Also called when an earlier step failed,
        so it stops only what was started."""


def attached_hosts(net) -> list[dict]:
    """Every host link of a built network: {"name", "mac", "ip", "switch", "port"} (the
    switch's port number). What the topology-derived forwarding state is built from: the P4
    programs' proactive entries (p4/catalog.py), the OVS flows (arch/ovs_flows.py) and the
    kernel router's routes (arch/router.py)."""
    switches = {sw.name for sw in net.switches}
    hosts = []
    for link in net.links:
        a, b = link.intf1, link.intf2
        if (a.node.name in switches) == (b.node.name in switches):
            continue  # switch-switch (or host-host) link
        (sw, sw_intf), (host, host_intf) = (
            ((a.node, a), (b.node, b)) if a.node.name in switches else ((b.node, b), (a.node, a))
        )
        hosts.append(
            {
                "name": host.name,
                "mac": host_intf.MAC(),
                "ip": host_intf.IP(),
                "switch": sw.name,
                "port": sw.ports[sw_intf],
            }
        )
    return hosts


def spanning_tree_wanted(mode: str, spec: TopoSpec) -> bool:
    """A study's `stp = "auto" | "on" | "off"`: auto is on exactly when the topology has loops."""
    return spec.has_loops() if mode == "auto" else mode == "on"


def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    interval: float = 0.2,
    stable_for: float = 0.0,
    explain: Callable[[], str] = lambda: "",
) -> None:
    """Poll `predicate` until it has held for `stable_for` seconds; else ArchitectureError
    (with `explain()` appended: e.g. the end of a controller's log)."""
    deadline = time.monotonic() + timeout
    held_since = None
    while time.monotonic() < deadline:
        if predicate():
            held_since = held_since or time.monotonic()
            if time.monotonic() - held_since >= stable_for:
                return
        else:
            held_since = None
        time.sleep(interval)
    raise ArchitectureError(f"timed out after {timeout:.0f}s waiting for {what}{explain()}")


def check_controller(controller, what: str, label: str = "controller") -> None:
    """ArchitectureError with the end of its log when a controller process we started
    (controllers/process.py ControllerProcess, or None: nothing started) has exited."""
    if controller is not None and not controller.alive():
        raise ArchitectureError(
            f"{label} {controller.kind} {what} (exit code "
            f"{controller.proc.returncode}):\n{controller.log_tail()}"
        )


def controller_log(controller) -> str:
    """The end of a started controller's log, for an error message ("" when none)."""
    if controller is None:
        return ""
    return f"; {controller.kind}'s log ends:\n{controller.log_tail()}"
