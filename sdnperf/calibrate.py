"""`sdnperf calibrate`: each architecture's calibration networks run through the normal
run lifecycle (runner.execute_run), summarized into the record that fidelity/calibration.py
describes, writes and reads. Kept out of fidelity/, which the runner itself uses."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

from sdnperf.arch import architecture_class
from sdnperf.emulation import capabilities
from sdnperf.fidelity import calibration
from sdnperf.runner import execute_run
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs


def calibrate(
    architectures, rate: float, delay: float, loss: float, work_dir: Path, log=print
) -> dict:
    """Run the calibration networks (needs root and Mininet) and return the record."""
    netem = capabilities.netem().ok
    records = []
    for kind in architectures:
        notes: list[str] = []
        want_delay, want_loss = delay, loss
        # the rate on links with nothing but the rate (loss on iperf3's control connection
        # could hang its client), delay and loss on a second network with all three
        rate_study = load_study_text(
            calibration.study_text(kind, rate, None, None), f"calibrate-{kind}-rate.toml", work_dir
        )
        config = rate_study.config.architecture[0]
        if not netem and not architecture_class(config).impairs_links_itself(config):
            notes.append(
                "delay and loss not calibrated: this kernel lacks sch_netem and "
                f"{kind} relies on tc netem for them"
            )
            want_delay = want_loss = 0.0
        link_study = load_study_text(
            calibration.study_text(kind, rate, want_delay or None, want_loss or None),
            f"calibrate-{kind}-link.toml",
            work_dir,
        )
        configured = {"rate_mbit": rate}
        configured |= {"delay_ms": want_delay} if want_delay else {}
        configured |= {"loss_pct": want_loss} if want_loss else {}
        runs = {}
        for loaded, workload in ((rate_study, "rate"), (link_study, "delay")):
            (spec,) = [r for r in plan_runs(loaded) if r.workload.name == workload]
            log(f"calibrate {kind}: {workload} ...")
            runs[workload] = execute_run(loaded, spec, work_dir / kind / workload, log=log)
        records.append(calibration.summarize(kind, configured, runs["rate"], runs["delay"], notes))
    return {
        "recorded": time.time(),
        "hostname": platform.node(),
        "load_average": list(os.getloadavg()),
        "netem": netem,
        "architectures": records,
    }
