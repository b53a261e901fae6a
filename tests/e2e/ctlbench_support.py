"""What the ctlbench end-to-end tests share: a short study, running it into a fresh
store, and one run's summary values."""

from __future__ import annotations

import pytest

from sdnperf.ctlbench import config
from sdnperf.ctlbench.probe import ProbeError, binary
from sdnperf.ctlbench.study import ctlbench_study
from sdnperf.runner import StudyRunner
from sdnperf.store import Store


@pytest.fixture(scope="module")
def probe_built():
    """The probe binary must exist: the install script builds it, so its absence is a failure."""
    try:
        binary()
    except ProbeError as exc:
        pytest.fail(str(exc))


def short_study(ctl: str, name: str = "e2e", **load) -> config.CtlbenchFile:
    """One [[controller]] table (`ctl`, TOML lines) and a 1.5-s measurement."""
    load = {"warmup": 0.5, "duration": 1.5, "drain": 0.5, "ceiling": "false", **load}
    text = f'[study]\nname = "{name}"\n[[controller]]\n{ctl}\n[load]\n' + "".join(
        f"{k} = {v}\n" for k, v in load.items()
    )
    return config.parse(text)


def run_study(tmp_path, cfg):
    """(results, stored runs, stored summaries) of running `cfg` into tmp_path, through the
    one study pipeline (runner.StudyRunner), as `sdnperf ctlbench run` does."""
    with Store(tmp_path / "study.sqlite") as store:
        runner = StudyRunner(
            ctlbench_study(cfg, None), store, tmp_path, resume=False, log=lambda m: None
        )
        sid, results = runner.run({})
        return results, store.runs(sid), store.summaries(sid)


def run_metrics(summaries, run_id) -> dict[str, float]:
    return {s.metric: s.value for s in summaries if s.run_id == run_id}
