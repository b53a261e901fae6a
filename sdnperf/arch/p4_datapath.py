"""Which data path our P4 switches forward with (the `p4` architecture's `datapath`).

    user  every packet through the switch's user-space engine (AF_PACKET ports, offloads
          carried through with virtio-net headers)
    xdp   the switch's XDP fast path (rust/switch/src/xdpfast): the program, compiled to
          eBPF, runs in each port's XDP hook and forwards in the kernel; what it cannot
          finish (packets to the controller, misses it punts) still reaches the engine
          through the port's AF_XDP socket
    auto  xdp where it can run, else user, with the reason recorded

The fast path cannot run when the program is outside its subset (`sdnperf-switch check`
says why), when a switch port delays, drops, serialises or follows a schedule (the
switch's delay line, random loss and re-timed backlog need the engine; a rate alone runs
on the fast path: the kernel forwards on an idle link and hands the rest to the engine
with its slot on the port's shared link clock, rust/switch xdpfast/shaper.rs), when hosts send offloaded super-packets (AF_XDP ports carry
MTU-sized frames only) or when the kernel refuses AF_XDP / XDP programs (found once the
switches run: their `fastpath` answer). `choose` is the decision before the switches
start; `after_start` the one after; `forwarded_by` what the switches' counters say
actually forwarded a run's packets (a fast path that punts every packet to the engine,
as a program whose actions push or pop headers once did, is the user path at work).
Pure functions; the architecture runs the commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DATAPATHS = ("auto", "xdp", "user")
# the switch flags that put the fast path on (AF_XDP needs frames without vnet headers)
XDP_SWITCH_ARGS = ["--no-vnet", "--xdp-fastpath"]


class DatapathError(ValueError):
    """datapath = "xdp" where the fast path cannot run (said in words, naming the field)."""


@dataclass
class Choice:
    datapath: str  # "xdp" or "user": what the switches are started for
    reason: str  # why (for auto and user too: recorded with each run)


def blockers(
    *, target: str, program_fit: str | None, engine_links: list[str], host_offloads: bool
) -> list[str]:
    """What keeps the fast path from running, known before the switches start.
    `program_fit`: None when the program fits, else the switch's reason."""
    out = []
    if target != "sdnperf":
        out.append(f'target = "{target}" has no XDP fast path (our switch, target = "sdnperf")')
    if program_fit is not None:
        out.append(f"the program is outside the fast path's subset: {program_fit}")
    if engine_links:
        shown = ", ".join(engine_links[:4]) + (" ..." if len(engine_links) > 4 else "")
        out.append(
            f"link(s) {shown} set delay/loss/serialise or a schedule: the switch's delay "
            "line, random loss and scheduled rates need its user-space engine (a bw alone "
            "runs on the fast path)"
        )
    if host_offloads:
        out.append(
            "hosts send offloaded (TSO/GSO) super-packets (study.host_offloads): AF_XDP "
            "ports carry MTU-sized frames only"
        )
    return out


def choose(setting: str, name: str, found: list[str]) -> Choice:
    """The data path for architecture `name` from its `datapath` setting and `blockers`.
    Raises DatapathError for "xdp" with any blocker."""
    if setting == "user":
        return Choice("user", 'datapath = "user"')
    if found:
        if setting == "xdp":
            raise DatapathError(
                f'architecture {name!r}: datapath = "xdp" cannot run here: '
                + "; ".join(found)
                + ' (datapath = "auto" falls back to user space)'
            )
        return Choice("user", "auto: " + "; ".join(found))
    return Choice("xdp", f'datapath = "{setting}": the program fits the XDP fast path')


_STATUS = re.compile(r"^(on|off) forwarded=(\d+) dropped=(\d+) to_engine=(\d+)")


@dataclass
class FastPathStatus:
    running: bool
    on: bool = False
    forwarded: int = 0  # forwarded in the kernel (XDP redirect)
    dropped: int = 0  # dropped in the kernel
    to_engine: int = 0  # handed to the user-space engine (AF_XDP socket)
    why_not: str = ""


def parse_status(text: str) -> FastPathStatus:
    """The switch's `fastpath` ctl answer: "on forwarded=N dropped=N to_engine=N",
    "off ...", or "not running: WHY"."""
    text = text.strip()
    m = _STATUS.match(text)
    if m:
        return FastPathStatus(True, m[1] == "on", int(m[2]), int(m[3]), int(m[4]))
    if text.startswith("not running"):  # "not running: WHY" or "not running (not asked)"
        text = text.removeprefix("not running").lstrip(": ")
    return FastPathStatus(False, why_not=text or "no answer")


def parse_stats(text: str) -> dict[str, int]:
    """The switch's `stats` ctl answer ("rx=N tx=N dropped=N ...") as numbers."""
    out = {}
    for part in text.split():
        key, _, value = part.partition("=")
        if value.isdigit():
            out[key] = int(value)
    return out


def after_start(setting: str, name: str, statuses: dict[str, FastPathStatus]) -> Choice | None:
    """Once the switches run with the fast path requested: None when it runs on every
    switch; else the fallback (auto) or a DatapathError (xdp) naming the switch and why."""
    down = {sw: st for sw, st in statuses.items() if not st.running}
    if not down:
        return None
    sw, st = sorted(down.items())[0]
    why = f"switch {sw}: fast path not running: {st.why_not}"
    if len(down) > 1:
        why += f" (and {len(down) - 1} more switch(es))"
    if setting == "xdp":
        raise DatapathError(
            f'architecture {name!r}: datapath = "xdp": {why} (datapath = "auto" falls back '
            "to user space)"
        )
    return Choice("user", f"auto: {why}; the engine forwards through AF_XDP sockets")


# the kernel's share of the forwarded packets at or above which a run is "xdp", at or
# below which "user"; in between "mixed" (e.g. shaped links: the engine sends what queues)
XDP_SHARE = 0.9
USER_SHARE = 0.1


@dataclass
class Forwarded:
    datapath: str  # "xdp", "user", "mixed", or the started path when nothing was forwarded
    xdp_share: float | None  # kernel-forwarded / all forwarded (None: nothing forwarded)
    reason: str


def forwarded_by(started: Choice, xdp_forwarded: float, engine_tx: float) -> Forwarded:
    """The path that forwarded a run's packets, from the switches' counters: the kernel's
    XDP redirects (`xdp_forwarded`) against what the user-space engine sent (`engine_tx`,
    including packets the fast path handed it). A switch started for the fast path whose
    kernel program forwarded nothing ran the user path."""
    total = xdp_forwarded + engine_tx
    if total <= 0:
        return Forwarded(started.datapath, None, f"{started.reason}; nothing forwarded")
    share = xdp_forwarded / total
    if share >= XDP_SHARE:
        path = "xdp"
    elif share <= USER_SHARE:
        path = "user"
    else:
        path = "mixed"
    reason = started.reason  # the same words for every run of a choice (the report groups)
    if started.datapath == "xdp" and path != "xdp":
        handed = (
            "every packet" if xdp_forwarded == 0 else "most packets" if path == "user" else "part"
        )
        reason = (
            f"started for xdp ({started.reason}), but the kernel program handed the "
            f"user-space engine {handed} (the counters)"
        )
    return Forwarded(path, round(share, 4), reason)
