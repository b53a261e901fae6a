#!/usr/bin/env python3
"""Differential test of sdnperf-p4c against the reference p4c (and BMv2).

    bench/p4c/differential.py [PROGRAM.p4|DIR ...] [--corpus] [--generate N --seed S]
                              [--jobs 2] [--bmv2-every K] [--keep DIR]

For every program (with its .stf: packets and control commands; its `expect` lines are
ignored) it runs
  (a) sdnperf-switch on sdnperf-p4c's JSON,
  (b) sdnperf-switch on p4c-bm2-ss's JSON,
  (c) BMv2 simple_switch on p4c-bm2-ss's JSON, packets through pcap files (only for STF
      files with packets alone: control-plane commands would need BMv2's Thrift CLI; every
      K-th program, BMv2 takes about a second to start),
and reports every program where the packets that come out differ. (a) != (b) is a bug of
our compiler (or a p4c quirk to record); (b) != (c) is a bug of our switch.

Programs: the arguments, `--corpus` (rust/p4c/tests/corpus), and/or `--generate N`
(random valid programs from `sdnperf-p4c-fuzz gen`). Needs ../shared/p4-reference (or
$SDNPERF_BMV2_DIR, or PATH: sdnperf.tools.find_bmv2) and the release binaries in rust/target/release.
Exit status 1 when any disagreement was found.
"""

import argparse
import concurrent.futures as cf
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reftools import REPO, p4c_bm2_ss, reference_dir, run

PROBE_PORTS = range(0, 8)


def probe_stf(stf_text: str) -> tuple[str, list[bytes], bool]:
    """The STF without expectations plus impossible ones on every probe port, so that the
    runner's report lists every packet that came out. Returns (text, input packets on
    port 0.., whether it has only packets)."""
    lines, packets, only_packets = [], [], True
    for raw in stf_text.splitlines():
        w = raw.split()
        if not w or w[0].startswith("#"):
            lines.append(raw)
            continue
        if w[0] == "expect":
            continue
        if w[0] == "packet":
            packets.append((int(w[1]), bytes.fromhex("".join(w[2:]).replace("$", ""))))
        else:
            only_packets = False
        lines.append(raw)
    n = max(1, len(packets)) * 2
    for p in PROBE_PORTS:
        lines.extend(f"expect {p} 00$" for _ in range(n))
    return "\n".join(lines) + "\n", packets, only_packets


RECEIVED = re.compile(
    r"^FAIL port (\d+)(?: packet #(\d+) \(line \d+\): .*|: unexpected packet #(\d+))$"
)


def outputs(report: str) -> dict:
    """Port → list of hex packets (probe ports) or count (other ports); 'error' → text."""
    out: dict = {}
    lines = report.splitlines()
    for i, l in enumerate(lines):
        m = RECEIVED.match(l)
        if m:
            nxt = [x for x in lines[i + 1 : i + 3] if x.strip().startswith("received ")]
            if nxt:
                k = int(m.group(2) or m.group(3))
                out.setdefault(int(m.group(1)), {})[k] = nxt[0].split()[1]
            continue
        m = re.match(r"^note: (\d+) packet\(s\) on port (\d+) with no expectations", l)
        if m:
            out[int(m.group(2))] = f"{m.group(1)} packet(s)"
        if l.startswith("ERROR") or l.startswith("error"):
            out["error"] = l
    return {p: ([v[k] for k in sorted(v)] if isinstance(v, dict) else v) for p, v in out.items()}


def write_pcap(path: Path, pkts: list[bytes]):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pkts):
            f.write(struct.pack("<IIII", i, 0, len(p), len(p)) + p)


def read_pcap(path: Path) -> list[str]:
    if not path.exists():
        return []
    data = path.read_bytes()
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off : off + 16])
        out.append(data[off + 16 : off + 16 + incl].hex().upper())
        off += 16 + incl
    return out


def bmv2_outputs(ref: Path, json_path: Path, packets: list, tmp: Path, slot: int) -> dict | None:
    """Runs simple_switch with pcap-file ports until its output stops growing. None when
    simple_switch ended by itself: it aborts (std::out_of_range) on an out-of-range header
    stack index, where the P4_16 specification makes a read unspecified and ignores a write,
    so it is no oracle for such a packet."""
    tmp.mkdir(exist_ok=True)
    for p in PROBE_PORTS:
        write_pcap(tmp / f"p{p}_in.pcap", [b for (port, b) in packets if port == p])
    args = [
        ref / "bin" / "simple_switch",
        "--use-files",
        "0",
        "--thrift-port",
        str(19090 + slot),
        "--device-id",
        str(100 + slot),
        "--notifications-addr",
        f"ipc://{tmp}/notif.ipc",
    ]
    for p in PROBE_PORTS:
        args += ["-i", f"{p}@{tmp}/p{p}"]
    proc = subprocess.Popen(
        [str(a) for a in args] + [str(json_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        last, stable = -1, 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.2)
            size = sum(
                (tmp / f"p{p}_out.pcap").stat().st_size
                for p in PROBE_PORTS
                if (tmp / f"p{p}_out.pcap").exists()
            )
            stable = stable + 1 if size == last else 0
            last = size
            if stable >= 3 and size > 0 or stable >= 6 or proc.poll() is not None:
                break
    finally:
        died = proc.poll() is not None
        if not died:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    if died:
        return None
    return {p: v for p in PROBE_PORTS if (v := read_pcap(tmp / f"p{p}_out.pcap"))}


def one(p4: Path, bins: dict, ref: Path, bmv2: bool, slot: int) -> dict:
    res = {"name": p4.stem, "path": str(p4)}
    stf = p4.with_suffix(".stf")
    text, packets, only_packets = probe_stf(stf.read_text() if stf.exists() else "")
    with tempfile.TemporaryDirectory(prefix="p4c-diff-") as t:
        tmp = Path(t)
        (tmp / "probe.stf").write_text(text)
        rc, out = run([bins["p4c"], p4, "-o", tmp / "ours", "-I", p4.parent])
        ours = tmp / "ours" / (p4.stem + ".json")
        rc2, out2 = p4c_bm2_ss(ref, p4, tmp / "ref.json")
        res["ours_ok"], res["ref_ok"] = rc == 0, rc2 == 0
        if rc != 0 or rc2 != 0:
            # the exit status decides; p4c's warnings (--Wwarn=...) come before its errors
            lines = (out if rc != 0 else out2).strip().splitlines()
            res["msg"] = [l for l in lines if "error" in l.lower()][:2] or lines[:2]
            return res
        _, ra = run([bins["switch"], "stf", ours, tmp / "probe.stf"])
        _, rb = run([bins["switch"], "stf", tmp / "ref.json", tmp / "probe.stf"])
        a, b = outputs(ra), outputs(rb)
        res["a"], res["b"] = a, b
        res["agree"] = a == b
        if only_packets and "error" not in b and (bmv2 or a != b):
            c = bmv2_outputs(ref, tmp / "ref.json", packets, tmp / "c", slot)
            if c is None:
                res["bmv2_aborted"] = True
                return res
            res["c"] = c
            res["bmv2_agree"] = {k: v for k, v in b.items() if isinstance(v, list)} == c
            if a != b:
                # the tie-breaker: BMv2 on our JSON too; equal BMv2 results mean the two
                # JSONs mean the same and sdnperf-switch runs one of them wrongly
                d = bmv2_outputs(ref, ours, packets, tmp / "d", slot)
                res["d"] = d
                res["culprit"] = "compiler" if c != d or d is None else "switch"
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*", type=Path)
    ap.add_argument(
        "--corpus", action="store_true", help="the compiler's corpus (rust/p4c/tests/corpus)"
    )
    ap.add_argument(
        "--generate", type=int, default=0, metavar="N", help="N programs from sdnperf-p4c-fuzz gen"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--bmv2-every",
        type=int,
        default=0,
        metavar="K",
        help="also run BMv2 simple_switch on every K-th program (0: never)",
    )
    ap.add_argument(
        "--keep",
        type=Path,
        default=Path(tempfile.gettempdir()) / "sdnperf-p4c-disagreements",
        help="disagreeing programs are copied here",
    )
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=0,
        help="stop starting new programs after this long (0: no limit); the report counts what ran",
    )
    ap.add_argument("--target", type=Path, default=REPO / "rust" / "target" / "release")
    a = ap.parse_args()

    ref = reference_dir()
    if ref is None:
        print(
            "error: the reference tools are missing ($SDNPERF_BMV2_DIR, PATH or ../shared/p4-reference)",
            file=sys.stderr,
        )
        return 2
    bins = {
        "p4c": a.target / "sdnperf-p4c",
        "switch": a.target / "sdnperf-switch",
        "gen": a.target / "sdnperf-p4c-fuzz",
    }
    for b in bins.values():
        if not b.exists():
            print(
                f"error: {b} missing; build with cargo build --release -p sdnperf-p4c -p sdnperf-switch",
                file=sys.stderr,
            )
            return 2
    progs: list[Path] = []
    for p in a.programs:
        progs += sorted(p.glob("*.p4")) if p.is_dir() else [p]
    if a.corpus:
        progs += sorted((REPO / "rust" / "p4c" / "tests" / "corpus").glob("*.p4"))
    gen_dir = None
    if a.generate:
        gen_dir = Path(tempfile.mkdtemp(prefix="p4c-gen-"))
        rc, out = run(
            [bins["gen"], "gen", "--seed", a.seed, "--count", a.generate, "--out", gen_dir]
        )
        if rc != 0:
            print(f"error: generator failed: {out}", file=sys.stderr)
            return 2
        progs += sorted(gen_dir.glob("*.p4"))
    if not progs:
        ap.error("no programs (give files/directories, --corpus or --generate N)")

    t0 = time.monotonic()
    results = []

    def job(i: int, p: Path):
        if a.max_seconds and time.monotonic() - t0 > a.max_seconds:
            return None
        return one(p, bins, ref, a.bmv2_every > 0 and i % a.bmv2_every == 0, i % 64)

    # SIGTERM like Ctrl-C: running jobs finish (and stop their simple_switch), queued ones are dropped
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    ex = cf.ThreadPoolExecutor(a.jobs)
    interrupted = False
    try:
        futs = [ex.submit(job, i, p) for i, p in enumerate(progs)]
        for i, f in enumerate(cf.as_completed(futs), 1):
            r = f.result()
            if r is not None:
                results.append(r)
            if i % 100 == 0:
                print(
                    f"  {i}/{len(progs)} ({time.monotonic() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        # the programs that finished are still reported (and their disagreements kept)
        interrupted = True
        print("interrupted: reporting the programs that finished", file=sys.stderr)
    finally:
        ex.shutdown(wait=True, cancel_futures=True)
        if gen_dir is not None:
            keep = [
                Path(r["path"])
                for r in results
                if r.get("agree") is False or r.get("bmv2_agree") is False
            ]
            a.keep.mkdir(parents=True, exist_ok=True)
            for k in keep:
                for ext in (".p4", ".stf"):
                    if k.with_suffix(ext).exists():
                        shutil.copy(k.with_suffix(ext), a.keep)
            shutil.rmtree(gen_dir, ignore_errors=True)
    elapsed = time.monotonic() - t0
    results.sort(key=lambda r: r["name"])
    both = [r for r in results if r["ours_ok"] and r["ref_ok"]]
    dis = [r for r in both if not r["agree"] and r.get("culprit") != "switch"]
    sw = [r for r in both if r.get("culprit") == "switch"]
    bm = [r for r in both if "bmv2_agree" in r]
    bm_dis = [r for r in bm if not r["bmv2_agree"]]
    aborted = [r for r in both if r.get("bmv2_aborted")]
    only_ref = [r for r in results if r["ref_ok"] and not r["ours_ok"]]
    only_ours = [r for r in results if r["ours_ok"] and not r["ref_ok"]]
    if len(results) < len(progs):
        why = "interrupted" if interrupted else "time budget reached"
        print(f"{why}: {len(progs) - len(results)} of {len(progs)} programs not run")
    print(
        f"{len(results)} programs in {elapsed:.0f} s: {len(both)} compiled by both, "
        f"{len(dis)} disagree (our JSON vs p4c's JSON; BMv2 confirms where it could run)"
    )
    print(
        f"sdnperf-switch runs the two JSONs differently but BMv2 runs them alike (a switch bug): {len(sw)}"
    )
    print(
        f"BMv2 simple_switch on p4c's JSON: {len(bm)} compared, {len(bm_dis)} disagree with sdnperf-switch"
    )
    if aborted:
        print(
            f"BMv2 simple_switch aborted (an out-of-range stack index) on: {len(aborted)}; "
            "not compared with BMv2"
        )
    print(f"refused by sdnperf-p4c only: {len(only_ref)}; by p4c only: {len(only_ours)}")
    for r in dis:
        extra = f"\n  BMv2 on ours: {r['d']}\n  BMv2 on p4c's: {r['c']}" if "d" in r else ""
        print(f"\nDISAGREE {r['path']}\n  ours: {r['a']}\n  p4c:  {r['b']}{extra}")
    for r in sw:
        print(
            f"\nSWITCH BUG {r['path']}\n  sdnperf-switch, our JSON: {r['a']}\n  sdnperf-switch, p4c's:    {r['b']}"
            f"\n  BMv2 on both: {r['c']}"
        )
    for r in bm_dis:
        print(
            f"\nBMV2 DISAGREES {r['path']}\n  sdnperf-switch: {r['b']}\n  simple_switch:  {r['c']}"
        )
    for r in only_ref:
        print(f"refused by us only: {r['path']}: {' '.join(r.get('msg', []))[:200]}")
    for r in only_ours:
        print(f"refused by p4c only: {r['path']}: {' '.join(r.get('msg', []))[:200]}")
    if gen_dir is not None and (dis or bm_dis):
        print(f"(disagreeing generated programs copied to {a.keep})")
    if interrupted:
        return 130
    return 1 if dis or bm_dis or sw else 0


if __name__ == "__main__":
    sys.exit(main())
