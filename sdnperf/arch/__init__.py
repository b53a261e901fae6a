"""Architectures under test; `ARCHITECTURES` is the one place to add a new one."""

from __future__ import annotations

from sdnperf.arch.base import Architecture, ArchitectureError
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


def check_architecture(config, spec: TopoSpec) -> dict:
    """What `config` needs of `spec`, or ArchitectureError; starts nothing (no run folder)."""
    return architecture_class(config).check(config, spec)


__all__ = [
    "Architecture",
    "ArchitectureError",
    "architecture_class",
    "check_architecture",
    "ARCHITECTURE_MODULES",
]
