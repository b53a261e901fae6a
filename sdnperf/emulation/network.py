"""Build, start and stop one Mininet network for one run."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sdnperf.arch.base import Architecture
from sdnperf.emulation import capabilities
from sdnperf.emulation.cleanup import Registry, planned_names
from sdnperf.topo.spec import TopoSpec


class EmulationError(RuntimeError):
    pass


def check_link_features(spec: TopoSpec) -> None:
    """Refuse (in words) link settings this kernel cannot emulate, instead of skipping them
    silently as Mininet's TCLink does when sch_netem is missing."""
    if spec.needs_netem():
        cap = capabilities.netem()
        if not cap.ok:
            raise EmulationError(f"topology {spec.name!r} sets link delay or loss, but {cap.detail}. "
                                 "Remove delay_ms/loss_pct, or run on a kernel with sch_netem "
                                 "(e.g. Ubuntu's linux-modules-extra).")
    if spec.needs_tc():
        cap = capabilities.htb()
        if not cap.ok:
            raise EmulationError(f"topology {spec.name!r} sets link bandwidth, but {cap.detail}")


def _host_class(ipv6: bool):
    from mininet.node import Host

    class StudyHost(Host):
        """A Mininet host whose namespace has IPv6 off before any interface exists, so it
        sends no router/neighbour solicitations or MLD reports: a reactive controller then
        handles only the traffic the workload sent."""

        def __init__(self, name, **params):
            super().__init__(name, **params)
            if not ipv6:
                self.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                         "net.ipv6.conf.default.disable_ipv6=1")

    return StudyHost


def _disable_ipv6(interface: str) -> None:
    try:
        Path(f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6").write_text("1")
    except OSError:
        pass  # no IPv6 in this kernel: nothing to silence


class Network:
    """A started Mininet network: `with Network(...) as net:` stops it on any exit."""

    def __init__(self, spec: TopoSpec, arch: Architecture, run_dir: Path, ipv6: bool = False,
                 host_offloads: bool = True):
        self.spec, self.arch, self.run_dir, self.ipv6 = spec, arch, Path(run_dir), ipv6
        self.host_offloads = host_offloads
        self.net = None
        self.registry = Registry(self.run_dir / "registry.json")

    def start(self, ready_timeout: float = 90.0):
        from mininet.link import Link, TCLink
        from mininet.net import Mininet

        from sdnperf.topo.mininet_adapter import to_mininet_topo

        topo = to_mininet_topo(self.spec)
        self.registry.interfaces, self.registry.bridges = planned_names(topo)
        taken = [n for n in self.registry.interfaces + self.registry.bridges
                 if Path(f"/sys/class/net/{n}").exists()]
        if taken:
            raise EmulationError(
                f"interface(s) {', '.join(taken[:5])} already exist: another Mininet network is "
                "running, or a crashed one left them (`sdnperf clean` removes sdnperf's own)")
        self.registry.save()  # before anything exists: a kill -9 from here on is cleanable
        link_cls = TCLink if self.spec.needs_tc() or self.spec.needs_netem() else Link
        self.net = Mininet(topo=topo, link=link_cls, host=_host_class(self.ipv6), autoSetMacs=True,
                           build=False, waitConnected=False, **self.arch.mininet_options())
        self.net.build()
        if not self.ipv6:
            # Switch ports live in the root namespace: keep them from talking IPv6 too.
            for name in self.registry.interfaces:
                _disable_ipv6(name)
        if not self.host_offloads:
            for host in self.net.hosts:
                for intf in host.intfList():
                    if intf.name != "lo":
                        host.cmd("ethtool -K", intf, "tx off >/dev/null 2>&1")
        self.net.start()
        self.arch.network_started(self.net)
        self.arch.wait_ready(self.net, ready_timeout)
        return self.net

    def stop(self) -> None:
        net, self.net = self.net, None
        if net is not None:
            nodes = net.hosts + net.switches + net.controllers
            for node in nodes:
                if getattr(node, "waiting", False) and getattr(node, "shell", None):
                    # Interrupted mid-command (Ctrl-C): abandon that command so the shell
                    # accepts the tear-down commands.
                    node.sendInt()
                    node.waiting = False
            try:
                net.stop()
            except Exception:
                self._force_stop(nodes)
        self.registry.discard()

    def _force_stop(self, nodes) -> None:
        """Mininet's stop failed half-way: kill the node shells (their namespaces go with
        them) and delete what the registry says we created in the root namespace."""
        for node in nodes:
            try:
                node.terminate()
            except Exception:
                pass
        for name in self.registry.bridges + self.registry.interfaces:
            if Path(f"/sys/class/net/{name}").exists():
                subprocess.run(["ip", "link", "del", name], capture_output=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
