"""`p4`: P4 switches controlled over P4Runtime by sdnperf's controller.

Each switch runs our P4Runtime switch daemon (`sdnperf-switch-grpc`, rust/p4rt; like
BMv2's `simple_switch_grpc`) bound to 127.0.0.1 on its own gRPC port, with device id = the
switch's number (s3 -> 3) and CPU port 255; `target = "bmv2"` runs `simple_switch_grpc`
instead, where tools.find_bmv2 finds it ($SDNPERF_BMV2_DIR or PATH). The switches start
without a program: the controller
(sdnperf/controllers/p4rt, started once Mininet has numbered the ports) connects to every
one, becomes primary, pushes the pipeline (`program`, a program shipped in sdnperf/p4/ —
l2l3.p4 by default — compiled by our compiler on first use, or the program named in the
runtime files), writes the program's run-time `params` (sdnperf/p4/catalog.py) and runs its
app:

    l2-learning      reactive MAC learning, floods (loop-free topologies only)
    topo-forwarding  LLDP discovery, shortest paths, entries along the whole path
    proactive        every host's entries on every switch before traffic starts
    runtime-json     the P4 tutorials' sN-runtime.json files from `runtime_dir`
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from sdnperf import tools
from sdnperf.arch import cpu_priority, p4_datapath
from sdnperf.arch.base import (
    Architecture,
    ArchitectureError,
    attached_hosts,
    check_controller,
    controller_log,
    wait_until,
)
from sdnperf.controllers import external, process
from sdnperf.controllers.p4rt import runtime_json
from sdnperf.emulation import capabilities
from sdnperf.links import htb
from sdnperf.p4 import CompiledProgram, P4ProgramError, compiled
from sdnperf.p4.catalog import PROGRAMS, program
from sdnperf.topo.spec import TopoSpec

CPU_PORT = 255
_WARNED: list = []  # the shaping caveat is printed once per process
GRPC_DAEMON = "sdnperf-switch-grpc"
SWITCH = "sdnperf-switch"  # its `check` says whether a program fits the XDP fast path
BMV2_DAEMON = "simple_switch_grpc"


def _entry_builder(config):
    """The program's proactive entry builder (catalog.Program.make_entries), if it has one."""
    prog = PROGRAMS.get(config.program)
    return prog.make_entries if prog else None


def engine_links(spec: TopoSpec) -> list[str]:
    """Links whose switch ports need the engine: delay, loss, a serialised rate, or a
    schedule (static or traced). A rate alone does not: the fast path and the engine
    share each shaped port's link clock (rust/switch xdpfast/shaper.rs)."""
    out = [
        f"{x.node1}-{x.node2}"
        for x in spec.links()
        if x.delay_ms or x.loss_pct or (x.serialise and x.bw)
    ]
    out += [f"{p.node1}-{p.node2} (schedule)" for p in spec.schedules]
    return out


def program_fit(json_path) -> str | None:
    """None when the compiled program fits the switch's XDP fast path, else why not
    (`sdnperf-switch check` answers both)."""
    r = subprocess.run(
        [tools.find(SWITCH), "check", str(json_path)], capture_output=True, text=True, timeout=60
    )
    for line in r.stdout.splitlines():
        if line.startswith("xdp fast path: does not fit: "):
            return line.removeprefix("xdp fast path: does not fit: ")
        if line.startswith("xdp fast path: fits"):
            return None
    return f"sdnperf-switch check {json_path} failed: {(r.stderr or r.stdout).strip()[-300:]}"


def switch_counters(sw) -> tuple[p4_datapath.FastPathStatus, dict[str, int]]:
    """One switch's fast-path state and counters and its engine's counters (ctl)."""
    try:
        text = sw.ctl("fastpath", "stats")
    except Exception as exc:  # a switch that cannot answer: nothing counted
        return p4_datapath.FastPathStatus(False, why_not=f"ctl failed: {exc}"), {}
    status, stats = p4_datapath.FastPathStatus(False, why_not="no answer"), {}
    for line in text.splitlines():
        if line.startswith("rx="):
            stats = p4_datapath.parse_stats(line)
        elif line.strip():
            status = p4_datapath.parse_status(line)
    return status, stats


def all_counters(net) -> list[tuple[p4_datapath.FastPathStatus, dict[str, int]]]:
    """switch_counters() of every switch of `net`, in its order, all asked at once (a ctl
    process each: ~15 ms apiece one after another)."""
    # lazy: pulls in mininet, wanted only with a network
    from sdnperf.emulation.parallel_build import run_all

    return run_all(switch_counters, net.switches)


def device_ids(names: list[str]) -> dict[str, int]:
    """One P4Runtime device id per switch, unique (a shared switch process and fixed gRPC
    ports are keyed by it): the number a name ends in ("s7" -> 7) when no switch before it
    in natural order took that number, else the smallest id no switch took ("agg", "edge0",
    "agg1" beside "s1")."""
    from mininet.util import natural  # lazy: pulls in mininet, as mininet_options does

    ordered = sorted(names, key=natural)
    ids: dict[str, int] = {}
    for name in ordered:
        m = re.search(r"(\d+)$", name)
        if m and int(m.group(1)) > 0 and int(m.group(1)) not in ids.values():
            ids[name] = int(m.group(1))
    for name in ordered:
        if name not in ids:
            ids[name] = next_free_id(set(ids.values()))
    return ids


def next_free_id(taken: set[int]) -> int:
    return next(i for i in range(1, len(taken) + 2) if i not in taken)


class P4Architecture(Architecture):
    @classmethod
    def controller_sees_packets(cls, config) -> bool:
        if config.controller != "sdnperf":
            return True  # someone else's controller: it may well be reactive
        if config.target == "bmv2":
            # BMv2 reads and sends whole frames (libpcap), without the virtio-net header
            # that carries our switch's offloads: a partial checksum leaves it broken, so
            # TCP never connects unless hosts complete their checksums (study.host_offloads)
            return True
        return config.app in ("l2-learning", "topo-forwarding")  # the reactive apps

    @classmethod
    def needs_mtu_frames(cls, config) -> bool:
        # the XDP fast path's AF_XDP ports take no virtio-net header (no super-packets)
        return config.target == "sdnperf" and config.datapath != "user"

    @classmethod
    def impairs_links_itself(cls, config) -> bool:
        # our switch impairs its ports in both directions; simple_switch relies on tc
        return config.target == "sdnperf"

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        cfg = config
        ours = cfg.controller == "sdnperf"  # app and runtime_dir are our controller's
        if ours and cfg.app == "l2-learning" and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: app l2-learning floods unknown destinations and "
                f"topology {spec.name!r} has loops (broadcast storm); use app = "
                '"topo-forwarding" or "proactive"'
            )
        if ours and cfg.app == "runtime-json":
            if not cfg.runtime_dir:
                raise ArchitectureError(
                    f'architecture {cfg.name!r}: app = "runtime-json" '
                    "needs runtime_dir (a folder of sN-runtime.json files)"
                )
            try:
                files = runtime_json.files_for(Path(cfg.runtime_dir), spec.switches())
                for path in files.values():
                    runtime_json.load(path)
            except runtime_json.RuntimeFileError as exc:
                raise ArchitectureError(f"architecture {cfg.name!r}: {exc}") from None
        if cfg.app == "proactive" and _entry_builder(cfg) and len(spec.switches()) != 1:
            raise ArchitectureError(
                f"architecture {cfg.name!r}: program {cfg.program!r} gets its proactive "
                f"entries for one switch with the hosts on its ports; topology {spec.name!r} "
                f'has {len(spec.switches())} switches (give runtime files: app = "runtime-json")'
            )
        if cfg.target == "bmv2" and tools.find_bmv2(BMV2_DAEMON) is None:
            raise ArchitectureError(
                f'architecture {cfg.name!r}: target = "bmv2" needs {BMV2_DAEMON} on PATH '
                f"or in ${tools.BMV2_ENV} (BMv2 built with P4Runtime support): "
                f'{tools.bmv2_hint(BMV2_DAEMON)}. Use target = "sdnperf" (our switch) instead'
            )
        if cfg.target == "sdnperf" and spec.needs_netem():
            # without sch_netem only the switch's ports delay/drop: a link with no switch
            # end (a custom Topo's host-host link) would silently keep neither
            from sdnperf.emulation import capabilities

            bare = [
                f"{x.node1}-{x.node2}"
                for x in spec.links()
                if (x.delay_ms or x.loss_pct or (x.serialise and x.bw))
                and spec.is_host(x.node1)
                and spec.is_host(x.node2)
            ]
            if bare and not capabilities.netem().ok:
                what = "serialise" if spec.serialised_links() else "delay/loss"
                raise ArchitectureError(
                    f"architecture {cfg.name!r}: link(s) {', '.join(bare[:5])} set {what} "
                    "but join two hosts: without sch_netem only a switch port can impair a link"
                )
        if cfg.datapath == "xdp" and engine_links(spec):
            found = p4_datapath.blockers(
                target=cfg.target,
                program_fit=None,
                engine_links=engine_links(spec),
                host_offloads=False,
            )
            try:
                p4_datapath.choose("xdp", cfg.name, found)
            except p4_datapath.DatapathError as exc:
                raise ArchitectureError(str(exc)) from None
        if cfg.target == "sdnperf" and tools.locate(GRPC_DAEMON) is None:
            raise ArchitectureError(
                f"architecture {cfg.name!r}: {GRPC_DAEMON} (our P4Runtime switch, rust/p4rt) "
                f"is not built: {tools.build_hint(GRPC_DAEMON)}"
            )
        return {}

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        self.caveat = self.shaping_caveat(spec)
        self.program: CompiledProgram | None = None  # the default pipeline, compiled in prepare()
        self.switches: dict[str, tuple[int, int]] = {}  # name -> (device id, grpc port)
        self.device_ids: dict[str, int] = {}  # the topology's switches (device_ids())
        self.thrift_ports: dict[str, int] = {}  # bmv2: name -> its Thrift runtime port
        self.switch_pids: list[int] = []
        self.controller: process.ControllerProcess | None = None  # needs the built network
        self.kernel_netem = True  # whether hosts' ends of links delay/drop with netem
        self.impaired: dict[str, dict] = {}  # switch -> port -> impairment set on it
        # the port shaper's burst: tc's clock rate (links/htb.py), bytes by link rate
        self.psched_hz = htb.host_hz()
        self.port_bursts: dict[str, int] = {}
        # the data path the switches were started for and why (prepare), and the one
        # they forward with once running (wait_ready: the fast path may not come up)
        self.datapath: p4_datapath.Choice | None = None
        # the path that actually forwarded, from the counters (datapath_stats, after a run)
        self.forwarded: p4_datapath.Forwarded | None = None
        self._net = None  # the built network, for the switches' counters after a run

    def shaping_caveat(self, spec: TopoSpec) -> str | None:
        """Our switch sends with PACKET_QDISC_BYPASS (rust/switch ports/afpacket.rs), so tc
        qdiscs on its ports (Mininet's htb/netem) do not act on what it transmits."""
        if self.config.target == "sdnperf" and (spec.needs_tc() or spec.needs_netem()):
            return (
                "our P4 switch sends with PACKET_QDISC_BYPASS, so tc on its own ports is "
                "skipped; link bandwidth/delay/loss are applied there by the switch's own "
                "port impairment (port_impair), tc still shapes what hosts send (without "
                "sch_netem the switch port's ingress delays/drops what hosts send)"
            )
        return None

    def impair_switch_ports(self, net, kernel_netem: bool) -> dict[str, dict[int | str, str]]:
        """Each switch port gets its link's bw/delay/loss as port impairment, so every
        direction of every link is shaped once, as Mininet's TCLink does with tc (which
        puts the link's netem/htb on both interface ends, each acting on what its end
        sends: one delay per direction). The switch's egress stands for its own end; a
        switch-switch link has a switch at both ends. A host's end is tc in the host
        (htb for bw; netem for delay/loss where the kernel has it); without sch_netem the
        switch port's ingress takes the host end's delay/loss instead (direction=in).
        A serialised link (`serialise`) holds every packet for its transmission time at
        both ends: the switch's egress, and for a host's end netem's rate in the host or,
        without sch_netem, the port's ingress (which then takes the rate too: the host
        has no htb on a serialised link, mininet_adapter.link_opts)."""
        graph = self.spec.graph
        done: dict[str, dict[int | str, str]] = {}  # switch -> port (or "PORT-in") -> spec
        commands: dict[str, tuple[Any, list[str]]] = {}  # switch -> (node, its commands)
        names = {sw.name for sw in net.switches}
        for link in net.links:
            for intf, other in ((link.intf1, link.intf2), (link.intf2, link.intf1)):
                node = intf.node
                if node.name not in names or not graph.has_edge(node.name, other.node.name):
                    continue
                attrs = graph.edges[node.name, other.node.name]
                parts = []
                if attrs.get("bw"):
                    parts.append(f"rate={float(attrs['bw']):g}mbit")
                if attrs.get("delay_ms"):
                    parts.append(f"delay={float(attrs['delay_ms']):g}ms")
                if attrs.get("loss_pct"):
                    parts.append(f"loss={float(attrs['loss_pct']):g}%")
                if attrs.get("serialise") and attrs.get("bw"):
                    parts.append("serialise=1")
                elif attrs.get("bw"):
                    burst = self.port_burst(float(attrs["bw"]))
                    if burst:
                        parts.append(f"burst={burst}")
                port = node.ports[intf]
                if parts:
                    spec = ",".join(parts)
                    commands.setdefault(node.name, (node, []))[1].append(
                        f"port_impair {port} direction=out {spec}{self._seed(node, port, 0)}"
                    )
                    done.setdefault(node.name, {})[port] = spec
                host_end = (
                    parts
                    if attrs.get("serialise")
                    else [p for p in parts if not p.startswith(("rate=", "burst="))]
                )
                if other.node.name not in names and not kernel_netem and host_end:
                    spec = ",".join(host_end)
                    commands.setdefault(node.name, (node, []))[1].append(
                        f"port_impair {port} direction=in {spec}{self._seed(node, port, 1)}"
                    )
                    done.setdefault(node.name, {})[f"{port}-in"] = spec
        # lazy: pulls in mininet, wanted only with a network
        from sdnperf.emulation.parallel_build import run_all

        # one ctl session per switch for all its ports (a process start each: one per
        # port cost ~15 ms apiece), every switch at once
        run_all(lambda item: item[0].ctl(*item[1]), commands.values())
        return done

    def port_burst(self, rate_mbps: float) -> int:
        """Bytes our switch's port shaper lets leave at once on a link of `rate_mbps`
        (config `port_burst`: Mininet's htb's, or 0 for strict pacing); remembered for the
        run's facts."""
        burst = htb.port_burst_bytes(rate_mbps, self.config.port_burst, self.psched_hz)
        self.port_bursts[f"{rate_mbps:g}"] = burst
        return burst

    def _seed(self, node, port: int, side: int) -> str:
        """The loss seed of one port side: from the run's seed, distinct per switch, port
        and direction (the switch mixes it), so repetitions differ and reruns repeat."""
        device = getattr(node, "device_id", 0)
        return f",seed={(self.seed * 4_000_037 + device * 1_031 + port * 2 + side) % 2**63}"

    def prepare(self) -> None:

        try:  # runtime files that name no program of their own get this one too
            self.program = compiled(self.config.program)
        except P4ProgramError as exc:
            raise ArchitectureError(str(exc)) from None
        if self.config.target == "sdnperf":
            self.datapath = self.choose_datapath()
        if self.caveat and not _WARNED:
            _WARNED.append(True)
            print(f"note: architecture {self.config.name!r}: {self.caveat}", file=sys.stderr)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.config.controller == "sdnperf":
            # our controller's start-up (a second of Python imports) overlaps Mininet's
            # build: it waits for its config, written once the network is numbered
            # (network_started); stop() ends it whatever happens in between
            self.controller = process.p4rt_controller(
                {"app": self.config.app}, self.run_dir, wait_for_config=True
            )
            try:
                self.controller.spawn()
            except process.ControllerError as exc:
                raise ArchitectureError(str(exc)) from None

    def choose_datapath(self) -> p4_datapath.Choice:
        """The `datapath` setting against what is known before the switches start."""
        cfg = self.config
        if cfg.datapath == "user":
            return p4_datapath.choose("user", cfg.name, [])
        found = p4_datapath.blockers(
            target=cfg.target,
            program_fit=program_fit(self.program.json) if self.program else None,
            engine_links=engine_links(self.spec),
            host_offloads=self.host_offloads,
        )
        try:
            return p4_datapath.choose(cfg.datapath, cfg.name, found)
        except p4_datapath.DatapathError as exc:
            raise ArchitectureError(str(exc)) from None

    def fast_path(self) -> bool:
        """Whether the switches are started with the XDP fast path."""
        return self.datapath is not None and self.datapath.datapath == "xdp"

    def shared_process(self) -> bool:
        """Whether all switches of the network run in one process (`switch_processes`)."""
        return self.config.target == "sdnperf" and self.config.switch_processes == "shared"

    def mininet_options(self) -> dict:
        # lazy: pulls in mininet, wanted only here
        from mininet.util import natural

        from sdnperf.emulation.p4switch import P4Switch, SharedSwitchProcess  # lazy: same

        target, log_dir = self.config.target, str(self.run_dir)
        binary = self.switch_binary()
        extra_args = list(p4_datapath.XDP_SWITCH_ARGS) if self.fast_path() else []
        if self.config.recirc_pace_us:
            extra_args += ["--recirc-pace-us", str(self.config.recirc_pace_us)]
        shared = SharedSwitchProcess(binary, log_dir, extra_args) if self.shared_process() else None

        # every switch's device id and ports decided now, in the order Mininet adds the
        # switches (ParallelMininet then creates them all at once, in any order)
        self.device_ids = device_ids(list(self.spec.switches()))
        for name in sorted(self.spec.switches(), key=natural):
            self.plan_switch(name)
        planning = threading.Lock()  # a switch the topology did not name: planned on demand

        def make(name, **kwargs):
            with planning:
                dev, port = self.plan_switch(name)
            return P4Switch(
                name,
                grpc_port=port,
                device_id=dev,
                cpu_port=CPU_PORT,
                target=target,
                binary=binary,
                log_dir=log_dir,
                thrift_port=self.thrift_ports.get(name),
                extra_args=extra_args,
                shared=shared,
                **kwargs,
            )

        return {"switch": make, "controller": None}

    def plan_switch(self, name: str) -> tuple[int, int]:
        """Switch `name`'s (device id, gRPC port), decided on its first call: the number
        its name ends in, else one more than the switches planned so far."""
        if name not in self.switches:
            dev = self.device_ids.get(name) or next_free_id(
                {d for d, _ in self.switches.values()} | set(self.device_ids.values())
            )
            base = self.config.grpc_base_port  # fixed ports: a remote controller knows them
            self.switches[name] = (dev, base + dev - 1 if base else process.free_port())
            if self.config.target == "bmv2":
                self.thrift_ports[name] = process.free_port()
        return self.switches[name]

    def switch_binary(self) -> str:
        """The switch daemon every switch of this architecture runs."""
        if self.config.target == "bmv2":
            found = tools.find_bmv2(BMV2_DAEMON)
            if found is None:
                raise tools.ToolNotFound(tools.bmv2_hint(BMV2_DAEMON))
            return found
        return tools.find(GRPC_DAEMON)

    def controller_config(self, net) -> dict:
        switches, links = [], []
        for sw in net.switches:
            switches.append(
                {
                    "name": sw.name,
                    "device_id": sw.device_id,
                    "address": f"127.0.0.1:{sw.grpc_port}",
                    "ports": sorted(sw.port_names()),
                }
            )
        names = {sw.name for sw in net.switches}
        for link in net.links:
            a, b = link.intf1, link.intf2
            na, nb = a.node, b.node
            if na.name in names and nb.name in names:
                links.append(
                    {"a": na.name, "a_port": na.ports[a], "b": nb.name, "b_port": nb.ports[b]}
                )
        hosts = attached_hosts(net)
        config = {
            "app": self.config.app,
            "switches": switches,
            "links": links,
            "hosts": hosts,
            "election_id": 1,
        }
        if self.program is not None:
            config["p4info"], config["device_config"] = (
                str(self.program.p4info),
                str(self.program.json),
            )
        if self.config.app == "runtime-json":
            config["runtime_dir"] = str(Path(self.config.runtime_dir).resolve())
        elif self.config.app == "proactive" and _entry_builder(self.config):
            # a program our apps do not drive: its entries, built from the network, go in
            # as runtime files (catalog.Program.make_entries)
            runtime = self.run_dir / "runtime"
            runtime.mkdir(parents=True, exist_ok=True)
            for sw in switches:
                attached = [h for h in hosts if h["switch"] == sw["name"]]
                (runtime / f"{sw['name']}-runtime.json").write_text(
                    json.dumps(_entry_builder(self.config)(attached), indent=1)
                )
            config["app"], config["runtime_dir"] = "runtime-json", str(runtime.resolve())

        config["params"] = program(self.config.program).writes(self.config.params)
        return config

    def network_started(self, net) -> None:
        if self.fast_path():
            # the fast path redirects into the hosts' veth ends, which accept XDP frames
            # only when they run NAPI: GRO on (switch-switch ends run XDP programs)
            names = {sw.name for sw in net.switches}
            for link in net.links:
                for intf, other in ((link.intf1, link.intf2), (link.intf2, link.intf1)):
                    if intf.node.name not in names and other.node.name in names:
                        intf.node.cmd("ethtool -K", intf.name, "gro on >/dev/null 2>&1")
        try:
            controller = self.controller  # ours, spawned by prepare(), waiting for the network
            if controller is not None:
                # it retries a switch that does not listen yet within 0.1 s
                controller.release(self.controller_config(net))
            for sw in net.switches:
                sw.wait_listening()
            # a shared process is listed once (its CPU is counted once, as the switches' role)
            self.switch_pids = list(
                dict.fromkeys(sw.switch_pid for sw in net.switches if sw.switch_pid)
            )
            try:
                cpu_priority.apply(self.switch_pids, self.config.cpu_priority)
            except cpu_priority.CpuPriorityError as exc:
                raise ArchitectureError(str(exc)) from None
            if self.config.controller == "remote":
                return  # it dials the switches' fixed ports itself
            if controller is not None:
                controller.wait_started()
            else:
                self.controller = self.command_controller(net)
                self.controller.start()
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def command_controller(self, net) -> process.ControllerProcess:
        """The study's P4Runtime controller command, with the switches and the program
        written to {switches_json} and the network to {topology_json}."""
        switches = [
            {
                "name": sw.name,
                "device_id": sw.device_id,
                "grpc_address": f"127.0.0.1:{sw.grpc_port}",
            }
            for sw in net.switches
        ]
        program = self.program
        assert program is not None  # prepare() compiled it
        files = {"p4info": str(program.p4info), "bmv2_json": str(program.json)}
        switches_json = external.write_json(
            self.run_dir / external.SWITCHES_FILE,
            {**files, "cpu_port": CPU_PORT, "switches": switches},
        )
        topology_json = external.write_json(
            self.run_dir / external.TOPOLOGY_FILE,
            external.topology_description(
                net,
                lambda sw: {"device_id": sw.device_id, "grpc_address": f"127.0.0.1:{sw.grpc_port}"},
            ),
        )
        values = {
            **files,
            "switches_json": switches_json,
            "topology_json": topology_json,
            "grpc_addresses": ",".join(s["grpc_address"] for s in switches),
            "device_ids": ",".join(str(s["device_id"]) for s in switches),
            "cpu_port": CPU_PORT,
            "run_dir": self.run_dir,
            "study_dir": self.config._study_dir,
        }
        try:
            return external.command_controller(self.config.command, values, self.run_dir, None)
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def wait_ready(self, net, timeout: float) -> None:
        if self.config.controller != "sdnperf":
            self._wait_pipelines(net, timeout)
        else:
            self._wait_our_controller(net, timeout)
        if self.caveat:  # the pipeline is in: the switches accept port commands now
            self.kernel_netem = not self.spec.needs_netem() or capabilities.netem().ok
            self.impaired = self.impair_switch_ports(net, self.kernel_netem)
        if self.fast_path():  # the pipeline is in: the fast path is built or said why not
            statuses = {
                sw.name: counters[0] for sw, counters in zip(net.switches, all_counters(net))
            }
            try:
                fallback = p4_datapath.after_start(self.config.datapath, self.name, statuses)
            except p4_datapath.DatapathError as exc:
                raise ArchitectureError(str(exc)) from None
            if fallback is not None:
                print(f"note: architecture {self.name!r}: {fallback.reason}", file=sys.stderr)
                self.datapath = fallback
        self._net = net

    def _wait_pipelines(self, net, timeout: float) -> None:
        """Someone else's controller: ready once every switch has a pipeline (only a
        primary controller can set one), asked of the switches themselves."""
        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.observer import has_pipeline

        waiting = {sw.name: sw for sw in net.switches}

        def ready() -> bool:
            check_controller(self.controller, "died", "P4Runtime controller")
            for name, sw in list(waiting.items()):
                if has_pipeline(f"127.0.0.1:{sw.grpc_port}", sw.device_id, timeout=1.0):
                    del waiting[name]
            return not waiting

        who = (
            self.controller.kind
            if self.controller
            else "the remote P4Runtime controller "
            f"(switch gRPC ports from {self.config.grpc_base_port})"
        )
        wait_until(
            ready,
            timeout,
            f"{len(net.switches)} P4 switches to get a pipeline from {who}",
            stable_for=0.5,
            explain=lambda: (
                f" (still without one: {', '.join(sorted(waiting))})"
                f"{controller_log(self.controller)}"
            ),
        )

    def check_alive(self) -> None:
        check_controller(self.controller, "died during the run", "P4Runtime controller")

    def _wait_our_controller(self, net, timeout: float) -> None:
        n = len(net.switches)
        edges = self.spec.switch_graph().number_of_edges()

        controller = self.controller
        assert controller is not None  # prepare() made it: our controller runs

        def ready() -> bool:
            if not controller.alive():
                raise ArchitectureError(f"P4Runtime controller died:\n{controller.log_tail()}")
            state = controller.state()
            if state is None:
                return False
            if state.get("error"):
                raise ArchitectureError(
                    f"P4Runtime controller: {state['error']}\n{controller.log_tail()}"
                )
            if len(state["switches"]) < n or not state.get("ready"):
                return False
            if self.config.app == "topo-forwarding":
                return state["links"] >= 2 * edges  # each link found in both directions
            return True

        # Our controller writes "ready" the moment its last pipeline is in (and never
        # takes it back): asked often, and no hold after it.
        wait_until(
            ready,
            timeout,
            f"{n} P4 switches to get their pipeline from the P4Runtime "
            "controller (and links to be discovered)",
            interval=0.05,
        )

    def processes(self) -> dict[str, list[int]]:
        out = {}
        if self.switch_pids:
            out["switch"] = list(self.switch_pids)
        if self.controller is not None and self.controller.pid:
            out["controller"] = [self.controller.pid]
        return out

    def control_stats(self) -> dict[str, float]:
        return {**self.datapath_stats(), **self._controller_stats()}

    def datapath_stats(self) -> dict[str, float]:
        """Packets each data path forwarded since the network started (one run), summed
        over the switches: in the kernel (XDP fast path) and by the user-space engine."""
        net = self._net
        if net is None or self.config.target != "sdnperf":
            return {}
        out = {"xdp_forwarded": 0.0, "xdp_to_engine": 0.0, "engine_tx": 0.0}
        for status, stats in all_counters(net):
            out["xdp_forwarded"] += status.forwarded
            out["xdp_to_engine"] += status.to_engine
            out["engine_tx"] += stats.get("tx", 0)
        if self.datapath is not None:
            self.forwarded = p4_datapath.forwarded_by(
                self.datapath, out["xdp_forwarded"], out["engine_tx"]
            )
        return out

    def run_facts(self) -> dict:
        """The data path the counters say forwarded the run (replaces the one the
        switches were started for: a fast path that punts everything is the user path)."""
        if self.forwarded is None or self.datapath is None:
            return {}
        return {
            "datapath": self.forwarded.datapath,
            "datapath_started": self.datapath.datapath,
            "datapath_reason": self.forwarded.reason,
            "xdp_share": self.forwarded.xdp_share,
        }

    def _controller_stats(self) -> dict[str, float]:
        if self.controller is None or self.controller.state_file is None:
            return {}
        if self.config.controller == "sdnperf" and self.controller.port:
            # asked of the controller itself: current now, no wait for the file's rewrite
            live = process.status_snapshot(self.controller.port)
            if live is not None:
                return {"packet_ins": live["packet_ins"], "flow_mods": live["flow_mods"]}
        asked = time.time()
        state = self.controller.state()
        deadline = time.monotonic() + 1.0
        while state and state.get("time", 0) < asked and time.monotonic() < deadline:
            time.sleep(0.05)
            state = self.controller.state()
        if not state:
            return {}
        return {"packet_ins": state["packet_ins"], "flow_mods": state["flow_mods"]}

    def facts(self) -> dict:
        ours = self.config.controller == "sdnperf"
        extra: dict[str, object] = {}
        if self.config.controller == "command" and self.controller is not None:
            extra["command"] = list(self.controller.argv)
        if self.config.controller == "remote":
            extra["controller_cpu"] = "not measured (remote controller, not started by sdnperf)"
            extra["grpc_base_port"] = self.config.grpc_base_port
        return {
            **extra,
            "architecture": "p4",
            "target": self.config.target,
            "app": self.config.app if ours else None,
            "controller": "sdnperf-p4rt" if ours else self.config.controller,
            "p4runtime": True,
            "program": "runtime files"
            if self.config.app == "runtime-json"
            else (self.program.source.name if self.program else None),
            "params": dict(self.config.params),
            "cpu_port": CPU_PORT,
            "link_shaping_caveat": self.caveat,
            "switch_port_impairment": bool(self.impaired),
            "port_burst": self.config.port_burst,
            # Mbit/s -> bytes the switch's ports let leave at once (Mininet's htb's burst
            # at that rate: min(15k, cburst = rate / HZ + 1600 B), or 0: strict pacing)
            "port_burst_bytes": dict(self.port_bursts) or None,
            "psched_hz": self.psched_hz if self.port_bursts else None,
            "switch_processes": self.config.switch_processes,
            "cpu_priority": self.config.cpu_priority,
            "recirc_pace_us": self.config.recirc_pace_us,
            "switch_scheduling": cpu_priority.read(self.switch_pids),
            "switch_process_count": len(self.switch_pids),
            "datapath_setting": self.config.datapath,
            # what the switches were started for; run_facts() replaces it with what the
            # counters say forwarded once they were read
            "datapath": self.datapath.datapath if self.datapath else None,
            "datapath_started": self.datapath.datapath if self.datapath else None,
            "datapath_reason": self.datapath.reason if self.datapath else None,
            "xdp_share": None,
            "host_link_impairment": self.host_link_impairment(),
            **self.run_facts(),
        }

    def host_link_impairment(self) -> str | None:
        """Who delays/drops the host-to-switch direction of host links (None: nothing to)."""
        if not self.impaired or not self.spec.needs_netem():
            return None
        if self.kernel_netem:
            return "netem in the host"
        return "switch port ingress (no sch_netem)"

    def before_network_stop(self) -> None:
        # An open P4Runtime stream holds a daemon's graceful shutdown: the controller is
        # told to go before the switches. It exits (~0.3 s: its connections, Python's
        # shutdown) while the network's links are deleted; stop() waits for it.
        if self.controller is not None:
            self.controller.signal_stop()

    def stop(self) -> None:
        # the switches went with the network; the controller may outlive a failed build
        if self.controller is not None:
            self.controller.stop()
