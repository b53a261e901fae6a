"""Packets that travel through the controller arrive intact: the first TCP SYN of a
connection, sent via packet-in/packet-out on the userspace datapath, would be dropped with
a partial checksum if hosts kept TX checksum offload (study.host_offloads = "auto")."""

from __future__ import annotations

import textwrap

from sdnperf.runner import execute_run, host_offloads
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

STUDY = textwrap.dedent("""\
    [study]
    name = "syn"
    repetitions = 1
    host_offloads = "{offloads}"
    [topology]
    kind = "linear"
    switches = 2
    [[architecture]]
    name = "openflow"
    kind = "openflow"
    [[workload]]
    name = "syn"
    kind = "tcp-connect"
    pairs = [["h1", "h2"]]
    connections = 5
    """)


def first_connect_ms(tmp_path, offloads: str) -> float:
    study = load_study_text(STUDY.format(offloads=offloads), "syn.toml", tmp_path)
    result = execute_run(study, plan_runs(study)[0], tmp_path / offloads)
    assert result.status == "ok", result.error
    assert result.params["facts"]["host_tx_offloads"] == (offloads == "on")
    return next(s.value for s in result.summaries if s.metric == "connect_first_ms")


def test_auto_turns_offloads_off_when_a_controller_sees_packets(tmp_path):
    study = load_study_text(STUDY.format(offloads="auto"), "syn.toml", tmp_path)
    assert host_offloads(study) is False
    # The first SYN goes through the controller and is answered without a retransmission
    # (the SYN retry timer is 1 s).
    assert first_connect_ms(tmp_path, "off") < 500
