"""Build, start and stop one Mininet network for one run.

Only Mininet: the architecture's steps around it (prepare, network_started, wait_ready,
stop) are the runner's to call (sdnperf/runner.py, started_network)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

from sdnperf.emulation.cleanup import Registry, orphaned_taps, planned_names
from sdnperf.topo.mininet_adapter import to_mininet_topo
from sdnperf.topo.spec import Link, TopoSpec


class EmulationError(RuntimeError):
    pass


def _host_class(ipv6: bool):
    from mininet.node import Host

    class StudyHost(Host):
        """A Mininet host whose namespace has IPv6 off before any interface exists, so it
        sends no router/neighbour solicitations or MLD reports: a reactive controller then
        handles only the traffic the workload sent."""

        def __init__(self, name, **params):
            super().__init__(name, **params)
            if not ipv6:
                self.cmd(
                    "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                    "net.ipv6.conf.default.disable_ipv6=1"
                )

    return StudyHost


def _disable_ipv6(interface: str) -> None:
    try:
        Path(f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6").write_text("1")
    except OSError:
        pass  # no IPv6 in this kernel: nothing to silence


def set_link_mtus(net, spec: TopoSpec) -> None:
    """Give both ends of every link with an `mtu` that MTU (Mininet's links have no such
    option). A Linux bridge or router port takes its veth's MTU; our switch reads frames
    larger than its ring slots through its copy path."""
    for link in spec.links():
        if link.mtu is None:
            continue
        for mn_link in net.linksBetween(net.get(link.node1), net.get(link.node2)):
            for intf in (mn_link.intf1, mn_link.intf2):
                argv = ["ip", "link", "set", "dev", intf.name, "mtu", str(int(link.mtu))]
                out = intf.node.cmd(shlex.join(argv) + "; echo rc=$?")
                if not out.rstrip().endswith("rc=0"):
                    raise EmulationError(
                        f"link {link.node1}-{link.node2}: cannot set mtu {link.mtu} on "
                        f"{intf.name}: {out.strip()}"
                    )


def netem_rate_argv(interface: str, link: Link) -> list[str]:
    """`tc` argv giving one end of a serialised link netem's `rate` (every packet held for
    its transmission time at the link's bw), with the link's delay and loss on the same
    qdisc (netem applies delay, then serialisation)."""
    argv = ["tc", "qdisc", "replace", "dev", interface, "root", "netem"]
    if link.delay_ms:
        argv += ["delay", f"{link.delay_ms:g}ms"]
    if link.loss_pct:
        argv += ["loss", f"{link.loss_pct:g}%"]
    return argv + ["rate", f"{int(round((link.bw or 0) * 1e6))}bit"]


def set_link_serialisation(net, spec: TopoSpec) -> None:
    """Give both ends of every serialised link a netem qdisc with `rate` (Mininet's TCLink
    has no such option and was given none for them, mininet_adapter.link_opts). Only with
    sch_netem: without it the runner refused the study or left the links to our switch."""
    for link in spec.serialised_links():
        for mn_link in net.linksBetween(net.get(link.node1), net.get(link.node2)):
            for intf in (mn_link.intf1, mn_link.intf2):
                argv = netem_rate_argv(intf.name, link)
                out = intf.node.cmd(shlex.join(argv) + "; echo rc=$?")
                if not out.rstrip().endswith("rc=0"):
                    raise EmulationError(
                        f"link {link.node1}-{link.node2}: serialise: cannot set "
                        f"{shlex.join(argv)}: {out.strip()}"
                    )


def _tx_offloads_off(host) -> None:
    for intf in host.intfList():
        if intf.name != "lo":
            host.cmd("ethtool -K", intf, "tx off >/dev/null 2>&1")


class Network:
    """One Mininet network: `start()` builds and starts it, `stop()` tears it down.

    mininet_options: the architecture's switch/controller classes (mininet_options()).
    netem: the kernel delays/drops links (TCLink gets delay/loss); False leaves them to
    the switches (checked by the runner, arch/link_support.py)."""

    def __init__(
        self,
        spec: TopoSpec,
        run_dir: Path,
        mininet_options: dict,
        netem: bool,
        ipv6: bool = False,
        host_offloads: bool = True,
    ):
        self.spec, self.run_dir, self.ipv6 = spec, Path(run_dir), ipv6
        self.mininet_options, self.netem = mininet_options, netem
        self.host_offloads = host_offloads
        self.net: Any = None  # a mininet.net.Mininet once started (Mininet has no type stubs)
        self.registry = Registry(self.run_dir / "registry.json")

    def start(self):
        # lazy (both): pull in mininet's classes, wanted only when a network is built
        from sdnperf.emulation.batched_links import BatchedLink, BatchedTCLink
        from sdnperf.emulation.parallel_build import ParallelMininet, run_all  # lazy: same

        topo = to_mininet_topo(self.spec, netem=self.netem)
        self.registry.interfaces, self.registry.bridges = planned_names(topo)
        taken = [
            n
            for n in self.registry.interfaces + self.registry.bridges
            if Path(f"/sys/class/net/{n}").exists()
        ]
        for name in orphaned_taps(taken):
            # a dead userspace OVS's bridge: removing it harms no one, keeping it would
            # stop every later network that uses the name
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            if not Path(f"/sys/class/net/{name}").exists():
                taken.remove(name)
        if taken:
            raise EmulationError(
                f"interface(s) {', '.join(taken[:5])} already exist: another Mininet network is "
                "running, or a crashed one left them (`sdnperf clean` removes sdnperf's own)"
            )
        self.registry.save()  # before anything exists: a kill -9 from here on is cleanable
        link_cls = (
            BatchedTCLink
            if self.spec.needs_htb() or (self.netem and self.spec.needs_netem())
            else BatchedLink
        )
        self.net = ParallelMininet(
            topo=topo,
            link=link_cls,
            host=_host_class(self.ipv6),
            autoSetMacs=True,
            build=False,
            waitConnected=False,
            **self.mininet_options,
        )
        self.net.build()
        if not self.ipv6:
            # Switch ports live in the root namespace: keep them from talking IPv6 too.
            for name in self.registry.interfaces:
                _disable_ipv6(name)
        if not self.host_offloads:
            run_all(_tx_offloads_off, self.net.hosts)  # every host's shell at once
        set_link_mtus(self.net, self.spec)
        if self.netem:
            set_link_serialisation(self.net, self.spec)
        self.net.start()
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
            # lazy: pulls in mininet's link classes, wanted only when a network is built
            from sdnperf.emulation.batched_links import delete_root_ends

            try:
                # one command for what took one per link (and per bridge)
                delete_root_ends(
                    net.links,
                    [sw.name for sw in net.switches if getattr(sw, "deleted_with_links", False)],
                )
                net.stop()
            except Exception:
                self._force_stop(nodes)
            # A link that Ctrl-C interrupted inside Mininet's addLink exists but is in no
            # node's list, so Mininet's stop misses it; the registry has its names (only
            # once we build: before that they may be another network's).
            self._delete_registered()
        self.registry.discard()

    def _force_stop(self, nodes) -> None:
        """Mininet's stop failed half-way: kill the node shells (their namespaces go with
        them); `stop` then deletes what the registry says we created."""
        for node in nodes:
            try:
                node.terminate()
            except Exception:
                pass

    def _delete_registered(self) -> None:
        for name in self.registry.bridges + self.registry.interfaces:
            if Path(f"/sys/class/net/{name}").exists():
                subprocess.run(["ip", "link", "del", name], capture_output=True)
