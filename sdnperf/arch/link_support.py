"""Can this kernel emulate a topology's link settings for these architectures? Without
sch_netem, link delay and loss run only where the architecture impairs links in its own
switches or a link element carries them; without HTB, no link rate at all. Asked by the
runner's preflight before anything starts. It needs the architecture classes, so it lives
here and not in emulation/, which builds networks and knows no architecture."""

from __future__ import annotations

from sdnperf.arch import architecture_class
from sdnperf.emulation import capabilities
from sdnperf.emulation.capabilities import Capability
from sdnperf.emulation.network import EmulationError
from sdnperf.links.element import element_links, without_links
from sdnperf.topo.spec import TopoSpec


def arch_label(config) -> str:
    """How a refusal names an architecture of the study: its name, and kind/target when
    the name does not say them."""
    extra = [] if config.name == config.kind else [config.kind]
    if getattr(config, "target", None) not in (None, "sdnperf"):
        extra.append(f"target {config.target}")
    return f"{config.name} ({', '.join(extra)})" if extra else config.name


def check_link_features(spec: TopoSpec, architectures=(), netem: Capability | None = None) -> None:
    """Refuse (in words) link settings this kernel cannot emulate, instead of skipping them
    silently as Mininet's TCLink does when sch_netem is missing.

    Without sch_netem, link delay/loss still run on architectures that emulate them in
    their own switches (Architecture.impairs_links_itself: p4 on our switch); every other
    architecture of the study is named in the refusal. `netem` defaults to the detected
    capability (a test passes its own)."""
    if spec.serialised_links():
        cap = netem if netem is not None else capabilities.netem()
        if not cap.ok:
            blocked = [
                a for a in architectures if not architecture_class(a).impairs_links_itself(a)
            ]
            if blocked or not architectures:
                links = ", ".join(f"{x.node1}-{x.node2}" for x in spec.serialised_links()[:5])
                who = (
                    f"architecture(s) {', '.join(arch_label(a) for a in blocked)} cannot run "
                    "it here"
                    if blocked
                    else "no architecture can run it here"
                )
                raise EmulationError(
                    f"topology {spec.name!r}: serialise = true (link(s) {links}) holds every "
                    "packet for its transmission time with netem's `rate`, which needs the "
                    f"kernel's sch_netem qdisc — {cap.detail}; {who}. Drop serialise, run on "
                    'a kernel with sch_netem, or use the p4 architecture (kind = "p4", '
                    'target = "sdnperf"), whose switch serialises on its own ports.'
                )
    if spec.needs_netem():
        cap = netem if netem is not None else capabilities.netem()
        if not cap.ok:
            able, blocked = [], []
            for a in architectures:
                itself = architecture_class(a).impairs_links_itself(a)
                # host links with a link element ([topology.link] element) need no netem
                bare = without_links(spec, element_links(spec, False, itself))
                if itself:
                    able.append(a)
                elif bare.needs_netem():
                    blocked.append(a)
            if blocked or not architectures:
                who = (
                    f"architecture(s) {', '.join(arch_label(a) for a in blocked)} cannot run "
                    "this study here"
                    if blocked
                    else "no architecture can run it here"
                )
                also = (
                    f"; {', '.join(arch_label(a) for a in able)} would use its switch's "
                    "per-port impairment"
                    if able
                    else ""
                )
                raise EmulationError(
                    f"topology {spec.name!r} sets link delay or loss, which needs the kernel's "
                    f"sch_netem qdisc — {cap.detail}; {who}{also}. Remove "
                    "delay_ms/loss_pct, run on a kernel with sch_netem (e.g. Ubuntu's "
                    'linux-modules-extra), use the p4 architecture (kind = "p4", target = '
                    '"sdnperf"), whose switch impairs its ports itself, or put the sdnperf '
                    'link element on host links ([topology.link] element = "auto").'
                )
    if spec.needs_htb():
        cap = capabilities.htb()
        if not cap.ok:
            raise EmulationError(f"topology {spec.name!r} sets link bandwidth, but {cap.detail}")
