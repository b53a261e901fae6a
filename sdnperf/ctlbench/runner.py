"""One ctlbench run: a freshly started controller against the probe's emulated switches
(OpenFlow 1.3) or devices (P4Runtime), its CPU and memory sampled, the probe's report turned
into a RunResult (convert.py). The plan and the study around the runs: ctlbench/study.py."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sdnperf.controllers.process import ControllerError
from sdnperf.ctlbench import controllers, convert, probe
from sdnperf.ctlbench.config import ControllerSpec, CtlbenchFile
from sdnperf.fidelity.cpu import CpuSampler
from sdnperf.samples import CpuReport, RunResult

CEILING_ARCH = "echo (probe ceiling)"


@dataclass
class RunSpec:
    key: str
    controller: ControllerSpec
    switches: int
    rate: float | None
    mode: str
    repetition: int
    ceiling: bool = False  # a probe-ceiling measurement against the echo controller


class _RssPoller(threading.Thread):
    def __init__(self, pid: int | None, t0: float, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.t0, self.every = pid, t0, every
        self.series: list[tuple[float, float]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while self.pid and not self._halt.is_set():
            mb = controllers.rss_mb(self.pid)
            if mb is not None:
                self.series.append((time.monotonic() - self.t0, mb))
            self._halt.wait(self.every)

    def stop(self) -> list[tuple[float, float]]:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=2)
        return self.series


def _usage(
    sampler: CpuSampler, rss: list[tuple[float, float]], doc: dict | None
) -> convert.ControllerUsage:
    """Controller CPU over time (t from the start of the load) and during the measurement
    window, from the sampler's intervals (which start when the probe starts)."""
    w = (doc or {}).get("window_s") or {}

    load_start = float(w.get("handshake") or 0.0) + 0.5  # the probe's default settle
    m0 = load_start + float(w.get("warmup") or 0.0)
    m1 = m0 + float(w.get("measure") or 0.0)

    t = 0.0
    series, num, den = [], 0.0, 0.0
    for iv in sampler.intervals:
        pct = sum(v for (role, _pid), v in iv.procs.items() if role == "controller")
        mid = t + iv.seconds / 2
        series.append((round(mid - load_start, 3), pct))
        overlap = max(0.0, min(t + iv.seconds, m1) - max(t, m0))
        num += pct * overlap
        den += overlap
        t += iv.seconds
    has_ctl = any(role == "controller" for iv in sampler.intervals for (role, _p) in iv.procs)
    return convert.ControllerUsage(
        cpu_measure_pct=(num / den) if den > 0 and has_ctl else None,
        cpu_series=series if has_ctl else [],
        rss_max_mb=max((mb for _, mb in rss), default=None),
        rss_series=[(round(tt - load_start, 3), mb) for tt, mb in rss],
    )


CONTROLLER_DEATH_GRACE_S = 2.0


def _wait_probe(proc: subprocess.Popen, ctl, limit: float) -> tuple[bytes, str]:
    """The probe's stdout once it ends. When the controller process died, the probe is
    asked to stop (SIGTERM: it ends its measurement, drains and prints its report) after a
    short grace, instead of measuring a dead controller, or waiting out its connect
    timeout, until the end of its timeline."""
    deadline = time.monotonic() + limit
    died_at, note = None, ""
    while True:
        try:
            out, _ = proc.communicate(timeout=0.25)
            return out, note
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now > deadline:
            proc.kill()
            out, _ = proc.communicate()
            return out, "probe overran its timeline and was killed"
        if died_at is None and ctl.proc is not None and not ctl.alive():
            died_at = now
        if died_at is not None and not note and now - died_at > CONTROLLER_DEATH_GRACE_S:
            proc.terminate()
            note = "the probe was stopped early because the controller died"


class CtlbenchRunner:
    """Runs one ctlbench run at a time (run_one); the study around them (plan, order,
    resume, store, provenance, cluster) is the one pipeline's (ctlbench/study.py,
    runner.py). `ceiling`: switch count -> the probe's ceiling, to judge a run against."""

    def __init__(self, cfg: CtlbenchFile, results_dir: Path, *, log: Callable[[str], None] = print):
        self.cfg, self.results_dir, self.log = cfg, Path(results_dir), log
        self.ceiling: dict[int, float] = {}

    def failed(
        self, spec: RunSpec, params: dict, error: str, started: float, cpu: CpuReport | None = None
    ) -> RunResult:
        return RunResult(
            key=spec.key,
            topology=convert.topology_name(spec.switches),
            architecture=spec.controller.label,
            workload=convert.workload_name(spec.mode, spec.rate),
            repetition=spec.repetition,
            params=params,
            status="failed",
            error=error,
            started=started,
            finished=time.time(),
            cpu=cpu if cpu is not None else CpuReport(),  # RunResult's own default
        )

    def _probe_argv(
        self, spec: RunSpec, binary: str, target: str, extra: list[str] | None = None
    ) -> list[str]:
        """`target`: the controller's address (OpenFlow) or the devices file (P4Runtime);
        `extra`: probe options the OpenFlow controller needs."""
        load = self.cfg.load
        mode: str | None = None  # None: the probe's defaults (the load's own)
        duration: float | None = None
        warmup: float | None = None
        if spec.ceiling:
            mode, duration, warmup = "throughput", load.ceiling_duration, min(load.warmup, 0.5)
        rate = None if spec.ceiling else spec.rate
        if load.protocol == "p4runtime":
            listen = spec.controller.address if spec.controller.kind == "external" else None
            return probe.p4runtime_argv(
                binary, Path(target), load, spec.switches, rate, listen, mode, duration, warmup
            )
        return probe.openflow_argv(
            binary, target, load, spec.switches, rate, extra, mode, duration, warmup
        )

    def run_one(self, spec: RunSpec, binary: str) -> RunResult:
        load = self.cfg.load
        run_dir = self.results_dir / "logs" / re.sub(r"[^A-Za-z0-9_.-]+", "_", spec.key)
        started = time.time()
        params: dict[str, object] = {
            "controller": spec.controller.label,
            "kind": spec.controller.kind,
            "app": spec.controller.app,
            "mode": spec.mode,
            "switches": spec.switches,
            "rate_per_switch": spec.rate,
            "ceiling": spec.ceiling,
            "run_dir": str(run_dir),
            "protocol": load.protocol,
        }
        doc, crash, probe_note, stages = None, None, "", None
        sampler = CpuSampler(interval=0.5)
        t0 = 0.0  # when the sampler (and so the probe's clock) started
        rss = None
        ctl = proc = None
        try:
            if load.protocol == "p4runtime":
                # the devices listen first, then the controller dials them
                devices_file = run_dir / "devices.json"
                run_dir.mkdir(parents=True, exist_ok=True)
                devices_file.unlink(missing_ok=True)
                argv = self._probe_argv(spec, binary, str(devices_file))
                sampler.start()
                t0 = time.monotonic()
                proc = probe.start(argv, run_dir / "probe.stderr")
                sampler.watch("probe", proc.pid)
                try:
                    devices = probe.wait_devices(devices_file, proc)
                    ctl = controllers.start_p4runtime(
                        spec.controller, run_dir, load, devices, devices_file, binary
                    )
                except (ControllerError, probe.ProbeError) as exc:
                    proc.kill()
                    proc.communicate()
                    what = (
                        "controller did not start"
                        if isinstance(exc, ControllerError)
                        else "probe failed"
                    )
                    return self.failed(spec, params, f"{what}: {exc}", started, sampler.stop())
                if ctl.pid:
                    sampler.watch("controller", ctl.pid)
            else:
                try:
                    ctl = controllers.start(spec.controller, run_dir, load, spec.switches, binary)
                except ControllerError as exc:
                    return self.failed(spec, params, f"controller did not start: {exc}", started)
                argv = self._probe_argv(spec, binary, ctl.address, list(ctl.probe_args))
                if ctl.pid:
                    sampler.watch("controller", ctl.pid)
                sampler.start()
                t0 = time.monotonic()
            rss = _RssPoller(ctl.pid, t0)
            params["probe_argv"] = argv[1:]
            params["notes"] = notes = list(ctl.notes)
            rss.start()
            if proc is None:
                proc = probe.start(argv, run_dir / "probe.stderr")
                sampler.watch("probe", proc.pid)
            out, probe_note = _wait_probe(proc, ctl, probe.time_limit(load))
            stages = convert.controller_stages(ctl.proc.state() if ctl.proc else None)
            if probe_note:
                notes.append(probe_note)
            cpu = sampler.stop()
            rss_series = rss.stop()
            if not ctl.alive():
                crash = (
                    f"controller {spec.controller.label} crashed mid-run (exit code "
                    f"{ctl.exit_code()}); partial results kept. Log tail:\n{ctl.log_tail()}"
                )
            try:
                doc = json.loads(out.decode() or "null")
            except ValueError:
                doc = None
            if not isinstance(doc, dict):
                err = (run_dir / "probe.stderr").read_text(errors="replace")[-2000:]
                return self.failed(
                    spec,
                    params,
                    crash or f"probe produced no JSON (exit {proc.returncode}) {probe_note}: {err}",
                    started,
                    cpu,
                )
            (run_dir / "probe.json").write_text(json.dumps(doc))
            usage = _usage(sampler, rss_series, doc)
        finally:
            sampler.stop()
            if rss is not None:
                rss.stop()
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()
            if ctl is not None:
                ctl.stop()
        totals = doc.get("totals") or {}
        params["answered_rate"] = totals.get("answered_rate")
        ceiling = None if spec.ceiling else self.ceiling.get(spec.switches)
        if spec.ceiling:
            ceiling = float(totals.get("answered_rate") or 0) or None
        result = convert.to_run_result(
            doc,
            key=spec.key,
            controller=spec.controller.label,
            mode=spec.mode,
            switches=spec.switches,
            rate=spec.rate,
            repetition=spec.repetition,
            params=params,
            cpu=cpu,
            usage=usage,
            ceiling_pps=ceiling,
            crash=crash,
            started=started,
            finished=time.time(),
        )
        if stages:  # our P4Runtime controller times its stages (controllers/p4rt/stages.py)
            result.params["controller_stages"] = stages
            result.summaries += convert.stage_summaries(result.workload, stages)
        return result
