#!/usr/bin/env python3
"""Runs p4c's own v1model STF samples through sdnperf-p4c and through the reference p4c.

    bench/p4c/samples.py P4C_CHECKOUT [--jobs N] [--only SUBSTR] [--json OUT.json]

P4C_CHECKOUT is a checkout (or `git archive`) of p4lang/p4c holding testdata/p4_16_samples;
the samples are read in place and never copied into this repository. Every sample that has an
.stf file and includes v1model.p4 (PSA, eBPF, uBPF, PNA programs are out of scope) is

  ours: compiled by sdnperf-p4c, its STF test run on sdnperf-switch;
  ref:  compiled by p4c-bm2-ss from ../shared/p4-reference (or $SDNPERF_BMV2_DIR; sdnperf.tools.find_bmv2), its
        STF test run on sdnperf-switch (skipped with a note when the reference is absent).

Prints compiled/passed counts for both and the failures by category. The interesting one is
"silent": our compiler accepts the program, the STF test fails, and the reference p4c's JSON
passes on the same switch: a miscompile without an error.
Binaries come from rust/target/release (build them first: cargo build --release -p sdnperf-p4c
-p sdnperf-switch); the reference's JSON is cached under --cache (default /tmp/sdnperf-p4c-ref).
"""

import argparse
import concurrent.futures as cf
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

from reftools import REPO, p4c_bm2_ss, reference_dir, run


def v1model_samples(samples: Path) -> list[Path]:
    out = []
    for stf in sorted(samples.glob("*.stf")):
        p4 = stf.with_suffix(".p4")
        if not p4.exists():
            continue
        text = p4.read_text(errors="replace")
        if "v1model.p4" in text and "psa.p4" not in text:
            out.append(p4)
    return out


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line.lower() or "FAIL" in line or "mismatch" in line.lower():
            return line.strip()[:200]
    lines = [l for l in text.splitlines() if l.strip()]
    return (lines[-1] if lines else "").strip()[:200]


def stf(switch: Path, json_path: Path, stf_path: Path) -> tuple[bool, str]:
    rc, out = run([str(switch), "stf", str(json_path), str(stf_path)])
    return rc == 0, out


def compile_ours(p4c: Path, p4: Path, outdir: Path) -> tuple[Path | None, str]:
    rc, out = run([str(p4c), str(p4), "-o", str(outdir), "-I", str(p4.parent)])
    return (outdir / (p4.stem + ".json") if rc == 0 else None), out


def compile_ref(ref: Path, p4: Path, cache: Path) -> tuple[Path | None, str]:
    key = hashlib.sha256(p4.read_bytes()).hexdigest()[:16]
    cached = cache / f"{p4.stem}.{key}.json"
    err = cache / f"{p4.stem}.{key}.err"
    if cached.exists():
        return cached, ""
    if err.exists():
        return None, err.read_text()
    rc, out = p4c_bm2_ss(ref, p4, cached)
    if rc == 0 and cached.exists():
        return cached, out
    err.write_text(out)
    return None, out


def test(res: dict, who: str, json_path: Path | None, out: str, switch: Path, stf_path: Path):
    """Records `who`_compiled / `who`_passed / `who`_msg for one compiler's output."""
    res[f"{who}_compiled"] = json_path is not None
    if json_path is not None:
        ok, out = stf(switch, json_path, stf_path)
        res[f"{who}_passed"] = ok
    if json_path is None or not ok:
        res[f"{who}_msg"] = first_error(out)


def one(p4: Path, bins: dict, ref: Path | None, cache: Path) -> dict:
    stf_path = p4.with_suffix(".stf")
    res = {"name": p4.stem}
    with tempfile.TemporaryDirectory(prefix="p4c-sample-") as tmp:
        test(res, "ours", *compile_ours(bins["p4c"], p4, Path(tmp)), bins["switch"], stf_path)
    if ref is not None:
        test(res, "ref", *compile_ref(ref, p4, cache), bins["switch"], stf_path)
    return res


def categorize(r: dict, have_ref: bool) -> str:
    if r.get("ours_passed"):
        return "pass"
    ref_ok = r.get("ref_passed")
    if not r["ours_compiled"]:
        if not have_ref:
            return "refused"
        return "refused (p4c compiles)" if r.get("ref_compiled") else "refused (p4c refuses too)"
    if not have_ref:
        return "compiled, STF fails"
    if ref_ok:
        return "SILENT: compiled, STF fails, p4c's JSON passes"
    return (
        "compiled, STF fails (p4c's JSON fails too)"
        if r.get("ref_compiled")
        else "compiled, STF fails (p4c refuses)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("p4c_checkout", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="run only samples whose name contains this")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "sdnperf-p4c-ref")
    ap.add_argument("--json", type=Path, help="also write every result to this file")
    ap.add_argument("--target", type=Path, default=REPO / "rust" / "target" / "release")
    a = ap.parse_args()

    samples_dir = a.p4c_checkout / "testdata" / "p4_16_samples"
    if not samples_dir.is_dir():
        print(f"error: {samples_dir} not found (need a p4lang/p4c checkout)", file=sys.stderr)
        return 2
    bins = {"p4c": a.target / "sdnperf-p4c", "switch": a.target / "sdnperf-switch"}
    for b in bins.values():
        if not b.exists():
            print(f"error: {b} missing; build with cargo build --release", file=sys.stderr)
            return 2
    ref = reference_dir()
    if ref is None:
        print(
            "note: ../shared/p4-reference not found: reference p4c column skipped", file=sys.stderr
        )
    a.cache.mkdir(parents=True, exist_ok=True)
    samples = [p for p in v1model_samples(samples_dir) if a.only in p.stem]
    print(f"{len(samples)} v1model STF samples in {samples_dir}", flush=True)

    t0 = time.monotonic()
    results = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(one, p, bins, ref, a.cache) for p in samples]
        for i, f in enumerate(cf.as_completed(futs), 1):
            results.append(f.result())
            if i % 20 == 0 or i == len(futs):
                print(
                    f"  {i}/{len(futs)} done ({time.monotonic() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    results.sort(key=lambda r: r["name"])

    n = len(results)
    oc = sum(r["ours_compiled"] for r in results)
    op = sum(bool(r.get("ours_passed")) for r in results)
    print(f"ours (sdnperf-p4c + sdnperf-switch): {oc}/{n} compiled, {op}/{n} passed")
    if ref is not None:
        rc_ = sum(bool(r.get("ref_compiled")) for r in results)
        rp = sum(bool(r.get("ref_passed")) for r in results)
        print(f"ref  (p4c-bm2-ss + sdnperf-switch):  {rc_}/{n} compiled, {rp}/{n} passed")
    cats: dict[str, list[dict]] = {}
    for r in results:
        cats.setdefault(categorize(r, ref is not None), []).append(r)
    for cat, rs in sorted(cats.items()):
        if cat == "pass":
            continue
        print(f"\n{cat}: {len(rs)}")
        for r in rs:
            extra = f"   [ref: {r['ref_msg']}]" if r.get("ref_msg") and "p4c" in cat else ""
            print(f"  {r['name']}: {r.get('ours_msg', '')}{extra}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
