"""tcp-connect: probe output parsing and the cold/steady summaries."""

import pytest
from pydantic import TypeAdapter, ValidationError

from sdnperf.workloads.config import WorkloadConfig
from sdnperf.workloads.tcp_connect import _percentile, connect_output, parse_probe

PROBE = """\
1 1000.000000 4.2500
2 1000.100000 0.2000
3 1000.200000 0.4000
garbage line
4 1000.300000 FAIL Connection_refused
5 1000.400000 0.3000
"""


def test_parse_probe():
    res = parse_probe(PROBE)
    assert [a.seq for a in res.attempts] == [1, 2, 3, 4, 5]
    assert res.attempts[0].ms == 4.25 and res.attempts[3].ms is None
    assert res.attempts[3].reason == "Connection_refused"


def test_cold_reported_apart_and_steady_distribution():
    res = parse_probe(PROBE)
    other = parse_probe("1 1000.0 2.0\n2 1000.1 0.1\n")
    # second pair expected 5 connections but printed 2: 3 never attempted count as failed
    out = connect_output("syn", {"h1->h2": res, "h3->h2": other}, 1000.0, expected=5)
    m = {s.metric: s.value for s in out.summaries}
    assert m["connect_first_ms"] == pytest.approx((4.25 + 2.0) / 2)
    steady = [0.2, 0.4, 0.3, 0.1]
    assert m["connect_ms"] == pytest.approx(sum(steady) / 4)
    assert m["connect_p50_ms"] == pytest.approx(0.25)
    assert m["connect_max_ms"] == 0.4
    assert m["connect_fail_pct"] == pytest.approx(100 * 4 / 10)
    cold = [s for s in out.samples if s.phase == "cold"]
    assert {s.flow for s in cold} == {"h1->h2", "h3->h2"}
    assert [s.metric for s in out.samples].count("connect_failed") == 1
    assert out.samples[1].t == pytest.approx(0.1)


def test_percentile():
    assert _percentile([5], 95) == 5
    assert _percentile([1, 2, 3, 4], 50) == 2.5
    assert _percentile([10, 0], 100) == 10


def test_config():
    ta = TypeAdapter(WorkloadConfig)
    cfg = ta.validate_python(
        {
            "kind": "tcp-connect",
            "name": "syn",
            "pairs": [["h1", "h2"]],
            "capture": ["h1", "s1-eth2"],
        }
    )
    assert cfg.connections == 20 and cfg.capture == ["h1", "s1-eth2"]
    with pytest.raises(ValidationError, match="connectoins"):
        ta.validate_python(
            {"kind": "tcp-connect", "name": "syn", "pairs": [["h1", "h2"]], "connectoins": 3}
        )
    with pytest.raises(ValidationError, match="capture point"):
        ta.validate_python(
            {"kind": "tcp-connect", "name": "syn", "pairs": [["h1", "h2"]], "capture": ["h1 eth0"]}
        )
