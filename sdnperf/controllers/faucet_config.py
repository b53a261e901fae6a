"""Faucet's YAML configuration for a Mininet network: one VLAN, every switch port on it.

This makes Faucet a plain L2 learning switch, comparable with our l2-learning app.
"""

from __future__ import annotations

from pathlib import Path

import yaml

VLAN = 100


def render(switches) -> str:
    """YAML text for started Mininet switches (needs their dpids and port numbers)."""
    dps = {}
    for sw in switches:
        interfaces = {
            port: {"name": intf.name, "native_vlan": "sdnperf"}
            for intf, port in sorted(sw.ports.items(), key=lambda item: item[1])
            if intf.name != "lo" and port != 0
        }
        dps[sw.name] = {
            "dp_id": int(sw.dpid, 16),
            "hardware": "Open vSwitch",
            "interfaces": interfaces,
        }
    return yaml.safe_dump({"vlans": {"sdnperf": {"vid": VLAN}}, "dps": dps}, sort_keys=False)


def write(switches, path) -> Path:
    path = Path(path)
    path.write_text(render(switches))
    return path
