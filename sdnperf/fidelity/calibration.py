"""`sdnperf calibrate`'s study files, arithmetic and records: what each architecture delivers
of a configured link on this machine (the networks are run by sdnperf/calibrate.py, above the
runner that this package serves).

Per architecture, two small networks (one switch, three hosts; every link set to the
rate, then to the same rate, delay and loss) run one workload each through the normal run
lifecycle (runner.py, so the link-fidelity monitor of links.py reads the same counters as
in a study):
- rate: h1 and h2 send UDP to h3 at 0.6 x the rate each, so the switch's link to h3 is
  offered 1.2 x its rate; achieved = the port's own departure rate while backlogged (our
  switch's counters), and what h3 received (iperf3's goodput: UDP payload over the sending
  time, so a backlog that drains after the senders stop counts too and can lift it above
  the rate: 11.6 Mbit/s once on a 10 Mbit/s p4 link whose port sent 9.1 when the rate ran
  on the lossy links too);
- delay and loss: 200 pings h1 -> h3 crossing four impaired link directions; achieved delay
  per link = min RTT / 4, loss per link direction = 1 - (1 - ping loss)^(1/4), next to what
  the switch's own counters say (links.py).
An architecture that needs sch_netem for delay/loss, on a kernel without it, is calibrated
for its rate only, and the record says why.

The record is written to a JSON file (default `calibration_path()`, one per host), and
`provenance.collect_provenance` copies the newest one into every study's provenance.
`summarize` is pure.
"""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

DEFAULT_ARCHITECTURES = ("bridge", "openflow", "p4")
PING_COUNT = 200
PING_INTERVAL_S = 0.01
UDP_SECONDS = 2.0
LINKS_PER_PING = 4  # h1-s1 and s1-h3, each crossed both ways


def calibration_path() -> Path:
    """Where this host's calibration lives: $SDNPERF_CALIBRATION, else the user's cache."""
    env = os.environ.get("SDNPERF_CALIBRATION")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sdnperf" / f"calibration-{platform.node() or 'host'}.json"


def load_calibration(path: Path | None = None) -> dict | None:
    """The stored calibration record, or None when there is none (or it cannot be read)."""
    try:
        return json.loads((path or calibration_path()).read_text())
    except (OSError, ValueError):
        return None


def study_text(arch_kind: str, rate: float, delay: float | None, loss: float | None) -> str:
    """The calibration study of one architecture (TOML)."""
    link = [f"bw = {rate:g}"]
    if delay:
        link.append(f"delay_ms = {delay:g}")
    if loss:
        link.append(f"loss_pct = {loss:g}")
    arch = f'name = "{arch_kind}"\nkind = "{arch_kind}"'
    if arch_kind == "p4":
        arch += '\napp = "proactive"'
    nl = "\n"
    return f"""[study]
name = "calibrate-{arch_kind}"
repetitions = 1
[topology]
kind = "single"
hosts = 3
[topology.link]
{nl.join(link)}
[[architecture]]
{arch}
[[workload]]
name = "rate"
kind = "iperf-udp"
pairs = [["h1", "h3"], ["h2", "h3"]]
rate = "{0.6 * rate:g}M"
duration = {UDP_SECONDS:g}
[[workload]]
name = "delay"
kind = "ping"
pairs = [["h1", "h3"]]
count = {PING_COUNT}
interval = {PING_INTERVAL_S:g}
"""


def per_link_loss_pct(path_loss_pct: float, links: int = LINKS_PER_PING) -> float:
    """Loss per link direction from the loss over `links` independent lossy directions."""
    survive = max(0.0, 1.0 - path_loss_pct / 100.0)
    return 100.0 * (1.0 - survive ** (1.0 / links))


def summarize(
    arch: str, configured: dict, rate_run, delay_run, notes: list[str] | None = None
) -> dict:
    """One architecture's record from its two RunResults (either may be None: not run)."""

    def summary(run, metric):
        if run is None or run.status != "ok":
            return None
        return next((s.value for s in run.summaries if s.metric == metric), None)

    achieved: dict = {}
    goodput = summary(rate_run, "throughput_mbps")
    if goodput is not None:
        achieved["rate_mbit"] = round(goodput, 3)
        achieved["rate_share"] = round(goodput / configured["rate_mbit"], 3)
    port = [
        c["measured"]["rate_mbit"]
        for c in (rate_run.cpu.links if rate_run is not None else [])
        if c["link"].endswith("-h3") and "rate_mbit" in c.get("measured", {})
    ]
    if port:
        achieved["port_rate_mbit"] = port[0]
    rtt = summary(delay_run, "rtt_min_ms")
    if rtt is not None:
        achieved["delay_ms"] = round(rtt / LINKS_PER_PING, 4)
        if configured.get("delay_ms"):
            achieved["excess_rtt_ms"] = round(rtt - LINKS_PER_PING * configured["delay_ms"], 4)
    ping_loss = summary(delay_run, "loss_pct")
    if ping_loss is not None and configured.get("loss_pct"):
        achieved["loss_pct"] = round(per_link_loss_pct(ping_loss), 3)
    counted = [
        c["measured"]["loss_pct"]
        for run in (rate_run, delay_run)
        if run is not None
        for c in run.cpu.links
        if "loss_pct" in c.get("measured", {})
    ]
    if counted:
        achieved["port_loss_pct"] = round(sum(counted) / len(counted), 3)
    errors = [r.error for r in (rate_run, delay_run) if r is not None and r.status != "ok"]
    breaches = [r.cpu.link_reason for r in (rate_run, delay_run) if r and r.cpu.link_breach]
    return {
        "architecture": arch,
        "configured": configured,
        "achieved": achieved,
        "link_breaches": breaches,
        "errors": errors,
        "notes": notes or [],
    }


def render(record: dict) -> list[str]:
    """The record as lines for the terminal."""
    lines = []
    for a in record.get("architectures", []):
        c, got = a["configured"], a["achieved"]
        parts = [f"rate {c['rate_mbit']:g} Mbit/s"]
        if "port_rate_mbit" in got:
            parts.append(f"port sent {got['port_rate_mbit']:g} Mbit/s while backlogged")
        parts.append(f"receiver goodput {_num(got.get('rate_mbit'))} Mbit/s")
        if "delay_ms" in c:
            parts.append(f"delay {c['delay_ms']:g} -> {_num(got.get('delay_ms'))} ms per link")
        if "loss_pct" in c:
            parts.append(f"loss {c['loss_pct']:g} -> {_num(got.get('loss_pct'))} % per link")
            if "port_loss_pct" in got:
                parts.append(f"port counters {got['port_loss_pct']:g} %")
        lines.append(f"{a['architecture']}: " + "; ".join(parts))
        lines += [f"  note: {n}" for n in a["notes"]]
        lines += [f"  ⚠ LINK: {b}" for b in a["link_breaches"]]
        lines += [f"  failed: {e}" for e in a["errors"]]
    return lines


def _num(x) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:g}"
