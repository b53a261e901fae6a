"""Follows the clock during a workload: at each change time of each scheduled direction it
applies the setting (apply.py) and records what it applied, when, as samples:

    link_rate_mbps, link_delay_ms, link_jitter_ms, link_loss_pct
    flow = "h1-s1 up", t = seconds from traffic start (as iperf3's per-second samples)

A sample is written at t = 0 for every quantity a direction has, and again whenever one
changes, at the moment the change took effect (after tc or the switch accepted it). The
configured value at any t is DirectionPlan.setting_at(t) (what a fidelity check compares
the achieved rate/delay/loss with); `applied_at(samples, flow, metric, t)` reads the
recorded series back.
"""

from __future__ import annotations

import heapq
import threading
import time
from typing import Callable, Iterator

from sdnperf.links.apply import Applier
from sdnperf.links.schedule import DirectionPlan, Setting
from sdnperf.samples import Sample

METRICS = {
    "rate_mbps": ("link_rate_mbps", "Mbit/s"),
    "delay_ms": ("link_delay_ms", "ms"),
    "jitter_ms": ("link_jitter_ms", "ms"),
    "loss_pct": ("link_loss_pct", "%"),
}


def applied_at(samples: list[Sample], flow: str, metric: str, t: float) -> float | None:
    """The value of a recorded link series at time t (the last change at or before t)."""
    value = None
    for s in sorted((s for s in samples if s.flow == flow and s.metric == metric), key=_t):
        if _t(s) > t:
            break
        value = s.value
    return value


def _tagged(plan: DirectionPlan, i: int) -> Iterator[tuple[float, int]]:
    """(time, index) of each change of one direction (a function, so `i` is bound now)."""
    for t in plan.change_times():
        yield t, i


def _t(sample: Sample) -> float:
    return sample.t if sample.t is not None else 0.0


class LinkScheduler:
    """One run's schedule: start() at traffic start (idempotent), stop() at its end."""

    def __init__(
        self,
        directions: list[tuple[DirectionPlan, Applier]],
        workload: str,
        log: Callable[[str], None] = lambda msg: None,
    ):
        self.directions, self.workload, self.log = directions, workload, log
        self.samples: list[Sample] = []
        self.error: Exception | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._last: dict[int, Setting] = {}

    def start(self) -> None:
        if self._thread is not None or not self.directions:
            return
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._follow, name="link-schedule", daemon=True)
        self._thread.start()

    @property
    def started_at(self) -> float | None:
        """time.monotonic() of the schedule's t = 0 (None: not started, or nothing to
        follow)."""
        return self._t0 if self._thread is not None else None

    def stop(self) -> list[Sample]:
        """Stop following; the samples recorded. Raises the first failure to apply."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.error is not None:
            raise RuntimeError(f"link schedule could not be applied: {self.error}")
        return list(self.samples)

    def _follow(self) -> None:
        events = heapq.merge(*(_tagged(d, i) for i, (d, _) in enumerate(self.directions)))
        try:
            for t, i in events:
                wait = self._t0 + t - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    return
                if self._stop.is_set():
                    return
                self._apply(i, t)
        except Exception as exc:  # stored: stop() fails the run with it
            self.error = exc
            self.log(f"  link schedule: {exc}")

    def _apply(self, i: int, t: float) -> None:
        plan, applier = self.directions[i]
        setting = plan.setting_at(t)
        last = self._last.get(i)
        if setting == last:
            return
        applier(setting)
        self._last[i] = setting
        at = round(time.monotonic() - self._t0, 4)
        for quantity, (metric, unit) in METRICS.items():
            if quantity not in plan.curves and last is not None:
                continue
            value = getattr(setting, quantity)
            if value is None or (last is not None and getattr(last, quantity) == value):
                continue
            if last is None and quantity not in plan.curves and not value:
                continue  # an unscheduled quantity at 0: nothing to draw
            self.samples.append(
                Sample(self.workload, metric, float(value), unit, plan.label, "", at)
            )
