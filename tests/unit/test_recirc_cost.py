"""The cost of a recirculation design beside N = 0's of the same cost study
(answers/recirculation.cost_vs_base) and how the closing table prints it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sdnperf.studies.answers.recirculation import cost_vs_base

BASE = {"tcp_mbps": 400.0, "udp_mbps": 10.0, "udp_loss_pct": 0.5, "switch_cpu_pct": 20.0}


def test_throughput_is_a_share_of_n0_and_loss_and_cpu_are_points_over_it():
    got = cost_vs_base(
        {"tcp_mbps": 2.0, "udp_mbps": 2.5, "udp_loss_pct": 75.5, "switch_cpu_pct": 65.0}, BASE
    )
    assert got == {
        "tcp_pct_of_base": pytest.approx(0.5),
        "udp_pct_of_base": pytest.approx(25.0),
        "udp_loss_points_over_base": pytest.approx(75.0),
        "switch_cpu_points_over_base": pytest.approx(45.0),
    }


def test_a_figure_missing_either_side_or_a_zero_base_stays_out():
    got = cost_vs_base(
        {"tcp_mbps": 2.0, "udp_mbps": None, "switch_cpu_pct": 30.0},
        {"tcp_mbps": 0.0, "udp_mbps": 10.0, "switch_cpu_pct": None},
    )
    assert got == {}  # TCP over a base of 0, UDP not measured, CPU without a base


def _table():
    path = Path(__file__).parents[2] / "bench" / "recirc" / "table.py"
    spec = importlib.util.spec_from_file_location("recirc_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_closing_table_prints_each_cost_beside_n0_and_the_cost_studys_load():
    cost = {"tcp_mbps": 2.0, "udp_mbps": 2.5, "udp_loss_pct": 75.5, "switch_cpu_pct": 65.0}
    row = {
        "target_ms": 5.0,
        "target": "sdnperf",
        "topology": "one-switch",
        "passes": 8000,
        "planned_passes": 8000,
        "rounds": [{"passes": 8000, "error_pct": 3.0, "load_average": 12.5}],
        "converged": True,
        "achieved_median_ms": 5.15,
        "achieved_median_ci_ms": [5.0, 5.3],
        "error_pct": 3.0,
        "spread_ms": 0.4,
        "achieved_p99_ms": 6.0,
        "cost": {"base": BASE, "passes": cost},
        "cost_vs_base": {"passes": cost_vs_base(cost, BASE)},
        "cost_load_average": [11.2, 13.4],
        "cpu_priority": "realtime",
    }
    (line,) = _table().rows([row])
    assert (
        "TCP 2 (0.5 % of N = 0), UDP 2.5 (25 % of N = 0), loss 76 % (+75), CPU 65 % (+45)" in line
    )
    assert "(N = 0: TCP 400, UDP 10, loss 0.5 %, CPU 20 %)" in line
    assert line.endswith("| realtime | 12.5; cost study 11.2 → 13.4 |")


def test_the_cost_table_has_a_column_per_udp_rate_in_rate_order_and_a_row_per_design():
    table = _table()
    base = {"tcp_mbps": 400.0, "udp-2m_mbps": 1.9, "udp-2m_loss_pct": 0.0, "udp_mbps": 9.9}
    base |= {"udp-10.5m_mbps": 10.0, "switch_cpu_pct": 20.0}
    held = {"tcp_mbps": 4.0, "udp-2m_mbps": 0.95, "udp-2m_loss_pct": 50.0, "udp_mbps": None}
    held["switch_cpu_pct"] = 70.0
    row = {
        "target_ms": 5.0,
        "target": "bmv2",
        "topology": "chain-of-two",
        "passes": 43,
        "cost": {"base": base, "passes": held},
        "cost_vs_base": {"passes": cost_vs_base(held, base)},
        "cost_load_average": [12.0, 14.5],
        "cpu_priority": "realtime",
    }
    udp = table._udp_workloads([row, {"cost": {}}])
    assert udp == ["udp-2m", "udp-10.5m", "udp"]  # by rate; a name without one last
    none, passes = table.cost_rows([row, {"cost": {}}], udp)  # the curve without cost: out
    assert none.startswith("| 5 ms | bmv2 | chain-of-two | no recirculation | N = 0 | 400 |")
    assert passes == (
        "| 5 ms | bmv2 | chain-of-two | N passes | N = 43 | 4 (1 %) | 0.95 (50 %), loss 50 % "
        "| – | – | 70 (+50) | realtime | 12.0 → 14.5 |"
    )


def test_the_closing_table_marks_a_target_on_a_step_with_its_pair():
    row = {
        "target_ms": 5.0,
        "target": "sdnperf",
        "topology": "one-switch",
        "passes": 6357,
        "planned_passes": 5448,
        "rounds": [
            {"passes": 5448, "error_pct": -33.0, "load_average": 13.0},
            {"passes": 6748, "error_pct": 47.0, "load_average": 13.2},
            {"passes": 6357, "error_pct": -24.0, "load_average": 13.3},
        ],
        "converged": False,
        "step": {"between": [6357, 6748], "errors_pct": [-24.0, 47.0]},
        "achieved_median_ms": 3.8,
        "achieved_median_ci_ms": [3.7, 3.9],
        "error_pct": -24.0,
        "spread_ms": 0.4,
        "achieved_p99_ms": 6.0,
        "cost": {},
    }
    (line,) = _table().rows([row])
    assert "| -24.0 (not within 10 %; on a step: N = 6357 -24 %, N = 6748 +47 %) |" in line


def test_the_closing_table_says_a_step_in_time_is_no_step_in_n():
    row = {
        "target_ms": 5.0,
        "target": "sdnperf",
        "topology": "chain-of-two",
        "passes": 3698,
        "planned_passes": 2708,
        "rounds": [
            {"passes": 2708, "error_pct": -37.0, "load_average": 0.4},
            {"passes": 4327, "error_pct": 45.0, "load_average": 0.31},
            {"passes": 3698, "error_pct": -11.0, "load_average": 0.19},
        ],
        "converged": False,
        "step": {
            "between": [3698, 4327],
            "errors_pct": [-11.0, 45.0],
            "in_time": True,
            "speeds": [{"slow_share_pct": 12.0}, {"slow_share_pct": 64.0}],
        },
        "achieved_median_ms": 4.433,
        "achieved_median_ci_ms": [4.415, 4.454],
        "error_pct": -11.3,
        "spread_ms": 0.93,
        "achieved_p99_ms": 7.3,
        "cost": {},
    }
    (line,) = _table().rows([row])
    assert (
        "| -11.3 (not within 10 %; no step in N, two speeds in time: N = 3698 -11 %, "
        "N = 4327 +45 %, 12 % and 64 % of their pings slow) |" in line
    ), line
