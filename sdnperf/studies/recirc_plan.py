"""How many recirculation passes for a target delay: the linear fit delay = a + b·N of
measured (N, delay) points and its inverse, with the uncertainty the fit carries; the
design that makes that inverse an interpolation (a pilot's cost per pass -> geometric N
values that reach past the target); the bootstrap CIs of the delay a verifying run achieved.

    fit = fit_linear([0, 0, 1, 1, 3, 3], [0.98, 1.01, 1.66, 1.70, 2.97, 3.05])
    plan = passes_for(fit, target=5.0, added=True)   # hold packets back by 5 (same unit)
    plan.bracketed                                   # False: N = 7.4 lies beyond N = 3
    bracket_passes({"one-switch": 0.001}, [5.0])     # [0, 1250, 2500, 5000, 10000]
    achieved(rtts_at_n, rtts_at_0, "mean")           # (added delay, (CI low, CI high))
    step_between([(6357, 3.8), (6748, 7.35)], 5.0, 10)  # Step: 5 ms lies on a step of the curve
    speeds_of([4.6, 4.6, 7.5, 7.6, 4.6])             # Speeds: 40 % of the pings ran slow

Pure numbers: no store, no files (the command that reads a study is recirc_cli.py).

The interval of N comes from the confidence intervals of a and b (t quantiles with n-2
degrees of freedom): the extreme N over every (a, b) in the box of the two intervals. That
ignores the correlation of a and b, so it is conservative (wider than a joint region).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scipy import stats


class PlanError(ValueError):
    pass


@dataclass(frozen=True)
class LinearFit:
    a: float  # intercept: the delay with no recirculation
    b: float  # slope: delay added per pass
    a_ci: tuple[float, float]
    b_ci: tuple[float, float]
    r2: float
    n: int  # points fitted
    confidence: float
    span: tuple[float, float] = (0.0, 0.0)  # the smallest and largest N fitted

    def at(self, passes: float) -> float:
        return self.a + self.b * passes


@dataclass(frozen=True)
class Plan:
    target: float
    added: bool  # target is the delay added by recirculation (else the total)
    passes: int  # smallest whole N whose fitted delay reaches the target
    estimate: float  # the exact N on the fitted line
    interval: tuple[int, int | None]  # whole N from the CIs; None: no upper bound (slope may be 0)
    fit: LinearFit
    measured: tuple[float, float] = (0.0, 0.0)  # the smallest and largest N fitted

    @property
    def bracketed(self) -> bool:
        """The N found lies between measured N: an interpolation, not an extrapolation."""
        return self.measured[0] <= self.estimate <= self.measured[1]

    def sentence(self, unit: str = "ms") -> str:
        f = self.fit
        what = "An added" if self.added else "A total"
        hi = (
            "unbounded (the slope's CI reaches 0)"
            if self.interval[1] is None
            else str(self.interval[1])
        )
        return (
            f"each pass adds {f.b:.4g} {unit} ({f.confidence:.0%} CI {f.b_ci[0]:.4g} .. "
            f"{f.b_ci[1]:.4g}); base {f.a:.4g} {unit} (CI {f.a_ci[0]:.4g} .. {f.a_ci[1]:.4g}); "
            f"R² = {f.r2:.3f}, {f.n} points. {what} delay of {self.target:g} {unit} needs "
            f"N = {self.passes} passes (fit: {self.estimate:.1f}; from the CIs: "
            f"{self.interval[0]} .. {hi})"
        )


def fit_linear(passes, delays, confidence: float = 0.95) -> LinearFit:
    """delay = a + b·N by least squares, with confidence intervals of a and b."""
    x, y = [float(v) for v in passes], [float(v) for v in delays]
    if len(x) != len(y):
        raise PlanError(f"{len(x)} pass counts but {len(y)} delays")
    if not all(math.isfinite(v) for v in x + y):
        raise PlanError("passes and delays must be finite numbers")
    if len(set(x)) < 2:
        raise PlanError(f"a fit needs at least 2 different pass counts (got {sorted(set(x))})")
    if len(x) < 3:
        raise PlanError(f"a fit with confidence intervals needs at least 3 points (got {len(x)})")
    if not 0 < confidence < 1:
        raise PlanError(f"confidence {confidence} must be between 0 and 1")
    r = stats.linregress(x, y)
    t = stats.t.ppf((1 + confidence) / 2, len(x) - 2)
    da, db = t * r.intercept_stderr, t * r.stderr
    return LinearFit(
        a=r.intercept,
        b=r.slope,
        a_ci=(r.intercept - da, r.intercept + da),
        b_ci=(r.slope - db, r.slope + db),
        r2=r.rvalue**2,
        n=len(x),
        confidence=confidence,
        span=(min(x), max(x)),
    )


def _whole(n: float) -> int:
    return max(0, math.ceil(n - 1e-9))


def passes_for(fit: LinearFit, target: float, added: bool = True) -> Plan:
    """The passes N that make the fitted delay reach `target`: added delay b·N = target
    (`added`), or total delay a + b·N = target."""
    if not target > 0:
        raise PlanError(f"target delay {target} must be positive")
    if fit.b <= 0:
        raise PlanError(
            f"the fitted delay does not grow with the passes (slope {fit.b:.4g}); "
            "recirculation cannot reach a target with these measurements"
        )
    (a_lo, a_hi), (b_lo, b_hi) = fit.a_ci, fit.b_ci
    if added:
        estimate = target / fit.b
        low, high = target / b_hi, (target / b_lo if b_lo > 0 else None)
    else:
        estimate = (target - fit.a) / fit.b
        low = (target - a_hi) / b_hi
        high = (target - a_lo) / b_lo if b_lo > 0 else None
    return Plan(
        target=target,
        added=added,
        passes=_whole(estimate),
        estimate=estimate,
        interval=(_whole(low), None if high is None else _whole(high)),
        fit=fit,
        measured=fit.span,
    )


def check_reachable(plan: Plan, maximum: int, extrapolate: bool = False) -> None:
    """PlanError saying why, when the plan's N cannot be run or was not measured around:
    more passes than the program allows (`maximum`), or (unless `extrapolate`) beyond the
    N measured, where the answer would be a guess from the fit's line."""
    if plan.passes > maximum:
        raise PlanError(
            f"unreachable: {plan.target:g} ms needs N = {plan.passes} passes, more than "
            f"recirc_passes allows ({maximum}, our switch's pass limit, --max-passes)"
        )
    if not extrapolate and not plan.bracketed:
        lo, hi = plan.measured
        raise PlanError(
            f"not measured: {plan.target:g} ms needs N = {plan.estimate:.0f}, outside the N "
            f"measured ({lo:g} .. {hi:g}), so the answer would be an extrapolation; run "
            f"`sdnperf recirc study --target-delay {plan.target:g}ms` (its N reach past "
            "the target), or pass --extrapolate"
        )


def cost_per_pass(passes, delays) -> float:
    """The delay one pass adds (slope of the least-squares line) from a pilot's points;
    PlanError when it does not grow with N (nothing to bracket)."""
    x, y = [float(v) for v in passes], [float(v) for v in delays]
    if len(set(x)) < 2:
        raise PlanError(f"a pilot needs at least 2 different pass counts (got {sorted(set(x))})")
    slope = float(stats.linregress(x, y).slope)
    if not slope > 0:
        raise PlanError(
            f"the pilot's delay does not grow with the passes (slope {slope:.4g} per pass)"
        )
    return slope


# the pilot's largest N (per switch and topology) unless `recirc study --pilot-max-passes`:
# 2^20 passes hold a packet for about 0.6 s on our switch, 15 s on BMv2
PILOT_MAX_PASSES = 2**20


def pilot_next_passes(
    tried: list[tuple[int, float]], largest_target: float, maximum: int = PILOT_MAX_PASSES
) -> int | None:
    """The pilot's next N for one curve (switch and topology) from its rounds so far,
    `tried` = [(N, added delay)] in the order run: None once the last round's added delay
    passed `largest_target` (the curve then has a measured N past every target). Else the
    larger of twice the last N and the N the last round's cost per pass says the target
    needs (delay / N), capped at `maximum`; PlanError when the last N already was the
    maximum: the pilot cannot under-shoot, it refuses instead, naming the bound."""
    if not tried:
        raise PlanError("the pilot has no round to go on from")
    if not largest_target > 0:
        raise PlanError(f"target delay {largest_target} must be positive")
    if maximum < 1:
        raise PlanError(f"the pilot's maximum N must be at least 1 (got {maximum})")
    last_n, last_delay = tried[-1]
    if last_n > 0 and last_delay > largest_target:
        return None
    if last_n >= maximum:
        raise PlanError(
            f"refused: the pilot reached its maximum of N = {maximum} passes (added delay "
            f"{last_delay:.4g} ms) without passing the largest target, {largest_target:g} ms; "
            "a larger --pilot-max-passes, or a smaller target"
        )
    doubled = 2 * max(1, last_n)
    needed = math.ceil(last_n * largest_target / last_delay) if last_delay > 0 and last_n > 0 else 0
    return min(maximum, max(doubled, needed))


def bracket_passes(
    costs: dict[str, float],
    targets: list[float],
    below: float = 4.0,
    above: float = 4.0,
    ratio: float = 2.0,
    maximum: int = 2**24 - 1,
    length: int = 0,
    reach: int = 0,
) -> list[int]:
    """N values, 0 then geometric (each `ratio` × the one before), from `below` times under
    the smallest target's N to `above` times over the largest's, over every curve's cost
    per pass (`costs`, delay per pass by curve, e.g. per topology): each target's N then
    lies inside the measured range on every curve. The margins are wide because a pilot of
    a few dozen pings on a loaded 2-core machine was seen to misjudge the cost per pass by
    2-3x either way. `length`: at least this many values
    (the geometric series goes on upward), so two switches' lists can be zipped. `reach`:
    the series goes on until it reaches this N too (the pilot's N measured past the
    largest target, pilot_next_passes), so the top N is past it whatever the cost says."""
    if not targets or not all(t > 0 for t in targets):
        raise PlanError(f"target delays must be positive (got {targets})")
    if not costs or not all(c > 0 for c in costs.values()):
        raise PlanError(f"costs per pass must be positive (got {costs})")
    if not ratio > 1 or not below >= 1 or not above >= 1:
        raise PlanError("ratio must exceed 1; below and above must be at least 1")
    low = min(targets) / max(costs.values()) / below
    high = max(max(targets) / min(costs.values()) * above, reach)
    values = [0]
    n = max(1.0, low)
    while (values[-1] < high or len(values) < length) and len(values) < 64:
        whole = max(values[-1] + 1, round(n))
        if whole > maximum:
            raise PlanError(
                f"the targets need N up to {high:.0f} passes, more than the {maximum} "
                "a packet may make"
            )
        values.append(whole)
        n *= ratio
    return values


def achieved(
    sample,
    baseline,
    statistic: str = "mean",
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 1,
) -> tuple[float, tuple[float, float]]:
    """The delay recirculation added: statistic(sample) - statistic(baseline) (statistic:
    mean, median, min or p99; baseline empty: statistic(sample), a total), with a percentile
    bootstrap CI (both samples resampled apart, a fixed seed: the same data gives the
    same interval). A minimum's bootstrap CI is only as wide as the few lowest values
    allow: read it as the spread of the run's lowest delays."""
    import numpy as np

    fns: dict[str, Callable[..., Any]] = {
        "mean": np.mean,
        "median": np.median,
        "min": np.min,
        "p99": lambda a, axis=None: np.percentile(a, 99, axis=axis),
    }
    if statistic not in fns:
        raise PlanError(f"statistic {statistic!r}: one of {', '.join(fns)}")
    x = np.asarray(list(sample), dtype=float)
    b = np.asarray(list(baseline), dtype=float)
    if x.size < 2 or (0 < b.size < 2):
        raise PlanError("an achieved delay needs at least 2 delays at N and at N = 0")
    if not 0 < confidence < 1:
        raise PlanError(f"confidence {confidence} must be between 0 and 1")
    fn = fns[statistic]
    rng = np.random.default_rng(seed)
    boot = fn(x[rng.integers(0, x.size, (reps, x.size))], axis=1)
    point = float(fn(x))
    if b.size:
        boot = boot - fn(b[rng.integers(0, b.size, (reps, b.size))], axis=1)
        point -= float(fn(b))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return point, (float(lo), float(hi))


_UNITS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}


def parse_delay_ms(text: str) -> float:
    """'5ms', '250us', '0.5s' or a bare number of ms -> milliseconds."""
    t = str(text).strip().lower()
    for suffix in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(suffix):
            number, scale = t[: -len(suffix)], _UNITS[suffix]
            break
    else:
        number, scale = t, 1.0
    try:
        value = float(number) * scale
    except ValueError:
        raise PlanError(f"cannot read delay {text!r} (e.g. 5ms, 250us, 0.5s)") from None
    if not value > 0 or not math.isfinite(value):
        raise PlanError(f"delay {text!r} must be positive")
    return value


@dataclass(frozen=True)
class Interpolation:
    """N for a target read between the two measured N whose delays enclose it."""

    target: float
    passes: int  # whole N (rounded up) at which the interpolated delay reaches the target
    estimate: float
    interval: tuple[int, int]  # bootstrap percentile interval of N
    between: tuple[int, int]  # the two measured N
    delays: tuple[float, float]  # their delays (added, or total)
    confidence: float

    def sentence(self, unit: str = "ms") -> str:
        (n0, n1), (d0, d1) = self.between, self.delays
        return (
            f"{self.target:g} {unit} lies between N = {n0} ({d0:.4g} {unit}) and N = {n1} "
            f"({d1:.4g} {unit}): N = {self.passes} (interpolated {self.estimate:.1f}; "
            f"{self.confidence:.0%} bootstrap CI {self.interval[0]} .. {self.interval[1]})"
        )


def _crossing(ns, delay, target):
    """(i, estimate) of the first pair of consecutive N whose delays enclose the target."""
    for i in range(len(ns) - 1):
        d0, d1 = delay[i], delay[i + 1]
        if d0 <= target <= d1 and d1 > d0:
            return i, ns[i] + (target - d0) / (d1 - d0) * (ns[i + 1] - ns[i])
    return None


def interpolate_passes(
    samples: dict[int, list[float]],
    target: float,
    added: bool = True,
    statistic: str = "median",
    confidence: float = 0.95,
    reps: int = 1000,
    seed: int = 1,
) -> Interpolation:
    """The N whose delay reaches `target`, read between measured N: per N the statistic
    (median or mean) of its delays (e.g. every steady ping RTT of its runs; added: minus
    N = 0's), the first two consecutive N whose values enclose the target, a straight line
    between them. Only measured delays are used, so a curve that bends (a loaded machine
    preempts a switch that loops for milliseconds) is followed, where one line over every N
    is not. CI: the percentile bootstrap of the same reading over resampled delays.
    PlanError when the target lies beyond the delays measured."""
    import numpy as np

    fns: dict[str, Callable[..., Any]] = {"median": np.median, "mean": np.mean}
    fn = fns.get(statistic)
    if fn is None:
        raise PlanError(f"statistic {statistic!r}: median or mean")
    if not target > 0:
        raise PlanError(f"target delay {target} must be positive")
    arrays = {n: np.asarray(v, dtype=float) for n, v in samples.items() if len(v) >= 2}
    if added and 0 not in arrays:
        raise PlanError("an added delay needs the delays at N = 0")
    ns = sorted(arrays)
    if len(ns) < 2:
        raise PlanError(f"an interpolation needs delays at 2 N at least (got {ns})")

    def values(pick):
        base = pick(0) if added else 0.0
        return [pick(n) - base for n in ns]

    delay = values(lambda n: float(fn(arrays[n])))
    found = _crossing(ns, delay, target)
    if found is None:
        top = max(delay)
        raise PlanError(
            f"not measured: {target:g} ms lies outside the delays measured (up to "
            f"{top:.4g} ms at N = {ns[delay.index(top)]}); the answer would be an "
            f"extrapolation; run `sdnperf recirc study --target-delay {target:g}ms` "
            "(its N reach past the target)"
        )
    i, estimate = found
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(reps):
        drawn = {n: float(fn(a[rng.integers(0, a.size, a.size)])) for n, a in arrays.items()}
        again = _crossing(ns, values(lambda n, d=drawn: d[n]), target)
        boot.append(again[1] if again else (ns[i] if target < delay[i] else ns[i + 1]))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return Interpolation(
        target=target,
        passes=_whole(estimate),
        estimate=float(estimate),
        interval=(_whole(float(lo)), _whole(float(hi))),
        between=(ns[i], ns[i + 1]),
        delays=(delay[i], delay[i + 1]),
        confidence=confidence,
    )


# -- the closed loop of `recirc plan --verify`: correct N from the delays it achieved --


def next_passes(
    tried: list[tuple[int, float]],
    target: float,
    maximum: int = 2**24 - 1,
    step: float = 4.0,
    origin: float = 0.0,
) -> int:
    """The next N to run from the (N, delay) pairs measured so far (in the order run), for
    a delay of `target`. N = 0 adds nothing, so (0, `origin`) is a point too (`origin`: 0
    for an added delay, the RTT at N = 0 for a total one).

    Between the largest N that held shorter than the target and the smallest larger N that
    held longer, the straight line (a secant step, regula falsi: the answer stays between
    them); with no N yet past the target, the secant of the two largest N (through (0, 0)
    at first), or N × target / delay when that line does not rise. The step is bounded to
    `step` × (or 1 / `step` ×) the N it starts from, and N to 1 .. `maximum`; an N already
    run is nudged by one, so each round measures something new. Why a loop at all: the
    delay of a pass changes with the machine's load and with N itself (a switch looping for
    milliseconds gets preempted), so an N read from one study misses in another moment."""
    if not target > 0:
        raise PlanError(f"target delay {target} must be positive")
    points = [(0, float(origin))] + [
        (int(n), float(d)) for n, d in tried if n > 0 and math.isfinite(float(d))
    ]
    if len(points) < 2:
        raise PlanError("the closed loop needs one measured (N, delay) with N > 0")
    below = [p for p in points if p[1] < target]
    lo = max(below) if below else (0, float(origin))
    above = sorted(p for p in points if p[1] >= target and p[0] > lo[0])
    if above:
        hi = above[0]
        # inside the bracket by construction: no bound on the step needed
        estimate = lo[0] + (target - lo[1]) / (hi[1] - lo[1]) * (hi[0] - lo[0])
    else:
        (n0, d0), (n1, d1) = sorted(points)[-2:]
        start = n1
        if d1 > d0 and n1 > n0:
            estimate = n1 + (target - d1) * (n1 - n0) / (d1 - d0)
        elif d1 > origin:
            estimate = n1 * (target - origin) / (d1 - origin)
        else:
            estimate = n1 * step
        estimate = min(max(estimate, start / step), start * step)
    n = min(max(1, round(estimate)), maximum)
    done = {p[0] for p in points}
    while n in done and n < maximum:
        n += 1
    return n


# a rise between the bracketing N this many times what their cost per pass predicts is a
# step, not the slope of the curve
STEP_RATIO = 3.0

# A ping "ran slow" when its added delay exceeds its N's fast level (the 10th percentile of
# the added delays of that N's pings) by this factor. Measured (bench/recirc/README.md, "The
# step"): on this 2-core KVM guest, quiet, the passes of the same N ran 1.6-1.75x slower in
# periods of 0.3-2 s (runs of consecutive pings), both topologies, so one N's pings have
# two delays, and a round's median is the one most of its pings met.
SLOW_FACTOR = 1.3
# two N's fast levels per pass within this factor of each other lie on one line
LINE_FACTOR = 1.15


@dataclass(frozen=True)
class Speeds:
    """The added delays of one N's pings, in the order sent, split into fast and slow
    (SLOW_FACTOR times the fast level): how many ran slow, how much slower, and whether
    the slow ones came in periods (runs of consecutive pings) or one by one."""

    fast_ms: float  # the fast level: 10th percentile of the added delays
    slow_share: float  # fraction of the pings above SLOW_FACTOR x fast_ms
    slow_over_fast: float | None  # median of the slow pings over the median of the fast
    mean_run: float  # mean number of consecutive slow pings (0: none ran slow)
    pings: int

    def as_dict(self) -> dict:
        return {
            "fast_ms": self.fast_ms,
            "slow_share_pct": 100.0 * self.slow_share,
            "slow_over_fast": self.slow_over_fast,
            "mean_slow_run": self.mean_run,
            "pings": self.pings,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Speeds:
        """The inverse of as_dict (a closed loop's stored round)."""
        return cls(
            fast_ms=d["fast_ms"],
            slow_share=d["slow_share_pct"] / 100.0,
            slow_over_fast=d["slow_over_fast"],
            mean_run=d["mean_slow_run"],
            pings=d["pings"],
        )


def speeds_of(added, factor: float = SLOW_FACTOR) -> Speeds:
    """Speeds of one N's added delays (ms, in the order the pings were sent)."""
    import numpy as np

    x = [float(v) for v in added if math.isfinite(float(v))]
    if len(x) < 2:
        raise PlanError("speeds need at least 2 delays")
    fast = float(np.percentile(x, 10))
    if not fast > 0:
        # nothing held (N = 0, or delays within the baseline's noise): no speed to tell
        return Speeds(fast, 0.0, None, 0.0, len(x))
    slow = [v > factor * fast for v in x]
    runs, length = [], 0
    for s in slow + [False]:
        if s:
            length += 1
        elif length:
            runs.append(length)
            length = 0
    ratio = None
    if any(slow) and not all(slow):
        ratio = float(np.median([v for v, s in zip(x, slow) if s])) / float(
            np.median([v for v, s in zip(x, slow) if not s])
        )
    return Speeds(
        fast_ms=fast,
        slow_share=sum(slow) / len(x),
        slow_over_fast=ratio,
        mean_run=float(np.mean(runs)) if runs else 0.0,
        pings=len(x),
    )


@dataclass(frozen=True)
class Step:
    """The target lies on a step of the delay-vs-N curve: the largest N run that held
    shorter than the target and the next larger N run, which held longer, both miss it by
    more than the tolerance, and the delay rises between them far more than their cost per
    pass predicts. An N between them lands on one side of the step or the other."""

    target: float
    between: tuple[int, int]  # the bracketing N
    delays: tuple[float, float]  # what they achieved (added, or total)
    expected_rise: float  # the rise their cost per pass predicts over (hi - lo) passes
    tolerance_pct: float
    speeds: tuple[Speeds | None, Speeds | None] = (None, None)  # of the two rounds

    @property
    def in_time(self) -> bool:
        """No step in N: the fast pings of both N lie on one line through the origin (their
        fast levels per pass within LINE_FACTOR), and more of the upper N's pings ran slow
        than of the lower's. The medians then differ by the share of pings that met a slow
        machine in each round (rounds minutes apart), not by the passes between them."""
        lo, hi = self.speeds
        if lo is None or hi is None or not lo.fast_ms > 0 or not hi.fast_ms > 0:
            return False
        a, b = lo.fast_ms / self.between[0], hi.fast_ms / self.between[1]
        return max(a, b) / min(a, b) <= LINE_FACTOR and hi.slow_share > lo.slow_share

    @property
    def adjacent(self) -> bool:
        """No whole N lies between the two: no N can land within the tolerance."""
        return self.between[1] - self.between[0] <= 1

    def errors_pct(self) -> tuple[float, float]:
        d0, d1 = self.delays
        return (100.0 * (d0 - self.target) / self.target, 100.0 * (d1 - self.target) / self.target)

    def sentence(self, unit: str = "ms") -> str:
        (n0, n1), (d0, d1) = self.between, self.delays
        e0, e1 = self.errors_pct()
        rise = d1 - d0
        verdict = (
            f"no N lands within {self.tolerance_pct:g} %"
            if self.adjacent
            else f"an N between them is likely to land on one side of it, not within "
            f"{self.tolerance_pct:g} %"
        )
        if self.in_time:
            lo, hi = self.speeds
            assert lo is not None and hi is not None
            slower = [s.slow_over_fast for s in (lo, hi) if s.slow_over_fast]
            factor = f"{min(slower):.2g}-{max(slower):.2g}x" if slower else "more"
            return (
                f"the target ({self.target:g} {unit}) lies between N = {n0}, which held "
                f"{d0:.4g} {unit} ({e0:+.0f} %), and N = {n1}, {d1:.4g} {unit} ({e1:+.0f} %), "
                f"a rise of {rise:.4g} {unit} over {n1 - n0} passes where their cost per pass "
                f"predicts {self.expected_rise:.3g} {unit}. That is no step in N: the fast "
                f"pings of both lie on one line ({lo.fast_ms:.4g} and {hi.fast_ms:.4g} {unit}, "
                f"{1000 * lo.fast_ms / n0:.3g} and {1000 * hi.fast_ms / n1:.3g} µs a pass); "
                f"{100 * lo.slow_share:.0f} % and {100 * hi.slow_share:.0f} % of their pings "
                f"ran {factor} slower (runs of {lo.mean_run:.0f} and {hi.mean_run:.0f} "
                "consecutive pings: periods when the machine ran the passes slower), and each "
                "median is the speed most of its pings met. The delay of N passes changes "
                "with the machine's speed over time; no N holds the target within "
                f"{self.tolerance_pct:g} % at both speeds"
            )
        return (
            f"the target ({self.target:g} {unit}) lies on a step of the delay: N = {n0} held "
            f"{d0:.4g} {unit} ({e0:+.0f} %), N = {n1} held {d1:.4g} {unit} ({e1:+.0f} %), a "
            f"rise of {rise:.4g} {unit} over {n1 - n0} passes where their cost per pass "
            f"predicts {self.expected_rise:.3g} {unit}; {verdict}"
        )


def step_between(
    tried: list[tuple[int, float]],
    target: float,
    tolerance_pct: float,
    origin: float = 0.0,
    ratio: float = STEP_RATIO,
    speeds: dict[int, Speeds] | None = None,
) -> Step | None:
    """The step the target lies on, from the closed loop's (N, delay) pairs, or None.

    The bracketing pair is the largest N that held shorter than the target and the
    smallest larger N that held at least as long (as next_passes takes them). It is a step
    when both miss the target by more than `tolerance_pct` (so the delay rises between
    them by more than the tolerance band's width) and by more than `ratio` times what
    their own cost per pass ((delay - origin) / N, the mean of the two) predicts over the
    passes between them: a smooth curve would have put an N in between within the
    tolerance; a step puts every N on one side of it. Then a further secant step only
    wanders inside the bracket (seen: 6357 passes -24 %, 6748 passes +47 %). `speeds`
    (N -> Speeds of that N's round) lets the Step tell a step in N from a change of the
    machine's speed between rounds (Step.in_time)."""
    if not target > 0 or not tolerance_pct > 0:
        raise PlanError("target and tolerance must be positive")
    points = sorted((int(n), float(d)) for n, d in tried if n > 0 and math.isfinite(float(d)))
    below = [p for p in points if p[1] < target]
    if not below:
        return None
    lo = max(below)
    above = [p for p in points if p[1] >= target and p[0] > lo[0]]
    if not above:
        return None
    hi = min(above)
    band = tolerance_pct / 100.0 * target
    if target - lo[1] <= band or hi[1] - target <= band:
        return None  # one of them is within the tolerance: no step to report
    per_pass = ((lo[1] - origin) / lo[0] + (hi[1] - origin) / hi[0]) / 2
    expected = max(0.0, per_pass) * (hi[0] - lo[0])
    rise = hi[1] - lo[1]
    if rise <= ratio * expected:  # (it exceeds the band's width: both miss it)
        return None
    return Step(
        target=target,
        between=(lo[0], hi[0]),
        delays=(lo[1], hi[1]),
        expected_rise=expected,
        tolerance_pct=tolerance_pct,
        speeds=((speeds or {}).get(lo[0]), (speeds or {}).get(hi[0])),
    )
