"""The `p4` architecture's checks and configuration (no network)."""
from __future__ import annotations

import pydantic
import pytest

from sdnperf.arch import ARCHITECTURE_MODULES, ArchitectureError, make_architecture
from sdnperf.arch.config import P4Config
from sdnperf.study.loader import load_study_text
from sdnperf.topo.registry import build_topology


def test_registered_and_validated():
    assert ARCHITECTURE_MODULES["p4"] == ("sdnperf.arch.p4", "P4Architecture")
    cfg = P4Config(kind="p4", name="p4")
    assert cfg.app == "l2-learning" and cfg.target == "sdnperf"
    with pytest.raises(pydantic.ValidationError):
        P4Config(kind="p4", name="p4", app="flood-everything")


def test_study_file_with_p4():
    study = load_study_text('[study]\nname = "x"\n[topology]\nkind = "single"\n'
                            '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "proactive"\n'
                            '[[workload]]\nname = "ping"\nkind = "ping"\n'
                            'pairs = [["h1", "h2"]]\n', "<t>", base_dir=".")
    assert study.config.architecture[0].app == "proactive"


def test_l2_learning_refused_on_loops(tmp_path):
    spec = build_topology("grid", {"rows": 2, "cols": 2}, seed=1)
    arch = make_architecture(P4Config(kind="p4", name="p4", app="l2-learning"), tmp_path)
    with pytest.raises(ArchitectureError, match="topo-forwarding"):
        arch.check(spec)


def test_bmv2_refused_without_simple_switch_grpc(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    spec = build_topology("single", {"hosts": 2}, seed=1)
    arch = make_architecture(P4Config(kind="p4", name="p4", target="bmv2"), tmp_path)
    with pytest.raises(ArchitectureError, match="simple_switch_grpc"):
        arch.check(spec)


def test_runtime_json_needs_a_file_per_switch(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    (tmp_path / "s1-runtime.json").write_text("{}")
    cfg = P4Config(kind="p4", name="p4", app="runtime-json", runtime_dir=str(tmp_path))
    arch = make_architecture(cfg, tmp_path)
    try:
        arch.check(spec)
    except ArchitectureError as exc:
        if "not built" in str(exc):
            pytest.skip(str(exc))
        assert "s2-runtime.json" in str(exc)
    else:
        pytest.fail("missing runtime files accepted")
    with pytest.raises(ArchitectureError, match="runtime_dir"):
        make_architecture(P4Config(kind="p4", name="p4", app="runtime-json"), tmp_path).check(spec)


def test_example_runtime_files_are_valid():
    from pathlib import Path

    from sdnperf import p4
    from sdnperf.controllers.p4rt import runtime_json
    from sdnperf.controllers.p4rt.schema import Schema
    folder = Path(__file__).resolve().parents[2] / "examples/data/p4-runtime-linear"
    try:
        schema = Schema.from_file(p4.compiled("l2l3").p4info)
    except p4.P4ProgramError as exc:
        pytest.skip(str(exc))
    for name, path in runtime_json.files_for(folder, ["s1", "s2", "s3"]).items():
        assert runtime_json.load(path).build_updates(schema)
