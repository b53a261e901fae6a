"""p4c compile time against input size: programs of N lines of constants (and one of a few
MB) compiled by sdnperf-p4c; prints a table of lines, bytes, seconds and seconds per 10k
lines (flat when the compiler is linear in its input).

    .venv/bin/python bench/p4c/scaling.py [--lines 10000,20000,40000,160000] [--p4c BINARY]

The programs are generated (a v1model skeleton after N `const bit<32> Ci = i;` lines), in a
temporary folder; nothing is kept."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sdnperf import tools  # noqa: E402

SKELETON = """\
header h_t { bit<8> f; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>)(C0 & 1); }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def program(lines: int) -> str:
    head = "#include <core.p4>\n#include <v1model.p4>\n"
    consts = "".join(f"const bit<32> C{i} = {i};\n" for i in range(lines))
    return head + consts + SKELETON


def compile_seconds(p4c: str, source: Path, out: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run([p4c, str(source), "-o", str(out)], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{source.name}: sdnperf-p4c failed: {proc.stderr.strip()[:500]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="10000,20000,40000,160000", help="comma-separated sizes")
    ap.add_argument("--p4c", help="the compiler (default: the one sdnperf finds)")
    args = ap.parse_args()
    p4c = args.p4c or tools.find("sdnperf-p4c")
    sizes = [int(x) for x in args.lines.split(",") if x.strip()]
    load = os.getloadavg()[0]
    print(f"{p4c}; load average {load:.1f} at start")
    print(f"| {'lines':>7} | {'bytes':>10} | {'seconds':>8} | {'s per 10k lines':>15} |")
    print("| ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for lines in sizes:
            source = Path(tmp) / f"consts{lines}.p4"
            source.write_text(program(lines))
            seconds = compile_seconds(p4c, source, Path(tmp) / "out")
            print(
                f"| {lines:>7} | {source.stat().st_size:>10} | {seconds:>8.2f} | "
                f"{seconds / lines * 10_000:>15.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
