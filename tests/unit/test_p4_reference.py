"""The shipped P4 programs against the reference tools (a test oracle, never part of the
product): p4c's BMv2 backend compiles each one, its P4Info names and widths agree with our
compiler's, and the program's STF tests pass on our switch running p4c's JSON."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from google.protobuf import text_format

from sdnperf import p4, tools
from tests.unit.test_p4_program import PROGRAM_DIR, TESTS, _tools, cache, run_stf  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
# the bundle's folder (bin/p4c-bm2-ss, share/p4c/p4include), as tools.find_bmv2 finds it
_P4C = tools.find_bmv2("p4c-bm2-ss", reference=True)
REFERENCE = Path(_P4C).parent.parent if _P4C else None
PROGRAMS = sorted(p.stem for p in PROGRAM_DIR.glob("*.p4"))


@pytest.fixture(scope="module")
def reference():
    if REFERENCE is None:
        pytest.skip(f"the reference P4 tools: {tools.bmv2_hint('p4c-bm2-ss', reference=True)}")
    return REFERENCE / "bin" / "p4c-bm2-ss"


@pytest.fixture(scope="module")
def reference_build(reference, tmp_path_factory):
    out = tmp_path_factory.mktemp("p4c")
    built = {}

    def build(name: str) -> tuple[Path, Path]:
        if name not in built:
            json, p4info = out / f"{name}.json", out / f"{name}.p4info.txtpb"
            r = subprocess.run(
                [
                    str(reference),
                    "-I",
                    str(REFERENCE / "share" / "p4c" / "p4include"),
                    str(PROGRAM_DIR / f"{name}.p4"),
                    "-o",
                    str(json),
                    "--p4runtime-files",
                    str(p4info),
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert r.returncode == 0, f"p4c-bm2-ss refused {name}.p4:\n{r.stderr}"
            built[name] = (json, p4info)
        return built[name]

    return build


def p4info_names(path: Path) -> set[tuple]:
    """(kind, name, detail) of every table, key, action, param, counter, register and
    controller header field: what a P4Runtime client relies on (ids are not compared)."""
    from finsy.proto import p4i

    info = p4i.P4Info()
    text_format.Parse(path.read_text(), info)
    out = set()
    for t in info.tables:
        out.add(("table", t.preamble.name, t.size))
        out |= {("key", t.preamble.name, f.name, f.bitwidth, f.match_type) for f in t.match_fields}
    for a in info.actions:
        out.add(("action", a.preamble.name))
        out |= {("param", a.preamble.name, p.name, p.bitwidth) for p in a.params}
    out |= {("counter", c.preamble.name, c.size) for c in info.counters}
    out |= {("direct_counter", c.preamble.name) for c in info.direct_counters}
    out |= {("register", r.preamble.name, r.size) for r in info.registers}
    for c in info.controller_packet_metadata:
        out |= {("packet_metadata", c.preamble.name, m.name, m.bitwidth) for m in c.metadata}
    return out


@pytest.fixture
def ours(cache):
    _tools()
    return p4.compiled


@pytest.mark.parametrize("name", PROGRAMS)
def test_p4info_agrees_with_the_reference_compiler(name, reference_build, ours):
    _, ref_p4info = reference_build(name)
    assert p4info_names(ours(name).p4info) == p4info_names(ref_p4info)


# p4c's JSON has one copy of an action per table that uses it (same name, other ids):
# l2l3's and recirc's tests add entries to tables that share actions.
@pytest.mark.parametrize("stf", TESTS, ids=[f"{t.parent.name}/{t.stem}" for t in TESTS])
def test_stf_on_the_reference_compilers_json(stf, reference_build):
    json, _ = reference_build(stf.parent.name)
    run_stf(json, stf)
