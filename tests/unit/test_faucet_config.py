"""Faucet's configuration for a started network: one dp per switch, its ports on one VLAN."""

from dataclasses import dataclass
from types import SimpleNamespace

import yaml

from sdnperf.controllers import faucet_config


@dataclass(frozen=True)
class Intf:  # Mininet's Intf as far as render() looks (a dict key, like Mininet's ports)
    name: str


def test_render_one_dp_per_switch_ports_in_order_without_loopback():
    s1 = SimpleNamespace(
        name="s1",
        dpid="000000000000000a",
        ports={Intf("s1-eth2"): 2, Intf("lo"): 0, Intf("s1-eth1"): 1},
    )
    config = yaml.safe_load(faucet_config.render([s1]))
    assert config["vlans"] == {"sdnperf": {"vid": faucet_config.VLAN}}
    dp = config["dps"]["s1"]
    assert dp["dp_id"] == 10 and dp["hardware"] == "Open vSwitch"
    assert dp["interfaces"] == {
        1: {"name": "s1-eth1", "native_vlan": "sdnperf"},
        2: {"name": "s1-eth2", "native_vlan": "sdnperf"},
    }
