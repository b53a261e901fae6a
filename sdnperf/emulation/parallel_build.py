"""A Mininet whose build talks to many node shells at once.

Mininet builds a network one shell round trip after another: each host's shell started
and waited for, each link made and configured, each host's addresses set, in turn. Every
round trip is a process start in one node's shell, so a 28-host campus spent most of its
~7 s build (under load) waiting on one shell while 37 others sat idle. This class runs
Mininet's own steps (the same Host and switch constructors, Link class and
Host.configDefault, with the same arguments) for different nodes in threads: every host
at once, every switch at once, and the links in
rounds where no two links of a round share a node (a node's shell runs one command at a
time). Addresses, port numbers, MACs and the order of `net.hosts`, `net.switches` and
`net.links` are those of a sequential build (tests/unit/test_parallel_build.py,
tests/e2e/test_parallel_build.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, TypeVar

from mininet.net import Mininet
from mininet.node import Controller
from mininet.util import ipAdd, macColonHex

from sdnperf.emulation.batched_links import (
    BatchedTCLink,
    collected_configs,
    forget_pairs,
    make_pairs,
    pair_line,
)

T = TypeVar("T")
R = TypeVar("R")

# enough to overlap every shell of a campus-sized round; more threads only add switching
MAX_THREADS = 32


def node_disjoint_rounds(pairs: list[tuple[str, str]]) -> list[list[int]]:
    """Indices of `pairs` split into rounds in which no node appears twice, each round
    taking every pair (in order) whose nodes the round does not use yet."""
    rounds: list[list[int]] = []
    used: list[set[str]] = []
    for index, (a, b) in enumerate(pairs):
        for members, nodes in zip(rounds, used):
            if a not in nodes and b not in nodes:
                members.append(index)
                nodes.update((a, b))
                break
        else:
            rounds.append([index])
            used.append({a, b})
    return rounds


def run_all(
    function: Callable[[T], R], items: Iterable[T], keep: Callable[[list], None] = lambda made: None
) -> list[R]:
    """function(item) for every item, in threads; results in order. Every call finishes
    before this returns (also on an error or Ctrl-C: no thread keeps talking to a shell
    the caller is about to tear down); `keep` is given the results of the calls that
    succeeded (in order) before the first error is raised."""
    items = list(items)
    pool = ThreadPoolExecutor(max_workers=max(1, min(MAX_THREADS, len(items))))
    futures = []
    try:
        futures = [pool.submit(function, item) for item in items]
    finally:
        interrupted = _shut_down(pool)
        keep([f.result() for f in futures if f.exception() is None])
    if interrupted:
        raise KeyboardInterrupt
    return [f.result() for f in futures]


def _shut_down(pool: ThreadPoolExecutor) -> bool:
    """Wait for every call of `pool` to finish, through Ctrl-C (each is a few shell round
    trips: the tear-down that follows must not race them); True if Ctrl-C came."""
    interrupted = False
    while True:
        try:
            pool.shutdown(wait=True)
            return interrupted
        except KeyboardInterrupt:
            interrupted = True


class ParallelMininet(Mininet):
    """Mininet with buildFromTopo's hosts and links, and configHosts, in parallel."""

    def buildFromTopo(self, topo=None):
        topo = topo or self.topo
        if self.autoPinCpus:
            # a pinned host takes cores in order: Mininet's own sequential build
            return super().buildFromTopo(topo)
        if not self.controllers and self.controller:
            # the default controller(s) first, named c0, c1, ... as Mininet names them
            classes = self.controller if isinstance(self.controller, list) else [self.controller]
            for index, cls in enumerate(classes):
                if isinstance(cls, Controller):
                    self.addController(cls)
                else:
                    self.addController(f"c{index}", cls)
        self._add_hosts(topo)
        self._add_switches(topo)
        self._add_links(topo)
        return None

    def _add_hosts(self, topo) -> None:
        """Every host's shell started at once, with the addresses Mininet's addHost gives
        the n-th host (nextIP counts up in topology order)."""
        plans = []
        for name in topo.hosts():
            params: dict[str, Any] = {
                "ip": ipAdd(self.nextIP, ipBaseNum=self.ipBaseNum, prefixLen=self.prefixLen)
                + f"/{self.prefixLen}"
            }
            if self.autoSetMacs:
                params["mac"] = macColonHex(self.nextIP)
            self.nextIP += 1
            params.update(topo.nodeInfo(name))
            plans.append((name, params.pop("cls", None) or self.host, params))

        def keep(hosts: list) -> None:
            # also those made before a failure: they are the network's, stop() ends them
            for host in hosts:
                self.hosts.append(host)
                self.nameToNode[host.name] = host

        run_all(_make_node, plans, keep)

    def _add_switches(self, topo) -> None:
        """Every switch's shell started at once, each constructed with the arguments
        Mininet's addSwitch gives the n-th switch (its listenPort counts up in topology
        order). A switch factory that numbers its switches (arch/p4.py's device ids)
        decides every number before the network is built, not in call order."""
        plans = []
        for name in topo.switches():
            params = dict(topo.nodeInfo(name))  # (the topology's own dict: left as it is)
            cls = params.pop("cls", None) or self.switch
            if hasattr(cls, "batchStartup"):
                params.setdefault("batch", True)
            options = {"listenPort": self.listenPort, "inNamespace": self.inNamespace, **params}
            if not self.inNamespace and self.listenPort:
                self.listenPort += 1
            plans.append((name, cls, options))

        def keep(switches: list) -> None:
            # also those made before a failure: they are the network's, stop() ends them
            for switch in switches:
                self.switches.append(switch)
                self.nameToNode[switch.name] = switch

        run_all(_make_node, plans, keep)

    def _add_links(self, topo) -> None:
        """Links in node-disjoint rounds, each round's links made at once."""
        specs = []
        for _src, _dst, params in topo.links(sort=True, withInfo=True):
            options = dict(params)
            node1, node2 = self[options.pop("node1")], self[options.pop("node2")]
            if self.intf is not None:
                options.setdefault("intf", self.intf)
            options.setdefault("addr1", self.randMac())  # in order: the MACs Mininet gives
            options.setdefault("addr2", self.randMac())
            cls = options.pop("cls", None) or self.link
            specs.append((cls, node1, node2, options))
        if all(
            issubclass(cls, BatchedTCLink) and "port1" in options and "port2" in options
            for cls, _node1, _node2, options in specs
        ):
            self._add_links_at_once(specs)
            return
        made: dict[int, Any] = {}
        try:
            for members in node_disjoint_rounds([(s[1].name, s[2].name) for s in specs]):
                run_all(_make_link, [(i, specs[i]) for i in members], lambda m: made.update(m))
        finally:
            # also those made before a failure: they are the network's, stop() deletes them
            self.links.extend(made[i] for i in sorted(made))

    def _add_links_at_once(self, specs: list) -> None:
        """Every veth pair made in one `ip -batch`, the links then made in topology order
        with their interfaces' configuration collected, and run per node in one script,
        all nodes at once (batched_links.make_pairs, collected_configs)."""
        lines, firsts = [], []
        for _cls, node1, node2, options in specs:
            name1 = options.get("intfName1") or f"{node1.name}-eth{options['port1']}"
            name2 = options.get("intfName2") or f"{node2.name}-eth{options['port2']}"
            ns1 = node1.pid if node1.inNamespace else None
            ns2 = node2.pid if node2.inNamespace else None
            lines.append(pair_line(name1, options["addr1"], ns1, name2, options["addr2"], ns2))
            firsts.append(name1)
        try:
            make_pairs(lines, firsts)
            with collected_configs():
                for cls, node1, node2, options in specs:
                    self.links.append(cls(node1, node2, **options))
        finally:
            forget_pairs()

    def configHosts(self):
        run_all(_configure_host, self.hosts)

    def start(self):
        """Mininet's start, with the switches whose class says `starts_alone` (their
        start touches nothing another switch's does: arch/bridge.py) started at once."""
        if not any(getattr(sw, "starts_alone", False) for sw in self.switches):
            return super().start()
        if not self.built:
            self.build()
        for controller in self.controllers:
            controller.start()
        alone = [sw for sw in self.switches if getattr(sw, "starts_alone", False)]
        run_all(lambda sw: sw.start(self.controllers), alone)
        for sw in self.switches:
            if sw not in alone:
                sw.start(self.controllers)
        by_class: dict[type, list] = {}
        for sw in self.switches:
            by_class.setdefault(type(sw), []).append(sw)
        for cls, switches in by_class.items():
            if hasattr(cls, "batchStartup"):
                cls.batchStartup(switches)
        if self.waitConn:
            self.waitConnected(self.waitConn)
        return None

    def stop(self):
        """Mininet's stop, without waiting for each node's shell to exit before telling
        the next one to (a host's shell exiting takes its network namespace down with it:
        ~10 ms each, in turn); all are waited for once every one has been told."""
        nodes = [(node, node.shell) for node in self.hosts + self.switches + self.controllers]
        waits = {node: node.waitExited for node, _ in nodes}
        for node, _ in nodes:
            node.waitExited = False
        try:
            super().stop()
        finally:
            for node, shell in nodes:
                node.waitExited = waits[node]
                if shell is not None and node.shell is None:  # told to exit (SIGHUP)
                    shell.wait()


def _make_node(plan):
    # a host's or a switch's plan: (name, class or factory, constructor arguments)
    name, cls, params = plan
    return cls(name, **params)


def _make_link(indexed_spec):
    index, (cls, node1, node2, options) = indexed_spec
    return index, cls(node1, node2, **options)


def _configure_host(host) -> None:
    # Mininet's configHosts, per host
    if host.defaultIntf():
        host.configDefault()
    else:
        host.configDefault(ip=None, mac=None)
