"""The P4 programs sdnperf ships (sdnperf/p4/*.p4): compiled by our compiler into the cache,
STF tests (sdnperf/p4/tests/<program>/*.stf) on our switch."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from sdnperf import p4

PROGRAM_DIR = Path(p4.__file__).parent
TESTS = sorted((PROGRAM_DIR / "tests").glob("*/*.stf"))  # tests/<program>/<case>.stf


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


@pytest.mark.parametrize("program", ["l2l3", "recirc"])
def test_p4info_has_what_the_controller_needs(cache, program):
    """The apps find their tables by suffix: recirc.p4 is driven by the same apps."""
    _tools()
    from sdnperf.controllers.p4rt.schema import Schema

    schema = Schema.from_file(p4.compiled(program).p4info)
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


def run_stf(program: Path, stf: Path) -> str:
    """Our switch's STF runner on `program` (.p4 or BMv2 JSON); its report, asserted PASS."""
    _, switch = _tools()
    r = subprocess.run(
        [switch, "stf", str(program), str(stf)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout
    return r.stdout


def test_every_stf_folder_names_a_shipped_program():
    assert TESTS
    for stf in TESTS:
        assert (PROGRAM_DIR / f"{stf.parent.name}.p4").exists(), stf


@pytest.mark.parametrize("stf", TESTS, ids=[f"{t.parent.name}/{t.stem}" for t in TESTS])
def test_stf(stf):
    run_stf(PROGRAM_DIR / f"{stf.parent.name}.p4", stf)


def counter_reads(report: str) -> list[int]:
    """packets= of every counter_read the STF printed, in order."""
    return [int(m) for m in re.findall(r"^line \d+: packets=(\d+)", report, re.M)]


def test_recirc_passes_are_counted():
    """N = 0, 1, 3 selected; unselected, to-CPU and packet-out packets never recirculate
    (the cases of tests/recirc/passes.stf, in order)."""
    report = run_stf(PROGRAM_DIR / "recirc.p4", PROGRAM_DIR / "tests" / "recirc" / "passes.stf")
    assert counter_reads(report) == [0, 1, 3, 0, 3, 0, 0]


def test_recirc_selects_by_destination():
    report = run_stf(PROGRAM_DIR / "recirc.p4", PROGRAM_DIR / "tests" / "recirc" / "select_dst.stf")
    assert counter_reads(report) == [2, 0]


def test_programs_share_the_fabric_and_the_cache_key_follows_it(cache, tmp_path):
    """An edited include must give a new compile (the cache key hashes local includes)."""
    _tools()
    includes = p4.local_includes(PROGRAM_DIR / "recirc.p4")
    assert PROGRAM_DIR / "include" / "l2l3_fabric.p4" in includes
    src = tmp_path / "prog"
    (src / "include").mkdir(parents=True)
    for path in [PROGRAM_DIR / "recirc.p4", *includes]:
        (src / path.relative_to(PROGRAM_DIR)).write_text(path.read_text())
    first = p4.compile_file(src / "recirc.p4")
    fabric = src / "include" / "l2l3_fabric.p4"
    fabric.write_text(fabric.read_text() + "\n/* edited */\n")
    assert p4.compile_file(src / "recirc.p4").json != first.json
