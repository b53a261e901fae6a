"""`sdnperf doctor`: what this machine can and cannot do, and what each gap prevents."""

from __future__ import annotations

import json
import os
import sys

from rich.console import Console
from rich.table import Table

from sdnperf import tools
from sdnperf.controllers.process import POX_HINT, pox_home, venv_tool
from sdnperf.emulation import capabilities
from sdnperf.emulation.capabilities import Capability


def _mininet() -> Capability:
    try:
        import mininet.net  # noqa: F401

        return Capability("mininet", True, f"Mininet {mininet.net.VERSION}")
    except ImportError as exc:
        return Capability(
            "mininet",
            False,
            f"cannot import ({exc}); Debian's python3-mininet "
            "imports under /usr/bin/python3 — use scripts/install.sh's venv",
        )


def _rust(name: str) -> Capability:
    """One of our Rust binaries, found as runs find it (sdnperf/tools.py)."""
    try:
        return Capability(name, True, tools.find(name))
    except tools.ToolNotFound as exc:
        return Capability(name, False, str(exc))


def _p4rt_client() -> Capability:
    try:
        import finsy  # noqa: F401  (its P4Runtime protobufs)
        import grpc

        return Capability("p4runtime client", True, f"grpcio {grpc.__version__}, finsy protobufs")
    except ImportError as exc:
        return Capability("p4runtime client", False, f"cannot import ({exc}); pip install finsy")


def _bmv2() -> Capability:
    """BMv2's simple_switch_grpc, found as a run finds it (tools.find_bmv2)."""
    path = tools.find_bmv2("simple_switch_grpc")
    if path is None:
        return Capability(
            "simple_switch_grpc",
            False,
            f"{tools.bmv2_hint('simple_switch_grpc')}: BMv2 built with P4Runtime",
        )
    return capabilities.tool(path, ("--version",))


def _pox() -> Capability:

    home = pox_home()
    if home is None:
        return Capability(
            "pox", False, f"no POX checkout ($POX_HOME or pox.py on PATH): {POX_HINT}"
        )
    return Capability("pox", True, str(home))


def checks() -> list[tuple[Capability, str]]:
    """(capability, what is impossible without it)."""
    return [
        (
            Capability(
                "root", os.geteuid() == 0, "running as root" if os.geteuid() == 0 else "not root"
            ),
            "any emulated network",
        ),
        (_mininet(), "any emulated network"),
        (capabilities.tool("mnexec", ("-v",)), "any emulated network"),
        (capabilities.tool("ovs-vswitchd"), "ovs-standalone, ovs-flows and openflow architectures"),
        (capabilities.ovs_datapath(), "—"),
        (capabilities.htb(), "link bandwidth limits"),
        (
            capabilities.netem(),
            "link delay and loss on bridge/openflow/bmv2 (p4 on our switch uses its own port impairment)",
        ),
        (
            capabilities.bridge_vlan_filtering(),
            "bridge with vlan = N (the kernel VLAN chain of workload-complexity)",
        ),
        (capabilities.tool("iperf3"), "iperf-tcp / iperf-udp workloads"),
        (capabilities.tool("ping", ("-V",)), "ping workload"),
        (capabilities.tool(venv_tool("osken-manager")), "openflow with controller = osken"),
        (
            capabilities.tool(venv_tool("faucet"), ("--version",)),
            "openflow with controller = faucet",
        ),
        (
            capabilities.tool("ovs-testcontroller", ("--version",)),
            "openflow with controller = ovs-testcontroller",
        ),
        (_pox(), "openflow with controller = pox (optional)"),
        (capabilities.tool("tcpdump"), "packet capture"),
        (capabilities.tool("ITGSend", ("-h",)), "VoIP workload (D-ITG)"),
        (_rust("sdnperf-p4c"), "compiling P4 programs"),
        (_rust("sdnperf-switch"), "the p4 architecture and STF tests"),
        (
            _rust("sdnperf-switch-grpc"),
            'the p4 architecture (P4Runtime switch, target = "sdnperf")',
        ),
        (_rust("sdnperf-probe"), "sdnperf ctlbench (controller benchmark load)"),
        (_bmv2(), 'p4 architecture with target = "bmv2" (optional)'),
        (_p4rt_client(), "the p4 architecture's P4Runtime controller"),
    ]


def run_doctor(as_json: bool = False) -> int:
    if as_json:
        print(
            json.dumps(
                [
                    {"capability": c.name, "ok": c.ok, "detail": c.detail, "needed_for": n}
                    for c, n in checks()
                ],
                indent=2,
            )
        )
        return 0
    if not sys.stdout.isatty():  # a file, `| cat`, a CI log: whole lines, never cut at 80
        missing = 0
        for cap, needed_for in checks():
            missing += not cap.ok
            print(f"{'✓' if cap.ok else '✗'} {cap.name}: {cap.detail} (needed for: {needed_for})")
        print(f"{missing} capability(ies) missing" if missing else "everything available")
        return 0
    console = Console()
    table = Table(title="sdnperf doctor", show_lines=False)
    table.add_column("")
    table.add_column("capability")
    table.add_column("found / why not")
    table.add_column("needed for")
    missing = 0
    for cap, needed_for in checks():
        mark = "[green]✓[/]" if cap.ok else "[red]✗[/]"
        missing += not cap.ok
        table.add_row(mark, cap.name, cap.detail, needed_for)
    console.print(table)
    console.print(f"{missing} capability(ies) missing" if missing else "everything available")
    return 0
