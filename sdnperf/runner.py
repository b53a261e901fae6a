"""Execute a study: for each planned run, build a fresh network, measure, store, tear down.

One run = fresh network + one workload. A run's failure is stored (with its error) and the
study goes on; Ctrl-C stops the study after tearing the current network down, and every
finished run is already committed, so `sdnperf run --resume` continues where it stopped.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from sdnperf.arch import Architecture, ArchitectureError, architecture_class, check_architecture
from sdnperf.arch.link_support import check_link_features
from sdnperf.ctlbench.study import CtlbenchStudy, StoredRun
from sdnperf.emulation import capabilities, cleanup
from sdnperf.emulation.network import EmulationError, Network
from sdnperf.emulation.nodes import Net
from sdnperf.fidelity import hops, links
from sdnperf.fidelity.cpu import CpuSampler, waits_in_words
from sdnperf.links.apply import appliers
from sdnperf.links.element import element_links, start_elements, stop_elements, without_links
from sdnperf.links.scheduler import LinkScheduler
from sdnperf.p4.catalog import held_selection
from sdnperf.samples import CpuReport, RunResult, RunStatus, Summary
from sdnperf.store.sqlite import Store
from sdnperf.study.loader import LoadedStudy
from sdnperf.study.plan import RunSpec, plan_runs
from sdnperf.topo.spec import TopoSpec
from sdnperf.workloads.base import ANNOUNCES_TRAFFIC_START

READY_TIMEOUT_S = 90.0
# Mininet messages that are harmless here and would drown the progress display: htb's
# advice on r2q at 100 Mbit/s, and rlimit tuning that fails inside containers.
HARMLESS_MININET_MESSAGES = ("quantum of class", "Error setting resource limits")


def quiet_mininet() -> None:
    import logging

    from mininet.log import lg, setLogLevel

    setLogLevel("warning")

    class DropHarmless(logging.Filter):
        def filter(self, record):
            return not any(m in record.getMessage() for m in HARMLESS_MININET_MESSAGES)

    for handler in lg.handlers:
        if not any(isinstance(f, DropHarmless) for f in handler.filters):
            handler.addFilter(DropHarmless())


class StudyRefused(RuntimeError):
    """The study cannot run on this machine/topology; nothing was started."""


@dataclass
class HostContext:
    """What a workload sees of the network (sdnperf.workloads.context.WorkloadContext)."""

    net: Net
    host_names: list[str]
    seed: int
    on_process: Callable[[int], None]
    log: Callable[[str], None]
    results_dir: Path | None = None  # this run's folder for files a workload keeps (pcaps)
    # a workload that knows when its measured traffic begins says so (iperf: the clients
    # start); link schedules count their time from then (links/scheduler.py)
    traffic_starts: Callable[[], None] = lambda: None

    def host(self, name: str):
        return self.net.get(name)


def preflight_problems(
    study: LoadedStudy, architectures: set[str] | None = None, kernel: bool = True
) -> list[str]:
    """Every reason `run` would refuse the study, in words (empty: it may start): link
    features against the kernel, each architecture against the topology and the machine.
    `architectures`: only these (those the selected runs use; default every one).
    `kernel=False` (`check` without root) leaves out the probes of the kernel's qdiscs."""
    if isinstance(study, CtlbenchStudy):  # a controller benchmark builds no network
        return study.preflight_problems()

    configs = [
        a for a in study.config.architecture if architectures is None or a.name in architectures
    ]
    problems = []
    if kernel:
        try:
            check_link_features(study.topology, configs)
        except EmulationError as exc:
            problems.append(str(exc))
    for arch_cfg in configs:
        try:
            check_architecture(arch_cfg, study.topology)
        except ArchitectureError as exc:
            problems.append(str(exc))
    return problems


def preflight(study: LoadedStudy, architectures: set[str] | None = None) -> None:
    """Refuse impossible studies before anything starts (StudyRefused naming every reason);
    `sdnperf check` asks the same preflight_problems."""
    problems = preflight_problems(study, architectures)
    if problems:
        raise StudyRefused("; ".join(problems) if len(problems) > 1 else problems[0])


def host_offloads(study: LoadedStudy) -> bool:
    """Resolve study.host_offloads ("auto": off when any architecture's first packets go
    through a controller, see Architecture.controller_sees_packets, or its switches read
    MTU-sized frames only, Architecture.needs_mtu_frames; and when a link follows
    a trace: its near-empty bins are shaped per frame, and a 64-KB segmentation-offload
    frame would hold a switch's port for seconds, links/schedule.py floor_mbps)."""
    setting = study.config.study.host_offloads
    if setting != "auto":
        return setting == "on"
    if any(plan.traced() for t in study.topologies.values() for plan in t.schedules):
        return False
    return not any(
        architecture_class(a).controller_sees_packets(a)
        or architecture_class(a).needs_mtu_frames(a)
        for a in study.config.architecture
    )


@dataclass
class StartedNetwork:
    """A built network whose data plane forwards, and the architecture running it."""

    arch: Architecture
    net: Net  # mininet.net.Mininet (or a test's fake)
    ready_s: float  # from building the network until the architecture was ready
    kernel_netem: bool = True  # the kernel delays/drops links (else switches or elements)
    elements: dict = field(default_factory=dict)  # (node1, node2) -> links.element.LinkElement


@contextmanager
def started_network(
    spec: TopoSpec,
    config,
    run_dir: Path,
    *,
    seed: int = 0,
    ipv6: bool = False,
    host_offloads: bool = True,
    ready_timeout: float | None = None,
    network_class=Network,
    architecture=architecture_class,
) -> Iterator[StartedNetwork]:
    """The run lifecycle, the one place that calls an architecture's steps, each once:
    check (refuse before anything starts) -> prepare -> build the network ->
    network_started -> wait_ready -> [the caller measures] -> before_network_stop ->
    stop the network -> stop. Whatever fails (or Ctrl-C), everything started so far stops.

    `network_class` and `architecture` (config -> class) let unit tests run the lifecycle
    on fakes."""
    cls = architecture(config)
    netem_ok = not spec.needs_netem() or capabilities.netem().ok
    # Links with a link element carry no settings in the network itself (the element has
    # them): the architecture and Mininet see them bare.
    wired = element_links(spec, netem_ok, cls.impairs_links_itself(config))
    study_spec, spec = spec, without_links(spec, wired)
    # Without sch_netem only an architecture whose switches impair links may run a topology
    # with delay/loss (checked again here: never a silently missing delay).
    kernel_netem = not spec.needs_netem() or netem_ok
    if not kernel_netem and not cls.impairs_links_itself(config):
        check_link_features(spec, [config])  # raises, in words
    arch = cls(config, spec, run_dir, cls.check(config, spec), seed=seed)
    arch.host_offloads = host_offloads
    network = None
    elements: dict = {}
    try:
        arch.prepare()
        network = network_class(
            cls.network_spec(config, spec),
            run_dir,
            arch.mininet_options(),
            netem=kernel_netem,
            ipv6=ipv6,
            host_offloads=host_offloads,
        )
        t0 = time.monotonic()
        net = network.start()
        elements = start_elements(net, study_spec, wired, run_dir, host_offloads)
        arch.network_started(net)
        # read at call time (not as a default argument) so a test can shorten it
        arch.wait_ready(net, READY_TIMEOUT_S if ready_timeout is None else ready_timeout)
        yield StartedNetwork(arch, net, time.monotonic() - t0, netem_ok, elements)
    finally:
        try:
            if network is not None:
                try:
                    arch.before_network_stop()
                finally:
                    stop_elements(elements)
                    network.stop()
        finally:
            arch.stop()


def _link_scheduler(spec: TopoSpec, started: StartedNetwork, workload: str, log):
    """The run's link schedule (an idle one when no link changes)."""
    if not spec.schedules:
        return LinkScheduler([], workload, log)
    return LinkScheduler(
        appliers(
            started.net,
            spec,
            started.elements,
            started.kernel_netem,
            getattr(started.arch.config, "port_burst", "htb"),
        ),
        workload,
        log,
    )


def _link_facts(facts: dict, spec: TopoSpec, started: StartedNetwork) -> None:
    """What a run's links did, for the record: schedules and link elements."""
    if spec.schedules:
        facts["link_schedules"] = {
            d.label: {"schedules": d.sources, "at_start": d.setting_at(0.0).describe()}
            for plan in spec.schedules
            for d in plan.directions()
            if d.curves
        }
    if started.elements:
        facts["link_elements"] = sorted(f"{a}-{b}" for a, b in started.elements)


def new_result(
    study: LoadedStudy, run: RunSpec, status: RunStatus = "ok", error: str = ""
) -> RunResult:
    """A run's result before anything is measured: which run it is and its configuration.
    execute_run fills it in; a cluster driver stores it failed for a run its node lost."""
    return RunResult(
        key=run.key,
        topology=study.topology.name,
        architecture=run.architecture.name,
        workload=run.workload.name,
        repetition=run.repetition,
        params={
            "architecture": run.architecture.model_dump(),
            "workload": run.workload.model_dump(mode="json"),
            "topology": study.topology.describe(),
        },
        status=status,
        error=error,
        started=time.time(),
    )


def execute_run(
    study: LoadedStudy,
    run: RunSpec,
    run_dir: Path,
    log: Callable[[str], None] = lambda msg: None,
    results_dir: Path | None = None,
    *,
    network_class=Network,
    architecture=architecture_class,
) -> RunResult:
    """One run: a fresh network, the workload, the architecture's counters; a failure in
    any step is stored as the run's error (with its traceback in run_dir)."""
    # lazy: looked up per run, so unit tests can replace workloads.base.run_workload
    from sdnperf.workloads.base import run_workload

    result = new_result(study, run)
    sampler = CpuSampler()
    try:
        offloads = host_offloads(study)
        with started_network(
            study.topology,
            run.architecture,
            run_dir,
            seed=study.config.study.seed * 1_000_003 + run.repetition,
            ipv6=study.config.study.ipv6,
            host_offloads=offloads,
            network_class=network_class,
            architecture=architecture,
        ) as started:
            arch, net = started.arch, started.net
            result.params["network_ready_s"] = round(started.ready_s, 3)
            result.params["facts"] = {
                **arch.facts(),
                "ipv6": study.config.study.ipv6,
                "host_tx_offloads": offloads,
            }
            for role, pids in arch.processes().items():
                for pid in pids:
                    sampler.watch(role, pid)
            for element in started.elements.values():
                sampler.watch("link_element", element.pid)
            schedule = _link_scheduler(study.topology, started, run.workload.name, log)
            _link_facts(result.params["facts"], study.topology, started)
            ctx = HostContext(
                net,
                study.topology.hosts(),
                study.config.study.seed,
                on_process=lambda pid: sampler.watch("traffic", pid),
                log=log,
                results_dir=results_dir,
                traffic_starts=schedule.start,
            )
            link_monitor = _start_link_monitor(study.topology, net, log)
            sampler.start()
            if run.workload.kind not in ANNOUNCES_TRAFFIC_START:
                schedule.start()
            link_samples: list = []
            try:
                output = run_workload(run.workload, ctx)
            except Exception:
                arch.check_alive()  # a dead controller or switch is the cause worth storing
                raise
            finally:
                result.cpu = sampler.stop()
                try:
                    link_samples = schedule.stop()
                finally:
                    for element in started.elements.values():
                        if not element.alive():
                            raise RuntimeError(f"link element on {element.name} died")
            _judge_links(link_monitor, result.cpu, log, schedule.started_at)
            result.samples = list(output.samples) + link_samples
            result.summaries = list(output.summaries)
            for metric, value in arch.control_stats().items():
                result.summaries.append(
                    Summary(run.workload.name, metric, float(value), "count", "lower")
                )
            # what forwarded, from those counters (not what the network was started for)
            result.params["facts"].update(arch.run_facts())
            # the network as built (`direct` has no switch to pace), after the counters
            built = type(arch).network_spec(arch.config, study.topology)
            held = _held_hosts(arch.config, net, built)
            _probe_switch_pace(built, net, result.cpu, log, held)
            _judge_workload_pace(built, result, log, held)
            arch.check_alive()  # a controller or switch that died mid-run voids the run
    except Exception as exc:  # a failed run is a result too: stored with its reason
        result.status = "failed"
        result.error = f"{type(exc).__name__}: {exc}"
        log(f"run {run.key} failed: {result.error}")
        (run_dir / "traceback.txt").parent.mkdir(parents=True, exist_ok=True)
        (run_dir / "traceback.txt").write_text(traceback.format_exc())
    result.finished = time.time()
    return result


def _held_hosts(config, net, spec: TopoSpec) -> frozenset[str]:
    """Hosts whose packets the architecture delays on purpose (recirculation: recirc.p4's
    passes, recirc_hold.p4's hold), which the switch-pace rule must not read as slow."""

    selection = held_selection(getattr(config, "program", None), getattr(config, "params", None))
    if selection is None:
        return frozenset()
    return hops.held_hosts({h: net.get(h).IP() or "" for h in spec.hosts()}, selection)


def _probe_switch_pace(
    spec: TopoSpec,
    net,
    cpu: CpuReport,
    log: Callable[[str], None],
    held: frozenset[str] = frozenset(),
) -> None:
    """Mark the run emulator-bound when one switch forwards far slower than on a small
    topology (fidelity/hops.py). A probe that cannot run leaves the run unmarked; hosts
    whose packets the architecture holds on purpose (`held`) are not probed."""
    pair = hops.probe_pair(spec, held)
    if pair is None:
        if held:
            log(
                f"  switch pace probe skipped: the architecture holds packets to "
                f"{', '.join(sorted(held))} on purpose (recirculation)"
            )
        return
    src, dst, switches = pair
    if switches == 0:
        return  # no switch on the path (`direct`): nothing to pace
    if _delayed_path(spec, src, dst):
        # a configured link delay would read as a slow switch: nothing is claimed
        log(f"  switch pace probe {src}->{dst} skipped: a link on its path is delayed")
        return
    try:
        min_rtt = hops.measure(net, src, dst)
    except (OSError, subprocess.SubprocessError) as exc:  # the figures stand without it
        log(f"  switch pace probe {src}->{dst} failed: {type(exc).__name__}: {exc}")
        return
    configured = hops.configured_rtt_ms(spec, src, dst)
    if min_rtt is not None:
        cpu.switch_ms = round(hops.per_switch_ms(max(min_rtt - configured, 0.0), switches), 4)
    cpu.emulator_bound, cpu.emulator_reason = hops.judge(min_rtt, switches, configured)
    if cpu.emulator_bound:
        log(f"  emulator-bound: {cpu.emulator_reason}")


def _delayed_path(spec: TopoSpec, src: str, dst: str) -> bool:
    """True when a link on the shortest src-dst path has a delay (static or scheduled)."""
    import networkx as nx

    path = nx.shortest_path(spec.graph, src, dst)
    edges = {frozenset(e) for e in zip(path, path[1:])}
    if any(spec.graph.edges[tuple(e)]["delay_ms"] for e in edges):
        return True
    return any(frozenset((p.node1, p.node2)) in edges and p.needs_netem() for p in spec.schedules)


def _judge_workload_pace(
    spec: TopoSpec,
    result: RunResult,
    log: Callable[[str], None],
    held: frozenset[str] = frozenset(),
) -> None:
    """The same rule on the workload's own steady pings (their paths are often longer than
    the probe's): a slower pace there marks the run too, and sets the switch time shown.
    Pings from or to hosts held on purpose (`held`) are left out."""
    pace = hops.workload_pace(spec, result.samples, held)
    if pace is None:
        return
    hop, flow, rtt, switches, configured = pace
    cpu = result.cpu
    if cpu.switch_ms is not None and hop <= cpu.switch_ms:
        return
    bound, reason = hops.judge(rtt, switches, configured, what=f"the workload's {flow}")
    cpu.switch_ms = round(hop, 4)
    if bound:
        cpu.emulator_bound, cpu.emulator_reason = True, reason
        log(f"  emulator-bound: {reason}")


def _start_link_monitor(spec: TopoSpec, net, log: Callable[[str], None]):
    """A LinkMonitor with its first reading, when the topology impairs any link (None
    otherwise, or when the network's ends cannot be found: the figures stand unjudged)."""
    if not (spec.needs_tc() or spec.needs_netem()):
        return None
    try:
        monitor = links.LinkMonitor(spec, net)
        if not monitor.watches_anything:
            return None
        monitor.start()
    except Exception as exc:  # a fidelity check never fails the run it checks
        log(f"  link monitor could not start: {type(exc).__name__}: {exc}")
        return None
    return monitor


def _judge_links(
    monitor, cpu: CpuReport, log: Callable[[str], None], traffic_start: float | None = None
) -> None:
    """Read the impaired links' counters after the workload and mark a breach
    (fidelity/links.py); scheduled links against their schedule from `traffic_start`."""
    if monitor is None:
        return
    try:
        checks = monitor.stop(traffic_start)
    except Exception as exc:
        log(f"  link monitor failed: {type(exc).__name__}: {exc}")
        return
    for note in monitor.notes:
        log(f"  link monitor: {note}")
    # a late link says what its switch and the machine waited for a CPU meanwhile
    links.attribute_lateness(checks, waits_in_words(cpu, "switch"), cpu.queued_ms.get("switch"))
    cpu.links = [c.record() for c in checks]
    cpu.link_breach, cpu.link_reason = links.summarize(checks)
    if cpu.link_breach:
        log(f"  link fidelity: {cpu.link_reason}")


def _folder(run_key: str) -> str:
    return run_key.replace("|", "_")


def plan_of(study: LoadedStudy | CtlbenchStudy) -> list:
    """The run plan of a study of either kind: a network study's (study/plan.py) or a
    controller benchmark's (ctlbench/study.py); both give runs with key, index, topology,
    architecture.name, workload.name, repetition and point."""
    return study.plan() if isinstance(study, CtlbenchStudy) else plan_runs(study)


def observe(study, result: StoredRun) -> None:
    """A run just stored (or found stored on --resume): a controller benchmark judges its
    later runs against the probe ceiling it measured."""
    if isinstance(study, CtlbenchStudy):
        study.observe(result)


def run_studies(plan: list[RunSpec]) -> list[LoadedStudy]:
    """The distinct studies the runs see (one per topology × sweep point), for preflight."""
    return list({id(r.study): r.study for r in plan if r.study is not None}.values())


def run_planned(
    study: LoadedStudy, run: RunSpec, run_dir: Path, results_dir: Path, log: Callable[[str], None]
) -> RunResult:
    """One planned run as every study runner does it (here and on a cluster node): execute
    it in a fresh `run_dir` with the study it sees, note its sweep point and position, keep a
    failed run's daemon/controller logs next to the results, remove `run_dir`."""
    results_dir = Path(results_dir)
    try:
        if isinstance(study, CtlbenchStudy):
            result = study.execute(run, results_dir, log)
        else:
            result = execute_run(
                run.study or study,
                run,
                run_dir,
                log,
                results_dir=results_dir / "runs" / _folder(run.key),
            )
        result.point, result.position = dict(run.point), run.index
        if result.status == "failed" and run_dir.exists():
            # A failed run's logs are evidence: copied next to the results.
            shutil.copytree(
                run_dir,
                results_dir / "logs" / _folder(run.key),
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("*.sock", "*.ctl", "conf.db"),
            )
        return result
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


class StudyRunner:
    def __init__(
        self,
        study: LoadedStudy,
        store: Store,
        results_dir: Path,
        resume: bool,
        progress=None,
        log: Callable[[str], None] = print,
        only=None,
        provenance: dict | None = None,
    ):
        self.study, self.store, self.results_dir = study, store, Path(results_dir)
        self.resume, self.progress, self.log = resume, progress, log
        self.only = only  # a study.select.Selection, or None for every run
        self.provenance = provenance or {}

    def run(self, environment: dict) -> tuple[int, list[RunResult]]:
        quiet_mininet()
        plan = plan_of(self.study)
        if self.only is not None:
            plan = [r for r in plan if self.only.matches(r)]
        for study in run_studies(plan) or [self.study]:
            preflight(study, {r.architecture.name for r in plan if r.study is study} or None)
        tag = cleanup.ensure_tag()
        study_dir = cleanup.run_root() / tag
        cfg = self.study.config
        study_id = self.store.open_study(
            self.study.name,
            self.study.path,
            cfg.model_dump(mode="json"),
            environment,
            provenance=self.provenance,
        )
        done = self.store.done_keys(study_id) if self.resume else set()
        for stored in self.store.runs(study_id) if done else []:
            observe(self.study, stored)
        todo = [r for r in plan if r.key not in done]
        if done:
            self.log(f"resuming: {len(plan) - len(todo)} of {len(plan)} runs already stored")
        results = []
        try:
            for n, run in enumerate(todo, start=1):
                if self.progress:
                    self.progress(n, len(todo), run)
                run_dir = study_dir / f"run{run.index:04d}"
                result = run_planned(self.study, run, run_dir, self.results_dir, self.log)
                self.store.record_run(study_id, result)
                observe(self.study, result)
                results.append(result)
        finally:
            shutil.rmtree(study_dir, ignore_errors=True)
        return study_id, results
