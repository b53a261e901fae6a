"""sdnperf/p4/l2l3.p4: compiled by our compiler into the cache, STF tests on our switch."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sdnperf import p4

TESTS = sorted((Path(p4.__file__).parent / "tests").glob("*.stf"))


def _tools():
    from sdnperf import tools
    try:
        return tools.find("sdnperf-p4c"), tools.find("sdnperf-switch")
    except tools.ToolNotFound as exc:
        pytest.skip(str(exc))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SDNPERF_P4_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_compiled_into_cache_once(cache):
    _tools()
    prog = p4.compiled("l2l3")
    assert prog.json.exists() and prog.p4info.exists()
    assert cache in prog.json.parents
    mtime = prog.json.stat().st_mtime_ns
    assert p4.compiled("l2l3").json.stat().st_mtime_ns == mtime  # cached


def test_p4info_has_what_the_controller_needs(cache):
    _tools()
    from sdnperf.controllers.p4rt.schema import Schema
    schema = Schema.from_file(p4.compiled("l2l3").p4info)
    for table in ("flow_port", "flow_pair", "dmac", "flood_table", "ipv4_lpm"):
        schema.table(table)
    assert set(schema.packet_metadata["packet_in"]) >= {"ingress_port"}
    assert set(schema.packet_metadata["packet_out"]) >= {"egress_port", "mcast_grp"}


def test_compile_error_names_the_file(cache, tmp_path):
    _tools()
    bad = tmp_path / "bad.p4"
    bad.write_text("control X( { }\n")
    with pytest.raises(p4.P4ProgramError, match="bad.p4"):
        p4.compile_file(bad)


@pytest.mark.parametrize("stf", TESTS, ids=[t.stem for t in TESTS])
def test_stf(stf):
    _, switch = _tools()
    r = subprocess.run([switch, "stf", str(Path(p4.__file__).parent / "l2l3.p4"), str(stf)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout
