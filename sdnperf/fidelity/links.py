"""The link-fidelity mark ("⚠ LINK"): did every impaired link do what the study told it?

Why (in the spirit of Mininet-HiFi, Handigol et al., CoNEXT 2012): a study sets a link's
rate, delay and loss, and its figures are read as "on a 10 Mbit/s, 20 ms link ...". That
holds only if the emulator delivered those: a shaper the host cannot serve on time sends
slower than its rate and adds delay of its own; a shaper that is bypassed sends faster.
The CPU mark (cpu.py) sees a saturated machine, not a link that was late.

What is checked, per direction of every impaired link, from counters read before and after
the workload (never from the workload's own figures, which are what is being judged):

- our P4 switch impairs its own ports (`port_impair_show`, rust/switch impair.rs): every
  packet's due time comes from the configured link model (on the XDP fast path a rate-only
  port's packets that find the link idle leave from the kernel at once; the switch adds
  them to offered/released/bytes and reports them as xdp_forwarded; every packet that
  queues goes through the engine on the same link clock, xdpfast/shaper.rs), so
  * rate: while packets queued behind each other for serialisation, the departure spacing
    gives the achieved rate; below (1 - RATE_TOLERANCE) x the configured rate is a breach.
    The switch also sums the spacing the rate in force asked for (busy_model_ns), so the
    share achieved is exact under a rate schedule or a trace too. Only gaps between two
    packets that both waited count (impair.rs, ImpairStats): the first wait of a busy
    period follows a packet that left at once, so its gap holds one timer wake-up's
    latency (judged below as lateness), not the rate; between timer-released packets the
    latencies cancel unless they grow, which is what a rate the host cannot serve does;
  * delay: the mean time a packet left after it was due is added delay the study did not
    ask for; above LATE_SHARE of the configured delay (at least LATE_FLOOR_MS) is a breach;
  * loss: lost / offered against the configured probability, a binomial test at
    LOSS_SIGMAS standard deviations.
  The port's rate is a token bucket (impair.rs `gcra`, with the burst Mininet's htb has,
  links/htb.py): after an idle spell up to `burst` bytes leave at once, faster than the
  rate. That needs no allowance here: the burst's packets did not wait, so they are not in
  the busy spacing (a packet that waited behind one that waited starts exactly one
  serialisation time after it), and their due times are the bucket's, so lateness is
  measured against the model with its burst.
- a kernel shaper (Mininet's htb on the switch's interfaces, bridge and OVS architectures;
  `tc -s -j qdisc show`): the mean departure rate over the workload may not exceed the
  configured rate plus what the bucket's burst adds over the window (burst x 8 / seconds:
  a shaper that held its rate sends at most rate x seconds + burst), else it was bypassed
  or wrongly set; a netem qdisc's drops against its
  loss. tc reports neither departure spacing nor the delay a packet got, so those are not
  judged there (and this machine may lack sch_netem: then there is no netem to read).

A scheduled or traced link (links/schedule.py) is judged against the settings in force
over the workload (`steps_between`, `over_window`): the kernel shaper's mean rate against
the time-mean of the scheduled rate (what it could have sent at most), the switch's rate
from its own busy_model_ns, lateness against the time-mean delay, and the lost share against
the lowest and highest scheduled loss (how the offered packets spread over the schedule is
not known, so any loss between the two is what the schedule asked for).

The arithmetic (`judge_switch_end`, `judge_tc_end`, `over_window`, the parsers) is pure;
`LinkMonitor` reads the counters of a started network.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from dataclasses import asdict, dataclass, field, replace

from sdnperf.links import htb
from sdnperf.links.schedule import Setting, flow_of, steps_between

# ---- When did a link not do what it was told? ----------------------------------------
RATE_TOLERANCE = 0.10  # achieved rate while busy below 90 % (or mean above 110 %) of the rate
MIN_BUSY_PACKETS = 50  # fewer back-to-back departures say nothing about spacing
LATE_SHARE = 0.10  # mean lateness above 10 % of the configured delay ...
LATE_FLOOR_MS = 0.5  # ... and above 0.5 ms (a ping on an unimpaired path takes ~0.1 ms)
MIN_PACKETS = 20  # fewer released packets judge nothing (a few pings of the readiness check)
LOSS_SIGMAS = 4.0  # binomial test on lost / offered
# lateness up to this many times the switch's run-queue wait is what waiting for a CPU
# does (attribute_lateness: measured 2.5-5.9; a stopped switch: 39-1077)
WAITING_ACCOUNTS = 10.0
# ----------------------------------------------------------------------------------------


@dataclass
class LinkEnd:
    """One direction of one impaired link, where it is impaired."""

    link: str  # "s1-h2": the study's link
    where: str  # "s1 port 2 out", "s1-eth2 (tc)"
    rate_mbit: float | None = None  # as configured in the study (scheduled: time-means)
    delay_ms: float | None = None
    loss_pct: float | None = None
    flow: str | None = None  # the scheduled direction ("h1-s1 up"), None when static
    loss_range_pct: tuple[float, float] | None = None  # scheduled: lowest, highest loss
    burst_bytes: int = 0  # the shaper's token bucket: bytes it may send at once (htb.py)


@dataclass
class LinkCheck:
    """What one link end was told and what it did, and whether that is a breach."""

    link: str
    where: str
    packets: int  # released (switch) or sent (tc) during the workload
    configured: dict = field(default_factory=dict)  # rate_mbit, delay_ms, loss_pct (set ones)
    measured: dict = field(default_factory=dict)  # same keys (what could be measured) + extras
    breach: bool = False
    reason: str = ""  # in words, with the numbers
    late: bool = False  # the breach is (among others) packets that left after they were due

    def record(self) -> dict:
        return asdict(self)


# -- parsing ------------------------------------------------------------------------------

_SHOW_LINE = re.compile(r"^port (\d+) (in|out): (\S+)\s*(.*)$")


def parse_impair_show(text: str) -> dict[tuple[int, str], dict[str, int]]:
    """`port_impair_show` -> {(port, "in"|"out"): counters}. Lines of an older switch
    (without the counters) give only held/lost/full."""
    out: dict[tuple[int, str], dict[str, int]] = {}
    for line in text.splitlines():
        m = _SHOW_LINE.match(line.strip())
        if not m:
            continue
        counters = {}
        for part in m.group(4).split():
            key, _, value = part.partition("=")
            if value.isdigit():
                counters[key] = int(value)
        out[(int(m.group(1)), m.group(2))] = counters
    return out


def parse_tc_qdiscs(text: str) -> dict[str, dict[str, dict]]:
    """`tc -s -j qdisc show` -> {interface: {kind: stats}} for the htb, tbf and netem
    qdiscs (stats: bytes, packets, drops, overlimits, backlog, qlen, and netem's loss)."""
    try:
        rows = json.loads(text or "[]")
    except json.JSONDecodeError:
        return {}
    out: dict[str, dict[str, dict]] = {}
    for row in rows if isinstance(rows, list) else []:
        kind, dev = row.get("kind"), row.get("dev")
        if kind not in ("htb", "tbf", "netem") or not dev:
            continue
        stats = {k: row.get(k, 0) for k in ("bytes", "packets", "drops", "overlimits")}
        stats["backlog"] = row.get("backlog", 0)
        options = row.get("options") or {}
        if kind == "netem":
            stats["loss_pct"] = _netem_loss_pct(options)
        out.setdefault(dev, {})[kind] = stats
    return out


def _netem_loss_pct(options: dict) -> float | None:
    loss = options.get("loss-random") or options.get("loss")
    if isinstance(loss, dict):
        loss = loss.get("loss")
    try:
        return 100.0 * float(loss) if loss is not None else None
    except (TypeError, ValueError):
        return None


def delta(after: dict[str, int], before: dict[str, int] | None) -> dict[str, int]:
    """Counters over the workload: after - before (a port impaired after the first read
    counts from zero; maxima are not differences and are taken as read after)."""
    before = before or {}
    return {
        k: (v if k.endswith("_max_ns") else v - before.get(k, 0))
        for k, v in after.items()
        if isinstance(v, int)
    }


# -- judging ------------------------------------------------------------------------------


def binomial_outside(
    lost: int, offered: int, p: float, sigmas: float = LOSS_SIGMAS, p_high: float | None = None
) -> bool:
    """True when `lost` of `offered` is too far from offered x p to come from loss p; with
    `p_high`, too far below offered x p or too far above offered x p_high (any loss
    probability between the two explains it)."""
    if offered <= 0:
        return False
    p_high = p if p_high is None else p_high

    def band(q: float) -> float:
        return sigmas * math.sqrt(offered * q * (1 - q)) + 1  # +1: one packet never decides

    return lost < offered * p - band(p) or lost > offered * p_high + band(p_high)


def over_window(steps: list[tuple[float, Setting]], end: float) -> dict[str, float | None]:
    """What (from time, setting) steps asked for until `end`: time-mean rate (None when any
    step is unshaped) and delay, lowest and highest loss. A zero-length window is its first
    step."""
    if not steps:
        return {}
    bounds = [t for t, _ in steps[1:]] + [max(end, steps[-1][0])]
    weights = [max(b - t, 0.0) for (t, _), b in zip(steps, bounds, strict=True)]
    total = sum(weights)
    if total <= 0:
        weights, total = [1.0] + [0.0] * (len(steps) - 1), 1.0
    rates = [s.rate_mbps for _, s in steps]
    rate = (
        None
        if any(r is None for r in rates)
        else sum(w * r for w, r in zip(weights, rates, strict=True) if r is not None) / total
    )
    delay = sum(w * s.delay_ms for w, (_, s) in zip(weights, steps, strict=True)) / total
    losses = [s.loss_pct for w, (_, s) in zip(weights, steps, strict=True) if w > 0]
    return {
        "rate_mbit": rate,
        "delay_ms": delay,
        "loss_min_pct": min(losses),
        "loss_max_pct": max(losses),
    }


def scheduled_end(end: LinkEnd, steps: list[tuple[float, Setting]], until: float) -> LinkEnd:
    """`end` with what its schedule asked for over the window of `steps` .. `until`; only
    the scheduled side of an end keeps its quantities (an ingress side takes no rate)."""
    w = over_window(steps, until)
    if not w:
        return end
    lo, hi = w["loss_min_pct"] or 0.0, w["loss_max_pct"] or 0.0
    return replace(
        end,
        rate_mbit=(round(w["rate_mbit"], 6) or None)
        if end.rate_mbit is not None and w["rate_mbit"] is not None
        else None,
        delay_ms=round(w["delay_ms"] or 0.0, 6) or None,
        loss_pct=round((lo + hi) / 2, 6) or None,
        loss_range_pct=(lo, hi) if hi > 0 else None,
    )


def judge_switch_end(end: LinkEnd, c: dict[str, int]) -> LinkCheck:
    """Judge one switch port side from its counter deltas (see the module doc)."""
    released = c.get("released", 0)
    check = LinkCheck(end.link, end.where, released, configured=_configured(end))
    reasons: list[str] = []
    if end.rate_mbit:
        busy, span = c.get("busy_packets", 0), c.get("busy_span_ns", 0)
        model = c.get("busy_model_ns")
        if busy >= MIN_BUSY_PACKETS and span > 0 and (model is not None or not end.flow):
            achieved = c.get("busy_bytes", 0) * 8 / span * 1e3  # bits/ns = Gbit/s -> Mbit/s
            # the share of the rate in force achieved: exact from the switch's own sum of
            # the spacing the rate asked for; an older switch: against the configured rate
            share = model / span if model is not None else achieved / end.rate_mbit
            check.measured["rate_mbit"] = round(achieved, 3)
            check.measured["rate_share"] = round(share, 4)
            check.measured["busy_packets"] = busy
            if share < 1 - RATE_TOLERANCE:
                told = (
                    f"{share:.0%} of the rate in force (scheduled {end.rate_mbit:g} Mbit/s "
                    "on average)"
                    if end.flow
                    else f"configured {end.rate_mbit:g} Mbit/s ({share:.0%})"
                )
                reasons.append(f"sent at {achieved:.3g} Mbit/s while packets queued for it, {told}")
    if released >= MIN_PACKETS:
        late_ms = c.get("late_ns", 0) / released / 1e6
        model_ms = c.get("model_delay_ns", 0) / released / 1e6
        check.measured["added_delay_ms"] = round(model_ms + late_ms, 4)
        check.measured["late_ms"] = round(late_ms, 4)
        check.measured["late_max_ms"] = round(c.get("late_max_ns", 0) / 1e6, 3)
        allowed = max(LATE_SHARE * (end.delay_ms or 0.0), LATE_FLOOR_MS)
        if late_ms > allowed:
            check.late = True
            configured = f"configured {end.delay_ms:g} ms" if end.delay_ms else "no delay set"
            reasons.append(
                f"packets left {late_ms:.2f} ms after they were due on average (max "
                f"{check.measured['late_max_ms']:g} ms), added delay {model_ms + late_ms:.2f} "
                f"ms ({configured}, queueing included), over {released} packets"
            )
    offered = c.get("offered", 0)
    if end.loss_pct and offered >= MIN_PACKETS:
        lost = c.get("lost", 0)
        check.measured["loss_pct"] = round(100.0 * lost / offered, 3)
        if _loss_outside(end, lost, offered):
            reasons.append(
                f"lost {lost} of {offered} packets ({100.0 * lost / offered:.2f} %), "
                f"{_told_loss(end)}"
            )
    if c.get("full"):
        check.measured["queue_full_drops"] = c["full"]
    if c.get("xdp_forwarded"):
        # of the released ones, sent by the XDP fast path on an idle link (on time, never
        # queued: in released and bytes, not in the busy spacing or lateness)
        check.measured["xdp_forwarded"] = c["xdp_forwarded"]
    check.breach, check.reason = bool(reasons), "; ".join(reasons)
    return check


def judge_tc_end(end: LinkEnd, c: dict[str, dict], seconds: float) -> LinkCheck:
    """Judge one kernel-shaped interface from its qdiscs' counter deltas over `seconds`."""
    shaper = c.get("htb") or c.get("tbf") or {}
    netem = c.get("netem") or {}
    sent = int(shaper.get("packets", 0) or netem.get("packets", 0))
    check = LinkCheck(end.link, end.where, sent, configured=_configured(end))
    reasons: list[str] = []
    if end.rate_mbit and shaper and seconds > 0 and sent >= MIN_PACKETS:
        mean = shaper.get("bytes", 0) * 8 / seconds / 1e6
        check.measured["mean_rate_mbit"] = round(mean, 3)
        # a token bucket that held its rate sends at most rate x seconds + burst
        burst_mbit = end.burst_bytes * 8 / seconds / 1e6
        if mean > (1 + RATE_TOLERANCE) * end.rate_mbit + burst_mbit:
            told = "scheduled rate's mean" if end.flow else "configured"
            reasons.append(
                f"sent {mean:.3g} Mbit/s on average over {seconds:.1f} s, above the "
                f"{told} {end.rate_mbit:g} Mbit/s (and its {end.burst_bytes} B burst): "
                "the shaper did not hold"
            )
        if shaper.get("drops"):
            check.measured["queue_drops"] = shaper["drops"]
    if end.loss_pct and netem:
        offered = int(netem.get("packets", 0)) + int(netem.get("drops", 0))
        lost = int(netem.get("drops", 0))
        if offered >= MIN_PACKETS:
            check.measured["loss_pct"] = round(100.0 * lost / offered, 3)
            if _loss_outside(end, lost, offered):
                reasons.append(
                    f"netem dropped {lost} of {offered} packets "
                    f"({100.0 * lost / offered:.2f} %), {_told_loss(end)}"
                )
    check.breach, check.reason = bool(reasons), "; ".join(reasons)
    return check


def _loss_outside(end: LinkEnd, lost: int, offered: int) -> bool:
    if end.loss_range_pct is not None:
        lo, hi = end.loss_range_pct
        return binomial_outside(lost, offered, lo / 100.0, p_high=hi / 100.0)
    return binomial_outside(lost, offered, (end.loss_pct or 0.0) / 100.0)


def _told_loss(end: LinkEnd) -> str:
    if end.loss_range_pct is not None:
        lo, hi = end.loss_range_pct
        return f"scheduled {lo:g} .. {hi:g} %"
    return f"configured {end.loss_pct:g} %"


def _configured(end: LinkEnd) -> dict:
    out: dict[str, object] = {
        k: v
        for k, v in (
            ("rate_mbit", end.rate_mbit),
            ("delay_ms", end.delay_ms),
            ("loss_pct", end.loss_pct),
        )
        if v
    }
    if end.flow:
        out["scheduled"] = end.flow  # the values are the schedule's over the workload
        if end.loss_range_pct is not None:
            out["loss_range_pct"] = list(end.loss_range_pct)
    return out


def attribute_lateness(checks: list[LinkCheck], waits: str, waited_ms: float | None = None) -> None:
    """Adds to each lateness breach what the same run's CPU accounts say about waiting
    for a CPU (`waits`, fidelity/cpu.py `waits_in_words`; "" adds nothing) and, with the
    switch's run-queue time `waited_ms`, its lateness per ms of that wait
    (`measured["late_per_wait"]`: the packets' summed lateness / the switch's wait).

    Why: a switch woken on time that then waits on a run queue releases late while no
    core is saturated, which the CPU mark does not see. The mark stays (the packets were
    late); the words tell the reader what the machine was doing meanwhile. The ratio
    tells waiting from a switch that was stopped or slept past its deadlines: a wait of
    w holds every packet due during it, so lateness is a few times the wait (measured at
    20 Mbit/s, XDP path, load 3-7 on 2 cores: 2.5-5.9 in 43 runs), while a switch stopped
    for 0.6 s was late 39-1077 times longer than it waited (8 runs, test_link_fidelity's
    stalls included). Both are totals over the run: a short stall in a long run whose
    switch waited a lot can hide behind the waiting."""
    if not waits:
        return
    for c in checks:
        if not c.late:
            continue
        if waited_ms and "late_ms" in c.measured:
            ratio = c.measured["late_ms"] * c.packets / waited_ms
            c.measured["late_per_wait"] = round(ratio, 2)
            said = (
                "waiting for a CPU accounts for it"
                if accounted_by_waiting(c.measured)
                else "more than waiting for a CPU accounts for"
            )
            c.reason += f" (meanwhile {waits}: {ratio:.3g} ms late for every ms it waited, {said})"
        else:
            c.reason += f" (meanwhile {waits})"


def accounted_by_waiting(measured: dict) -> bool:
    """Whether a late end's lateness is what its switch's waiting for a CPU does (its
    `late_per_wait` from attribute_lateness within WAITING_ACCOUNTS)."""
    ratio = measured.get("late_per_wait")
    return ratio is not None and ratio <= WAITING_ACCOUNTS


def summarize(checks: list[LinkCheck]) -> tuple[bool, str]:
    """(any breach, the breaches in words, one per link end)."""
    broken = [c for c in checks if c.breach]
    return bool(broken), "; ".join(f"link {c.link} at {c.where}: {c.reason}" for c in broken)


# -- reading a started network ------------------------------------------------------------


def _link_attrs(graph, a: str, b: str) -> dict:
    return graph.edges[a, b] if graph.has_edge(a, b) else {}


def _number(value) -> float | None:
    return float(value) if value else None


class LinkMonitor:
    """Reads the impaired link ends' counters of a started network before (`start`) and
    after (`stop`) the workload. Ends on our P4 switch are read from the switch; ends on a
    kernel interface of the root namespace (the switches' side of a Mininet TCLink) from
    tc. Hosts' ends (tc inside each host) are the same kernel htb for every architecture and
    are not read. Never raises out of `stop`: a counter that cannot be read is a note."""

    def __init__(self, spec, net):
        self.spec, self.net = spec, net
        self.switch_ends: dict[object, dict[tuple[int, str], LinkEnd]] = {}
        self.tc_ends: dict[str, LinkEnd] = {}
        self.notes: list[str] = []
        self._before_sw: dict[object, dict] = {}
        self._before_tc: dict[str, dict] = {}
        self._t0 = 0.0
        self.hz = htb.host_hz()  # tc's clock rate, for Mininet's htb burst
        self._find_ends()

    def _find_ends(self) -> None:
        graph = self.spec.graph
        for sw in getattr(self.net, "switches", []):
            own = getattr(sw, "target", None) == "sdnperf" and hasattr(sw, "ctl")
            for intf, port in getattr(sw, "ports", {}).items():
                link = getattr(intf, "link", None)
                if link is None:
                    continue
                other = link.intf2 if link.intf1 is intf else link.intf1
                attrs = _link_attrs(graph, sw.name, other.node.name)
                rate = _number(attrs.get("bw"))
                delay, loss = _number(attrs.get("delay_ms")), _number(attrs.get("loss_pct"))
                sends = flow_of(self.spec, sw.name, other.node.name)
                receives = flow_of(self.spec, other.node.name, sw.name)
                if not (rate or delay or loss or sends or receives):
                    continue
                name = f"{sw.name}-{other.node.name}"
                if own:
                    ends = self.switch_ends.setdefault(sw, {})
                    ends[(port, "out")] = LinkEnd(
                        name, f"{sw.name} port {port} out ({intf.name})", rate, delay, loss, sends
                    )
                    # the host end's delay/loss, taken by the switch port's ingress
                    # when the kernel lacks sch_netem (arch/p4.py impair_switch_ports)
                    ends[(port, "in")] = LinkEnd(
                        f"{other.node.name}-{sw.name}",
                        f"{sw.name} port {port} in ({intf.name})",
                        None,
                        delay,
                        loss,
                        receives,
                    )
                else:
                    self.tc_ends[intf.name] = LinkEnd(
                        name,
                        f"{intf.name} (tc)",
                        rate,
                        delay,
                        loss,
                        sends,
                        burst_bytes=htb.htb_burst_bytes(rate, self.hz) if rate else 0,
                    )

    @property
    def watches_anything(self) -> bool:
        return bool(self.switch_ends or self.tc_ends)

    def start(self) -> None:
        import time

        self._t0 = time.monotonic()
        self._before_sw = {sw: self._read_switch(sw) for sw in self.switch_ends}
        self._before_tc = self._read_tc() if self.tc_ends else {}

    def stop(self, traffic_start: float | None = None) -> list[LinkCheck]:
        """Judge the ends; `traffic_start`: time.monotonic() at which the link schedules
        started (their t = 0; None: never started, the links kept their t = 0 setting)."""
        import time

        now = time.monotonic()
        seconds = now - self._t0
        window = (
            (0.0, 0.0)
            if traffic_start is None
            else (
                self._t0 - traffic_start,
                now - traffic_start,
            )
        )
        checks: list[LinkCheck] = []
        for sw, ends in self.switch_ends.items():
            after = self._read_switch(sw)
            for key, end in ends.items():
                if key not in after:
                    continue  # an "in" side exists only without sch_netem
                end = self._in_force(end, window)
                checks.append(
                    judge_switch_end(end, delta(after[key], self._before_sw.get(sw, {}).get(key)))
                )
        if self.tc_ends:
            after_tc = self._read_tc()
            for intf, end in self.tc_ends.items():
                end = self._in_force(end, window)
                if intf not in after_tc:
                    self.notes.append(f"{intf}: no htb/tbf/netem qdisc found")
                    continue
                before = self._before_tc.get(intf, {})
                diff = {kind: delta(s, before.get(kind)) for kind, s in after_tc[intf].items()}
                for kind, s in after_tc[intf].items():  # loss is a setting, not a counter
                    if "loss_pct" in s:
                        diff[kind]["loss_pct"] = s["loss_pct"]
                checks.append(judge_tc_end(end, diff, seconds))
        return checks

    def _in_force(self, end: LinkEnd, window: tuple[float, float]) -> LinkEnd:
        """A scheduled end with what its schedule asked for over the window."""
        if not end.flow:
            return end
        return scheduled_end(end, steps_between(self.spec, end.flow, *window), window[1])

    def _read_switch(self, sw) -> dict:
        try:
            return parse_impair_show(sw.ctl("port_impair_show"))
        except Exception as exc:  # a switch that cannot answer: its figures stand unjudged
            self.notes.append(f"{sw.name}: port_impair_show failed: {exc}")
            return {}

    def _read_tc(self) -> dict:
        try:
            proc = subprocess.run(
                ["tc", "-s", "-j", "qdisc", "show"], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.notes.append(f"tc -s qdisc show failed: {exc}")
            return {}
        return parse_tc_qdiscs(proc.stdout)
