"""The SQLite schema of a study database and the hook that migrates older files.

One file holds one study (but the `study` table allows several, so a file can be merged
or reused). Every run is one row in `run`; its raw samples and per-run summaries hang off
it and are deleted with it (ON DELETE CASCADE), which is how a failed run is replaced
when a study is resumed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

SCHEMA_VERSION = 2

# The statements that create a version-1 database from nothing.
CREATE_V1 = """
CREATE TABLE IF NOT EXISTS study (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    source      TEXT NOT NULL DEFAULT '',   -- path of the study file it came from
    spec        TEXT NOT NULL DEFAULT '{}', -- the validated study spec, JSON
    created     REAL NOT NULL,              -- unix time
    environment TEXT NOT NULL DEFAULT '{}'  -- kernel, datapath, tool versions..., JSON
);
CREATE TABLE IF NOT EXISTS run (
    id           INTEGER PRIMARY KEY,
    study_id     INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    topology     TEXT NOT NULL,
    architecture TEXT NOT NULL,
    workload     TEXT NOT NULL,
    repetition   INTEGER NOT NULL,
    params       TEXT NOT NULL DEFAULT '{}',
    status       TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error        TEXT NOT NULL DEFAULT '',
    started      REAL NOT NULL DEFAULT 0,
    finished     REAL NOT NULL DEFAULT 0,
    cpu_bound    INTEGER NOT NULL DEFAULT 0 CHECK (cpu_bound IN (0, 1)),
    cpu          TEXT NOT NULL DEFAULT '{}', -- the CpuReport, JSON
    UNIQUE (study_id, key)
);
CREATE TABLE IF NOT EXISTS sample (
    run_id   INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    workload TEXT NOT NULL,
    metric   TEXT NOT NULL,
    value    REAL,            -- NULL stands for NaN (SQLite cannot store NaN)
    unit     TEXT NOT NULL DEFAULT '',
    flow     TEXT NOT NULL DEFAULT '',
    phase    TEXT NOT NULL DEFAULT '',
    t        REAL,
    seq      INTEGER
);
CREATE INDEX IF NOT EXISTS sample_by_run_metric ON sample (run_id, metric);
CREATE TABLE IF NOT EXISTS summary (
    run_id   INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    workload TEXT NOT NULL,
    metric   TEXT NOT NULL,
    value    REAL,
    unit     TEXT NOT NULL DEFAULT '',
    better   TEXT NOT NULL CHECK (better IN ('lower', 'higher'))
);
CREATE INDEX IF NOT EXISTS summary_by_run ON summary (run_id);
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
"""


# MIGRATIONS[n] turns a version-n database into version n+1. Add an entry (and bump
# SCHEMA_VERSION) whenever the schema changes; never edit CREATE_V1 in place for files
# that already exist in the wild.
def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Sweeps and provenance: additive only, so a v1 study reads as a study without sweeps.

    run.point: the run's sweep point as JSON; run.position: its place in the planned order;
    run_param: the same point one row per parameter (untyped `value`: 64 stays an integer,
    "10M" text), from which the `tidy` view makes one column per swept parameter;
    study.provenance: what produced the study (sdnperf/fidelity/provenance.py)."""
    conn.execute("ALTER TABLE study ADD COLUMN provenance TEXT NOT NULL DEFAULT '{}'")
    conn.execute("ALTER TABLE run ADD COLUMN point TEXT NOT NULL DEFAULT '{}'")
    conn.execute("ALTER TABLE run ADD COLUMN position INTEGER")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS run_param ("
        "run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE, "
        "param TEXT NOT NULL, value, PRIMARY KEY (run_id, param))"
    )
    create_tidy_view(conn, [])


def create_tidy_view(conn: sqlite3.Connection, params: list[str]) -> None:
    """(Re)create `tidy`: one row per run × summary metric (a run without summaries, e.g.
    a failed one, has one row with NULL metric), one column per swept parameter."""
    columns = "".join(
        f", (SELECT p.value FROM run_param p WHERE p.run_id = r.id AND p.param = "
        f"{_sql_text(param)}) AS {_sql_name(param)}"
        for param in params
    )
    conn.execute("DROP VIEW IF EXISTS tidy")
    conn.execute(
        "CREATE VIEW tidy AS SELECT st.name AS study, r.id AS run_id, r.key, r.topology, "
        "r.architecture, r.workload AS run_workload, r.repetition, r.position, r.status, "
        f"r.cpu_bound{columns}, s.workload, s.metric, s.value, s.unit, s.better "
        "FROM run r JOIN study st ON st.id = r.study_id "
        "LEFT JOIN summary s ON s.run_id = r.id"
    )


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_name(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2}


class SchemaError(RuntimeError):
    """The database file was written by a newer sdnperf, or cannot be migrated."""


def current_version(conn: sqlite3.Connection) -> int | None:
    """The file's schema version; None for a file without our tables (a new file)."""
    has_version = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
    ).fetchone()
    if not has_version:
        return None
    return conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 1


def ensure_schema(conn: sqlite3.Connection, path: str) -> None:
    """Create the tables in a new file, or migrate an older one up to SCHEMA_VERSION."""
    if current_version(conn) == SCHEMA_VERSION:
        return  # the common case needs no write lock (a report may read a running study)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = current_version(conn)  # again: another process may have just made it
        if version is None:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table'").fetchone():
                raise SchemaError(
                    f"{path}: an SQLite database that sdnperf did not create; "
                    "refusing to add tables to it"
                )
            for statement in _statements(CREATE_V1):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (1)")
            version = 1
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"{path}: database schema version {version} is newer than this sdnperf "
                f"understands ({SCHEMA_VERSION}); upgrade sdnperf to read it"
            )
        while version < SCHEMA_VERSION:
            if version not in MIGRATIONS:
                raise SchemaError(f"{path}: no migration from schema version {version}")
            MIGRATIONS[version](conn)
            version += 1
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """Split a script into statements so they run inside our own transaction
    (executescript() would commit on its own)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
