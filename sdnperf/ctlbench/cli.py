"""`sdnperf ctlbench`: benchmark OpenFlow and P4Runtime controllers with emulated switches.

    sdnperf ctlbench run examples/ctlbench-openflow.toml
    sdnperf ctlbench run -c echo -c osken:l2-learning -c ovs-testcontroller \\
        --switches 1,4,16 --mode throughput --duration 5
    sdnperf ctlbench run -c faucet --mode rate --switches 1 --rate 100,200,400,800
    sdnperf ctlbench run --protocol p4runtime -c p4rt --switches 1,4   # our P4Runtime controller
    sdnperf ctlbench ceiling --switches 4          # the probe's ceiling (echo controller)
    sdnperf ctlbench ceiling --protocol p4runtime --switches 4
    sdnperf report results/ctlbench                 # the report, as for every study
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sdnperf.commands import (
    EXIT_BAD_INPUT,
    EXIT_FAIL,
    EXIT_OK,
    usage,
)


def _list(kind):
    def parse(text: str):
        try:
            return [kind(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list, got {text!r}"
            ) from None

    return parse


def add_ctlbench_command(commands) -> None:
    """`sdnperf ctlbench run|ceiling`, added to the sdnperf parser's subcommands."""
    p = commands.add_parser(
        "ctlbench",
        help="benchmark SDN controllers with emulated switches flooding packet-ins",
        description="Controller benchmark: N emulated OpenFlow 1.3 switches, or N emulated "
        "P4Runtime devices the controller connects to (sdnperf-probe), "
        "send packet-ins to a controller; sent/answered rates, reaction-time "
        "distribution, outstanding packets, fairness and CPU use are stored as a "
        "study (SQLite, CSV, HTML report).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )

    p.set_defaults(func=usage(p))
    sub = p.add_subparsers(metavar="ACTION")
    r = sub.add_parser(
        "run",
        help="run a benchmark study (file and/or options)",
        description="Run controllers × switches × rates × repetitions. Options "
        "override the file's [load] and [[controller]] tables.",
    )
    r.add_argument(
        "file", nargs="?", help="ctlbench TOML file (see examples/ctlbench-openflow.toml)"
    )
    r.add_argument(
        "-c",
        "--controller",
        action="append",
        metavar="SPEC",
        help="openflow13: echo | osken[:APP] | faucet | ovs-testcontroller | "
        "127.0.0.1:PORT; p4runtime: echo | p4rt[:APP] (our P4Runtime "
        "controller, app l2-learning) | 127.0.0.1:PORT (an external controller "
        "that dials device 1 there, device i on PORT+i-1) (repeatable)",
    )
    r.add_argument(
        "--protocol",
        choices=["openflow13", "p4runtime"],
        help="southbound protocol of the emulated switches (default: the file's, else openflow13)",
    )
    r.add_argument("--mode", choices=["rate", "throughput", "latency"])
    r.add_argument("--switches", type=_list(int), help="switch counts, e.g. 1,4,16")
    r.add_argument(
        "--rate", type=_list(float), help="packet-ins/s per switch (rate mode), e.g. 100,1000"
    )
    r.add_argument("--window", type=int, help="outstanding packet-ins per switch (throughput mode)")
    r.add_argument("--warmup", type=float, help="warm-up seconds")
    r.add_argument("--duration", type=float, help="measurement seconds")
    r.add_argument("--packets", type=int, help="per-switch packet count ending the measurement")
    r.add_argument("--repetitions", type=int)
    r.add_argument("--no-ceiling", action="store_true", help="skip the probe-ceiling runs")
    r.add_argument("--name", help="study name")
    r.add_argument("--results", help="results directory (default results/<study name>)")
    r.add_argument("--resume", action="store_true", help="skip runs already stored ok")
    r.add_argument("--no-report", action="store_true", help="skip the HTML report")
    r.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the study's blocks on a Ray cluster, as `sdnperf run --cluster` "
        "(ray://HOST:PORT, or local:N for N nodes on this machine; docs/scale-out.md)",
    )
    r.add_argument(
        "--allow-mixed", action="store_true", help="with --cluster: run even if nodes differ"
    )
    r.set_defaults(func=cmd_run)
    c = sub.add_parser(
        "ceiling",
        help="measure the probe's ceiling against the echo controller",
        description="Measure the probe's own ceiling (packet-ins/s it can send "
        "and count) against the probe's echo controller.",
    )
    c.add_argument("--protocol", choices=["openflow13", "p4runtime"], default="openflow13")
    c.add_argument("--switches", type=int, default=4)
    c.add_argument("--duration", type=float, default=3.0)
    c.add_argument("--window", type=int, default=64)
    c.add_argument("--threads", type=int, default=1)
    c.set_defaults(func=cmd_ceiling)


def _config(args):
    # lazy: pulls in pydantic, wanted only here
    from sdnperf.ctlbench.config import CtlbenchFile, controller_from_arg, load, validated

    cfg = load(args.file) if args.file else CtlbenchFile()
    data = cfg.model_dump()
    if args.controller:
        data["controller"] = [controller_from_arg(s).model_dump() for s in args.controller]
    for name in ("protocol", "mode", "switches", "rate", "window", "warmup", "duration", "packets"):
        v = getattr(args, name)
        if v is not None:
            data["load"][name] = v
    if args.no_ceiling:
        data["load"]["ceiling"] = False
    if args.repetitions:
        data["study"]["repetitions"] = args.repetitions
    if args.name:
        data["study"]["name"] = args.name
    if args.protocol == "p4runtime" and not args.controller and not args.file:
        data["controller"] = [{"kind": "p4rt", "app": "l2-learning"}]
    cfg = validated(data, f"{args.file}: with the options" if args.file else "options")
    if not cfg.study.baseline:
        cfg.study.baseline = cfg.controller[0].label
    return cfg


def cmd_run(args) -> int:
    """The file and options as a study of the one pipeline (ctlbench/study.py), run by
    `args.run_study` (cli.py's, handed down): resume, sweeps, order, provenance, cluster."""
    from sdnperf.ctlbench.config import ConfigError  # lazy: pulls in pydantic, wanted only here

    # lazy: pulls in psutil, pydantic, yaml, wanted only here
    from sdnperf.ctlbench.study import ctlbench_study

    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.emulation.cleanup import ensure_tag

    try:
        cfg = _config(args)
    except ConfigError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    ensure_tag()  # controllers and probes inherit it: `sdnperf clean` finds them after a crash
    results_dir = Path(args.results or Path("results") / cfg.study.name)
    args.only = None
    return args.run_study(ctlbench_study(cfg, args.file), args, results_dir)


def cmd_ceiling(args) -> int:
    """Run the echo controller and the probe in throughput mode; print the ceiling."""
    import subprocess
    import tempfile

    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.controllers.process import free_port

    # lazy: pulls in pydantic, wanted only here
    from sdnperf.ctlbench.probe import ProbeError, binary, wait_devices

    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.emulation.cleanup import ensure_tag

    ensure_tag()  # the probe and echo controller inherit it (sdnperf clean)
    try:
        exe = binary()
    except ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    load = [
        "--switches",
        str(args.switches),
        "--mode",
        "throughput",
        "--window",
        str(args.window),
        "--threads",
        str(args.threads),
        "--warmup",
        "1",
        "--duration",
        str(args.duration),
    ]
    if args.protocol == "p4runtime":
        # devices first; the echo controller dials them
        with tempfile.TemporaryDirectory(prefix="sdnperf-ceiling-") as tmp:
            devices = Path(tmp) / "devices.json"
            probe = subprocess.Popen(
                [
                    exe,
                    "p4runtime",
                    *load,
                    "--devices-file",
                    str(devices),
                    "--connect-timeout",
                    "20",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            echo = None
            try:
                wait_devices(devices, probe)
                echo = subprocess.Popen(
                    [
                        exe,
                        "p4runtime-echo",
                        "--devices-file",
                        str(devices),
                        "--threads",
                        str(args.threads),
                    ],
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                stdout, _ = probe.communicate(timeout=args.duration + 60)
            except (ProbeError, subprocess.TimeoutExpired) as exc:
                probe.kill()
                probe.communicate()
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_FAIL
            finally:
                if echo is not None:
                    echo.terminate()
                    echo.wait(timeout=5)
    else:
        port = free_port()
        echo = subprocess.Popen(
            [exe, "echo-controller", "--listen", f"127.0.0.1:{port}"],
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            time.sleep(0.3)
            stdout = subprocess.run(
                [exe, "openflow", "--controller", f"127.0.0.1:{port}", *load],
                capture_output=True,
                timeout=args.duration + 60,
            ).stdout
        finally:
            echo.terminate()
            echo.wait(timeout=5)
    doc = json.loads(stdout or b"null") or {}
    t = doc.get("totals") or {}
    print(
        f"probe ceiling ({args.protocol}, {args.switches} switches, window {args.window}, "
        f"{args.threads} probe thread(s)): {t.get('answered_rate', 0):,.0f} packet-ins/s "
        f"answered; probe CPU {doc.get('probe_cpu', {}).get('measure_pct', 0):.0f} % of one "
        f"core; RTT p50 {doc.get('rtt_us', {}).get('p50')} µs"
    )
    return EXIT_OK if t.get("answered_rate") else EXIT_FAIL
