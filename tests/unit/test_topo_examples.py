"""Every examples/topo-*.toml builds its topology and names only hosts that exist."""

import tomllib
from pathlib import Path

import pytest

from sdnperf.topo import TOPOLOGIES, topology_from_table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STUDIES = sorted(EXAMPLES.glob("topo-*.toml"))


def test_one_example_per_kind():
    kinds = {tomllib.loads(p.read_text())["topology"]["kind"] for p in STUDIES}
    assert kinds == set(TOPOLOGIES)


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_example_topology_builds(path):
    study = tomllib.loads(path.read_text())
    if study["topology"]["kind"] == "custom":
        pytest.importorskip("mininet.topo")
    spec = topology_from_table(study["topology"], study["study"]["seed"], base_dir=path.parent)
    hosts = set(spec.hosts())
    for workload in study["workload"]:
        for pair in workload["pairs"]:
            assert set(pair) <= hosts, f"{path.name}: {pair} not in {spec.describe()}"
    apps = {a.get("app") for a in study["architecture"] if a["kind"] == "openflow"}
    # loopy topologies need the topology-aware app; the learning switch would flood forever
    if spec.has_loops():
        assert apps == {"topo-forwarding"}, path.name
    assert spec.needs_netem() == ("delay" in path.stem), path.name


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_example_loads_with_study_loader(path):
    loader = pytest.importorskip("sdnperf.study.loader")
    if "custom" in path.stem:
        pytest.importorskip("mininet.topo")
    loaded = loader.load_study(path)
    assert loaded.topology.hosts()
