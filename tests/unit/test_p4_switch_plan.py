"""The p4 architecture decides every switch's device id and gRPC port before the network
is built (arch/p4.py, plan_switch), so ParallelMininet may create the switches at once and
in any order: each switch gets what Mininet's sequential build (one switch after another,
in the topology's natural order) gave it."""

from __future__ import annotations

import random
import threading

import networkx as nx

from sdnperf.arch.config import P4Config
from sdnperf.topo.spec import TopoSpec


def _spec(names: list[str]) -> TopoSpec:
    graph = nx.Graph()
    for name in names:
        graph.add_node(name, kind="switch")
    for a, b in zip(names, names[1:]):
        graph.add_edge(a, b)
    return TopoSpec(name="plan", graph=graph)


def _made_switches(arch, order: list[str], threads: bool) -> dict[str, tuple[int, int]]:
    """name -> (device id, gRPC port) each switch of `order` is constructed with."""
    import sdnperf.emulation.p4switch as p4switch

    made: dict[str, tuple[int, int]] = {}

    class Capture:
        def __init__(self, name, grpc_port=None, device_id=None, **_):
            made[name] = (device_id, grpc_port)

    original = p4switch.P4Switch
    p4switch.P4Switch = Capture
    try:
        make = arch.mininet_options()["switch"]
        if threads:
            workers = [threading.Thread(target=make, args=(name,)) for name in order]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        else:
            for name in order:
                make(name)
    finally:
        p4switch.P4Switch = original
    return made


def _arch(tmp_path, names, monkeypatch, base_port: int | None = None):
    from sdnperf.arch import p4

    monkeypatch.setattr(p4.P4Architecture, "switch_binary", lambda self: "/bin/true")
    config = P4Config(kind="p4", name="p", grpc_base_port=base_port)
    return p4.P4Architecture(config, _spec(names), tmp_path, needs={})


def _sequential_ids(names: list[str]) -> dict[str, int]:
    """What the switches got when Mininet made them one after another (natural order):
    device_ids() of the whole topology."""
    from sdnperf.arch.p4 import device_ids

    return device_ids(names)


NAMES = ["s10", "s2", "core", "s1", "agg", "edge0", "s9"]


def test_ids_are_decided_before_any_switch_is_made(tmp_path, monkeypatch):
    arch = _arch(tmp_path, NAMES, monkeypatch)
    arch.mininet_options()
    assert {name: dev for name, (dev, _) in arch.switches.items()} == _sequential_ids(NAMES)
    # a name ending in a number keeps it; "agg", "core", "edge0" take the smallest free ids
    assert arch.switches["s10"][0] == 10 and arch.switches["s1"][0] == 1
    assert [arch.switches[n][0] for n in ("agg", "core", "edge0")] == [3, 4, 5]
    ids = [dev for dev, _ in arch.switches.values()]
    assert len(set(ids)) == len(ids)  # one device id per switch
    ports = [port for _, port in arch.switches.values()]
    assert len(set(ports)) == len(ports)  # one gRPC port per switch


def test_switches_made_at_once_in_any_order_get_the_sequential_ids(tmp_path, monkeypatch):
    sequential = _made_switches(_arch(tmp_path, NAMES, monkeypatch), NAMES, threads=False)
    shuffled = list(NAMES)
    random.Random(3).shuffle(shuffled)
    arch = _arch(tmp_path, NAMES, monkeypatch)
    planned = dict(arch.switches)
    parallel = _made_switches(arch, shuffled, threads=True)
    assert {n: d for n, (d, _) in parallel.items()} == {n: d for n, (d, _) in sequential.items()}
    assert {n: d for n, (d, _) in parallel.items()} == _sequential_ids(NAMES)
    # nothing is planned before the options are asked for; then what each switch is made
    # with is the plan
    assert planned == {} and parallel == arch.switches


def test_fixed_base_port_follows_the_device_id(tmp_path, monkeypatch):
    arch = _arch(tmp_path, ["s1", "s2", "s3"], monkeypatch, base_port=50001)
    made = _made_switches(arch, ["s3", "s1", "s2"], threads=True)
    assert made == {"s1": (1, 50001), "s2": (2, 50002), "s3": (3, 50003)}


def test_a_switch_the_topology_did_not_name_is_planned_on_demand(tmp_path, monkeypatch):
    arch = _arch(tmp_path, ["s1", "s2"], monkeypatch)
    made = _made_switches(arch, ["s1", "s2", "extra"], threads=False)
    assert made["extra"][0] == 3 and arch.switches["extra"] == made["extra"]


def test_device_ids_are_unique_when_names_share_a_number():
    """ "agg1" and "s1" both end in 1, "agg" in none: the first in natural order keeps 1, the
    others take the smallest free ids (before, "agg" got 1 too, and with fixed gRPC ports
    base + id - 1 two switches asked for one port)."""
    from sdnperf.arch.p4 import device_ids

    ids = device_ids(["s1", "agg1", "agg", "s2", "s4"])
    assert ids == {"agg": 3, "agg1": 1, "s1": 5, "s2": 2, "s4": 4}
    assert len(set(ids.values())) == len(ids)
