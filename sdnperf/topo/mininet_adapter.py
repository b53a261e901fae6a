"""TopoSpec -> mininet.topo.Topo. Mininet is imported here only, and lazily, because it
imports only under Debian's /usr/bin/python3 (and `topo show` must work without it)."""

from __future__ import annotations

from .spec import Link, TopologyError, TopoSpec

# Mininet's TCIntf ignores (with a log line) any bw above this, so we refuse it instead.
MININET_MAX_BW_MBIT = 1000


def _ms(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{text}ms"


def link_opts(link: Link, netem: bool = True) -> dict:
    """TCLink options for one link, only those that are set.

    Zero delay and zero loss are left out, so a study whose defaults are 0 does not need
    sch_netem in the kernel. The links only take effect when the net uses TCLink.
    netem=False leaves delay and loss out altogether: the architecture's switches emulate
    them (the kernel has no sch_netem; arch/link_support.py decides).
    """
    opts: dict = {}
    if link.serialise and link.bw is not None:
        # a netem qdisc with `rate` (emulation/network.py, set_link_serialisation) or our
        # switch's ports shape the link; htb would only add its token bucket
        return opts
    if link.bw is not None:
        if link.bw > MININET_MAX_BW_MBIT:
            raise TopologyError(
                f"link {link.node1}-{link.node2}: bw {link.bw} Mbit/s is above "
                f"the {MININET_MAX_BW_MBIT} Mbit/s Mininet can shape; "
                f"leave bw unset for an unshaped link"
            )
        opts["bw"] = link.bw
    if link.delay_ms and netem:
        opts["delay"] = _ms(link.delay_ms)
    if link.loss_pct and netem:
        opts["loss"] = link.loss_pct
    return opts


def check_links(spec: TopoSpec) -> None:
    """Raise TopologyError now for link settings Mininet could not apply (call it before
    starting anything, so a study fails at load time, not mid-run)."""
    for link in spec.links():
        link_opts(link)
        if link.serialise and link.bw is not None and link.bw > MININET_MAX_BW_MBIT:
            raise TopologyError(
                f"link {link.node1}-{link.node2}: bw {link.bw} Mbit/s is above "
                f"the {MININET_MAX_BW_MBIT} Mbit/s a shaped link may have"
            )


def to_mininet_topo(spec: TopoSpec, netem: bool = True):
    """A mininet.topo.Topo with the same hosts, switches and links (and link options;
    netem=False: without delay/loss, see link_opts)."""
    from mininet.topo import Topo

    spec.validate()
    topo = Topo()
    for switch in spec.switches():
        topo.addSwitch(switch, **spec.graph.nodes[switch].get("opts", {}))
    for host in spec.hosts():
        topo.addHost(host, **spec.graph.nodes[host].get("opts", {}))
    for link in spec.links():
        extra = spec.graph.edges[link.node1, link.node2].get("opts", {})
        topo.addLink(
            link.node1,
            link.node2,
            port1=link.port1,
            port2=link.port2,
            **{**extra, **link_opts(link, netem)},
        )
    return topo
