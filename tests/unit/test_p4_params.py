"""Run-time parameters of shipped P4 programs: the catalog, the study-file checks, and the
P4Runtime updates the controller builds from them (against the compiled program's P4Info)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sdnperf import p4
from sdnperf.p4.catalog import ANY, PROGRAMS, ParamError, program
from sdnperf.study.loader import StudyError, load_study
from tests.unit.test_p4_program import _tools, cache  # noqa: F401

STUDY = textwrap.dedent("""\
    [study]
    name = "t"

    [topology]
    kind = "single"
    hosts = 2

    [[architecture]]
    name = "p4-n7"
    kind = "p4"
    program = "recirc"
    params = {recirc_passes = 7}

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    """)


def load_problems(text: str, tmp_path) -> list[str]:
    path = tmp_path / "study.toml"
    path.write_text(text)
    with pytest.raises(StudyError) as info:
        load_study(path)
    return [str(p) for p in info.value.problems]


def test_defaults_are_filled_in_and_values_normalised():
    recirc = program("recirc")
    assert recirc.validate({}) == {"recirc_passes": 0, "recirc_dscp": ANY, "recirc_dst": ANY}
    assert (
        recirc.validate({"recirc_passes": 15, "recirc_dst": "10.0.0.2"})["recirc_dst"]
        == "10.0.0.2/32"
    )
    assert program("l2l3").validate({}) == {}


@pytest.mark.parametrize(
    "values, message",
    [
        (
            {"recirc_pases": 1},
            "has no param 'recirc_pases' (its params: recirc_dscp, recirc_dst, recirc_passes)",
        ),
        ({"recirc_passes": 2**24}, "'recirc_passes': 16777216 is outside 0..16777215"),
        ({"recirc_passes": -1}, "'recirc_passes': -1 is outside 0..16777215"),
        ({"recirc_passes": "7"}, "'recirc_passes': '7' is not an integer"),
        ({"recirc_passes": True}, "'recirc_passes': True is not an integer"),
        ({"recirc_dscp": 64}, "'recirc_dscp': 64 is not a DSCP value"),
        ({"recirc_dst": "10.0.0.1/33"}, "'recirc_dst': '10.0.0.1/33' is not an IPv4"),
    ],
)
def test_bad_values_are_refused_naming_the_param(values, message):
    with pytest.raises(ParamError, match=message.replace("(", r"\(").replace(")", r"\)")):
        program("recirc").validate(values)


def test_unknown_program_names_the_ones_there_are():
    with pytest.raises(ParamError, match="programs: l2l3, recirc, recirc_hold, l2, ipv4"):
        program("recirculate")


def test_writes_for_recirc():
    writes = program("recirc").writes(
        {"recirc_passes": 3, "recirc_dscp": 46, "recirc_dst": "10.0.0.0/24"}
    )
    assert writes[0] == {
        "table": "RecircEgress.recirc_config",
        "default": True,
        "action": "RecircEgress.set_passes",
        "params": {"passes": 3},
    }
    assert writes[1]["match"] == {"dscp": [46, 63], "dst_addr": ["10.0.0.0", "255.255.255.0"]}
    everything = program("recirc").writes({})
    assert everything[1]["match"] == {}  # no key: every IPv4 packet is selected


def test_writes_for_recirc_hold():
    writes = program("recirc_hold").writes({"recirc_hold_us": 5000, "recirc_dst": "10.0.0.2"})
    assert writes[0] == {
        "table": "RecircEgress.hold_config",
        "default": True,
        "action": "RecircEgress.set_hold",
        "params": {"hold_us": 5000},
    }
    assert writes[1]["match"] == {"dst_addr": ["10.0.0.2", "255.255.255.255"]}
    with pytest.raises(ParamError, match="outside 0..5000000"):
        program("recirc_hold").validate({"recirc_hold_us": 6_000_000})


def test_study_file_accepts_params_and_stores_every_one(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(STUDY)
    arch = load_study(path).config.architecture[0]
    assert arch.program == "recirc"
    assert arch.params == {"recirc_passes": 7, "recirc_dscp": ANY, "recirc_dst": ANY}


def test_study_file_bad_param_names_file_line_and_field(tmp_path):
    errs = load_problems(STUDY.replace("recirc_passes = 7", "recirc_passes = 17000000"), tmp_path)
    assert len(errs) == 1
    assert errs[0].startswith(f"{tmp_path / 'study.toml'}:12: architecture[0].params:"), errs
    assert "'recirc_passes': 17000000 is outside 0..16777215" in errs[0]


def test_study_file_unknown_program_names_the_field(tmp_path):
    errs = load_problems(STUDY.replace('program = "recirc"', 'program = "recirk"'), tmp_path)
    assert len(errs) == 1 and ":11: architecture[0].program:" in errs[0], errs


def test_every_shipped_program_is_in_the_catalog():
    assert {p.stem for p in Path(p4.__file__).parent.glob("*.p4")} == set(PROGRAMS)


def test_a_program_no_app_can_drive_is_refused_naming_the_apps(tmp_path):
    errs = load_problems(
        STUDY.replace('program = "recirc"', 'program = "vlan"').replace(
            "params = {recirc_passes = 7}\n", ""
        ),
        tmp_path,
    )
    assert (
        len(errs) == 1
        and "program 'vlan' cannot be driven by app 'l2-learning' (apps: proactive, runtime-json)"
        in errs[0]
    ), errs


def test_study_file_params_of_another_program_are_refused(tmp_path):
    errs = load_problems(STUDY.replace('program = "recirc"\n', ""), tmp_path)
    assert len(errs) == 1 and "program 'l2l3' has no param 'recirc_passes'" in errs[0], errs


@pytest.fixture
def schema_of(cache):
    _tools()
    from sdnperf.controllers.p4rt.schema import Schema

    return lambda name: Schema.from_file(p4.compiled(name).p4info)


def test_every_program_in_the_catalog_compiles_and_its_writes_fit_its_p4info(schema_of):
    from finsy.proto import p4r

    from sdnperf.controllers.p4rt.params import param_updates

    for prog in PROGRAMS.values():
        updates = param_updates(schema_of(prog.name), prog.writes({}))
        assert len(updates) == len(prog.writes({}))
    updates = param_updates(
        schema_of("recirc"), program("recirc").writes({"recirc_passes": 15, "recirc_dscp": 46})
    )
    default, select = updates
    assert default.type == p4r.Update.MODIFY and default.entity.table_entry.is_default_action
    assert default.entity.table_entry.action.action.params[0].value == bytes([15])
    big = param_updates(schema_of("recirc"), program("recirc").writes({"recirc_passes": 65535}))
    assert big[0].entity.table_entry.action.action.params[0].value == b"\xff\xff"
    assert select.type == p4r.Update.INSERT and select.entity.table_entry.priority == 1
    (field,) = select.entity.table_entry.match
    assert (field.ternary.value, field.ternary.mask) == (bytes([46]), bytes([63]))


def test_a_write_naming_a_missing_table_is_refused_with_its_number(schema_of):
    from sdnperf.controllers.p4rt.params import param_updates
    from sdnperf.controllers.p4rt.schema import SchemaError

    with pytest.raises(SchemaError, match=r"params write #1 \('recirc_config'\)"):
        param_updates(
            schema_of("l2l3"),
            [
                {
                    "table": "recirc_config",
                    "default": True,
                    "action": "set_passes",
                    "params": {"passes": 1},
                }
            ],
        )


def test_controller_writes_params_after_the_pipeline_and_before_the_app(schema_of, monkeypatch):
    """What the switch sees, in order, from sdnperf's controller bringing one switch up
    (the connection is a recording fake; the app is the real proactive one)."""
    import asyncio

    from sdnperf.controllers.p4rt import controller as ctl

    prog = p4.compiled("recirc")
    seen = []

    class Recorder:
        def __init__(self, name, address, device_id, election_id, on_packet_in):
            self.device_id = device_id

        async def connect(self, timeout):
            seen.append("connect")

        async def set_pipeline(self, p4info, device_config, cookie=0):
            seen.append("pipeline")

        async def write(self, updates, wait=True):
            seen.append([u.entity.table_entry.table_id or "group" for u in updates])

    monkeypatch.setitem(ctl.TRANSPORTS, "aio", Recorder)
    schema = schema_of("recirc")
    c = ctl.Controller(
        {
            "app": "proactive",
            "transport": "aio",
            "p4info": str(prog.p4info),
            "device_config": str(prog.json),
            "params": program("recirc").writes({"recirc_passes": 9}),
            "switches": [{"name": "s1", "device_id": 1, "address": "x", "ports": [1, 2]}],
            "hosts": [{"mac": "00:00:00:00:00:01", "switch": "s1", "port": 1}],
        }
    )
    asyncio.run(c._bring_up({"name": "s1", "device_id": 1, "address": "x"}))
    config, select = (schema.table(t).id for t in ("recirc_config", "recirc_select"))
    assert seen[:3] == ["connect", "pipeline", [config, select]]
    assert len(seen) == 4  # then the app's own entries
