#!/usr/bin/env python3
"""P4Runtime table-write rate into our switch (issue 5: >= 50,000 entries/s, batches of 1,000).

Compiles bench/p4runtime/fwd.p4 with sdnperf-p4c (BMv2 JSON + binary P4Info), starts
sdnperf-switch-grpc on 127.0.0.1 (no data-plane ports: the control path alone), and runs
the Rust client sdnperf-p4rt-bench: primary arbitration, SetForwardingPipelineConfig, then
INSERT / MODIFY / DELETE of N entries in WriteRequests of B updates, one request in flight
(the client waits for each answer, as a controller does), a Read-back check after INSERT.
Repeats R times per table and prints mean and spread; --json OUT writes every run.

    cd rust && cargo build --release   # sdnperf-p4c, sdnperf-switch-grpc, sdnperf-p4rt-bench
    python3 bench/p4runtime/run.py [--entries 100000] [--batch 1000] [--reps 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))  # the script runs from a checkout: sdnperf from there
from sdnperf import tools


def tool(name: str) -> Path:
    try:
        return Path(tools.find(name))
    except tools.ToolNotFound as exc:
        sys.exit(f"run.py: {exc}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tables", default="l2,ipv4_lpm")
    ap.add_argument(
        "--packet-io",
        type=int,
        default=100_000,
        help="also measure packet-out -> packet-in round trips (packet_io.p4, CPU port 255); 0 = skip",
    )
    ap.add_argument("--window", type=int, default=256, help="packet-outs in flight")
    ap.add_argument("--json", help="write all runs here")
    a = ap.parse_args()
    p4c, daemon, client = (
        tool("sdnperf-p4c"),
        tool("sdnperf-switch-grpc"),
        tool("sdnperf-p4rt-bench"),
    )
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="sdnperf-p4rt-bench-") as tmp:
        subprocess.run(
            [str(p4c), str(HERE / "fwd.p4"), "-o", tmp, "--p4info-format", "binary"], check=True
        )
        prog, info = Path(tmp) / "fwd.json", Path(tmp) / "fwd.p4info.bin"
        print(f"machine: {os.cpu_count()} cores, load average at start {os.getloadavg()[0]:.2f}")
        for table in a.tables.split(","):
            for rep in range(a.reps):
                port = free_port()
                d = subprocess.Popen(
                    [str(daemon), "--grpc-port", str(port)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                try:
                    assert d.stdout.readline().strip() == "READY"
                    out = Path(tmp) / f"run-{table}-{rep}.json"
                    r = subprocess.run(
                        [
                            str(client),
                            "--addr",
                            f"127.0.0.1:{port}",
                            "--json",
                            str(prog),
                            "--p4info",
                            str(info),
                            "--entries",
                            str(a.entries),
                            "--batch",
                            str(a.batch),
                            "--table",
                            table,
                            "--json-out",
                            str(out),
                        ],
                        capture_output=True,
                        text=True,
                    )
                    if r.returncode != 0:
                        print(r.stdout + r.stderr, file=sys.stderr)
                        return 1
                    runs.append(json.loads(out.read_text()) | {"rep": rep})
                finally:
                    d.terminate()
                    d.wait(10)
                time.sleep(0.2)
        if a.packet_io:
            pio = Path(tmp) / "pio"
            subprocess.run(
                [
                    str(p4c),
                    str(REPO / "rust/p4c/tests/corpus/packet_io.p4"),
                    "-o",
                    str(pio),
                    "--p4info-format",
                    "binary",
                ],
                check=True,
            )
            for rep in range(a.reps):
                port = free_port()
                d = subprocess.Popen(
                    [str(daemon), "--grpc-port", str(port), "--cpu-port", "255"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                try:
                    assert d.stdout.readline().strip() == "READY"
                    out = Path(tmp) / f"pio-{rep}.json"
                    r = subprocess.run(
                        [
                            str(client),
                            "--addr",
                            f"127.0.0.1:{port}",
                            "--json",
                            str(pio / "packet_io.json"),
                            "--p4info",
                            str(pio / "packet_io.p4info.bin"),
                            "--packet-io",
                            str(a.packet_io),
                            "--window",
                            str(a.window),
                            "--json-out",
                            str(out),
                        ],
                        capture_output=True,
                        text=True,
                    )
                    if r.returncode != 0:
                        print(r.stdout + r.stderr, file=sys.stderr)
                        return 1
                    runs.append(json.loads(out.read_text()) | {"rep": rep, "table": "packet_io"})
                finally:
                    d.terminate()
                    d.wait(10)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    print(
        f"{'table':<9} {'op':<7} {'entries/s mean':>15} {'sd':>8} {'min':>8} {'max':>8}  batch ms (median of medians)"
    )
    ok = True
    for table in a.tables.split(","):
        for op in ("insert", "modify", "delete"):
            rates = [r[op]["rate"] for r in runs if r["table"] == table and op in r]
            med = statistics.median(
                r[op]["batch_ms_median"] for r in runs if r["table"] == table and op in r
            )
            sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
            print(
                f"{table:<9} {op:<7} {statistics.mean(rates):>15,.0f} {sd:>8,.0f} {min(rates):>8,.0f} {max(rates):>8,.0f}  {med:.2f}"
            )
            if op == "insert":
                ok &= statistics.mean(rates) >= 50_000
    pio = [r["packet_io"] for r in runs if "packet_io" in r]
    if pio:
        rates = [r["rate"] for r in pio]
        sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
        print(
            f"packet-out -> packet-in round trips/s (window {a.window}, no ports): mean {statistics.mean(rates):,.0f} sd {sd:,.0f} "
            f"min {min(rates):,.0f} max {max(rates):,.0f}; RTT median {statistics.median(r['rtt_us_median'] for r in pio):.0f} us"
        )
    print(
        f"{a.entries} entries per run, batches of {a.batch}, {a.reps} runs per table; target >= 50,000 entries/s: {'met' if ok else 'NOT met'}"
    )
    if a.json:
        Path(a.json).write_text(
            json.dumps({"entries": a.entries, "batch": a.batch, "runs": runs}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
