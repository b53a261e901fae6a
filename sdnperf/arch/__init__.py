"""Architectures under test; `ARCHITECTURES` is the one place to add a new one."""

from __future__ import annotations

from sdnperf.arch.base import Architecture, ArchitectureError
from sdnperf.emulation import capabilities
from sdnperf.topo.spec import TopoSpec

ARCHITECTURE_MODULES = {
    "bridge": ("sdnperf.arch.bridge", "BridgeArchitecture"),
    "router": ("sdnperf.arch.router", "RouterArchitecture"),
    "direct": ("sdnperf.arch.direct", "DirectArchitecture"),
    "userspace": ("sdnperf.arch.userspace", "UserspaceArchitecture"),
    "ovs-standalone": ("sdnperf.arch.ovs", "OvsStandaloneArchitecture"),
    "ovs-flows": ("sdnperf.arch.ovs", "OvsFlowsArchitecture"),
    "openflow": ("sdnperf.arch.ovs", "OpenflowArchitecture"),
    "p4": ("sdnperf.arch.p4", "P4Architecture"),
}


def architecture_class(config) -> type[Architecture]:
    """The class for a validated config (imports Mininet lazily)."""
    import importlib

    module_name, class_name = ARCHITECTURE_MODULES[config.kind]
    return getattr(importlib.import_module(module_name), class_name)


def check_architecture(config, spec: TopoSpec, netem=None) -> dict:
    """What `config` needs of `spec`, or ArchitectureError; starts nothing (no run folder).
    `netem`: the sch_netem capability (default: detected; a test passes its own)."""
    cls = architecture_class(config)
    check_serialisation(config, cls.impairs_links_itself(config), spec, netem)
    return cls.check(config, spec)


def check_serialisation(config, impairs_itself: bool, spec: TopoSpec, netem=None) -> None:
    """Serialised links (`serialise`) on kernel links need netem's `rate`: refuse an
    architecture that leaves its links to the kernel where sch_netem is missing (our
    switch serialises on its own ports), so `study run` leaves it out with the reason."""
    links = spec.serialised_links()
    if not links or impairs_itself:
        return
    cap = netem if netem is not None else capabilities.netem()
    if not cap.ok:
        names = ", ".join(f"{x.node1}-{x.node2}" for x in links[:5])
        raise ArchitectureError(
            f"architecture {config.name!r}: serialise = true (link(s) {names}) needs the "
            f"kernel's sch_netem qdisc (netem's `rate`) on this architecture's links — "
            f'{cap.detail}; drop serialise or use p4 on our switch (target = "sdnperf")'
        )


__all__ = [
    "Architecture",
    "ArchitectureError",
    "architecture_class",
    "check_architecture",
    "check_serialisation",
    "ARCHITECTURE_MODULES",
]
