"""The result store: one SQLite file per study, one transaction per run.

This is the only module in sdnperf that writes SQL. The file runs in WAL mode with
synchronous=FULL, so a run is on disk once `record_run` returns, and a process killed in
the middle of `record_run` leaves the database exactly as it was before that call.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sdnperf.samples import CpuReport, RunResult
from sdnperf.store.rows import RunRow, SampleRow, StudyRow, SummaryRow
from sdnperf.store.schema import SchemaError, create_tidy_view, ensure_schema

# Filters `Store.samples()` accepts, and the column each one tests.
_SAMPLE_FILTERS = {
    "study_id": "r.study_id",
    "architecture": "r.architecture",
    "topology": "r.topology",
    "repetition": "r.repetition",
    "status": "r.status",
    "workload": "s.workload",
    "metric": "s.metric",
    "flow": "s.flow",
    "phase": "s.phase",
}

RUN_CSV_COLUMNS = [
    "run_id",
    "key",
    "topology",
    "architecture",
    "workload",
    "repetition",
    "status",
    "error",
    "started",
    "finished",
    "duration_s",
    "cpu_bound",
    "cpu_reason",
    "cpu_peak_total",
    "params",
    "cpu",
]
SAMPLE_CSV_COLUMNS = [
    "run_id",
    "key",
    "topology",
    "architecture",
    "repetition",
    "workload",
    "metric",
    "value",
    "unit",
    "flow",
    "phase",
    "t",
    "seq",
]
SUMMARY_CSV_COLUMNS = [
    "run_id",
    "key",
    "topology",
    "architecture",
    "repetition",
    "status",
    "cpu_bound",
    "workload",
    "metric",
    "value",
    "unit",
    "better",
]


class Store:
    """A study database. Open it, `open_study`, then `record_run` once per finished run."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a transaction is
        # exactly what the code below says it is.
        self._conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            ensure_schema(self._conn, str(self.path))
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise SchemaError(
                f"{self.path}: cannot use as an sdnperf study database ({exc})"
            ) from exc
        except BaseException:
            self._conn.close()
            raise

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None  # type: ignore[assignment]  # closed for good: a later call fails

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------
    def open_study(
        self,
        name: str,
        source: str | Path | None,
        spec: dict,
        environment: dict,
        provenance: dict | None = None,
    ) -> int:
        """Create the study, or return the existing one of that name.

        On an existing study the environment is replaced by the current one (a resumed
        study reports the machine it finished on); its spec and creation date are kept,
        and so is its provenance, to which each resume appends its own under "resumes".
        `source` is the study file's path, or None for the embedded default study.
        """
        with self._transaction():
            row = self._conn.execute(
                "SELECT id, provenance FROM study WHERE name = ?", (name,)
            ).fetchone()
            if row:
                kept = json.loads(row[1] or "{}")
                if provenance:
                    if kept:
                        kept.setdefault("resumes", []).append(provenance)
                    else:
                        kept = provenance
                self._conn.execute(
                    "UPDATE study SET environment = ?, provenance = ? WHERE id = ?",
                    (_to_json(environment), _to_json(kept), row[0]),
                )
                return int(row[0])
            cur = self._conn.execute(
                "INSERT INTO study (name, source, spec, created, environment, provenance) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    name,
                    "" if source is None else str(source),
                    _to_json(spec),
                    time.time(),
                    _to_json(environment),
                    _to_json(provenance or {}),
                ),
            )
            return _inserted_id(cur)

    def record_run(self, study_id: int, result: RunResult) -> int:
        """Store one finished run with its samples and summaries, in one transaction.

        A run with the same key replaces the old one (that is how a failed run is
        retried on resume). Returns the new run id.
        """
        _check_result(result)
        with self._transaction():
            if not self._conn.execute("SELECT 1 FROM study WHERE id = ?", (study_id,)).fetchone():
                raise KeyError(f"{self.path}: no study with id {study_id}; call open_study first")
            # The old row's samples and summaries go with it (ON DELETE CASCADE).
            self._conn.execute(
                "DELETE FROM run WHERE study_id = ? AND key = ?", (study_id, result.key)
            )
            cur = self._conn.execute(
                "INSERT INTO run (study_id, key, topology, architecture, workload, "
                "repetition, params, status, error, started, finished, cpu_bound, cpu, "
                "point, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    study_id,
                    result.key,
                    result.topology,
                    result.architecture,
                    result.workload,
                    int(result.repetition),
                    _to_json(result.params),
                    result.status,
                    result.error or "",
                    float(result.started),
                    float(result.finished),
                    int(bool(result.cpu.cpu_bound)),
                    _to_json(asdict(result.cpu)),
                    _to_json(result.point),
                    result.position,
                ),
            )
            run_id = _inserted_id(cur)
            if result.point:
                known = set(self.swept_params())
                self._conn.executemany(
                    "INSERT INTO run_param (run_id, param, value) VALUES (?, ?, ?)",
                    ((run_id, param, _param_value(value)) for param, value in result.point.items()),
                )
                if not set(result.point) <= known:  # a new column for the tidy view
                    create_tidy_view(self._conn, self.swept_params())
            self._conn.executemany(
                "INSERT INTO sample (run_id, workload, metric, value, unit, flow, phase, t, seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self._sample_rows(run_id, result),
            )
            self._conn.executemany(
                "INSERT INTO summary (run_id, workload, metric, value, unit, better) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (run_id, s.workload, s.metric, _real(s.value), s.unit, s.better)
                    for s in result.summaries
                ),
            )
        return run_id

    @staticmethod
    def _sample_rows(run_id: int, result: RunResult):
        for s in result.samples:
            yield (
                run_id,
                s.workload,
                s.metric,
                _real(s.value),
                s.unit,
                s.flow,
                s.phase,
                None if s.t is None else float(s.t),
                None if s.seq is None else int(s.seq),
            )

    # -- reading ---------------------------------------------------------------------
    def study(self, study_id: int) -> StudyRow:
        row = self._conn.execute(
            "SELECT id, name, source, spec, created, environment, provenance FROM study "
            "WHERE id = ?",
            (study_id,),
        ).fetchone()
        if row is None:
            raise KeyError(f"{self.path}: no study with id {study_id}")
        return StudyRow(
            row[0],
            row[1],
            row[2],
            json.loads(row[3]),
            row[4],
            json.loads(row[5]),
            json.loads(row[6] or "{}"),
        )

    def studies(self) -> list[StudyRow]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM study ORDER BY id")]
        return [self.study(i) for i in ids]

    def swept_params(self, study_id: int | None = None) -> list[str]:
        """Swept parameter paths that runs recorded (of one study, or of the file), in the
        order first recorded."""
        sql = (
            "SELECT p.param, MIN(p.rowid) AS first FROM run_param p JOIN run r ON r.id = p.run_id"
            + (" WHERE r.study_id = ?" if study_id is not None else "")
            + " GROUP BY p.param ORDER BY first"
        )
        return [r[0] for r in self._conn.execute(sql, () if study_id is None else (study_id,))]

    def done_keys(self, study_id: int) -> set[str]:
        """Keys of the runs that finished ok: `--resume` skips them, retries the rest."""
        rows = self._conn.execute(
            "SELECT key FROM run WHERE study_id = ? AND status = 'ok'", (study_id,)
        )
        return {r[0] for r in rows}

    def runs(self, study_id: int) -> list[RunRow]:
        """All runs of the study, failed ones included, in the order they were recorded."""
        rows = self._conn.execute(
            "SELECT id, study_id, key, topology, architecture, workload, repetition, params, "
            "status, error, started, finished, cpu_bound, cpu, point, position FROM run "
            "WHERE study_id = ? ORDER BY id",
            (study_id,),
        )
        return [
            RunRow(
                id=r[0],
                study_id=r[1],
                key=r[2],
                topology=r[3],
                architecture=r[4],
                workload=r[5],
                repetition=r[6],
                params=json.loads(r[7]),
                status=r[8],
                error=r[9],
                started=r[10],
                finished=r[11],
                cpu_bound=bool(r[12]),
                cpu=_cpu_from_json(r[13]),
                point=json.loads(r[14] or "{}"),
                position=r[15],
            )
            for r in rows
        ]

    def samples(self, run_id: int | None = None, **filters: Any) -> list[SampleRow]:
        """Raw samples, optionally of one run, narrowed by equality filters.

        Filters: study_id, architecture, topology, repetition, status, workload, metric,
        flow, phase. A value may also be a list/tuple/set, meaning "any of these".
        """
        where, args = [], []
        if run_id is not None:
            where.append("s.run_id = ?")
            args.append(run_id)
        for name, value in filters.items():
            if name not in _SAMPLE_FILTERS:
                raise TypeError(
                    f"Store.samples(): unknown filter {name!r}; "
                    f"use one of {', '.join(sorted(_SAMPLE_FILTERS))}"
                )
            column = _SAMPLE_FILTERS[name]
            if isinstance(value, (list, tuple, set, frozenset)):
                values = list(value)
                where.append(f"{column} IN ({', '.join('?' * len(values))})" if values else "0")
                args.extend(values)
            else:
                where.append(f"{column} = ?")
                args.append(value)
        sql = (
            "SELECT s.run_id, r.architecture, r.topology, r.repetition, s.workload, s.metric, "
            "s.value, s.unit, s.flow, s.phase, s.t, s.seq "
            "FROM sample s JOIN run r ON r.id = s.run_id"
        )
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY s.rowid"
        return [
            SampleRow(
                r[0], r[1], r[2], r[3], r[4], r[5], _float(r[6]), r[7], r[8], r[9], r[10], r[11]
            )
            for r in self._conn.execute(sql, args)
        ]

    def sample_metrics(self, study_id: int, status: str | None = "ok") -> list[tuple[str, str]]:
        """Distinct (workload, metric) pairs that have samples, in the order first stored
        (of runs with this status; None for any run)."""
        sql = (
            "SELECT s.workload, s.metric, MIN(s.rowid) AS first FROM sample s "
            "JOIN run r ON r.id = s.run_id WHERE r.study_id = ?"
        )
        args: list[Any] = [study_id]
        if status is not None:
            sql += " AND r.status = ?"
            args.append(status)
        sql += " GROUP BY s.workload, s.metric ORDER BY first"
        return [(r[0], r[1]) for r in self._conn.execute(sql, args)]

    def summaries(self, study_id: int) -> list[SummaryRow]:
        """Every per-run summary of the study, with its run's status and CPU mark."""
        rows = self._conn.execute(
            "SELECT s.run_id, r.key, r.architecture, r.topology, r.repetition, r.status, "
            "r.cpu_bound, s.workload, s.metric, s.value, s.unit, s.better "
            "FROM summary s JOIN run r ON r.id = s.run_id WHERE r.study_id = ? "
            "ORDER BY r.id, s.rowid",
            (study_id,),
        )
        return [
            SummaryRow(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                bool(r[6]),
                r[7],
                r[8],
                _float(r[9]),
                r[10],
                r[11],
            )
            for r in rows
        ]

    # -- export ----------------------------------------------------------------------
    def export_csv(self, study_id: int, out_dir: str | Path) -> list[Path]:
        """Write runs.csv, samples.csv and summaries.csv; returns their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        runs = self.runs(study_id)
        keys = {r.id: r.key for r in runs}
        # Swept parameters: one column each, after the fixed ones (blank where a run has
        # no such parameter), so a CSV reader gets the same tidy table as the `tidy` view.
        swept = self.swept_params(study_id)
        points = {r.id: [_blank(r.point.get(p)) for p in swept] for r in runs}
        run_rows = [
            [
                r.id,
                r.key,
                r.topology,
                r.architecture,
                r.workload,
                r.repetition,
                r.status,
                r.error,
                r.started,
                r.finished,
                round(r.duration, 6),
                int(r.cpu_bound),
                r.cpu.reason,
                r.cpu.peak_total,
                _to_json(r.params),
                _to_json(asdict(r.cpu)),
                *points[r.id],
            ]
            for r in runs
        ]
        sample_rows = (
            [
                s.run_id,
                keys[s.run_id],
                s.topology,
                s.architecture,
                s.repetition,
                s.workload,
                s.metric,
                s.value,
                s.unit,
                s.flow,
                s.phase,
                _blank(s.t),
                _blank(s.seq),
            ]
            for s in self.samples(study_id=study_id)
        )
        summary_rows = (
            [
                s.run_id,
                s.run_key,
                s.topology,
                s.architecture,
                s.repetition,
                s.status,
                int(s.cpu_bound),
                s.workload,
                s.metric,
                s.value,
                s.unit,
                s.better,
                *points[s.run_id],
            ]
            for s in self.summaries(study_id)
        )
        return [
            _write_csv(out / "runs.csv", RUN_CSV_COLUMNS + swept, run_rows),
            _write_csv(out / "samples.csv", SAMPLE_CSV_COLUMNS, sample_rows),
            _write_csv(out / "summaries.csv", SUMMARY_CSV_COLUMNS + swept, summary_rows),
        ]

    # -- internals -------------------------------------------------------------------
    def _transaction(self):
        return _Transaction(self._conn)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception (Ctrl-C included)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:  # SQLite may already have rolled back itself
            self.conn.execute("ROLLBACK")


def _check_result(result: RunResult) -> None:
    """Refuse a malformed RunResult before touching the database, naming the field."""
    if not result.key:
        raise ValueError("RunResult.key is empty")
    if result.status not in ("ok", "failed"):
        raise ValueError(f"RunResult {result.key}: status {result.status!r} is not ok|failed")
    for s in result.summaries:
        if s.better not in ("lower", "higher"):
            raise ValueError(
                f"RunResult {result.key}: summary {s.workload}/{s.metric} has "
                f"better={s.better!r}, expected 'lower' or 'higher'"
            )


def _inserted_id(cur: sqlite3.Cursor) -> int:
    """The id of the row the INSERT on `cur` just wrote (sqlite3 sets lastrowid after every
    INSERT; None would mean the statement wrote nothing)."""
    if cur.lastrowid is None:
        raise sqlite3.DatabaseError("an INSERT wrote no row (no lastrowid)")
    return cur.lastrowid


def _to_json(value: Any) -> str:
    # default=str: a Path or a datetime in params must not lose a finished run.
    return json.dumps(value, sort_keys=True, default=str)


def _param_value(value: Any) -> Any:
    """A sweep value as SQLite stores it: numbers and text as they are, others as JSON."""
    if isinstance(value, (int, float, str)) or value is None:
        return value
    return _to_json(value)


def _real(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def _float(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _blank(value: Any) -> Any:
    return "" if value is None else value


def _cpu_from_json(text: str) -> CpuReport:
    data = json.loads(text or "{}")
    known = {k: data[k] for k in CpuReport.__dataclass_fields__ if k in data}
    return CpuReport(**known)


def _write_csv(path: Path, columns: list[str], rows) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)
    return path
