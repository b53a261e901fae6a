"""How one direction of a scheduled link is changed in a running network, in place:

- tc on the sending interface (Mininet's TCLink layout: htb root 5:0, class 5:1, netem
  10: under it or at the root): `tc class change` for the rate, `tc qdisc change` for
  delay/jitter/loss — never deleted and recreated, which would drop the queue;
- our P4 switch's port impairment (`port_impair`, direction out on its own ports; in on a
  host's port when the kernel has no sch_netem for the host's end), as arch/p4.py sets it
  up;
- the link element's ports (element.py), on links that have one.

`appliers(net, spec, elements, ...)` gives one callable per DirectionPlan.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Callable

from sdnperf.emulation.nodes import ControlledSwitch, Node
from sdnperf.links import htb
from sdnperf.links.element import LinkElement, port_spec
from sdnperf.links.schedule import DirectionPlan, Setting
from sdnperf.topo.spec import TopoSpec

Applier = Callable[[Setting], None]


class ApplyError(RuntimeError):
    pass


def _mbit(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") + "Mbit"


def htb_change(intf: str, rate_mbps: float) -> list[str]:
    """The rate of Mininet's htb class 5:1, changed in place."""
    return ["tc", "class", "change", "dev", intf, "parent", "5:0", "classid", "5:1", "htb",
            "rate", _mbit(rate_mbps), "burst", "15k"]  # fmt: skip


def netem_change(intf: str, setting: Setting, under_htb: bool, verb: str = "change") -> list[str]:
    """Mininet's netem qdisc (handle 10:) set to a setting's delay, jitter and loss."""
    parent = ["parent", "5:1"] if under_htb else ["root"]
    args = ["delay", f"{setting.delay_ms:g}ms"]
    if setting.jitter_ms:
        args.append(f"{setting.jitter_ms:g}ms")
    args += ["loss", f"{setting.loss_pct:g}%"]
    return ["tc", "qdisc", verb, "dev", intf, *parent, "handle", "10:", "netem", *args]


def _run(node, argv: list[str]) -> subprocess.CompletedProcess:
    proc = node.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=10)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@dataclass
class TcEnd:
    """tc on one interface of a node (host or switch), changed in place. `netem`: the
    kernel has sch_netem (else delay/loss are someone else's: `rest`)."""

    node: Node
    intf: str
    htb: bool
    netem: bool
    netem_installed: bool
    rest: Applier | None = None  # who takes delay/jitter/loss without netem
    last: Setting | None = field(default=None)

    def __call__(self, setting: Setting) -> None:
        last = self.last
        if self.htb and setting.rate_mbps and (last is None or last.rate_mbps != setting.rate_mbps):
            self._tc(htb_change(self.intf, setting.rate_mbps))
        impair = (setting.delay_ms, setting.jitter_ms, setting.loss_pct)
        if last is None or impair != (last.delay_ms, last.jitter_ms, last.loss_pct):
            if self.netem:
                if not self.netem_installed:
                    if setting.impairs():  # else nothing to install yet
                        self._tc(netem_change(self.intf, setting, self.htb, "add"))
                        self.netem_installed = True
                else:
                    self._tc(netem_change(self.intf, setting, self.htb))
            elif self.rest is not None:
                self.rest(Setting(None, *impair))
            elif setting.impairs():
                raise ApplyError(
                    f"{self.intf}: delay/loss without sch_netem and no switch port to take it"
                )
        self.last = setting

    def _tc(self, argv: list[str]) -> None:
        r = _run(self.node, argv)
        if r.returncode != 0:
            raise ApplyError(f"{self.node.name}: {' '.join(argv)}: {r.stderr.strip()}")


@dataclass
class SwitchPort:
    """One side of one of our P4 switch's ports (port_impair, the whole setting)."""

    switch: ControlledSwitch
    port: int
    direction: str  # "out" | "in"
    port_burst: str = "htb"  # the p4 architecture's `port_burst` (links/htb.py)

    def __call__(self, setting: Setting) -> None:
        if self.direction == "in":
            setting = Setting(None, setting.delay_ms, setting.jitter_ms, setting.loss_pct)
        spec = port_spec(setting)
        if setting.rate_mbps:  # the rate's token bucket, as Mininet's htb has at that rate
            burst = htb.port_burst_bytes(setting.rate_mbps, self.port_burst, htb.host_hz())
            spec += f",burst={burst}" if burst else ""
        self.switch.ctl(f"port_impair {self.port} direction={self.direction} {spec}")


def _ends(net, a: str, b: str):
    """(node, intf) of both ends of the link a-b in a built Mininet network."""
    for link in net.links:
        i1, i2 = link.intf1, link.intf2
        if (i1.node.name, i2.node.name) == (a, b):
            return (i1.node, i1), (i2.node, i2)
        if (i1.node.name, i2.node.name) == (b, a):
            return (i2.node, i2), (i1.node, i1)
    raise ApplyError(f"no link {a}-{b} in the network")


def _ours(node) -> bool:
    """Our P4 switch (it impairs its own ports; tc on them is bypassed)."""
    return getattr(node, "target", None) == "sdnperf" and hasattr(node, "ctl")


def _with_element(
    element: LinkElement, direction: str, sender, sintf, data, port_burst: str
) -> Applier:
    """A direction of a link with an element: delay/jitter/loss by the element, the rate
    by the sender's end (htb, or our switch's port)."""

    def impair(setting: Setting) -> None:
        element.apply(direction, setting)

    if _ours(sender):
        port = SwitchPort(sender, sender.ports[sintf], "out", port_burst)

        def both(setting: Setting) -> None:
            port(Setting(setting.rate_mbps))
            impair(setting)

        return both
    return TcEnd(sender, sintf.name, data["bw"] is not None, False, False, rest=impair)


def appliers(
    net,
    spec: TopoSpec,
    elements: dict[tuple[str, str], LinkElement],
    kernel_netem: bool,
    port_burst: str = "htb",
) -> list[tuple[DirectionPlan, Applier]]:
    """One applier per scheduled direction: the link's element if it has one, else the
    sending end's switch port (ours, shaping with `port_burst`) or tc; delay/loss of a
    host's end without sch_netem go to our switch's port ingress, as arch/p4.py does at
    start."""
    out: list[tuple[DirectionPlan, Applier]] = []
    for plan in spec.schedules:
        key = (plan.node1, plan.node2)
        element = elements.get(key)
        data = spec.graph.edges[key]
        for d in plan.directions():
            (n1, i1), (n2, i2) = _ends(net, plan.node1, plan.node2)
            (sender, sintf), (receiver, rintf) = (
                ((n1, i1), (n2, i2)) if d.direction == "up" else ((n2, i2), (n1, i1))
            )
            if element is not None:  # it delays and drops; the rate stays tc's or the port's
                out.append(
                    (d, _with_element(element, d.direction, sender, sintf, data, port_burst))
                )
                continue
            if _ours(sender):
                out.append((d, SwitchPort(sender, sender.ports[sintf], "out", port_burst)))
                continue
            rest = None
            if not kernel_netem and _ours(receiver):
                rest = SwitchPort(receiver, receiver.ports[rintf], "in")
            installed = kernel_netem and bool(data["delay_ms"] or data["loss_pct"])
            out.append(
                (
                    d,
                    TcEnd(
                        sender, sintf.name, data["bw"] is not None, kernel_netem, installed, rest
                    ),
                )
            )
    return out
