"""One architecture's network lifecycle alone (no workload), repeated: where the build, the
start-up and the stop spend their time, finer than profile.py (Mininet's addHost,
addSwitch, addLink, configHosts; the architecture's steps; the stop).

    /work/tools/nsrun .venv/bin/python bench/study_phases/lifecycle.py [ARCH] [N]

ARCH: an architecture of the default study (bridge, openflow, p4; default bridge);
N: how many networks (default 3). Prints mean seconds per network per phase."""

from __future__ import annotations

import collections
import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(arch_name: str = "bridge", count: int = 3) -> int:
    import mininet.net

    import sdnperf.emulation.network as network
    import sdnperf.runner as runner
    from sdnperf.arch import bridge, ovs, p4
    from sdnperf.controllers import process
    from sdnperf.study.loader import load_study

    phase: dict[str, float] = collections.defaultdict(float)

    def timed(owner, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:  # an older sdnperf (A/B against main): not timed
            return

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            t = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                phase[label] += time.monotonic() - t

        setattr(owner, name, wrapper)

    for cls in (bridge.BridgeArchitecture, ovs.OpenflowArchitecture, p4.P4Architecture):
        for step in ("prepare", "network_started", "wait_ready", "before_network_stop", "stop"):
            timed(cls, step, f"arch.{step}")
    for step in ("build", "addHost", "addSwitch", "addLink", "configHosts", "start", "stop"):
        timed(mininet.net.Mininet, step, f"mn.{step}")
    import mininet.link
    import mininet.node

    import sdnperf.emulation.batched_links as batched_links
    import sdnperf.emulation.parallel_build as parallel_build

    for step in ("_add_hosts", "_add_switches", "_add_links", "configHosts", "stop"):
        timed(parallel_build.ParallelMininet, step, f"pmn.{step}")
    timed(batched_links, "delete_root_ends", "stop.delete_root_ends")
    timed(mininet.node.Node, "terminate", "stop.Node.terminate")
    from sdnperf.emulation import p4switch

    timed(p4switch.P4Switch, "stop", "stop.P4Switch.stop")
    timed(p4switch.P4Switch, "batchShutdown", "stop.P4Switch.batchShutdown")
    timed(mininet.link.Link, "stop", "stop.Link.stop")
    timed(p4switch, "stop_process_group", "stop.p4.stop_process_group")
    timed(mininet.node.Switch, "stop", "stop.Switch.stop")
    timed(p4switch.P4Switch, "wait_listening", "p4.wait_listening")
    timed(p4switch.P4Switch, "ctl", "p4.P4Switch.ctl")
    timed(p4, "switch_counters", "p4.switch_counters")
    timed(p4, "all_counters", "p4.all_counters")
    for step in ("release", "signal_stop", "spawn", "wait_started", "stop"):
        timed(process.ControllerProcess, step, f"controller.{step}")
    for step in ("_wait_our_controller", "impair_switch_ports"):
        timed(p4.P4Architecture, step, f"p4.{step}")
    timed(network.Network, "_delete_registered", "stop._delete_registered")
    timed(network.Network, "start", "Network.start")
    timed(network.Network, "stop", "Network.stop")

    runner.quiet_mininet()
    study = load_study(None)
    config = next(a for a in study.config.architecture if a.name == arch_name)
    rows = []
    for _ in range(count):
        phase.clear()
        t = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            with runner.started_network(study.topology, config, Path(tmp), host_offloads=False):
                phase["(ready)"] = time.monotonic() - t
        phase["TOTAL"] = time.monotonic() - t
        rows.append(dict(phase))
    for label in sorted(rows[0], key=lambda k: (k != "TOTAL", k)):
        values = [r.get(label, 0.0) for r in rows]
        print(
            f"{label:28s} {statistics.mean(values):7.2f}  ({', '.join(f'{v:.2f}' for v in values)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(*(sys.argv[1:2] or ["bridge"]), *(int(a) for a in sys.argv[2:3])))
