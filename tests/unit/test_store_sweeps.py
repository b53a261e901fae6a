"""The store with sweeps: point columns (tidy view, CSV), provenance, v1 files migrated."""

from __future__ import annotations

import csv
import sqlite3

from sdnperf.samples import RunResult, Summary
from sdnperf.store import Store
from sdnperf.store.schema import CREATE_V1, _statements


def result(key, arch, point, value, status="ok"):
    return RunResult(
        key=key,
        topology="t",
        architecture=arch,
        workload="udp",
        repetition=1,
        params={},
        status=status,
        point=point,
        position=3,
        summaries=[Summary("udp", "jitter_ms", value, "ms")] if status == "ok" else [],
    )


def test_tidy_view_has_one_column_per_swept_parameter(tmp_path):
    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        sid = store.open_study("s", "s.toml", {}, {}, provenance={"study_sha256": "ab"})
        store.record_run(sid, result("a", "bridge", {"workload.udp.length": 64}, 0.1))
        store.record_run(
            sid,
            result("b", "p4", {"workload.udp.length": 1400, "topology.link.bw": "unlimited"}, 0.3),
        )
        store.record_run(sid, result("c", "p4", {}, 0.0, status="failed"))
        assert store.runs(sid)[0].point == {"workload.udp.length": 64}
        assert store.runs(sid)[0].position == 3
        paths = store.export_csv(sid, tmp_path / "csv")
    # the documented one-liner (pandas.read_sql runs the same query)
    with sqlite3.connect(db) as conn:
        cur = conn.execute("SELECT * FROM tidy ORDER BY run_id")
        columns = [d[0] for d in cur.description]
        rows = [dict(zip(columns, r)) for r in cur]
    assert "workload.udp.length" in columns and "topology.link.bw" in columns
    assert [
        (r["key"], r["workload.udp.length"], r["topology.link.bw"], r["metric"], r["value"])
        for r in rows
    ] == [
        ("a", 64, None, "jitter_ms", 0.1),
        ("b", 1400, "unlimited", "jitter_ms", 0.3),
        ("c", None, None, None, None),
    ]
    assert isinstance(rows[0]["workload.udp.length"], int)  # numbers stay numbers
    with (tmp_path / "csv" / "summaries.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["workload.udp.length"] for r in table] == ["64", "1400"]
    assert [p.name for p in paths][0] == "runs.csv"


def test_provenance_is_kept_and_resumes_are_appended(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("s", "s.toml", {}, {}, provenance={"study_sha256": "ab"})
        store.open_study("s", "s.toml", {}, {}, provenance={"study_sha256": "cd"})
        prov = store.study(sid).provenance
    assert prov["study_sha256"] == "ab" and prov["resumes"] == [{"study_sha256": "cd"}]


def test_a_version_1_file_is_migrated_and_keeps_its_runs(tmp_path):
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as conn:
        for statement in _statements(CREATE_V1):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO study (id, name, created) VALUES (1, 'old', 0)")
        conn.execute(
            "INSERT INTO run (study_id, key, topology, architecture, workload, "
            "repetition, status) VALUES (1, 'campus|bridge|ping|1', 'campus', "
            "'bridge', 'ping', 1, 'ok')"
        )
    with Store(db) as store:
        (run,) = store.runs(1)
        assert run.point == {} and run.position is None
        assert store.study(1).provenance == {}
        assert store.done_keys(1) == {"campus|bridge|ping|1"}
        store.record_run(1, result("new", "p4", {"workload.udp.length": 64}, 0.2))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
        keys = [r[0] for r in conn.execute('SELECT key FROM tidy WHERE "workload.udp.length" = 64')]
    assert keys == ["new"]
