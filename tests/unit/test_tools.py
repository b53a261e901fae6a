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


# -- BMv2: one locator (tools.find_bmv2), one variable ($SDNPERF_BMV2_DIR) --------------------


def _exe(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def no_bmv2(tmp_path, monkeypatch):
    """No BMv2 anywhere: empty PATH, no variable, no reference bundle beside the checkout."""
    for name in (tools.BMV2_ENV, tools.BMV2_ENV_DEPRECATED):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    monkeypatch.setattr(tools, "REFERENCE_BUNDLES", (tmp_path / "shared" / "p4-reference",))
    return tmp_path


def test_bmv2_dir_pins_one_folder_its_bin_or_itself_and_path_is_then_not_searched(
    no_bmv2, monkeypatch
):
    on_path = _exe(no_bmv2 / "path" / "simple_switch_grpc")
    monkeypatch.setenv("PATH", str(no_bmv2 / "path"))
    assert tools.find_bmv2("simple_switch_grpc") == on_path
    in_bin = _exe(no_bmv2 / "bmv2" / "bin" / "simple_switch_grpc")
    monkeypatch.setenv(tools.BMV2_ENV, str(no_bmv2 / "bmv2"))
    assert tools.find_bmv2("simple_switch_grpc") == in_bin
    itself = _exe(no_bmv2 / "flat" / "simple_switch")
    monkeypatch.setenv(tools.BMV2_ENV, str(no_bmv2 / "flat"))
    assert tools.find_bmv2("simple_switch") == itself
    assert tools.find_bmv2("simple_switch_grpc") is None  # pinned: PATH's copy is not taken
    assert "$SDNPERF_BMV2_DIR" in tools.bmv2_hint("simple_switch_grpc")


def test_the_reference_bundle_is_for_tests_and_bench_only(no_bmv2):
    bundled = _exe(no_bmv2 / "shared" / "p4-reference" / "bin" / "p4c-bm2-ss")
    assert tools.find_bmv2("p4c-bm2-ss") is None  # a run never takes the test oracle
    assert tools.find_bmv2("p4c-bm2-ss", reference=True) == bundled
    assert tools.bmv2_dir(reference=True) == no_bmv2 / "shared" / "p4-reference"
    assert "p4-reference" in tools.bmv2_hint("simple_switch", reference=True)


def test_the_deprecated_variable_still_pins_the_folder_with_a_warning(no_bmv2, monkeypatch):
    old = _exe(no_bmv2 / "old" / "bin" / "simple_switch_grpc")
    monkeypatch.setenv(tools.BMV2_ENV_DEPRECATED, str(no_bmv2 / "old"))
    with pytest.warns(DeprecationWarning, match="SDNPERF_BMV2_DIR"):
        assert tools.find_bmv2("simple_switch_grpc") == old
    monkeypatch.setenv(tools.BMV2_ENV, str(no_bmv2 / "new"))  # the new one wins
    assert tools.find_bmv2("simple_switch_grpc") is None


def test_target_bmv2_is_refused_naming_the_variable_when_bmv2_is_missing(no_bmv2):
    from sdnperf.arch import ArchitectureError, check_architecture
    from sdnperf.arch.config import P4Config
    from sdnperf.topo.registry import build_topology

    spec = build_topology("single", {"hosts": 2}, seed=1)
    with pytest.raises(ArchitectureError, match=r"simple_switch_grpc on PATH or in \$SDNPERF_BMV2"):
        check_architecture(P4Config(kind="p4", name="p4", target="bmv2"), spec)
