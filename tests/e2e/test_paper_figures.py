"""Seed paper 002's figures at smoke scale through the real probe and our P4Runtime
controller: the controller-capacity switch sweep (1 and 4 switches, 10 packet-ins/s per
switch) draws sent/answered rate, mean RTT and controller CPU against the number of
switches and each switch's outstanding packet-ins over time (P4RCProbe Figs 5-7), and its
report and terminal open with the figure map, the paper's numbers beside ours."""

from __future__ import annotations

import re

import pytest

from sdnperf.cli import main
from sdnperf.ctlbench import metrics as m
from sdnperf.store import Store
from sdnperf.studies.builtin import find
from tests.e2e.ctlbench_support import probe_built  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("probe_built")]


def test_p4runtime_switch_sweep_draws_the_papers_axes(tmp_path, capsys):
    (smoke,) = [
        p for p in find("controller-capacity").files("smoke") if "p4runtime-switches" in p.name
    ]
    out = tmp_path / "results"
    assert main(["ctlbench", "run", str(smoke), "--results", str(out), "--no-ceiling"]) == 0
    printed = capsys.readouterr().out

    # the terminal opens with the map and ends it with the honest count
    assert printed.index("figure map of seed paper 002") < printed.index("reproduced 9 of 10")
    (rtt_line,) = [
        line
        for line in printed.splitlines()
        if "P4RT, 10 pps per switch, 1 switch" in line and "ours" in line
    ]
    assert re.search(r"paper 8\.9, ours [0-9.e+-]+ \(n=1\), ratio [0-9.e+-]+", rtt_line), rtt_line

    html = (out / "report.html").read_text()
    for stem in (
        "ctlbench_vs_switches_rate",
        "ctlbench_vs_switches_rtt",
        "ctlbench_vs_switches_cpu",
        "ctlbench_outstanding_per_switch_p4rt-l2-learning_10pps",
    ):
        assert f'alt="{stem}"' in html, stem
    assert html.index("The paper, figure by figure") < html.index("<h2>Comparison</h2>")
    fig5 = re.search(r"<tr><td>Fig\. 5</td>.*?</tr>", html)
    assert fig5 and "drawn below" in fig5.group(0)
    fig7b = re.search(r"<tr><td>Fig\. 7b</td>.*?</tr>", html)
    assert fig7b and "not drawn from these runs" in fig7b.group(0)  # smoke runs 10/s only

    # the per-switch figure has one line per emulated switch: 4 in the 4-switch run
    with Store(out / "study.sqlite") as store:
        (study,) = store.studies()
        (run,) = [
            r
            for r in store.runs(study.id)
            if r.status == "ok" and r.params.get("switches") == 4 and not r.params.get("ceiling")
        ]
        flows = {s.flow for s in store.samples(run.id, metric=m.OUTSTANDING) if s.flow}
    assert len(flows) == 4, flows
