"""How many recirculation passes for a target delay: the linear fit delay = a + b·N of
measured (N, delay) points and its inverse, with the uncertainty the fit carries.

    fit = fit_linear([0, 0, 1, 1, 3, 3], [0.98, 1.01, 1.66, 1.70, 2.97, 3.05])
    plan = passes_for(fit, target=5.0, added=True)   # hold packets back by 5 (same unit)

Pure numbers: no store, no files (the command that reads a study is recirc_cli.py).

The interval of N comes from the confidence intervals of a and b (t quantiles with n-2
degrees of freedom): the extreme N over every (a, b) in the box of the two intervals. That
ignores the correlation of a and b, so it is conservative (wider than a joint region).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
    )


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
