"""Added delay against N, finely, on our switch: one network (one switch or a chain of
two running recirc.p4, echo requests to h2 held), N changed between ping batches over the
switch's ctl socket (`table_set_default RecircEgress.recirc_config set_passes N`, the same
table P4Runtime writes), N values interleaved with N = 0 so machine drift hits both alike.

Run inside /work/tools/nsrun (it builds a Mininet network):
    python bench/recirc/delay_vs_n.py --topology single --n 20000:27000:500 --pings 30
prints one line per N: median RTT, median added RTT (vs the N = 0 batches), µs per pass,
and the switch's recirculations counter delta (passes per ping), with the load average;
--json FILE keeps every RTT. --priorities normal,high,realtime measures each N under each
cpu_priority setting in turn (interleaved, one network); --hold takes holds (µs, by time)
instead of N. --per-ping measures each ping on its own (our switch): N cycles ping by ping, and per ping
the data-plane thread's CPU time, run-queue wait and involuntary context switches, the
passes it made, and the machine's steal time (/proc/stat: the hypervisor ran someone
else on our vCPUs), so a slow ping can be told apart: more passes, slower passes (CPU
time), a preemption (run-queue wait), or the host (steal); --json keeps every ping.
--target bmv2 runs the reference BMv2 (simple_switch_grpc, from
$SDNPERF_BMV2_DIR) instead of our switch: N (or the hold) is then written over P4Runtime by
a second client that takes the primary role (a higher election id), the passes per ping
come from the program's recirculations counter (read over P4Runtime), and the CPU and
run-queue wait are summed over every thread of the BMv2 process (it has no one data-plane
thread; its threads block on queues between passes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def parse_ns(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if ":" in part:
            lo, hi, step = (int(x) for x in part.split(":"))
            out += list(range(lo, hi + 1, step))
        else:
            out.append(int(part))
    return out


def rtts(output: str) -> list[float]:
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", output)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", choices=["single", "linear"], default="single")
    ap.add_argument("--n", required=True, help="N values: a,b,c or lo:hi:step (combinable)")
    ap.add_argument("--pings", type=int, default=30, help="pings per N per sweep")
    ap.add_argument("--sweeps", type=int, default=1, help="passes over every N (interleaved)")
    ap.add_argument("--interval", type=float, default=0.0, help="ping interval s (0: 3x hold)")
    ap.add_argument("--size", type=int, default=1200)
    ap.add_argument("--json", help="write every RTT here")
    ap.add_argument(
        "--fifo",
        action="store_true",
        help="an experiment, not a setting: run the switches' data-plane threads SCHED_FIFO "
        "(chrt -f 10) so no ordinary task preempts a hold (needs root)",
    )
    ap.add_argument(
        "--priorities",
        default="",
        help="compare cpu_priority settings under the same load: e.g. normal,high,realtime; "
        "each N is measured under each setting in turn (set live on every thread of the "
        "switch process, sdnperf/arch/cpu_priority.py), beside an N = 0 batch of its own",
    )
    ap.add_argument(
        "--hold",
        action="store_true",
        help="the values of --n are holds in µs of recirc_hold.p4 (hold by time), not passes",
    )
    ap.add_argument(
        "--target",
        choices=["sdnperf", "bmv2"],
        default="sdnperf",
        help="the switch: ours (default) or the reference BMv2 ($SDNPERF_BMV2_DIR)",
    )
    ap.add_argument(
        "--pace-us",
        type=int,
        default=0,
        help="our switch's recirculation path latency (recirc_pace_us, µs; 0: none)",
    )
    ap.add_argument(
        "--switch-processes",
        choices=["shared", "per-switch"],
        default=None,
        help="our switches in one process (one data-plane thread for both switches of the "
        "chain, the default) or one process each",
    )
    ap.add_argument(
        "--per-ping",
        action="store_true",
        help="one ping at a time, N cycling ping by ping, with the data-plane thread's "
        "schedstat, context switches, passes and the machine's steal time per ping (our switch)",
    )
    args = ap.parse_args()
    if args.per_ping and (args.target != "sdnperf" or args.priorities):
        ap.error("--per-ping: our switch only, without --priorities")

    from sdnperf.arch.config import P4Config
    from sdnperf.runner import started_network
    from sdnperf.topo.registry import build_topology

    params = {"hosts": 2} if args.topology == "single" else {"switches": 2}
    spec = build_topology(args.topology, params, seed=1)
    from sdnperf.arch import cpu_priority

    knob = "recirc_hold_us" if args.hold else "recirc_passes"
    config = P4Config(
        kind="p4",
        name="p4",
        app="proactive",
        program="recirc_hold" if args.hold else "recirc",
        params={knob: 0, "recirc_dst": "10.0.0.2"},
        recirc_pace_us=args.pace_us,
        target=args.target,
        **({"switch_processes": args.switch_processes} if args.switch_processes else {}),
    )
    bmv2 = args.target == "bmv2"
    # the pings' spacing assumes this much per pass (µs): BMv2's passes cost 15-140 µs
    cost_us = 60.0 if bmv2 else 0.7
    ns = parse_ns(args.n)
    priorities = [p for p in args.priorities.split(",") if p] or ["as-started"]
    for p in priorities:
        if p not in (*cpu_priority.CPU_PRIORITIES, "as-started"):
            ap.error(f"--priorities: {p!r} is not one of {', '.join(cpu_priority.CPU_PRIORITIES)}")
    # keyed (priority, N)
    found: dict[tuple[str, int], list[float]] = {(p, n): [] for p in priorities for n in [0, *ns]}
    passes_seen: dict[tuple[str, int], list[float]] = {k: [] for k in found}
    sched: dict[tuple[str, int], list[tuple[float, float]]] = {k: [] for k in found}
    loads: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        started_network(spec, config, Path(tmp) / "run", host_offloads=False) as started,
    ):
        net = started.net
        h1, h2 = net.get("h1"), net.get("h2")
        switches = net.switches
        h1.cmd(f"ping -c 3 -i 0.2 -W 2 {h2.IP()}")  # ARP, caches
        if args.fifo:
            for sw in switches:
                subprocess.run(["chrt", "-f", "-p", "10", str(_dataplane_tid(sw))], check=True)

        pids = list(dict.fromkeys(sw.switch_pid for sw in switches))
        # one switch per process: a shared process's data-plane thread is counted once
        processes = list({sw.switch_pid: sw for sw in switches}.values())
        writers = (
            [P4RuntimeWriter(sw, started.arch.program.p4info) for sw in switches] if bmv2 else []
        )

        def set_knob(n: int) -> None:
            if bmv2:
                values = {knob: n, "recirc_dst": "10.0.0.2"}
                for w in writers:
                    w.set_default(config.program, values)
                return
            for sw in switches:
                if args.hold:
                    sw.ctl(f"table_set_default RecircEgress.hold_config set_hold {n}")
                else:
                    sw.ctl(f"table_set_default RecircEgress.recirc_config set_passes {n}")

        def recircs() -> int:
            if bmv2:
                return sum(w.counter("RecircEgress.recirculations") for w in writers)
            return sum(_recircs(sw) for sw in switches)

        def schedstat(sw) -> tuple[int, int]:
            return _process_schedstat(sw) if bmv2 else _schedstat(sw)

        def batch(n: int, prio: str) -> None:
            set_knob(n)
            before = recircs()
            sched0 = [schedstat(sw) for sw in processes]
            hold_s = (n * 1e-6 if args.hold else n * cost_us * 1e-6) * len(switches)
            interval = args.interval or max(0.01, round(3 * hold_s, 3))
            out = h1.cmd(f"ping -c {args.pings} -i {interval} -s {args.size} -W 2 {h2.IP()}")
            after = recircs()
            sched1 = [schedstat(sw) for sw in processes]
            got = rtts(out)
            found[prio, n] += got[1:]  # the first of a batch follows the N change
            loads.append(os.getloadavg()[0])
            if got:
                passes_seen[prio, n].append((after - before) / max(1, len(got)))
                # the data-plane threads' CPU time and run-queue wait per ping (ms)
                cpu = sum(b[0] - a[0] for a, b in zip(sched0, sched1)) / 1e6 / len(got)
                wait = sum(b[1] - a[1] for a, b in zip(sched0, sched1)) / 1e6 / len(got)
                sched[prio, n].append((cpu, wait))

        def use(prio: str) -> None:
            if prio != "as-started":
                cpu_priority.set_live(pids, prio)

        if args.per_ping:
            return _per_ping(args, ns, switches, h1, h2, set_knob, recircs)
        try:
            for _ in range(args.sweeps):
                for n in ns:
                    for prio in priorities:  # interleaved: the same load for every setting
                        use(prio)
                        batch(0, prio)
                        batch(n, prio)
        finally:
            use("normal" if priorities != ["as-started"] else "as-started")
            for w in writers:
                w.close()
    load = os.getloadavg()[0]
    unit = "hold_us" if args.hold else "N"
    print(
        f"# target {args.target}, topology {args.topology}, load average {min(loads):.2f}..{max(loads):.2f} "
        f"(now {load:.2f})"
    )
    print(
        f"priority\t{unit}\tmedian_ms\tadded_ms\tus_per_pass\tmin_added_ms\tp90_added_ms"
        "\tsd_ms\tpasses/ping\tcpu_ms/ping\trunq_wait_ms/ping\tn"
    )
    rows = []
    for prio in priorities:
        base_rtts = found[prio, 0]
        if not base_rtts:
            print(f"{prio}\t0\t- (no N = 0 ping came back)")
            continue
        base = statistics.median(base_rtts)
        for n in [0, *ns]:
            r = sorted(found[prio, n])
            if not r:
                print(f"{prio}\t{n}\t-")
                continue
            med = statistics.median(r)
            added = med - base
            p90 = r[int(0.9 * (len(r) - 1))] - base
            sd = statistics.stdev(r) if len(r) > 1 else float("nan")
            per = added / n * 1000 if n and not args.hold else float("nan")
            k = (prio, n)
            pp = statistics.mean(passes_seen[k]) if passes_seen[k] else float("nan")
            cpu = statistics.mean(c for c, _ in sched[k]) if sched[k] else float("nan")
            wait = statistics.mean(w for _, w in sched[k]) if sched[k] else float("nan")
            print(
                f"{prio}\t{n}\t{med:.3f}\t{added:.3f}\t{per:.3f}\t{r[0] - min(base_rtts):.3f}\t"
                f"{p90:.3f}\t{sd:.3f}\t{pp:.0f}\t{cpu:.3f}\t{wait:.3f}\t{len(r)}"
            )
            rows.append(
                {
                    "priority": prio,
                    unit: n,
                    "rtts_ms": r,
                    "base_rtts_ms": base_rtts,
                    "added_ms": added,
                    "sd_ms": sd,
                    "cpu_ms": cpu,
                    "runq_wait_ms": wait,
                }
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "target": args.target,
                    "topology": args.topology,
                    "design": "hold" if args.hold else "passes",
                    "recirc_pace_us": args.pace_us,
                    "rows": rows,
                    "load_average": load,
                    "load_average_range": [min(loads), max(loads)],
                    "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                },
                indent=1,
            )
        )
    return 0


def _steal_ns() -> int:
    """The machine's steal time so far, every CPU (/proc/stat, USER_HZ ticks -> ns)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _thread_state(pid: int, tid: int) -> tuple[int, int, int, int]:
    """(ns on a CPU, ns on a run queue, involuntary context switches, CPU it last ran on)."""
    task = Path(f"/proc/{pid}/task/{tid}")
    run, wait, _ = (task / "schedstat").read_text().split()
    status = (task / "status").read_text()
    m = re.search(r"nonvoluntary_ctxt_switches:\s+(\d+)", status)
    cpu = int((task / "stat").read_text().rsplit(")", 1)[1].split()[36])
    return (int(run), int(wait), int(m.group(1)) if m else 0, cpu)


def _per_ping(args, ns, switches, h1, h2, set_knob, recircs) -> int:
    """--per-ping: one ping at a time, N cycling ping by ping (N = 0 included), each ping's
    RTT beside what the data-plane thread(s) and the machine did meanwhile. Prints, per N,
    the pings split into fast (within 1 ms of that N's 10th percentile RTT) and slow, with
    the mean of each quantity per ping in each group."""
    threads = sorted({(sw.switch_pid, _dataplane_tid(sw)) for sw in switches})
    rows: list[dict] = []
    t0 = time.monotonic()
    loads = []
    current = None
    for _ in range(args.sweeps):
        for _i in range(args.pings):
            for n in [0, *ns]:
                if n != current:
                    set_knob(n)
                    current = n
                before = [_thread_state(p, t) for p, t in threads]
                steal0, passes0 = _steal_ns(), recircs()
                out = h1.cmd(f"ping -c 1 -s {args.size} -W 2 {h2.IP()}")
                after = [_thread_state(p, t) for p, t in threads]
                steal1, passes1 = _steal_ns(), recircs()
                got = rtts(out)
                d = [sum(b[k] - a[k] for a, b in zip(before, after)) for k in range(3)]
                rows.append(
                    {
                        "n": n,
                        "t_s": round(time.monotonic() - t0, 4),
                        "rtt_ms": got[0] if got else None,
                        "cpu_ms": d[0] / 1e6,
                        "runq_wait_ms": d[1] / 1e6,
                        "involuntary_switches": d[2],
                        "passes": passes1 - passes0,
                        "steal_ms": (steal1 - steal0) / 1e6,
                        "cpus": sorted({s[3] for s in before + after}),
                    }
                )
            loads.append(os.getloadavg()[0])
    print(
        f"# per ping, target {args.target}, topology {args.topology}, "
        f"load average {min(loads):.2f}..{max(loads):.2f}; means per ping"
    )
    print(
        "N\tgroup\tpings\trtt_ms\tcpu_ms\trunq_wait_ms\tinvol_switches\tpasses"
        "\tus_per_pass_cpu\tsteal_ms"
    )
    for n in [0, *ns]:
        mine = [r for r in rows if r["n"] == n and r["rtt_ms"] is not None]
        if not mine:
            print(f"{n}\t-\t0")
            continue
        ordered = sorted(r["rtt_ms"] for r in mine)
        floor = ordered[int(0.1 * (len(ordered) - 1))]
        for group, pick in (
            ("fast", [r for r in mine if r["rtt_ms"] <= floor + 1.0]),
            ("slow", [r for r in mine if r["rtt_ms"] > floor + 1.0]),
        ):
            if not pick:
                continue

            def mean(key, pick=pick):
                return statistics.mean(r[key] for r in pick)

            per_pass = 1000 * mean("cpu_ms") / mean("passes") if mean("passes") else float("nan")
            print(
                f"{n}\t{group}\t{len(pick)}\t{mean('rtt_ms'):.3f}\t{mean('cpu_ms'):.3f}\t"
                f"{mean('runq_wait_ms'):.3f}\t{mean('involuntary_switches'):.2f}\t"
                f"{mean('passes'):.0f}\t{per_pass:.3f}\t{mean('steal_ms'):.3f}"
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "target": args.target,
                    "topology": args.topology,
                    "design": "hold" if args.hold else "passes",
                    "per_ping": rows,
                    "load_average_range": [min(loads), max(loads)],
                    "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                },
                indent=1,
            )
        )
    return 0


def _dataplane_tid(sw) -> int:
    """The switch's data-plane thread (named "dataplane" by sdnperf-switch-grpc)."""
    pid = sw.switch_pid
    for task in Path(f"/proc/{pid}/task").iterdir():
        if (task / "comm").read_text().strip().startswith("dataplane"):
            return int(task.name)
    raise RuntimeError(f"{sw.name}: no dataplane thread in process {pid}")


def _schedstat(sw) -> tuple[int, int]:
    """(ns on a CPU, ns waiting on a run queue) of the switch's data-plane thread
    (/proc/PID/task/TID/schedstat)."""
    tid = _dataplane_tid(sw)
    run, wait, _ = Path(f"/proc/{sw.switch_pid}/task/{tid}/schedstat").read_text().split()
    return (int(run), int(wait))


def _process_schedstat(sw) -> tuple[int, int]:
    """(ns on a CPU, ns waiting on a run queue) summed over every thread of the switch
    process (BMv2: its ingress, egress and transmit threads and the rest)."""
    run = wait = 0
    for task in Path(f"/proc/{sw.switch_pid}/task").iterdir():
        try:
            r, w, _ = (task / "schedstat").read_text().split()
        except OSError:
            continue  # a thread that ended meanwhile
        run, wait = run + int(r), wait + int(w)
    return (run, wait)


class P4RuntimeWriter:
    """A second P4Runtime client of one switch that takes the primary role (election id
    above the controller's) to write the program's run-time params between ping batches,
    and reads its counters: what any P4Runtime tool can do, on BMv2 as on our switch."""

    def __init__(self, sw, p4info, election_id: int = 1 << 20):
        import queue

        import grpc
        from finsy.proto import p4r, p4r_grpc

        from sdnperf.controllers.p4rt.schema import Schema

        self.p4r = p4r
        self.schema = Schema.from_file(p4info)
        self.device_id = sw.device_id
        self.election = p4r.Uint128(high=0, low=election_id)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{sw.grpc_port}")
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.requests.put(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=self.device_id, election_id=self.election
                )
            )
        )
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        answer = next(self.stream)  # the arbitration's answer: primary when status is OK
        if answer.arbitration.status.code != 0:
            raise RuntimeError(f"{sw.name}: not primary over P4Runtime: {answer}")

    def set_default(self, program: str, values: dict) -> None:
        """MODIFY the default actions the catalog writes for `values` (N or the hold)."""
        from sdnperf.controllers.p4rt.params import param_updates
        from sdnperf.p4.catalog import program as catalog_program

        writes = [w for w in catalog_program(program).writes(values) if w.get("default")]
        self.stub.Write(
            self.p4r.WriteRequest(
                device_id=self.device_id,
                election_id=self.election,
                updates=param_updates(self.schema, writes),
            ),
            timeout=10,
        )

    def counter(self, name: str, index: int = 0) -> int:
        p4r = self.p4r
        counter_id = next(
            c.preamble.id for c in self.schema.p4info.counters if c.preamble.name == name
        )
        request = p4r.ReadRequest(
            device_id=self.device_id,
            entities=[
                p4r.Entity(
                    counter_entry=p4r.CounterEntry(
                        counter_id=counter_id, index=p4r.Index(index=index)
                    )
                )
            ],
        )
        for response in self.stub.Read(request, timeout=10):
            for entity in response.entities:
                return int(entity.counter_entry.data.packet_count)
        return 0

    def close(self) -> None:
        self.requests.put(None)  # ends the stream: the controller is primary again
        self.channel.close()


def _recircs(sw) -> int:
    m = re.search(r"recirculations=(\d+)", sw.ctl("stats"))
    return int(m.group(1)) if m else 0


if __name__ == "__main__":
    raise SystemExit(main())
