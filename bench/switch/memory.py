#!/usr/bin/env python3
"""Resident memory of idle P4 switches, side by side: our `sdnperf-switch-grpc`, our
`sdnperf-switch run`, and BMv2's simple_switch_grpc (when found: $SDNPERF_BMV2_DIR, PATH or
../shared/p4-reference).

Each switch gets two ports (veth pairs in namespace sdpmS, the far ends up and silent) and
the same IPv4 program, l1_fwd.p4 (port 1 <-> 2 plus an IPv4 LPM table): p4c-bm2-ss's JSON
when p4c-bm2-ss is found (all three run the same JSON), else our compiler's. All run at
once; after --idle seconds the script reads /proc/PID/status (VmRSS, RssAnon, RssFile,
threads) and /proc/PID/smaps_rollup (Pss: shared library and binary pages divided among
the processes that map them, i.e. what one more switch of a large study costs), and sums
the socket mappings (AF_PACKET rings) and the largest anonymous mappings (AF_XDP UMEM,
heap, thread stacks) from /proc/PID/smaps. Ratios are to BMv2.

Run as root:  python3 bench/switch/memory.py [--idle 3] [--no-vnet] [--json OUT.json]
Everything it creates is named sdpm* and removed on exit, failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # the script runs from a checkout: sdnperf from there
sys.path.insert(0, str(HERE))
import bmv2  # noqa: E402

from sdnperf import tools  # noqa: E402

NS = "sdpmS"
NAMES = ("grpc", "switch", "bmv2")


def sh(*argv: str) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def cleanup():
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)


def ports_for(k: int) -> list[tuple[int, str]]:
    """Two veth pairs in NS for switch k: the switch gets sdpm<k>p1/p2, the peers stay idle."""
    out = []
    for port in (1, 2):
        name, peer = f"sdpm{k}p{port}", f"sdpm{k}q{port}"
        sh("ip", "-n", NS, "link", "add", name, "type", "veth", "peer", "name", peer)
        for dev in (name, peer):
            sh("ip", "-n", NS, "link", "set", dev, "up")
        out.append((port, name))
    return out


def program(tmp: Path) -> tuple[Path, str]:
    """l1_fwd.p4's JSON and who compiled it."""
    try:
        return bmv2.compile_l1_fwd(tmp), "p4c-bm2-ss"
    except RuntimeError as exc:
        print(f"memory.py: {exc}; using our compiler", file=sys.stderr)
    out = tmp / "l1_fwd.ours.json"
    out.write_text(sh(tools.find("sdnperf-switch"), "compile", str(bmv2.L1_FWD_P4)))
    return out, "sdnperf-switch compile"


def argv_for(name: str, k: int, prog: Path, vnet: bool) -> list[str] | None:
    ports = ports_for(k)
    ifaces = [x for num, dev in ports for x in ("-i", f"{num}@{dev}")]
    no_vnet = [] if vnet else ["--no-vnet"]
    if name == "grpc":
        return [
            tools.find("sdnperf-switch-grpc"),
            str(prog),
            *ifaces,
            "--grpc-port",
            "19559",
            "--die-with-parent",
            *no_vnet,
        ]
    if name == "switch":
        return [
            tools.find("sdnperf-switch"),
            "run",
            "--json",
            str(prog),
            *ifaces,
            "--die-with-parent",
            *no_vnet,
        ]
    exe = tools.find_bmv2("simple_switch_grpc", reference=True)
    if exe is None:
        print(
            f"memory.py: BMv2 skipped: {tools.bmv2_hint('simple_switch_grpc', reference=True)}",
            file=sys.stderr,
        )
        return None
    return bmv2.argv(Path(exe), ports, prog, thrift_port=19090, grpc_addr="127.0.0.1:19560")


def status(pid: int) -> dict:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
            out[key] = int(val.split()[0])
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("Pss", "Pss_Anon", "Pss_File"):
            out[key] = int(val.split()[0])
    return out


def mappings(pid: int) -> dict:
    """kB resident in socket mappings (AF_PACKET rings, AF_XDP rings), the binary and its
    libraries (file mappings), and anonymous memory (heap, stacks, AF_XDP UMEM)."""
    sums = {"sockets_kB": 0, "files_kB": 0, "anon_kB": 0}
    kind = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            path = head[5] if len(head) > 5 else ""
            kind = (
                "sockets_kB"
                if path.startswith("socket:")
                else "files_kB"
                if path.startswith("/")
                else "anon_kB"
            )
        elif head[0] == "Rss:" and kind:
            sums[kind] += int(head[1])
    return sums


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--idle", type=float, default=3.0, help="seconds idle before reading (default 3)"
    )
    ap.add_argument(
        "--no-vnet",
        action="store_true",
        help="start our switches with --no-vnet (their --io auto then uses AF_XDP)",
    )
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("memory.py: run as root")
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    procs: dict[str, subprocess.Popen] = {}
    res: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="sdpm-"))
    try:
        cleanup()
        sh("ip", "netns", "add", NS)
        prog, compiler = program(tmp)
        res["program"] = {"p4": str(bmv2.L1_FWD_P4), "json_by": compiler}
        for k, name in enumerate(NAMES):
            argv = argv_for(name, k, prog, not args.no_vnet)
            if argv is None:
                continue
            log = open(tmp / f"{name}.log", "w")
            procs[name] = subprocess.Popen(
                ["ip", "netns", "exec", NS, *argv], stdout=log, stderr=subprocess.STDOUT
            )
        print(f"memory.py: {', '.join(procs)} started; idle {args.idle} s", file=sys.stderr)
        time.sleep(args.idle)
        for name, p in procs.items():
            if p.poll() is not None:
                raise RuntimeError(
                    f"{name} exited ({p.returncode}): {(tmp / f'{name}.log').read_text()[-2000:]}"
                )
            res[name] = {**status(p.pid), **mappings(p.pid)}
    except KeyboardInterrupt:
        print("interrupted; cleaning up", file=sys.stderr)
        sys.exit(130)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        cleanup()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    report(res, args)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))


def report(res: dict, args):
    mode = "--no-vnet (AF_XDP)" if args.no_vnet else "virtio-net headers (AF_PACKET)"
    print(
        f"\nidle switches, 2 ports, l1_fwd.p4 ({res['program']['json_by']}), ours with {mode}, idle {args.idle} s"
    )
    print("  switch      VmRSS MB   Pss MB   anon MB   file MB   sockets MB   threads")
    rows = [n for n in NAMES if n in res]
    mb = lambda kb: kb / 1024
    for n in rows:
        r = res[n]
        print(
            f"  {n:10s} {mb(r['VmRSS']):8.1f} {mb(r['Pss']):8.1f} {mb(r['anon_kB']):9.1f} "
            f"{mb(r['files_kB']):9.1f} {mb(r['sockets_kB']):12.1f} {r['Threads']:9d}"
        )
    if "bmv2" in res:
        b = res["bmv2"]
        for n in rows[:-1] if rows[-1] == "bmv2" else rows:
            r = res[n]
            print(
                f"  {n} / bmv2: VmRSS {r['VmRSS'] / b['VmRSS']:.2f}, Pss {r['Pss'] / b['Pss']:.2f}"
            )
    print(
        "  (anon: heap, thread stacks, AF_XDP UMEM; file: binary and libraries; sockets: AF_PACKET/AF_XDP rings)"
    )


if __name__ == "__main__":
    main()
