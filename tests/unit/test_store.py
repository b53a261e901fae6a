"""The SQLite store: API, resume semantics, crash safety, CSV export."""

from __future__ import annotations

import csv
import math
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sdnperf.samples import CpuReport, RunResult, Sample, Summary
from sdnperf.store import Store
from sdnperf.store.schema import SchemaError
from sdnperf.store.sqlite import RUN_CSV_COLUMNS, SAMPLE_CSV_COLUMNS, SUMMARY_CSV_COLUMNS

from .test_report_data import CPU_BOUND_KEY, CPU_REASON, FAILED_KEY, build_study

REPO = Path(__file__).resolve().parents[2]


def run(key: str, status: str = "ok", n_samples: int = 3, **kw) -> RunResult:
    return RunResult(
        key=key,
        topology="single",
        architecture=kw.pop("arch", "bridge"),
        workload="ping",
        repetition=0,
        params={"count": n_samples},
        status=status,
        error=kw.pop("error", ""),
        samples=[
            Sample("ping", "rtt_ms", 0.1 * (i + 1), "ms", "h1->h2", "steady", i, i)
            for i in range(n_samples)
        ],
        summaries=[Summary("ping", "rtt_ms", 0.2, "ms")],
        **kw,
    )


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "study.db")
    yield s
    s.close()


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_open_study_creates_once_and_updates_environment(store):
    sid = store.open_study("s", "s.toml", {"baseline": "bridge"}, {"kernel": "6.1"})
    again = store.open_study("s", "other.toml", {"baseline": "x"}, {"kernel": "6.2"})
    assert again == sid
    study = store.study(sid)
    assert study.environment == {"kernel": "6.2"}
    assert study.spec == {"baseline": "bridge"}  # the original spec is kept
    assert study.source == "s.toml"
    assert store.open_study("other", "o.toml", {}, {}) != sid


def test_file_is_in_wal_mode(store):
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_done_keys_are_ok_runs_and_a_failed_run_is_replaced_on_retry(store):
    sid = store.open_study("s", "s.toml", {}, {})
    store.record_run(sid, run("a"))
    store.record_run(sid, run("b", status="failed", error="boom", n_samples=2))
    assert store.done_keys(sid) == {"a"}

    store.record_run(sid, run("b", n_samples=5))  # the resumed retry succeeds
    assert store.done_keys(sid) == {"a", "b"}
    runs = {r.key: r for r in store.runs(sid)}
    assert len(runs) == 2 and runs["b"].status == "ok" and runs["b"].error == ""
    assert len(store.samples(runs["b"].id)) == 5
    assert count(store.path, "sample") == 3 + 5  # the failed try's samples are gone
    assert count(store.path, "summary") == 2


def test_done_keys_are_per_study(store):
    s1 = store.open_study("one", "", {}, {})
    s2 = store.open_study("two", "", {}, {})
    store.record_run(s1, run("k"))
    assert store.done_keys(s2) == set()
    store.record_run(s2, run("k"))  # the same key in another study is another run
    assert len(store.runs(s1)) == len(store.runs(s2)) == 1


def test_runs_round_trip_every_field(store):
    sid = store.open_study("s", "", {}, {})
    cpu = CpuReport(
        per_role={"controller": 12.5},
        per_core=[50.0, 60.0],
        peak_total=99.0,
        cpu_bound=True,
        reason="saturated",
    )
    store.record_run(sid, run("a", started=10.0, finished=12.5, cpu=cpu))
    (r,) = store.runs(sid)
    assert (r.key, r.topology, r.architecture, r.workload, r.repetition) == (
        "a",
        "single",
        "bridge",
        "ping",
        0,
    )
    assert r.params == {"count": 3}
    assert r.cpu_bound is True and r.cpu == cpu
    assert r.duration == 2.5


def test_samples_filters(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    cold = store.samples(study_id=sid, metric="rtt_ms", phase="cold")
    assert cold and all(s.phase == "cold" for s in cold)
    assert len(cold) == 3 * 3 * 2  # archs × reps × flows
    two = store.samples(study_id=sid, architecture=["bridge", "ovs"], workload="tcp")
    assert {s.architecture for s in two} == {"bridge", "ovs"}
    one_run = store.runs(sid)[0]
    assert {s.run_id for s in store.samples(one_run.id)} == {one_run.id}
    with pytest.raises(TypeError, match="unknown filter 'colour'"):
        store.samples(colour="red")
    store.close()


def test_nan_values_survive_as_nan(store):
    sid = store.open_study("s", "", {}, {})
    r = run("a")
    r.samples.append(Sample("ping", "rtt_ms", math.nan, "ms"))
    store.record_run(sid, r)
    assert math.isnan(store.samples(metric="rtt_ms")[-1].value)


def test_summaries_carry_run_identity(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    sums = store.summaries(sid)
    bound = [s for s in sums if s.run_key == CPU_BOUND_KEY]
    assert bound and all(s.cpu_bound and s.architecture == "openflow" for s in bound)
    assert {s.better for s in sums if s.metric == "throughput_mbps"} == {"higher"}
    assert not [s for s in sums if s.run_key == FAILED_KEY]
    store.close()


def test_bad_result_is_refused_before_writing(store):
    sid = store.open_study("s", "", {}, {})
    with pytest.raises(ValueError, match="status 'done'"):
        store.record_run(sid, run("a", status="done"))
    with pytest.raises(ValueError, match="empty"):
        store.record_run(sid, run(""))
    assert store.runs(sid) == []


def test_error_mid_transaction_leaves_nothing_half_written(store):
    sid = store.open_study("s", "", {}, {})
    store.record_run(sid, run("kept"))
    bad = run("bad")
    bad.samples.insert(2, Sample("ping", "rtt_ms", "not a number", "ms"))  # type: ignore[arg-type]  # a wrong type on purpose
    with pytest.raises(ValueError):
        store.record_run(sid, bad)
    assert [r.key for r in store.runs(sid)] == ["kept"]
    assert count(store.path, "sample") == 3
    store.record_run(sid, run("after"))  # the store is still usable
    assert store.done_keys(sid) == {"kept", "after"}


def test_a_failed_retry_that_crashes_keeps_the_old_row(store):
    """Replacing a run is part of the same transaction: a crash keeps the old one."""
    sid = store.open_study("s", "", {}, {})
    store.record_run(sid, run("b", status="failed", error="first try"))
    bad = run("b")
    bad.samples.append(Sample("ping", "rtt_ms", object(), "ms"))  # type: ignore[arg-type]  # a wrong type on purpose
    with pytest.raises(TypeError):
        store.record_run(sid, bad)
    (r,) = store.runs(sid)
    assert r.status == "failed" and r.error == "first try"


CRASHER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {repo!r})
    from sdnperf.store import Store
    from sdnperf.store.sqlite import Store as S
    from tests.unit.test_store import run
    store = Store(sys.argv[1])
    sid = store.open_study("s", "", {{}}, {{}})
    store.record_run(sid, run("durable", n_samples=4))
    original = S._sample_rows
    def dying(run_id, result):
        for i, row in enumerate(original(run_id, result)):
            if i == 50:
                os._exit(9)  # a kill -9 in the middle of writing the samples
            yield row
    S._sample_rows = staticmethod(dying)
    store.record_run(sid, run("torn", n_samples=100))
""")


def test_process_killed_mid_run_loses_only_that_run(tmp_path):
    db = tmp_path / "study.db"
    script = CRASHER.format(repo=str(REPO))
    proc = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    with Store(db) as store:
        (sid,) = [s.id for s in store.studies()]
        assert store.done_keys(sid) == {"durable"}
        assert len(store.samples()) == 4  # none of the torn run's 50 written samples
        assert count(db, "run") == 1


def test_recorded_run_is_durable_after_reopening(tmp_path):
    db = tmp_path / "study.db"
    with Store(db) as store:
        sid = store.open_study("s", "", {}, {})
        store.record_run(sid, run("a"))
    with Store(db) as store:
        assert store.done_keys(sid) == {"a"}


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "study.db"
    Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(SchemaError, match="version 99"):
        Store(db)


def test_migration_hook_runs_and_bumps_version(tmp_path, monkeypatch):
    from sdnperf.store import schema

    db = tmp_path / "study.db"
    Store(db).close()
    calls = []
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(
        schema.MIGRATIONS,
        2,
        lambda conn: calls.append(conn.execute("ALTER TABLE run ADD COLUMN note TEXT")),
    )
    Store(db).close()
    Store(db).close()  # already at 3: no second migration
    assert len(calls) == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(3,)]


def test_export_csv(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    paths = store.export_csv(sid, tmp_path / "csv")
    assert [p.name for p in paths] == ["runs.csv", "samples.csv", "summaries.csv"]
    tables = {}
    for p in paths:
        with p.open(newline="") as f:
            tables[p.name] = list(csv.DictReader(f))
    assert list(tables["runs.csv"][0]) == RUN_CSV_COLUMNS
    assert list(tables["samples.csv"][0]) == SAMPLE_CSV_COLUMNS
    assert list(tables["summaries.csv"][0]) == SUMMARY_CSV_COLUMNS
    runs = {r["key"]: r for r in tables["runs.csv"]}
    assert (
        runs[FAILED_KEY]["status"] == "failed" and "unable to connect" in runs[FAILED_KEY]["error"]
    )
    assert (
        runs[CPU_BOUND_KEY]["cpu_bound"] == "1" and runs[CPU_BOUND_KEY]["cpu_reason"] == CPU_REASON
    )
    assert len(tables["samples.csv"]) == len(store.samples(study_id=sid))
    assert {r["phase"] for r in tables["samples.csv"]} == {"cold", "steady", ""}
    store.close()


def test_default_study_without_source(store):
    sid = store.open_study("default", None, {}, {})
    assert store.study(sid).source == ""


def test_a_file_that_is_not_a_database_gets_a_clear_error(tmp_path):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(
        SchemaError, match="notes.sqlite: cannot use as an sdnperf study database .*not a database"
    ):
        Store(bad)


def test_sample_metrics_lists_ok_runs_metrics_in_order(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    assert store.sample_metrics(sid) == [("ping", "rtt_ms"), ("tcp", "throughput_mbps")]
    store.close()


def test_record_run_needs_an_existing_study(store):
    with pytest.raises(KeyError, match="no study with id 42"):
        store.record_run(42, run("a"))


def test_a_reader_opens_while_a_writer_holds_the_lock(tmp_path):
    """`sdnperf report` on a study that is still running must not wait for the runner."""
    db = tmp_path / "study.db"
    with Store(db) as writer:
        sid = writer.open_study("s", "", {}, {})
        writer.record_run(sid, run("a"))
        writer._conn.execute("BEGIN IMMEDIATE")  # the runner in the middle of a run
        try:
            reader = Store(db)
            assert reader.done_keys(sid) == {"a"}
            reader.close()
        finally:
            writer._conn.execute("ROLLBACK")


def test_someone_elses_database_is_left_alone(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(SchemaError, match="did not create"):
        Store(other)
    with sqlite3.connect(other) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert tables == ["notes"]
