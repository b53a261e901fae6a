"""Faucet's YAML configuration for a Mininet network: one VLAN, every switch port on it.

This makes Faucet a plain L2 learning switch, comparable with our l2-learning app.
"""
from __future__ import annotations

from pathlib import Path

VLAN = 100


def render(switches) -> str:
    """YAML text for started Mininet switches (needs their dpids and port numbers)."""
    lines = ["vlans:", f"  sdnperf:", f"    vid: {VLAN}", "dps:"]
    for sw in switches:
        lines += [f"  {sw.name}:", f"    dp_id: 0x{sw.dpid}", "    hardware: Open vSwitch",
                  "    interfaces:"]
        for intf, port in sorted(sw.ports.items(), key=lambda item: item[1]):
            if intf.name == "lo" or port == 0:
                continue
            lines += [f"      {port}:", f"        name: {intf.name}", f"        native_vlan: sdnperf"]
    return "\n".join(lines) + "\n"


def write(switches, path) -> Path:
    path = Path(path)
    path.write_text(render(switches))
    return path
