#!/usr/bin/env python3
"""Benchmark of sdnperf-switch against a direct veth pair and a Linux bridge, in one run.

Path: namespace A --veth-- [switch namespace S] --veth-- namespace B, MTU 1500.
Measures (all in this run, so the ratios share the machine's conditions):
  * iperf3 TCP throughput (10 s) through: direct veth, Linux bridge, our switch; each with
    host offloads on (TSO/GSO, partial checksums; our switch carries them with
    PACKET_VNET_HDR) and off (ethtool -K tx/tso/gso off; our switch with --no-vnet);
  * 64-byte forwarding rate (generator: `sdnperf-switch blast`, AF_PACKET sendmmsg, in A;
    rate = frames counted on B's interface);
  * added latency per hop: min RTT (ping) through the switch minus direct veth;
  * recirculation cost: program recirc_n with N = 0,1,3,7,15 (and 63, 255) passes per direction,
    least-squares slope of min RTT (÷2: both directions recirculate) and 64-byte rate;
  * table scale: 1,000,000 LPM entries vs 10 (64-byte rate, 1024 destinations).
Pipeline-only figures (`sdnperf-switch membench`, no kernel I/O) are printed too.

Run as root:  python3 bench/switch/run.py [--quick] [--json OUT.json] [--skip-ovs]
Everything it creates is prefixed `sdpb` and removed on exit, failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # the script runs from a checkout: sdnperf from there
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bmv2  # noqa: E402  (bench/switch/bmv2.py)

from sdnperf import tools  # noqa: E402

PROGS = REPO / "rust/switch/tests/programs"
NS_A, NS_B, NS_S = "sdpbA", "sdpbB", "sdpbS"
IP_A, IP_B = "10.98.0.1", "10.98.0.2"
CTL = "/tmp/sdpb-ctl.sock"
# 64-byte frames go to a MAC nobody owns: B's kernel counts and drops them at once, so the
# sink's IP stack (which runs in the forwarder's softirq on veth) does not bias the rate.
SINK_MAC = "0x020000000099"


def sh(cmd: str, check=True, timeout=120) -> str:
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def ns(n: str, cmd: str, **kw) -> str:
    return sh(f"ip netns exec {n} {cmd}", **kw)


def binary() -> str:
    try:
        return tools.find("sdnperf-switch")
    except tools.ToolNotFound as exc:
        sys.exit(f"run.py: {exc}")


BIN = binary()
try:
    GRPC_BIN = tools.find("sdnperf-switch-grpc")
except tools.ToolNotFound as exc:
    sys.exit(f"run.py: {exc}")
GRPC_PORT = 19559  # the grpc switch's P4Runtime port (loopback of namespace sdpbS)
# BMv2 simple_switch with p4c's JSON of l1_fwd.p4 (BMv2 refuses our gen.py JSON); None when
# simple_switch or p4c-bm2-ss is missing (rows skipped, reason printed)
_found = tools.find_bmv2("simple_switch", reference=True)
BMV2 = Path(_found) if _found else None
BMV2_THRIFT = 19090


OVS = None
OVS_OK = False
OVS_DIR = Path("/tmp/sdpb-ovs")


def cleanup():
    for n in (NS_A, NS_B, NS_S):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)
    global OVS
    if OVS is not None:
        try:
            OVS.vsctl("--if-exists", "del-br", "sdpbovs", check=False)
            OVS.stop()
        except Exception as e:  # noqa: BLE001 - best effort during cleanup
            print(f"ovs cleanup: {e}", file=sys.stderr)
        OVS = None
        shutil.rmtree(OVS_DIR, ignore_errors=True)
    for l in ("sdpbA0", "sdpbS1", "sdpbB0", "sdpbS2"):
        subprocess.run(["ip", "link", "del", l], capture_output=True)
    try:
        os.unlink(CTL)
    except FileNotFoundError:
        pass


class Path3:
    """A <-> (S) <-> B; kind = direct | bridge | switch | ovs (userspace datapath, whose
    switch-side veths live in the root namespace where our private ovs-vswitchd runs)."""

    def __init__(self, kind: str, offloads: bool):
        self.kind, self.offloads = kind, offloads
        self.proc = None

    def __enter__(self):
        cleanup()
        for n in (NS_A, NS_B):
            sh(f"ip netns add {n}")
        if self.kind == "direct":
            sh(f"ip link add sdpbA0 netns {NS_A} type veth peer name sdpbB0 netns {NS_B}")
        elif self.kind == "ovs":
            sh(f"ip link add sdpbA0 netns {NS_A} type veth peer name sdpbS1")
            sh(f"ip link add sdpbB0 netns {NS_B} type veth peer name sdpbS2")
            for l in ("sdpbS1", "sdpbS2"):
                sh(f"ip link set {l} up")
        else:
            sh(f"ip netns add {NS_S}")
            sh(f"ip link add sdpbA0 netns {NS_A} type veth peer name sdpbS1 netns {NS_S}")
            sh(f"ip link add sdpbB0 netns {NS_B} type veth peer name sdpbS2 netns {NS_S}")
            ns(NS_S, "ip link set lo up")
            for l in ("sdpbS1", "sdpbS2"):
                ns(NS_S, f"ip link set {l} up")
        ns(NS_A, f"ip addr add {IP_A}/24 dev sdpbA0")
        ns(NS_B, f"ip addr add {IP_B}/24 dev sdpbB0")
        for n, l in ((NS_A, "sdpbA0"), (NS_B, "sdpbB0")):
            ns(n, "ip link set lo up")
            ns(n, f"ip link set {l} up")
            if not self.offloads:
                ns(n, f"ethtool -K {l} tx off tso off gso off", check=False)
        if self.kind == "bridge":
            ns(NS_S, "ip link add sdpbbr type bridge")
            ns(NS_S, "ip link set sdpbS1 master sdpbbr")
            ns(NS_S, "ip link set sdpbS2 master sdpbbr")
            ns(NS_S, "ip link set sdpbbr up")
        if self.kind == "ovs":
            self.start_ovs()
        self.mac_b = ns(NS_B, "cat /sys/class/net/sdpbB0/address").strip()
        self.mac_a = ns(NS_A, "cat /sys/class/net/sdpbA0/address").strip()
        # static neighbours: no ARP in the measurements
        ns(NS_A, f"ip neigh replace {IP_B} lladdr {self.mac_b} dev sdpbA0")
        ns(NS_B, f"ip neigh replace {IP_A} lladdr {self.mac_a} dev sdpbB0")
        return self

    def start_ovs(self):
        global OVS
        from sdnperf.emulation.ovs import OvsDaemons

        shutil.rmtree(OVS_DIR, ignore_errors=True)
        OVS = OvsDaemons(OVS_DIR, datapath="user")  # sets userspace-tso-enable=true
        OVS.start()
        OVS.vsctl("add-br", "sdpbovs", "--", "set", "bridge", "sdpbovs", "datapath_type=netdev")
        OVS.vsctl("add-port", "sdpbovs", "sdpbS1", "--", "add-port", "sdpbovs", "sdpbS2")
        sh("ip link set sdpbovs up", check=False)
        self.ovs_pid = OVS.pids().get("ovs-vswitchd")
        time.sleep(1.0)

    def start_switch(
        self,
        program: str,
        commands: list[str] | None = None,
        extra=(),
        cpu: int | None = None,
        nice: int = 0,
        binary: str = "switch",
    ):
        """Our switch on sdpbS1/sdpbS2: binary "switch" = `sdnperf-switch run`, "grpc" =
        `sdnperf-switch-grpc` with the program preloaded (its JSON path; the same data-plane
        loop, with the P4Runtime server idle beside it). Returns the start-up time."""
        self.stop_switch()
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        ports = ["-i", "1@sdpbS1", "-i", "2@sdpbS2", "--ctl-socket", CTL, "--die-with-parent"]
        if binary == "grpc":
            cmd = [GRPC_BIN, program, *ports, "--grpc-port", str(GRPC_PORT)]
        else:
            cmd = [BIN, "run", "--json", program, *ports]
        argv = [*pin, "ip", "netns", "exec", NS_S, *cmd, *extra]
        if not self.offloads:
            argv.append("--no-vnet")
        if commands:
            if binary == "grpc":
                raise ValueError("sdnperf-switch-grpc takes entries over ctl or P4Runtime")
            f = tempfile.NamedTemporaryFile("w", prefix="sdpb-cmds-", suffix=".txt", delete=False)
            f.write("\n".join(commands) + "\n")
            f.close()
            self.cmd_file = f.name
            argv += ["--commands", f.name]
        t = time.time()
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=bool(nice),
        )
        if nice:
            _autogroup_nice(self.proc.pid, nice)
        line = self.proc.stdout.readline()
        if line.strip() != "READY":
            raise RuntimeError(f"switch failed: {self.proc.stderr.read()}")
        return time.time() - t

    def start_bmv2(self, program: Path):
        """BMv2's simple_switch on sdpbS1/sdpbS2 with p4c's JSON; ready once it forwards
        (it prints no ready line): a ping through it answers."""
        self.stop_switch()
        self.bmv2_log = tempfile.NamedTemporaryFile("w+", prefix="sdpb-bmv2-", suffix=".log")
        argv = bmv2.argv(BMV2, [(1, "sdpbS1"), (2, "sdpbS2")], program, thrift_port=BMV2_THRIFT)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", NS_S, *argv],
            stdout=self.bmv2_log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.bmv2_log.seek(0)
                raise RuntimeError(f"simple_switch exited: {self.bmv2_log.read()[-2000:]}")
            if (
                subprocess.run(
                    ["ip", "netns", "exec", NS_A, "ping", "-c1", "-W1", IP_B], capture_output=True
                ).returncode
                == 0
            ):
                return
        raise RuntimeError("simple_switch did not forward a ping within 30 s")

    def ctl(self, *cmds):
        return sh(f"{BIN} ctl {CTL} " + " ".join(cmds))

    def stop_switch(self):
        if hasattr(self, "banner"):
            del self.banner
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if getattr(self, "bmv2_log", None):
            self.bmv2_log.close()  # a temporary file: closing deletes it
            self.bmv2_log = None
        if getattr(self, "cmd_file", None):
            os.unlink(self.cmd_file)
            self.cmd_file = None

    def __exit__(self, *exc):
        self.stop_switch()
        cleanup()


# the P4 switches: TCP, RTT and 64-byte rate with offloads on and off
SWITCHES = ("switch", "switch_afpacket", "grpc", "bmv2")


_P4C_DIR = None


def _bmv2_program() -> Path | None:
    """p4c's JSON of l1_fwd.p4 for the bmv2 rows, or None (reason printed) without BMv2."""
    if BMV2 is None:
        print(
            f"bmv2 rows skipped: {tools.bmv2_hint('simple_switch', reference=True)}",
            file=sys.stderr,
        )
        return None
    global _P4C_DIR
    _P4C_DIR = tempfile.TemporaryDirectory(prefix="sdpb-p4c-")  # removed at exit
    try:
        return bmv2.compile_l1_fwd(Path(_P4C_DIR.name))
    except RuntimeError as exc:
        print(f"bmv2 rows skipped: {exc}", file=sys.stderr)
        return None


def rss_mb(pid: int) -> dict:
    """The forwarder's resident memory now (after the row's runs) and its peak (VmHWM), MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out["rss_mb" if key == "VmRSS" else "rss_peak_mb"] = int(val.split()[0]) / 1024
    return out


def _tcp_or_none(p: Path3, secs: int, row: str) -> float | None:
    """TCP Gbit/s, or None when iperf3 fails through this forwarder (BMv2 with host offloads
    on receives TSO super-packets it cannot send out again; the row says so rather than the
    run stopping)."""
    try:
        return tcp(p, secs)
    except (RuntimeError, KeyError, ValueError, subprocess.TimeoutExpired) as exc:
        print(f"{row}: TCP failed: {exc}", file=sys.stderr)
        return None


def tcp(p: Path3, secs: int) -> float:
    srv = subprocess.Popen(
        ["ip", "netns", "exec", NS_B, "iperf3", "-s", "-1", "-p", "5299"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.4)
        out = ns(NS_A, f"iperf3 -c {IP_B} -p 5299 -t {secs} -J", timeout=secs + 30)
        return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9
    finally:
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


def rtt(p: Path3, count=300) -> tuple[float, float]:
    out = ns(NS_A, f"ping -n -q -c {count} -i 0.002 {IP_B}", timeout=60)
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", out)
    return float(m.group(1)) * 1000, float(m.group(2)) * 1000  # µs


def cpu_ticks(pid: int) -> int:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime + stime


def rate64(p: Path3, secs: float, flows=1, dst_ip=IP_B, step=1, out: dict | None = None) -> float:
    """Forwarded 64-byte frames per second (Mpps). With `out`, also the switch process's
    CPU use and the rate per CPU-second of the switch (its capacity on one core; the
    generator and the switch share this machine's cores with everything else)."""
    rx = lambda: int(ns(NS_B, "cat /sys/class/net/sdpbB0/statistics/rx_packets"))
    gen = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            NS_A,
            BIN,
            "blast",
            "sdpbA0",
            "--mode",
            "af_packet",
            "--seconds",
            str(secs + 1.5),
            "--dst-mac",
            SINK_MAC,
            "--dst-ip",
            dst_ip,
            "--dst-step",
            str(step),
            "--flows",
            str(flows),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.75)
    pid = p.proc.pid if p.proc else getattr(p, "ovs_pid", None)
    c0 = cpu_ticks(pid) if pid else 0
    r0, t0 = rx(), time.time()
    time.sleep(secs)
    r1, t1 = rx(), time.time()
    c1 = cpu_ticks(pid) if pid else 0
    gen.wait(timeout=30)
    mpps = (r1 - r0) / (t1 - t0) / 1e6
    if out is not None and pid:
        hz = os.sysconf("SC_CLK_TCK")
        cpu_s = (c1 - c0) / hz
        out["switch_cpu_pct"] = 100 * cpu_s / (t1 - t0)
        out["mpps_per_switch_cpu_second"] = (r1 - r0) / cpu_s / 1e6 if cpu_s > 0 else None
    return mpps


# ---- 64-byte forwarding rate on one core (`--only pps`) ----------------------------------
# Generator: `sdnperf-switch blast --mode xdp` (an XDP_TX program run by the kernel in
# live-frames test-run mode: xdp_frames straight into the peer veth's ring, no skb; several
# Mpps) pinned to --gen-cpu; our switch pinned to --switch-cpu. Sink: sdpbB0's rx counter;
# frames go to a MAC nobody owns, so B's stack drops them at once.
# Where the kernel's work lands on veth: a receiving veth's processing runs in the softirq
# of the CPU that sent to it. Our switch's core therefore carries the pipeline, its
# transmit (AF_XDP/AF_PACKET skb, veth) and the sink's receive (backlog, ip_rcv drop);
# its ingress (sdpbS1's NAPI: XDP redirect into the AF_XDP socket, or the AF_PACKET ring
# copy) runs on the generator's CPU. The Linux bridge has no task of its own: it runs in
# sdpbS1's NAPI, i.e. on the generator's CPU, so its one-core capacity is derived as
# 1 / (1/bridge - 1/direct) (time per packet the bridge adds to a saturated core).
# Switch CPU = run time of the switch process (softirq work it triggers included) and
# of the switch core's ksoftirqd (which takes softirq work when it piles up).


def _autogroup_nice(pid: int, nice: int):
    """Scheduler priority of a task started in its own session. With autogroups (the
    default), CPU time is shared between sessions first, so a plain `nice` inside one
    session does not help against other sessions' load; the session's group nice does."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except OSError:
        subprocess.run(["renice", "-n", str(nice), "-p", str(pid)], capture_output=True)


def _sched_ns(pid: int) -> int:
    """CPU time of a task in ns (/proc/PID/schedstat; works for kernel threads too)."""
    return int(open(f"/proc/{pid}/schedstat").read().split()[0])


def _xdp_xmit(netns: str, dev: str) -> int:
    out = ns(netns, f"ethtool -S {dev}")
    return sum(int(m) for m in re.findall(r"tx_queue_\d+_xdp_xmit: (\d+)", out))


def _pids_by_comm(match) -> list[int]:
    """PIDs of the tasks whose name (/proc/PID/comm) satisfies `match`."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if match((d / "comm").read_text().strip()):
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _ksoftirqd(cpu: int) -> list[int]:
    return _pids_by_comm(lambda c: c == f"ksoftirqd/{cpu}")[:1]


def _napi_threads(dev: str) -> set[int]:
    """PIDs of threaded-NAPI kernel threads named after `dev` (napi/DEV-ID, comm cut at 15)."""
    return set(_pids_by_comm(lambda c: c.startswith(f"napi/{dev}-"[:15])))


def pps_once(
    kind: str,
    secs: float,
    gen_cpu: int,
    sw_cpu: int,
    io: str = "auto",
    nice: int = 0,
    sink_rps: bool = False,
    own_ingress: bool = False,
    fastpath: bool = False,
    xdp_sink: bool = False,
) -> dict:
    """One 64-byte run through `kind` (direct | bridge | switch): offered and forwarded
    Mpps, and for the switch the CPU use of its core (see the comment above). sink_rps:
    RPS on the sink veth steers B's receive (backlog processing, IP drop) to gen_cpu, so
    the switch's core carries only the switch's transmit up to the enqueue on that
    backlog (an accounting variant; forwarded still = B's rx counter, i.e. frames the
    sink's backlog accepted). own_ingress: the switch's ingress NAPI (sdpbS1, XDP redirect
    and copy into the socket) runs as a thread pinned to sw_cpu and is charged to the
    switch, so the switch core carries exactly the switch's work. fastpath: the switch runs
    the program in the XDP hook (`--xdp-fastpath`), which forwards by XDP redirect inside
    sdpbS1's NAPI, i.e. on the generator's core like the Linux bridge; the sink then gets
    xdp_frames and needs its NAPI on (GRO), exactly as in the direct run. xdp_sink: B drops
    frames in an XDP program (`sdnperf-switch xdp-sink`, counted in B's rx_packets) instead
    of its IP stack: the cheapest possible receiver, so that generator, forwarder and sink
    fit on one core with room to spare."""
    with Path3("direct" if kind == "direct" else kind, offloads=False) as p:
        r: dict = {}
        if sink_rps:
            ns(NS_B, f"sh -c 'echo {1 << gen_cpu:x} > /sys/class/net/sdpbB0/queues/rx-0/rps_cpus'")
        # NAPI on the receiving veth (GRO on): it takes the generator's xdp_frames
        ns(
            NS_B if kind == "direct" else NS_S,
            f"ethtool -K {'sdpbB0' if kind == 'direct' else 'sdpbS1'} gro on",
            check=False,
        )
        if fastpath:
            ns(NS_B, "ethtool -K sdpbB0 gro on", check=False)
        sink = None
        if xdp_sink:
            sink = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    NS_B,
                    BIN,
                    "xdp-sink",
                    "sdpbB0",
                    "--seconds",
                    str(secs + 4),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            if sink.stdout.readline().strip() != "READY":
                raise RuntimeError(f"xdp-sink failed: {sink.stderr.read()}")
        pids: list[int] = []
        if kind == "switch":
            # a deep AF_XDP receive ring (64 MiB): the generator's core hands frames over in
            # bursts of NAPI polls, which an 8192-frame ring does not always absorb
            p.start_switch(
                str(PROGS / "l1_fwd.json"),
                extra=("--io", io, "--rx-frames", "32768") + ("--xdp-fastpath",) * fastpath,
                cpu=sw_cpu,
                nice=nice,
            )
            if fastpath and "xdp fast path on" not in _switch_banner(p):
                raise RuntimeError(f"fast path did not start: {_switch_banner(p)}")
            r["io"] = re.findall(r"=(af_\w+)", _switch_banner(p))
            pids = [p.proc.pid] + _ksoftirqd(sw_cpu)
            nk = len(pids)  # pids[nk:] are ingress NAPI threads (own_ingress)
            if own_ingress:
                # threads that exist before are other users' devices of the same name
                before = _napi_threads("sdpbS1")
                ns(NS_S, "sh -c 'echo 1 > /sys/class/net/sdpbS1/threaded'")
                time.sleep(0.1)
                new = sorted(_napi_threads("sdpbS1") - before)
                if not new:
                    raise RuntimeError(
                        "own_ingress: no napi/sdpbS1-* thread appeared after threaded=1"
                    )
                for t in new:
                    sh(f"taskset -pc {sw_cpu} {t}")
                    if nice:
                        sh(f"renice -n {nice} -p {t}", check=False)
                pids += new
        gen = subprocess.Popen(
            [
                "taskset",
                "-c",
                str(gen_cpu),
                "ip",
                "netns",
                "exec",
                NS_A,
                BIN,
                "blast",
                "sdpbA0",
                "--mode",
                "xdp",
                "--seconds",
                str(secs + 1.5),
                "--dst-mac",
                SINK_MAC,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=bool(nice),
        )
        if nice:
            _autogroup_nice(gen.pid, nice)
        try:
            time.sleep(0.75)
            rx = lambda: int(ns(NS_B, "cat /sys/class/net/sdpbB0/statistics/rx_packets"))
            o0, f0, t0 = _xdp_xmit(NS_A, "sdpbA0"), rx(), time.time()
            c0 = [_sched_ns(q) for q in pids]
            time.sleep(secs)
            o1, f1, t1 = _xdp_xmit(NS_A, "sdpbA0"), rx(), time.time()
            c1 = [_sched_ns(q) for q in pids]
        finally:
            out, err = gen.communicate(timeout=60)
            if sink:
                sink.terminate()
                sink.wait(timeout=10)
        if gen.returncode != 0:
            raise RuntimeError(f"generator failed: {err.strip()}")
        dt = t1 - t0
        r["offered_mpps"] = (o1 - o0) / dt / 1e6
        r["forwarded_mpps"] = (f1 - f0) / dt / 1e6
        if kind == "switch":
            cpu = [(b - a) / 1e9 / dt for a, b in zip(c0, c1)]
            r["switch_cpu_pct"] = 100 * sum(cpu)
            r["switch_process_cpu_pct"] = 100 * cpu[0]
            r["ksoftirqd_cpu_pct"] = 100 * sum(cpu[1:nk])
            if own_ingress:
                r["ingress_napi_cpu_pct"] = 100 * sum(cpu[nk:])
            # with the fast path the pipeline runs in the kernel on the generator's core, not
            # in the switch process: a per-switch-CPU figure would mean nothing
            r["mpps_per_core_second"] = (
                r["forwarded_mpps"] / sum(cpu) if sum(cpu) > 0 and not fastpath else None
            )
            p.stop_switch()
        return r


# Optional rows of the pps figures: --pps-NAME -> ((path, variant) rows it adds, help).
PPS_VARIANTS = {
    "af-packet": (
        [("switch", "af_packet")],
        "also measure the switch with --io af_packet in the pps figures",
    ),
    "sink-rps": (
        [("switch", "sink_rps")],
        "also measure the switch with the sink's receive steered (RPS) to --gen-cpu: an accounting "
        "variant in which the switch's core no longer carries the sink's stack",
    ),
    "own-core": (
        [("switch", "own_core")],
        "also measure the switch with the sink's receive on --gen-cpu (RPS) and its ingress NAPI as a "
        "thread on --switch-cpu: the switch core carries the switch's work and nothing else",
    ),
    "fastpath": (
        [("switch", "fastpath")],
        "also measure the switch with --xdp-fastpath (the program runs in the kernel's XDP hook; sink "
        "GRO on as in the direct run)",
    ),
    "xdp-sink": (
        [("direct", "xdpsink"), ("switch", "xdpsink"), ("switch", "fastpath_xdpsink")],
        "also measure direct veth, the switch and the switch with --xdp-fastpath into an XDP_DROP sink "
        "(no IP stack in B)",
    ),
}


def pps_bench(args, res: dict):
    gen_cpu, sw_cpu = args.gen_cpu, args.switch_cpu
    kinds = [("direct", "auto"), ("bridge", "auto"), ("switch", "auto")]
    for name, (rows, _) in PPS_VARIANTS.items():
        if getattr(args, "pps_" + name.replace("-", "_")):
            kinds += rows
    out: dict = {
        "generator": "sdnperf-switch blast --mode xdp (XDP_TX, BPF_PROG_TEST_RUN live frames)",
        "nice": args.nice,
        "gen_cpu": gen_cpu,
        "switch_cpu": sw_cpu,
        "runs": {},
    }
    for rep in range(args.repeat):
        for kind, io in kinds:
            key = kind if io == "auto" else f"{kind}_{io}"
            rps, own = io in ("sink_rps", "own_core"), io == "own_core"
            fast, xsink = "fastpath" in io, "xdpsink" in io
            r = pps_once(
                kind,
                args.pps_seconds,
                gen_cpu,
                sw_cpu,
                "auto" if rps or fast or xsink else io,
                args.nice,
                sink_rps=rps,
                own_ingress=own,
                fastpath=fast,
                xdp_sink=xsink,
            )
            out["runs"].setdefault(key, []).append(r)
            print(
                f"pps {key} run {rep + 1}: "
                + ", ".join(
                    f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()
                ),
                flush=True,
            )
    res["pps"] = out


def _ms(vals) -> str:
    vals = [v for v in vals if v is not None]
    if not vals:
        return "n/a"
    m = sum(vals) / len(vals)
    return f"{m:.3f} (±{(max(vals) - min(vals)) / 2:.3f})" if len(vals) > 1 else f"{m:.3f}"


def report_pps(r: dict):
    runs = r["runs"]
    mean = lambda key, f: sum(x[f] or 0 for x in runs[key]) / len(runs[key])
    print(
        f"64-byte forwarding, one core (generator: {r['generator']} on CPU {r['gen_cpu']}; "
        f"switch on CPU {r['switch_cpu']}; nice {r['nice']}; mean (± half range) of {len(runs['direct'])} runs)"
    )
    print(
        "  path                   offered Mpps      forwarded Mpps    switch CPU %      Mpps per switch CPU-second"
    )
    for key, v in runs.items():
        sw = "switch_cpu_pct" in v[0]
        name = key + (f" ({'/'.join(sorted(set(v[0]['io'])))})" if "io" in v[0] else "")
        print(
            f"  {name:22s} {_ms([x['offered_mpps'] for x in v]):17s} {_ms([x['forwarded_mpps'] for x in v]):17s} "
            f"{_ms([x['switch_cpu_pct'] for x in v]) if sw else '-':17s} "
            f"{_ms([x['mpps_per_core_second'] for x in v]) if sw else '-'}"
        )
    d, b = mean("direct", "forwarded_mpps"), mean("bridge", "forwarded_mpps")
    bridge_core = 1 / (1 / b - 1 / d) if 0 < b < d else None
    if bridge_core:
        print(
            f"  bridge one-core capacity (derived, 1/(1/bridge - 1/direct)): {bridge_core:.3f} Mpps"
        )
    if "switch" in runs:
        s = mean("switch", "forwarded_mpps")
        print(
            f"  switch CPU: process {_ms([x['switch_process_cpu_pct'] for x in runs['switch']])} % + ksoftirqd "
            f"{_ms([x['ksoftirqd_cpu_pct'] for x in runs['switch']])} %; forwarded / offered "
            f"{s / max(mean('switch', 'offered_mpps'), 1e-9):.2f}"
        )
        print(
            f"  switch / bridge: forwarded {s / max(b, 1e-9):.2f}"
            + (
                f", one-core capacity {mean('switch', 'mpps_per_core_second') / bridge_core:.2f}"
                if bridge_core
                else ""
            )
        )
        print(f"  switch / direct veth: forwarded {s / max(d, 1e-9):.2f}")
        print(
            f"  charged to the switch core (CPU {r['switch_cpu']}): pipeline, AF_XDP transmit, veth "
            f"transmit and the sink's receive (B's stack, run in the sender's softirq); to the generator core: "
            f"generator and the switch's ingress NAPI (XDP redirect + copy into the socket)"
        )
    if "switch_sink_rps" in runs:
        v = runs["switch_sink_rps"]
        print(
            f"  accounting variant switch_sink_rps (sink's receive moved to CPU {r['gen_cpu']} by RPS; the switch "
            f"core keeps the transmit up to the enqueue on B's backlog): forwarded "
            f"{_ms([x['forwarded_mpps'] for x in v])} Mpps at {_ms([x['switch_cpu_pct'] for x in v])} % of the "
            f"switch core = {_ms([x['mpps_per_core_second'] for x in v])} Mpps per switch CPU-second (headline row "
            f"'switch': {_ms([x['mpps_per_core_second'] for x in runs['switch']])}); the switch's ingress "
            f"stays on CPU {r['gen_cpu']}"
        )
    if "switch_fastpath" in runs:
        v = runs["switch_fastpath"]
        f = mean("switch_fastpath", "forwarded_mpps")
        cap = 1 / (1 / f - 1 / d) if 0 < f < d else None
        print(
            f"  switch_fastpath (--xdp-fastpath: l1_fwd compiled to eBPF, forwarding by XDP redirect in sdpbS1's "
            f"NAPI on CPU {r['gen_cpu']}, together with the generator and the sink's receive, like the bridge): "
            f"forwarded {_ms([x['forwarded_mpps'] for x in v])} Mpps = {f / max(d, 1e-9):.2f} of direct veth, "
            f"{f / max(b, 1e-9):.2f} of the bridge; switch process {_ms([x['switch_process_cpu_pct'] for x in v])} % "
            f"of CPU {r['switch_cpu']}"
            + (
                f"; one-core capacity (derived as for the bridge) {cap:.2f} Mpps"
                if cap
                else "; forwarded as much as direct veth (capacity above what this generator can show)"
            )
        )
    if "direct_xdpsink" in runs:
        dx = mean("direct_xdpsink", "forwarded_mpps")
        print(
            f"  with an XDP_DROP sink in B (--pps-xdp-sink; the same sink for all three): direct veth "
            f"{_ms([x['forwarded_mpps'] for x in runs['direct_xdpsink']])} Mpps (generator + sink on CPU "
            f"{r['gen_cpu']})"
        )
        for key, what in (
            ("switch_xdpsink", f"switch (engine in user space on CPU {r['switch_cpu']})"),
            (
                "switch_fastpath_xdpsink",
                f"switch --xdp-fastpath (generator, switch and sink all on CPU {r['gen_cpu']})",
            ),
        ):
            f = mean(key, "forwarded_mpps")
            cap = 1 / (1 / f - 1 / dx) if 0 < f < dx else None
            print(
                f"    {what}: forwarded {_ms([x['forwarded_mpps'] for x in runs[key]])} Mpps = {f / max(dx, 1e-9):.2f} "
                f"of direct"
                + (
                    f"; one-core capacity (derived) {cap:.2f} Mpps"
                    if cap and "fastpath" in key
                    else ""
                )
            )
    if "switch_own_core" in runs:
        v = runs["switch_own_core"]
        print(
            f"  accounting variant switch_own_core (switch core = ingress NAPI thread + switch process + its "
            f"transmit up to B's backlog; generator and sink's receive on CPU {r['gen_cpu']}): forwarded "
            f"{_ms([x['forwarded_mpps'] for x in v])} Mpps at {_ms([x['switch_cpu_pct'] for x in v])} % of the "
            f"switch core (ingress NAPI thread {_ms([x['ingress_napi_cpu_pct'] for x in v])} %) = "
            f"{_ms([x['mpps_per_core_second'] for x in v])} Mpps per switch CPU-second"
        )


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def membench(prog, *args) -> float:
    out = sh(f"{BIN} membench {prog} " + " ".join(args), timeout=600)
    m = re.search(r"= ([\d.]+) ns/packet", out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="short runs (2 s TCP) for a smoke test")
    ap.add_argument("--json", help="write figures to this file")
    ap.add_argument("--lpm-entries", type=int, default=1_000_000)
    ap.add_argument(
        "--skip-ovs", action="store_true", help="no Open vSwitch (userspace datapath) runs"
    )
    ap.add_argument(
        "--only",
        choices=("all", "pps"),
        default="all",
        help="pps: only the 64-byte one-core forwarding rate (direct veth, bridge, switch)",
    )
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs per path for the pps figures (default 3)"
    )
    ap.add_argument("--pps-seconds", type=float, default=3.0, help="measurement window per pps run")
    ap.add_argument(
        "--gen-cpu", type=int, default=0, help="CPU of the generator and the sink's NAPI thread"
    )
    ap.add_argument(
        "--switch-cpu",
        type=int,
        default=1,
        help="CPU of the forwarder (switch process + ingress NAPI)",
    )
    ap.add_argument(
        "--nice",
        type=int,
        default=-20,
        help="nice value of the generator and forwarder (their own sessions' autogroup nice; kernel "
        "threads by renice) in the pps runs: default -20, so that other load on a shared "
        "machine takes little of their cores; 0 = leave as is",
    )
    for name, (_, help_text) in PPS_VARIANTS.items():
        ap.add_argument(f"--pps-{name}", action="store_true", help=help_text)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    global OVS_OK
    OVS_OK = all(
        shutil.which(t) for t in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovsdb-tool")
    )
    T = 2 if args.quick else 10
    R = 1.5 if args.quick else 4.0
    res: dict = {
        "conditions": {
            "kernel": os.uname().release,
            "cpus": os.cpu_count(),
            "loadavg_start": os.getloadavg(),
            "switch": BIN,
            "generator": "64-byte one-core figures: sdnperf-switch blast --mode xdp; recirculation and "
            "LPM rates: blast --mode af_packet (sendmmsg); 60-byte frames + FCS = 64",
        }
    }
    fwd = str(PROGS / "l1_fwd.json")
    if args.only == "pps":
        try:
            pps_bench(args, res)
        except KeyboardInterrupt:
            print("interrupted; cleaning up", file=sys.stderr)
            sys.exit(130)
        finally:
            cleanup()
        res["conditions"]["loadavg_end"] = os.getloadavg()
        print(f"\nconditions: {res['conditions']}")
        report_pps(res["pps"])
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
        return
    try:
        pps_bench(args, res)
        bmv2_json = _bmv2_program()
        for off in (True, False):
            tag = "offload_on" if off else "offload_off"
            kinds = (
                ("direct", "bridge", "switch", "grpc")
                + (("bmv2",) if bmv2_json else ())
                + (("ovs",) if OVS_OK and not args.skip_ovs else ())
            )
            if not off:
                # offloads off: `--io auto` picks AF_XDP; AF_PACKET measured as well
                kinds += ("switch_afpacket",)
            for kind in kinds:
                with Path3(kind if kind in ("direct", "bridge", "ovs") else "switch", off) as p:
                    if kind == "switch":
                        p.start_switch(fwd)
                    elif kind == "grpc":
                        p.start_switch(fwd, binary="grpc")
                    elif kind == "bmv2":
                        p.start_bmv2(bmv2_json)
                    elif kind == "switch_afpacket":
                        p.start_switch(fwd, extra=("--io", "af_packet"))
                    key = f"{kind}_{tag}"
                    res[key] = {"tcp_gbps": _tcp_or_none(p, T, key)}
                    if p.proc and kind != "bmv2":
                        res[key]["io"] = "af_xdp" if "=af_xdp" in _switch_banner(p) else "af_packet"
                    if off or kind in SWITCHES:
                        # latency and 64-byte rate with offloads on, and for the P4
                        # switches' offloads-off runs too
                        res[key]["rtt_min_us"], res[key]["rtt_avg_us"] = rtt(p)
                        res[key]["rate64_mpps"] = rate64(p, R, out=res[key])
                    pid = p.proc.pid if p.proc else getattr(p, "ovs_pid", None)
                    if pid:
                        res[key].update(rss_mb(pid))
                    print(key, res[key], flush=True)
        # recirculation
        with Path3("switch", True) as p:
            p.start_switch(str(PROGS / "recirc_n.json"))
            # the issue's N = 0..15 plus 63 and 255: a pass costs well under a microsecond,
            # below ping's 1 µs resolution over 15 passes, so the long runs fix the slope
            ns_list = [0, 1, 3, 7, 15, 63, 255]
            rec = {}
            for n in ns_list:
                p.ctl("table_set_default", "t_n", "set_n", str(n))
                mn, avg = rtt(p)
                rec[n] = {"rtt_min_us": mn, "rtt_avg_us": avg}
                rec[n]["rate64_mpps"] = rate64(p, R / 2, out=rec[n])
                print("recirc", n, rec[n], flush=True)
            a, b = slope(ns_list, [rec[n]["rtt_min_us"] for n in ns_list])
            res["recirc"] = {
                "points": rec,
                "rtt_fit_us": {"a": a, "b_per_pass_rtt": b, "per_pass_one_way_us": b / 2},
            }
            res["recirc"]["membench_ns_per_packet"] = {}
            for n in ns_list:
                cf = _write_cmds([f"table_set_default t_n set_n {n}"])
                try:
                    res["recirc"]["membench_ns_per_packet"][n] = membench(
                        str(PROGS / "recirc_n.json"),
                        "--packets",
                        str(max(20000, 500000 // (n + 1))),
                        "--commands",
                        cf,
                    )
                finally:
                    os.unlink(cf)
        # LPM scale
        with Path3("switch", True) as p:
            small = [f"table_add lpm set_dmac 16.{i}.0.0/24 => {SINK_MAC}" for i in range(10)]
            big = _lpm_entries(args.lpm_entries, SINK_MAC)
            lpm = {}
            for name, cmds, flows in (("10", small, 10), (str(args.lpm_entries), big, 1024)):
                # destinations: 16.i.0.1 (i < 10) for the small table; spread over the big one
                step = 1 << 16 if name == "10" else max(1, (args.lpm_entries // 1024)) << 8
                load = p.start_switch(fwd, cmds)
                lpm[name] = {"load_s": load}
                lpm[name]["rate64_mpps"] = rate64(
                    p, R, flows=flows, dst_ip="16.0.0.1", step=step, out=lpm[name]
                )
                cf = _write_cmds(cmds)
                try:
                    lpm[name]["membench_ns_per_packet"] = membench(
                        fwd,
                        "--commands",
                        cf,
                        "--packets",
                        "1000000",
                        "--flows",
                        str(flows),
                        "--dst-ip",
                        "16.0.0.1",
                        "--dst-step",
                        str(step),
                    )
                finally:
                    os.unlink(cf)
                print("lpm", name, lpm[name], flush=True)
                p.stop_switch()
            res["lpm"] = lpm
    except KeyboardInterrupt:
        print("interrupted; cleaning up", file=sys.stderr)
        cleanup()
        sys.exit(130)
    finally:
        cleanup()
    res["conditions"]["loadavg_end"] = os.getloadavg()
    report(res, args.lpm_entries)
    report_pps(res["pps"])
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))


def _lpm_entries(n: int, mac: str) -> list[str]:
    """n /24 prefixes 16.0.0.0/24 upward (plus every 64th replaced by a /16../32 mix)."""
    m = mac
    out = []
    base = 16 << 24
    for i in range(n):
        a = base + (i << 8)
        plen = 24
        if i % 64 == 63:
            plen = (16, 20, 28, 32)[(i // 64) % 4]
            a &= (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
            if plen == 32:
                a |= 7
        out.append(
            f"table_add lpm set_dmac {a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/{plen} => {m}"
        )
    return list(dict.fromkeys(out))


def _switch_banner(p: Path3) -> str:
    """The switch's start-up lines (notes, ports and I/O back ends), read from its stderr.
    The switch writes them before READY (which start_switch waited for), so whatever the
    pipe holds now is the whole banner; raw non-blocking reads, because a buffered
    readline would swallow lines that select() then no longer reports."""
    if not hasattr(p, "banner"):
        fd = p.proc.stderr.fileno()
        os.set_blocking(fd, False)
        chunks = []
        try:
            while True:
                b = os.read(fd, 65536)
                if not b:
                    break
                chunks.append(b)
        except BlockingIOError:
            pass
        finally:
            os.set_blocking(fd, True)
        p.banner = b"".join(chunks).decode(errors="replace")
    return p.banner


def _write_cmds(cmds) -> str:
    f = tempfile.NamedTemporaryFile("w", prefix="sdpb-cmds-", suffix=".txt", delete=False)
    f.write("\n".join(cmds) + "\n")
    f.close()
    return f.name


def report_switches(r):
    """The P4 switches side by side (ours through both binaries, BMv2) with the references
    from the same run, RSS beside each row, and the ratios the issue asks for."""
    rows = [k for k in ("direct", "bridge", "ovs", *SWITCHES) if f"{k}_offload_off" in r]
    print("P4 switches (same program, same traffic; 64-byte rate, RTT and RSS per offload setting)")
    print(
        "  path               TCP on   TCP off  64B Mpps on/off   min/avg RTT µs on     off"
        "            RSS MB on/off (peak)"
    )

    def f(v, fmt):
        return format(v, fmt) if isinstance(v, (int, float)) else "-"

    for k in rows:
        on, off = r.get(f"{k}_offload_on", {}), r[f"{k}_offload_off"]
        print(
            f"  {k:17s} {f(on.get('tcp_gbps'), '7.2f'):>7s}  {f(off.get('tcp_gbps'), '7.2f'):>7s}"
            f"  {f(on.get('rate64_mpps'), '.3f'):>6s}/{f(off.get('rate64_mpps'), '.3f'):6s}"
            f"  {f(on.get('rtt_min_us'), '.0f'):>5s}/{f(on.get('rtt_avg_us'), '.0f'):5s}"
            f"  {f(off.get('rtt_min_us'), '.0f'):>5s}/{f(off.get('rtt_avg_us'), '.0f'):5s}"
            f"  {f(on.get('rss_mb'), '.1f'):>5s}/{f(off.get('rss_mb'), '.1f'):5s}"
            f" ({f(max(on.get('rss_peak_mb', 0), off.get('rss_peak_mb', 0)) or None, '.1f')})"
        )

    def ratio(a, b, field, tag):
        x, y = r.get(f"{a}_{tag}", {}).get(field), r.get(f"{b}_{tag}", {}).get(field)
        return f"{x / y:.2f}" if x and y else "-"

    refs = [b for b in ("switch", "bmv2", "bridge", "direct") if f"{b}_offload_on" in r]
    for a in ("grpc", "switch", "bmv2"):
        if f"{a}_offload_on" not in r:
            continue
        for b in refs:
            if b == a or (a == "bmv2" and b == "switch"):
                continue
            print(
                f"  {a} / {b}: TCP {ratio(a, b, 'tcp_gbps', 'offload_on')} (offloads on), "
                f"{ratio(a, b, 'tcp_gbps', 'offload_off')} (off); 64-byte "
                f"{ratio(a, b, 'rate64_mpps', 'offload_on')} / {ratio(a, b, 'rate64_mpps', 'offload_off')}"
                f"; min RTT {ratio(a, b, 'rtt_min_us', 'offload_on')} / "
                f"{ratio(a, b, 'rtt_min_us', 'offload_off')}"
            )


def report(r, nlpm):
    kinds = [k for k in ("direct", "bridge", "ovs", "switch") if f"{k}_offload_on" in r]
    on = {k: r[f"{k}_offload_on"]["tcp_gbps"] for k in kinds}
    off = {k: r[f"{k}_offload_off"]["tcp_gbps"] for k in kinds}
    so, sa = r.get("switch_offload_off", {}), r.get("switch_afpacket_offload_off", {})
    print("\n=== sdnperf-switch benchmark (one run) ===")
    print(f"conditions: {r['conditions']}")
    print("TCP iperf3 (Gbit/s)      offloads on   offloads off")
    for k in kinds:
        print(f"  {k:22s} {on[k]:8.2f}      {off[k]:8.2f}")
    if "ovs" in on:
        print(
            f"  switch / OVS userspace  {on['switch'] / on['ovs']:.2f}          {off['switch'] / off['ovs']:.2f}"
        )
        o = r["ovs_offload_on"]
        print(
            f"  OVS userspace: 64-byte {o['rate64_mpps']:.3f} Mpps (vswitchd CPU {o.get('switch_cpu_pct', 0):.0f} %), "
            f"min RTT {o['rtt_min_us']:.1f} µs"
        )
    print(
        f"  switch / direct veth    {on['switch'] / on['direct']:.2f}          {off['switch'] / off['direct']:.2f}"
    )
    print(
        f"  switch / Linux bridge   {on['switch'] / on['bridge']:.2f}          {off['switch'] / off['bridge']:.2f}"
    )
    if sa:
        print(
            f"  offloads off: switch via {so.get('io')} {off['switch']:.2f} Gbit/s, via af_packet {sa['tcp_gbps']:.2f} Gbit/s"
        )
        for name, v in ((so.get("io"), so), ("af_packet", sa)):
            print(
                f"    64-byte via {name}: {v['rate64_mpps']:.3f} Mpps, switch CPU {v.get('switch_cpu_pct', 0):.0f} % -> "
                f"{v.get('mpps_per_switch_cpu_second') or 0:.2f} Mpps per switch CPU-second; min RTT {v['rtt_min_us']:.0f} µs"
            )
    report_switches(r)
    d, b, s = (r[f"{k}_offload_on"] for k in ("direct", "bridge", "switch"))
    print(
        f"64-byte rate (Mpps): direct {d['rate64_mpps']:.3f}  bridge {b['rate64_mpps']:.3f}  switch {s['rate64_mpps']:.3f}"
        f"  (switch/bridge {s['rate64_mpps'] / b['rate64_mpps']:.2f}); switch CPU {s.get('switch_cpu_pct', 0):.0f} %"
        f" -> {s.get('mpps_per_switch_cpu_second') or 0:.2f} Mpps per switch CPU-second"
    )
    print(
        f"min RTT (µs): direct {d['rtt_min_us']:.1f}  bridge {b['rtt_min_us']:.1f}  switch {s['rtt_min_us']:.1f}"
        f"  -> added per switch hop (one way) {(s['rtt_min_us'] - d['rtt_min_us']) / 2:.1f} µs"
    )
    rc = r["recirc"]
    print(
        "recirculation: N, min RTT µs, avg RTT µs, 64B Mpps, Mpps per switch CPU-s, membench ns/pkt"
    )
    for n, v in rc["points"].items():
        print(
            f"  {n:3}  {v['rtt_min_us']:8.1f} {v['rtt_avg_us']:8.1f}  {v['rate64_mpps']:.3f}  "
            f"{v.get('mpps_per_switch_cpu_second') or 0:.3f}  {rc['membench_ns_per_packet'][n]:.0f}"
        )
    ns_ = list(rc["points"].keys())
    a2, b2 = slope(ns_, [rc["membench_ns_per_packet"][n] for n in ns_])
    print(
        f"  pipeline-only fit: {a2:.0f} + {b2:.0f}·N ns per packet -> {b2 / 1000:.2f} µs per pass"
    )
    print(
        f"  fit: min RTT = {rc['rtt_fit_us']['a']:.1f} + {rc['rtt_fit_us']['b_per_pass_rtt']:.2f}·N µs "
        f"-> {rc['rtt_fit_us']['per_pass_one_way_us']:.2f} µs per pass"
    )
    l = r["lpm"]
    big = l[str(nlpm)]
    print(
        f"LPM per switch CPU-s: 10 entries {l['10'].get('mpps_per_switch_cpu_second') or 0:.3f} Mpps, "
        f"{nlpm} entries {big.get('mpps_per_switch_cpu_second') or 0:.3f} Mpps"
    )
    print(
        f"LPM: 10 entries {l['10']['rate64_mpps']:.3f} Mpps ({l['10']['membench_ns_per_packet']:.0f} ns/pkt pipeline); "
        f"{nlpm} entries {big['rate64_mpps']:.3f} Mpps ({big['membench_ns_per_packet']:.0f} ns/pkt), load {big['load_s']:.1f} s"
        f" -> ratio {big['rate64_mpps'] / l['10']['rate64_mpps']:.2f} (pipeline-only "
        f"{l['10']['membench_ns_per_packet'] / big['membench_ns_per_packet']:.2f})"
    )


if __name__ == "__main__":
    main()
