"""Controller benchmark (`sdnperf ctlbench`): emulated OpenFlow 1.3 switches (which connect
to the controller) or P4Runtime devices (which the controller dials) flood a controller
with packet-ins; sent/answered rates, RTT distribution, outstanding packets,
fairness and CPU use go into the same study store and report as every other study.

The load generator is the Rust binary `sdnperf-probe` (rust/probe, JSON schema in its
README.md); this package starts controllers, runs the probe, converts its JSON into
`RunResult`s (convert.py), judges whether the probe rather than the controller was the
bottleneck, and draws the ctlbench plots (plots.py).
"""
