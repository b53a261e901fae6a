"""Seed paper 001's BMv2 blocks in workload-complexity at smoke scale, through the real
components: the reference simple_switch_grpc running the same P4 programs and entries as our
switch, run by `sdnperf study run workload-complexity --scale smoke --only ...` with the
reference bundle pinned (a plain `study run` never looks there, so the built-in smoke test
leaves BMv2 out). The direct connection and the user-space forwarder are among that smoke
test's own runs and are checked there (test_builtin_studies.py, complexity_baselines)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sdnperf.store import Store
from tests.e2e.support import NEEDS_MININET, bmv2_env

pytestmark = NEEDS_MININET


def run_smoke(tmp_path, only: str, env_extra: dict[str, str] | None = None) -> tuple[str, Path]:
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot"), **(env_extra or {})}
    env.pop("SDNPERF_TAG", None)
    out = tmp_path / "results"
    r = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "study", "run", "workload-complexity"]
        + ["--scale", "smoke", "--out", str(out), "--only", only, "--no-report"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    (db,) = out.glob("*/study.sqlite")
    return r.stdout, db


def _summary(store, run, metric):
    return next(
        s.value for s in store.summaries(run.study_id) if s.run_id == run.id and s.metric == metric
    )


def test_bmv2_blocks_forward_the_same_programs(tmp_path):
    _, db = run_smoke(tmp_path, "arch=bmv2-l2|bmv2-ipv4,workload=owd", bmv2_env())
    with Store(db) as store:
        (study,) = store.studies()
        runs = store.runs(study.id)
        assert {r.architecture for r in runs} == {"bmv2-l2", "bmv2-ipv4"}
        assert all(r.status == "ok" for r in runs), [r.error for r in runs]
        for run in runs:
            # BMv2 drops when its threads do not get the CPU (3.2 % of ~1000 pps once, at
            # load ~4 beside the other e2e group): then the run must carry the CPU mark
            assert _summary(store, run, "loss_pct") == 0.0 or run.cpu_bound, run.cpu
