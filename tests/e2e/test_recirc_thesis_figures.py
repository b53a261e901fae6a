"""Seed paper 003's figures from the recirculation study's own paper-scale files, shrunk to
smoke size (1 repetition, N = 0 and 1, a few pings, 1-s iperf, two send rates; our switch
only) but with the parts, workloads and link rates the figure map names: each part runs
through `sdnperf run` (real Mininet, our P4 switch, ping and iperf), and its report must
draw every figure the map marks reproduced for that part, its opening row saying so."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from sdnperf.studies import figure_map
from sdnperf.studies.builtin import find
from sdnperf.studies.figure_map import report_kinds
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

KEEP = {"p4"}  # our switch: BMv2 would double the runs; its figures are the same code
LINK_RATES = {  # the link rates each part's map items name
    "": ["unlimited", 25, 10],
    "ping-rates": ["unlimited", 1000, 10, 1, 0.1, 0.01],
    "udp": ["unlimited", 10],
}


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def dump(doc: dict) -> str:
    out = ["[study]", *(f"{k} = {toml_value(v)}" for k, v in doc["study"].items())]
    for table in ("topology", "architecture", "workload", "sweep"):
        for entry in doc.get(table, []):
            out += ["", f"[[{table}]]", *(f"{k} = {toml_value(v)}" for k, v in entry.items())]
    return "\n".join(out) + "\n"


def shrink(doc: dict, part: str) -> dict:
    doc["study"]["repetitions"] = 1
    doc["architecture"] = [a for a in doc["architecture"] if a["name"] in KEEP]
    # the thesis's figures are the h1 -> h2 legs; the main part's ping feeds the answer only
    doc["workload"] = [
        w
        for w in doc["workload"]
        if not w["name"].endswith("-back") and not (part == "" and w["kind"] == "ping")
    ]
    for w in doc["workload"]:
        if w["kind"] == "ping":
            w.update(count=4, interval=0.05)
        else:
            w["duration"] = 1
    names = {a["name"] for a in doc["architecture"]} | {w["name"] for w in doc["workload"]}
    sweeps = []
    for s in doc["sweep"]:
        owner = s["param"].split(".")[1]
        if s["param"].startswith(("architecture.", "workload.")) and owner not in names:
            continue
        if s["param"].endswith("recirc_passes"):
            s["values"] = [0, 1]
        elif s["param"] == "topology.link.bw":
            s["values"] = LINK_RATES[part]
        elif s["param"].endswith(".rate"):
            s["values"] = ["2M", "8M"]
        sweeps.append(s)
    doc["sweep"] = sweeps
    return doc


@pytest.mark.parametrize("part", ["", "ping-rates", "udp"])
def test_every_reproduced_figure_of_a_part_is_drawn(part, tmp_path):
    study = find("recirculation")
    (path,) = [p for p, name in zip(study.files("paper"), study.parts("paper")) if name == part]
    doc = shrink(tomllib.loads(path.read_text()), part)
    assert {s["param"].rsplit(".", 1)[-1] for s in doc["sweep"]} >= {"recirc_passes", "bw"}
    small = tmp_path / path.name
    small.write_text(dump(doc))
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot")}
    r = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "run", str(small), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    html = (tmp_path / "out" / doc["study"]["name"] / "report.html").read_text()

    fmap = figure_map.load(study)
    registry = report_kinds()
    mine = [i for i in fmap.item if i.status == "reproduced" and (i.part or "") == part]
    assert mine, f"the map names no figure of part {part!r}"
    for item in mine:
        row = re.search(rf"<tr><td>{re.escape(item.number)}</td>.*?</tr>", html, re.S)
        assert row and "drawn below" in row.group(0), (item.number, row and row.group(0))
        stem = registry[item.kind_id or ""].name(item.args)
        assert f'alt="{stem}"' in html, (item.number, stem)
    assert f"reproduced {fmap.reproduced()} of 22" in html
    if part == "ping-rates":
        # the theory line is drawn from the measured minimum at no link rate
        assert "theoretical RTT of thesis §5.2.1" in html
