"""How much time the lab itself costs: build (until forwarding is ready) and tear-down of
a network, per architecture, on the campus topology and on a 100-switch chain.

Ratios are against the Linux bridge measured in the same run, so figures from different
machines or days compare. Run as root:  .venv/bin/python bench/lab_overhead.py [--reps N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mininet.log import setLogLevel

from sdnperf.arch.config import BridgeConfig, OpenflowConfig, OvsStandaloneConfig
from sdnperf.emulation.cleanup import ensure_tag
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology

ARCHITECTURES = {
    "bridge": BridgeConfig(kind="bridge", name="bridge"),
    "ovs-standalone": OvsStandaloneConfig(kind="ovs-standalone", name="ovs-standalone"),
    "openflow": OpenflowConfig(kind="openflow", name="openflow", app="l2-learning"),
}
TOPOLOGIES = {
    "campus (10 sw, 28 h)": ("campus", {}),
    "linear (100 sw, 100 h)": ("linear", {"switches": 100}),
}


def build_and_tear_down(spec, config, run_dir: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    with started_network(spec, config, run_dir, ready_timeout=300):
        built = time.perf_counter() - t0
        t1 = time.perf_counter()
    return built, time.perf_counter() - t1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    setLogLevel("warning")
    ensure_tag()
    print(
        f"{'topology':24} {'architecture':15} {'build s (mean±sd)':>19} {'× bridge':>9} "
        f"{'tear-down s':>13} {'× bridge':>9}"
    )
    with tempfile.TemporaryDirectory(prefix="sdnperf-bench-") as tmp:
        for label, (kind, params) in TOPOLOGIES.items():
            spec = build_topology(kind, params, seed=1)
            reference = None
            for arch_name, config in ARCHITECTURES.items():
                builds, stops = [], []
                for rep in range(args.reps):
                    b, s = build_and_tear_down(spec, config, Path(tmp) / f"{arch_name}-{rep}")
                    builds.append(b)
                    stops.append(s)
                mb, ms = statistics.mean(builds), statistics.mean(stops)
                sd = statistics.stdev(builds) if len(builds) > 1 else 0.0
                reference = reference or (mb, ms)
                print(
                    f"{label:24} {arch_name:15} {mb:11.2f} ± {sd:5.2f} {mb / reference[0]:9.2f} "
                    f"{ms:13.2f} {ms / reference[1]:9.2f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
