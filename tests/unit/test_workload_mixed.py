"""mixed: config rules and how member outputs are merged (names, aggregate load)."""

import pytest
from pydantic import TypeAdapter, ValidationError

from sdnperf.samples import Sample, Summary
from sdnperf.workloads.config import WorkloadConfig
from sdnperf.workloads.context import WorkloadOutput
from sdnperf.workloads.mixed import merge_outputs

TA = TypeAdapter(WorkloadConfig)


def mixed(*members, **extra):
    return TA.validate_python({"kind": "mixed", "name": "mix", "members": list(members), **extra})


def test_config_gathers_member_pairs_and_round_trips():
    cfg = mixed(
        {"kind": "ping", "name": "ping", "pairs": [["h1", "h2"]]},
        {"kind": "voip", "name": "voip", "pairs": [["h1", "h2"], ["h3", "h1"]]},
        {"kind": "iperf-udp", "name": "udp", "pairs": {"permutation": 2}},
    )
    assert cfg.pairs == [("h1", "h2"), ("h3", "h1")]
    assert TA.validate_python(cfg.model_dump(mode="json")) == cfg


def test_config_errors():
    with pytest.raises(ValidationError, match="member names must differ"):
        mixed(
            {"kind": "ping", "name": "a", "pairs": [["h1", "h2"]]},
            {"kind": "voip", "name": "a", "pairs": [["h1", "h2"]]},
        )
    with pytest.raises(ValidationError, match="one member per kind"):
        mixed(
            {"kind": "ping", "name": "a", "pairs": [["h1", "h2"]]},
            {"kind": "ping", "name": "b", "pairs": [["h1", "h2"]]},
        )
    with pytest.raises(ValidationError, match="no pairs of its own"):
        mixed({"kind": "ping", "name": "a", "pairs": [["h1", "h2"]]}, pairs=[["h5", "h6"]])
    with pytest.raises(ValidationError, match="members"):
        mixed()
    with pytest.raises(ValidationError):
        mixed({"kind": "mixed", "name": "inner", "members": []})  # no nesting


def test_merge_outputs():
    tcp = WorkloadOutput(
        [
            Sample("tcp", "throughput_mbps", 10, "Mbit/s", "h1->h2", "", 1.0, 0),
            Sample("tcp", "throughput_mbps", 20, "Mbit/s", "h1->h2", "", 2.0, 1),
        ],
        [Summary("tcp", "throughput_mbps", 15, "Mbit/s", "higher")],
        processes_started=2,
    )
    live = WorkloadOutput(
        [
            Sample("live", "throughput_mbps", 4, "Mbit/s", "h3->h4", "", 0.6, 0),
            Sample("live", "throughput_mbps", 2, "Mbit/s", "h3->h4", "", 0.9, 1),  # same bin: mean
            Sample("live", "owd_ms", 0.1, "ms", "h3->h4"),
        ],
        [
            Summary("live", "throughput_mbps", 3.5, "Mbit/s", "higher"),
            Summary("live", "owd_ms", 0.1, "ms"),
        ],
        processes_started=3,
    )
    out = merge_outputs("mix", {"tcp": tcp, "live": live})
    assert {s.workload for s in out.summaries} == {"mix", "mix/tcp", "mix/live"}
    agg = {s.metric: s.value for s in out.summaries if s.workload == "mix"}
    assert agg == {"aggregate_mbps": 18.5}
    series = [(s.t, s.value) for s in out.samples if s.metric == "aggregate_mbps"]
    assert series == [(1.0, 13.0), (2.0, 20.0)]
    assert out.processes_started == 5
