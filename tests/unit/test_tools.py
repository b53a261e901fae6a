"""One search order for our Rust binaries (sdnperf/tools.py): doctor, runs, the P4
compiler, ctlbench and `sdnperf p4c/switch/stf` resolve the same path."""

from __future__ import annotations

import pytest

from sdnperf import tools

BINARIES = ["sdnperf-p4c", "sdnperf-switch", "sdnperf-switch-grpc", "sdnperf-probe"]


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    for name in BINARIES:
        monkeypatch.delenv(tools.env_var(name), raising=False)
        exe = tmp_path / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("SDNPERF_BIN_DIR", str(tmp_path))
    return tmp_path


def test_doctor_and_a_run_resolve_the_same_path(bin_dir, tmp_path):
    from sdnperf import doctor, p4
    from sdnperf.arch.config import P4Config
    from sdnperf.arch.p4 import P4Architecture
    from sdnperf.ctlbench import probe
    from sdnperf.topo.registry import build_topology

    for name in BINARIES:
        found = doctor._rust(name)
        assert found.ok and found.detail == str(bin_dir / name) == tools.find(name)
    spec = build_topology("single", {"hosts": 2}, seed=1)
    arch = P4Architecture(P4Config(kind="p4", name="p4"), spec, tmp_path / "run", needs={})
    assert arch.switch_binary() == doctor._rust("sdnperf-switch-grpc").detail
    assert p4.find_compiler() == doctor._rust("sdnperf-p4c").detail
    assert probe.binary() == doctor._rust("sdnperf-probe").detail


def test_one_binary_pinned_wins_over_the_folder(bin_dir, tmp_path, monkeypatch):
    pinned = tmp_path / "elsewhere" / "my-switch"
    pinned.parent.mkdir()
    pinned.write_text("")
    monkeypatch.setenv("SDNPERF_SWITCH_GRPC_BIN", str(pinned))
    assert tools.find("sdnperf-switch-grpc") == str(pinned)
    assert tools.find("sdnperf-switch") == str(bin_dir / "sdnperf-switch")


def test_a_pin_to_nothing_is_an_error_naming_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("SDNPERF_PROBE_BIN", str(tmp_path / "missing"))
    with pytest.raises(tools.ToolNotFound, match="SDNPERF_PROBE_BIN=.*no such file"):
        tools.find("sdnperf-probe")
    assert tools.locate("sdnperf-probe") is None


def test_variable_names_and_build_hint():
    assert tools.env_var("sdnperf-switch-grpc") == "SDNPERF_SWITCH_GRPC_BIN"
    assert tools.env_var("sdnperf-p4c") == "SDNPERF_P4C_BIN"
    with pytest.raises(tools.ToolNotFound, match="cargo build --release -p sdnperf-nothing-here"):
        tools.find("sdnperf-nothing-here")
