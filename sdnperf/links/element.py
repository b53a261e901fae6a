"""The sdnperf link element: our switch (`sdnperf-switch run`, the two-port `wire.p4`) put
on a host's link inside the host's namespace, so its port impairment delays, drops and
shapes that link where the kernel has no sch_netem, for any architecture.

    before:  [h1: h1-eth0] ======================== [s1-eth1: switch]
    after:   [h1: h1-eth0 == h1-eth0-e (port 1) wire (port 2) h1-eth0-l] == [s1-eth1]

The host keeps its interface name, MAC and address (a fresh veth pair takes the name);
the old interface, still joined to the switch, becomes the wire's port 2. Port 2's egress
is the link's "up" direction (host to switch), port 1's egress the "down" one. The element
delays and drops; the link's rate stays where it is without one (htb in the host, now on
the new interface, and on the switch's end; our P4 switch's port): the element was built
when our switch's shaper fixed a packet's departure at queueing; it now computes it at the
head of the queue from the rate in force (rust/switch/src/impair.rs), so the element could
shape too, but the rate is left where the architectures already shape it. The
element's own cost (its added delay and CPU) is measured by tests/e2e/test_link_element.py
and stated in docs/link-schedules.md; its process is watched by the CPU sampler as role
"link_element".
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from sdnperf import tools
from sdnperf.emulation.nodes import Intf, Node
from sdnperf.links.schedule import Setting
from sdnperf.p4 import compile_file
from sdnperf.processes import stop_process_group
from sdnperf.topo.spec import Link, TopoSpec

WIRE_PROGRAM = Path(__file__).with_name("wire.p4")
HOST_PORT, LINK_PORT = 1, 2
PORT_OF_DIRECTION = {"up": LINK_PORT, "down": HOST_PORT}
READY_TIMEOUT_S = 15.0


class ElementError(RuntimeError):
    pass


def port_spec(setting: Setting) -> str:
    """A Setting in port_impair's syntax ("" = none); rate None is unshaped."""
    parts = []
    if setting.rate_mbps:
        parts.append(f"rate={setting.rate_mbps:g}mbit")
    if setting.delay_ms:
        parts.append(f"delay={setting.delay_ms:g}ms")
    if setting.jitter_ms:
        parts.append(f"jitter={setting.jitter_ms:g}ms")
    if setting.loss_pct:
        parts.append(f"loss={setting.loss_pct:g}%")
    return ",".join(parts)


def _impaired(spec: TopoSpec, link: Link) -> bool:
    plan = next((p for p in spec.schedules if (p.node1, p.node2) == (link.node1, link.node2)), None)
    return bool(link.delay_ms or link.loss_pct or (plan is not None and plan.needs_netem()))


def element_links(spec: TopoSpec, kernel_netem: bool, impairs_itself: bool) -> list[Link]:
    """The host links that get an element in a run ([topology.link] element): "always":
    every host link (also to measure the element itself); "auto": those that delay or
    drop, when neither the kernel (sch_netem) nor the architecture's switches can."""
    mode = spec.graph.graph.get("link_element", "off")
    if mode == "off" or (mode == "auto" and (kernel_netem or impairs_itself)):
        return []
    return [
        x
        for x in spec.links()
        if spec.is_host(x.node1) != spec.is_host(x.node2)
        and (mode == "always" or _impaired(spec, x))
    ]


def without_links(spec: TopoSpec, links: list[Link]) -> TopoSpec:
    """A copy where `links` carry no delay or loss and no schedules (their element delays
    and drops; the rate stays with tc or the switch port, which change it by the clock
    rather than per queued packet): what the network and the architecture are built from."""
    if not links:
        return spec
    out = spec.copy()
    keys = {(x.node1, x.node2) for x in links}
    for a, b in keys:
        data = out.graph.edges[a, b]
        data["delay_ms"] = data["loss_pct"] = None
    out.schedules = [p for p in out.schedules if (p.node1, p.node2) not in keys]
    return out


def link_setting(spec: TopoSpec, link: Link, direction: str) -> Setting:
    """What an element puts on one direction when the run starts (t = 0)."""
    for plan in spec.schedules:
        if (plan.node1, plan.node2) == (link.node1, link.node2):
            return (plan.up if direction == "up" else plan.down).setting_at(0.0)
    return Setting(link.bw, link.delay_ms or 0.0, 0.0, link.loss_pct or 0.0)


def _element_mac(host_mac: str, n: int) -> str:
    """A locally administered MAC of the element's n-th interface, derived from the
    host's (unique per host, never a host's: Mininet's start with 00)."""
    tail = host_mac.split(":")[2:]
    return ":".join(["02", f"{0x5E + n:02x}", *tail])


def _run(host, argv: list[str]) -> str:
    proc = host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=10)
    if proc.returncode != 0:
        raise ElementError(f"{host.name}: {' '.join(argv)}: {err.strip() or out.strip()}")
    return out


@dataclass
class LinkElement:
    """One element on the link of `host`'s interface `intf` (a Mininet Intf)."""

    host: Node
    intf: Intf
    switch_binary: str
    program_json: str
    run_dir: Path
    proc: subprocess.Popen | None = None

    @property
    def name(self) -> str:
        return self.intf.name

    @property
    def ctl_socket(self) -> str:
        path = self.run_dir / f"element-{self.name}.ctl"
        return str(
            path
            if len(str(path)) < 100
            else Path("/tmp") / f"sdnperf-{os.getpid()}-{self.name}.ctl"
        )

    def insert(self, up: Setting, down: Setting, host_offloads: bool) -> None:
        """Re-plumb the host's link through a wire and start it with these settings."""
        h, name = self.host, self.name
        mac, ip, prefix = self.intf.MAC(), self.intf.IP(), self.intf.prefixLen
        link_side, element_side = f"{name}-l", f"{name}-e"
        for argv in (
            ["ip", "link", "set", name, "down"],
            ["ip", "link", "set", name, "name", link_side],
            ["ip", "link", "add", name, "type", "veth", "peer", "name", element_side],
            ["ip", "link", "set", name, "address", mac],
            ["ip", "addr", "flush", "dev", link_side],
            # The wire's two interfaces must not be the host's: with the host's MAC the
            # kernel would take frames for the host straight off the link side (by-passing
            # the wire) and answer ARP there. Their own MACs, and no ARP.
            ["ip", "link", "set", link_side, "address", _element_mac(mac, 1), "arp", "off"],
            ["ip", "link", "set", element_side, "address", _element_mac(mac, 2), "arp", "off"],
            *([["ip", "addr", "add", f"{ip}/{prefix}", "dev", name]] if ip else []),
            ["ip", "link", "set", link_side, "up"],
            ["ip", "link", "set", element_side, "up"],
            ["ip", "link", "set", name, "up"],
        ):
            _run(h, argv)
        if not host_offloads:
            _run(h, ["ethtool", "-K", name, "tx", "off"])
        if up.rate_mbps:  # the host's end keeps its htb (Mininet's layout, on the new name)
            _run(h, ["tc", "qdisc", "add", "dev", name, "root", "handle", "5:0", "htb",
                     "default", "1"])  # fmt: skip
            _run(h, ["tc", "class", "add", "dev", name, "parent", "5:0", "classid", "5:1",
                     "htb", "rate", f"{up.rate_mbps:g}Mbit", "burst", "15k"])  # fmt: skip
        self.run_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            self.switch_binary,
            "run",
            "--json",
            self.program_json,
            "--ctl-socket",
            self.ctl_socket,
            "--die-with-parent",
            "-i",
            f"{HOST_PORT}@{element_side}",
            "-i",
            f"{LINK_PORT}@{link_side}",
        ]
        for direction, setting in (("up", up), ("down", down)):
            spec = port_spec(replace(setting, rate_mbps=None))
            if spec:
                argv += ["--impair", f"{PORT_OF_DIRECTION[direction]}:{spec}"]
        log = open(self.run_dir / f"element-{name}.log", "w")
        # mnexec -d gives it a session of its own (stop() signals the whole group)
        self.proc = proc = h.popen(argv, stdout=subprocess.PIPE, stderr=log)
        log.close()
        stdout = proc.stdout
        assert stdout is not None  # stdout=PIPE
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([stdout], [], [], 0.1)
            if ready and stdout.readline().strip() == b"READY":
                return
        tail = (self.run_dir / f"element-{name}.log").read_text()[-800:]
        self.stop()
        raise ElementError(f"link element on {h.name}:{name} did not start: {tail}")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def apply(self, direction: str, setting: Setting) -> None:
        """Change one direction's delay, jitter and loss in place (port_impair on a running
        wire; the rate is not the element's)."""
        setting = replace(setting, rate_mbps=None)
        port = PORT_OF_DIRECTION[direction]
        r = subprocess.run(
            [self.switch_binary, "ctl", self.ctl_socket, "-f", "/dev/stdin"],
            input=f"port_impair {port} direction=out {port_spec(setting)}\n",
            capture_output=True,
            text=True,
            timeout=10,
        )
        if r.returncode != 0:
            raise ElementError(f"link element {self.name}: port_impair: {r.stderr.strip()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            stop_process_group(proc, kill_wait=None)
        if proc.stdout is not None:
            proc.stdout.close()


def start_elements(
    net, spec: TopoSpec, links: list[Link], run_dir: Path, host_offloads: bool
) -> dict[tuple[str, str], LinkElement]:
    """An element on each of `links` of a started network (settings of `spec`, the study's
    own, at t = 0). On a failure the ones started are stopped."""
    if not links:
        return {}

    binary = tools.find("sdnperf-switch")
    program = str(compile_file(WIRE_PROGRAM).json)
    started: dict[tuple[str, str], LinkElement] = {}
    try:
        for link in links:
            host_name, switch_name = (
                (link.node1, link.node2) if spec.is_host(link.node1) else (link.node2, link.node1)
            )
            host = net.get(host_name)
            intf = next(
                i
                for i in host.intfList()
                if i.link is not None
                and switch_name in (i.link.intf1.node.name, i.link.intf2.node.name)
            )
            element = LinkElement(host, intf, binary, program, Path(run_dir))
            element.insert(
                link_setting(spec, link, "up"), link_setting(spec, link, "down"), host_offloads
            )
            started[(link.node1, link.node2)] = element
    except BaseException:
        stop_elements(started)
        raise
    return started


def stop_elements(elements: dict) -> None:
    for element in elements.values():
        element.stop()
