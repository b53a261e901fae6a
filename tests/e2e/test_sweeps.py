"""Sweeps, several topologies, resume and random order through `sdnperf run` on real Mininet.

Each study is short (seconds-long workloads, one repetition) on a 2-switch line, so the
whole file runs in a few minutes under `flock /work/netlock`.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import textwrap
import time
from pathlib import Path

import pytest

from sdnperf.study.loader import load_study
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET
from tests.e2e.test_study_cli import runs_in, sdnperf

pytestmark = NEEDS_MININET

LINE = textwrap.dedent("""\
    [study]
    name = "{name}"
    repetitions = {reps}
    seed = {seed}
    {extra}

    [topology]
    kind = "linear"
    switches = 2
    """)


BRIDGE = '[[architecture]]\nname = "bridge"\nkind = "bridge"\n'


def run_study(tmp_path: Path, text: str, *args: str, timeout: int = 600):
    path = tmp_path / "study.toml"
    path.write_text(text)
    out, run_root = tmp_path / "results", tmp_path / "runroot"
    proc = sdnperf("run", str(path), "--out", str(out), *args, run_root=run_root)
    stdout, _ = proc.communicate(timeout=timeout)
    return proc.returncode, stdout, path, out


def tidy(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        cur = conn.execute("SELECT * FROM tidy")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]


def value_of(rows, metric, **where):
    found = [
        r["value"]
        for r in rows
        if r["metric"] == metric and all(r[k] == v for k, v in where.items())
    ]
    assert len(found) == 1, (metric, where, found)
    return found[0]


def test_link_rate_sweep_on_bridge_and_p4(tmp_path):
    text = LINE.format(name="rate", reps=1, seed=1, extra="") + textwrap.dedent("""\
        [[architecture]]
        name = "bridge"
        kind = "bridge"

        [[architecture]]
        name = "p4"
        kind = "p4"

        [[workload]]
        name = "tcp"
        kind = "iperf-tcp"
        pairs = [["h1", "h2"]]
        duration = 2

        [[sweep]]
        param = "topology.link.bw"
        values = [5, 40]
        fit = "linear"
        """)
    code, stdout, _, out = run_study(tmp_path, text)
    assert code == 0, stdout
    db = out / "rate" / "study.sqlite"
    assert sorted(runs_in(db)) == [
        ("linear-2x1|bridge|tcp|topology.link.bw=40|1", "ok"),
        ("linear-2x1|bridge|tcp|topology.link.bw=5|1", "ok"),
        ("linear-2x1|p4|tcp|topology.link.bw=40|1", "ok"),
        ("linear-2x1|p4|tcp|topology.link.bw=5|1", "ok"),
    ]
    rows = tidy(db)
    for arch in ("bridge", "p4"):
        slow = value_of(rows, "throughput_mbps", architecture=arch, **{"topology.link.bw": 5})
        fast = value_of(rows, "throughput_mbps", architecture=arch, **{"topology.link.bw": 40})
        # each point really shaped its links: the throughput follows the configured rate
        assert 3.5 < slow <= 5.5 and 25 < fast <= 42, (arch, slow, fast)
    html = (out / "rate" / "report.html").read_text()
    assert "<h2>Sweeps</h2>" in html and "topology.link.bw" in html and "R²" in html
    assert "fit tcp throughput_mbps vs topology.link.bw, bridge" in stdout
    with (out / "rate" / "csv" / "summaries.csv").open() as f:
        assert "topology.link.bw" in f.readline()


def test_udp_frame_size_sweep_changes_what_goes_on_the_wire(tmp_path):
    # 1.8 Mbit/s of UDP payload through 2 Mbit/s links (htb counts whole frames: payload +
    # 8 UDP + 20 IP + 14 Ethernet bytes). 1400-byte datagrams fit (3 % overhead); 64-byte
    # ones do not (66 %): the sender's shaped interface holds it back to 2 × 64/106 Mbit/s.
    text = LINE.format(name="frames", reps=1, seed=1, extra="") + textwrap.dedent("""\
        [topology.link]
        bw = 2

        [[workload]]
        name = "udp"
        kind = "iperf-udp"
        pairs = [["h1", "h2"]]
        rate = "1.8M"
        duration = 3

        [[sweep]]
        param = "workload.udp.length"
        values = [64, 1400]
        """)
    code, stdout, _, out = run_study(tmp_path, text + BRIDGE)
    assert code == 0, stdout
    db = out / "frames" / "study.sqlite"
    rows = tidy(db)
    small = value_of(rows, "throughput_mbps", **{"workload.udp.length": 64})
    large = value_of(rows, "throughput_mbps", **{"workload.udp.length": 1400})
    assert small == pytest.approx(2 * 64 / 106, rel=0.1), small
    assert large == pytest.approx(1.8, rel=0.06), large
    with sqlite3.connect(db) as conn:
        lengths = {
            json.loads(p)["workload"]["length"] for (p,) in conn.execute("SELECT params FROM run")
        }
    assert lengths == {64, 1400}


def test_two_topologies_in_one_study(tmp_path):
    text = (
        LINE.format(name="two", reps=1, seed=1, extra="").replace(
            '[topology]\nkind = "linear"\nswitches = 2\n',
            textwrap.dedent("""\
        [[topology]]
        name = "line"
        kind = "linear"
        switches = 3

        [[topology]]
        name = "star"
        kind = "single"
        hosts = 3
        """),
        )
        + BRIDGE
        + textwrap.dedent("""\
        [[workload]]
        name = "ping"
        kind = "ping"
        pairs = [["h1", "h3"]]
        count = 5
        interval = 0.05
        """)
    )
    code, stdout, _, out = run_study(tmp_path, text)
    assert code == 0, stdout
    db = out / "two" / "study.sqlite"
    assert sorted(runs_in(db)) == [("line|bridge|ping|1", "ok"), ("star|bridge|ping|1", "ok")]
    with sqlite3.connect(db) as conn:
        described = dict(
            conn.execute("SELECT topology, json_extract(params, '$.topology') FROM run")
        )
    assert described["line"].startswith("line: 3 switches") and described["star"].startswith(
        "star: 1 switch"
    )
    html = (out / "two" / "report.html").read_text()
    assert "<th>topology</th>" in html and ">line<" in html and ">star<" in html


PING_SWEEP = BRIDGE + textwrap.dedent("""\
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = {count}
    interval = 0.1

    [[sweep]]
    param = "workload.ping.size"
    values = [56, 200, 600, 1000]
    """)


def test_killed_in_the_middle_of_a_sweep_then_resumed(tmp_path):
    text = LINE.format(name="kill", reps=1, seed=1, extra="") + PING_SWEEP.format(count=20)
    path = tmp_path / "study.toml"
    path.write_text(text)
    out, run_root = tmp_path / "results", tmp_path / "runroot"
    db = out / "kill" / "study.sqlite"
    proc = sdnperf("run", str(path), "--out", str(out), run_root=run_root)
    deadline = time.monotonic() + 300
    while len(runs_in(db)) < 2:
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "no two runs were stored"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)  # in the middle of the third point
    proc.wait()
    stored = dict(runs_in(db))
    assert 2 <= len(stored) < 4
    clean = sdnperf("clean", run_root=run_root)
    assert clean.wait(timeout=60) == 0
    with sqlite3.connect(db) as conn:
        first_ids = dict(conn.execute("SELECT key, id FROM run"))
    resumed = sdnperf("run", "--resume", str(path), "--out", str(out), run_root=run_root)
    stdout, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stdout
    assert f"resuming: {len(stored)} of 4 runs already stored" in stdout
    keys = {k for k, status in runs_in(db) if status == "ok"}
    assert keys == {
        f"linear-2x1|bridge|ping|workload.ping.size={s}|1" for s in (56, 200, 600, 1000)
    }
    with sqlite3.connect(db) as conn:
        after = dict(conn.execute("SELECT key, id FROM run"))
    assert all(after[k] == i for k, i in first_ids.items())  # the stored runs were kept


def test_random_order_is_reproduced_from_the_seed(tmp_path):
    text = LINE.format(name="order", reps=2, seed=11, extra='order = "random"') + PING_SWEEP.format(
        count=2
    ).replace("[56, 200, 600, 1000]", "[56, 600]")
    code, stdout, path, out = run_study(tmp_path, text)
    assert code == 0, stdout
    db = out / "order" / "study.sqlite"
    with sqlite3.connect(db) as conn:
        executed = [k for (k,) in conn.execute("SELECT key FROM run ORDER BY started")]
        positions = [p for (p,) in conn.execute("SELECT position FROM run ORDER BY started")]
        provenance = json.loads(conn.execute("SELECT provenance FROM study").fetchone()[0])
    # the order the runs ran in is the seed's shuffle of the interleaved plan ...
    plain = path.with_name("plain.toml")
    plain.write_text(text.replace('order = "random"', ""))
    expected = [r.key for r in plan_runs(load_study(plain))]
    random.Random(11).shuffle(expected)
    assert executed == expected and positions == [0, 1, 2, 3]
    # ... and is what the study file gives again, and what the provenance recorded
    assert [r.key for r in plan_runs(load_study(path))] == executed
    assert provenance["run_order"] == {"order": "random", "seed": 11, "keys": executed}
    assert provenance["study_text"] == text and provenance["git"]["commit"]
    html = (out / "order" / "report.html").read_text()
    assert "random (seed 11)" in html
    # `check` now estimates from the network build times these runs measured
    check = sdnperf("check", str(path), "--out", str(out), run_root=tmp_path / "runroot")
    stdout, _ = check.communicate(timeout=60)
    assert check.returncode == 0 and "4 runs with measured network build times" in stdout, stdout


def test_only_runs_a_slice_and_resume_adds_the_rest(tmp_path):
    text = LINE.format(name="slice", reps=1, seed=1, extra="") + PING_SWEEP.format(count=2)
    code, stdout, path, out = run_study(tmp_path, text, "--only", "workload.ping.size=56|1000")
    assert code == 0, stdout
    db = out / "slice" / "study.sqlite"
    sizes = lambda: sorted(int(k.split("=")[1].split("|")[0]) for k, _ in runs_in(db))  # noqa: E731
    assert sizes() == [56, 1000]
    proc = sdnperf(
        "run",
        "--resume",
        str(path),
        "--out",
        str(out),
        "--only",
        "rep=1",
        run_root=tmp_path / "runroot",
    )
    stdout, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "resuming: 2 of 4 runs already stored" in stdout, stdout
    assert sizes() == [56, 200, 600, 1000]
    bad = sdnperf(
        "run", str(path), "--out", str(out), "--only", "speed=3", run_root=tmp_path / "runroot"
    )
    stdout, _ = bad.communicate(timeout=60)
    assert bad.returncode == 2 and "unknown name 'speed'" in stdout
