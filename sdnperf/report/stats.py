"""Statistics over repetitions: means with confidence intervals, tests, differences, fits.

Every function takes plain sequences of floats and drops NaN/inf first (a workload may
record NaN for "no value"); results say so when there is too little data instead of
inventing a number.

Which significance test (one rule, used everywhere — `compare_groups`):
  * Welch's t-test (unequal variances) by default: with the 3–10 repetitions a study
    usually has, it is the test that can actually detect a difference.
  * Mann–Whitney U (two-sided) instead when both groups have n >= 3 and the Shapiro–Wilk
    test rejects normality (p < 0.05) for either group: then the t-test's assumption is
    doubtful and a rank test is the honest choice. Note that with n = 3 per group the
    smallest two-sided Mann–Whitney p-value is 0.1, so it cannot reach 0.05.
  * No test (p = None) when either group has n < 2, or both have no spread at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from sdnperf.samples import Better

CONFIDENCE = 0.95
ALPHA = 0.05  # significance level for the marks and the normality check
Values = Sequence[float] | np.ndarray  # what the tests take: a list, or finite()'s array


def finite(values: Values) -> np.ndarray:
    """The values as a float array without NaN/inf."""
    arr = np.asarray(list(values), dtype=float)
    return arr[np.isfinite(arr)]


@dataclass(frozen=True)
class MeanCI:
    n: int
    mean: float  # NaN when n == 0
    half_width: float | None  # of the CI; None when it cannot be computed (n < 2)
    std: float | None  # sample standard deviation (ddof=1); None when n < 2
    note: str = ""  # why there is no CI, in words

    @property
    def low(self) -> float | None:
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        return None if self.half_width is None else self.mean + self.half_width


def mean_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> MeanCI:
    """Mean with a Student-t confidence interval (mean ± t(n-1) · s/√n)."""
    x = finite(values)
    n = len(x)
    if n == 0:
        return MeanCI(0, math.nan, None, None, "no data")
    mean = float(x.mean())
    if n == 1:
        return MeanCI(1, mean, None, None, "n=1: no confidence interval")
    std = float(x.std(ddof=1))
    t = float(sps.t.ppf((1 + confidence) / 2, df=n - 1))
    return MeanCI(n, mean, t * std / math.sqrt(n), std)


@dataclass(frozen=True)
class TestResult:
    test: str  # "welch" | "mann-whitney" | "" when no test ran
    p: float | None
    note: str = ""


def welch_p(a: Values, b: Values) -> TestResult:
    """Two-sided Welch's t-test (no equal-variance assumption)."""
    x, y = finite(a), finite(b)
    if len(x) < 2 or len(y) < 2:
        return TestResult("", None, "needs n>=2 in both groups")
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return TestResult("", None, "no spread in either group")
    p = float(sps.ttest_ind(x, y, equal_var=False).pvalue)
    return TestResult("welch", p)


def mann_whitney_p(a: Values, b: Values) -> TestResult:
    """Two-sided Mann–Whitney U test (exact for small samples without ties)."""
    x, y = finite(a), finite(b)
    if len(x) < 1 or len(y) < 1:
        return TestResult("", None, "needs data in both groups")
    if np.ptp(np.concatenate([x, y])) == 0:
        return TestResult("", None, "all values equal")
    p = float(sps.mannwhitneyu(x, y, alternative="two-sided").pvalue)
    return TestResult("mann-whitney", p)


def normality_doubtful(values: Values) -> bool:
    """Shapiro–Wilk rejects normality at ALPHA (needs n >= 3; constant data is not doubtful)."""
    x = finite(values)
    if len(x) < 3 or np.ptp(x) == 0:
        return False
    return float(sps.shapiro(x).pvalue) < ALPHA


def compare_groups(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """The study's one significance rule (see the module docstring)."""
    x, y = finite(a), finite(b)
    if len(x) >= 3 and len(y) >= 3 and (normality_doubtful(x) or normality_doubtful(y)):
        return mann_whitney_p(x, y)
    return welch_p(x, y)


def significance_mark(p: float | None) -> str:
    """*** p<0.001, ** p<0.01, * p<0.05, "ns" otherwise, "" when there was no test."""
    if p is None or math.isnan(p):
        return ""
    if p < 0.001:
        return "***"
    if p < 0.01:
        return "**"
    if p < ALPHA:
        return "*"
    return "ns"


@dataclass(frozen=True)
class Difference:
    pct: float | None  # (value - baseline) / |baseline| · 100; None if baseline is 0/NaN
    verdict: str  # "better" | "worse" | "same" | "" (unknown: a mean is missing)

    def words(self) -> str:
        """E.g. "+12.3 % (worse)", "±0 %", "worse (baseline 0)"; "" when unknown."""
        if self.verdict == "same":
            return "±0 %"
        if self.pct is None:
            return f"{self.verdict} (baseline 0)" if self.verdict else ""
        return f"{self.pct:+.1f} % ({self.verdict})"


def pct_difference(value: float, baseline: float, better: Better) -> Difference:
    """How much `value` differs from `baseline`, and whether that is better or worse.

    For a lower-is-better metric (RTT) a negative difference is better; for a
    higher-is-better one (throughput) a positive difference is.
    """
    if not (math.isfinite(value) and math.isfinite(baseline)):
        return Difference(None, "")
    if value == baseline:
        return Difference(0.0, "same")
    improved = value < baseline if better == "lower" else value > baseline
    verdict = "better" if improved else "worse"
    if baseline == 0:  # no percentage of zero, but the direction is still known
        return Difference(None, verdict)
    return Difference((value - baseline) / abs(baseline) * 100.0, verdict)


def difference_ci(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Confidence interval of mean(a) - mean(b) (Welch: unequal variances, the
    Welch–Satterthwaite degrees of freedom); None when either group has n < 2."""
    x, y = finite(a), finite(b)
    if len(x) < 2 or len(y) < 2:
        return None
    va, vb = float(x.var(ddof=1)) / len(x), float(y.var(ddof=1)) / len(y)
    d = float(x.mean() - y.mean())
    se2 = va + vb
    if se2 == 0:
        return (d, d)
    df = se2**2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = float(sps.t.ppf((1 + confidence) / 2, df=df)) * math.sqrt(se2)
    return (d - half, d + half)


def repetitions_needed(
    a: Sequence[float], b: Sequence[float], power: float = 0.8, alpha: float = ALPHA
) -> int | None:
    """Repetitions per group a two-sided test at `alpha` needs to detect the difference
    these groups show, with probability `power` (normal approximation:
    n = (z(1-alpha/2) + z(power))^2 (s_a^2 + s_b^2) / d^2, at least 2). None when a group
    has n < 2 or the means are equal (no difference to detect)."""
    x, y = finite(a), finite(b)
    if len(x) < 2 or len(y) < 2:
        return None
    d = float(x.mean() - y.mean())
    if d == 0:
        return None
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))
    spread = float(x.var(ddof=1) + y.var(ddof=1))
    return max(2, math.ceil(z * z * spread / (d * d)))


def ecdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values x and F(x) = (rank)/n, from 1/n to 1."""
    x = np.sort(finite(values))
    n = len(x)
    return x, (np.arange(1, n + 1, dtype=float) / n)


@dataclass(frozen=True)
class LinearFit:
    a: float  # intercept
    b: float  # slope
    r2: float
    n: int
    stderr_b: float
    stderr_a: float = math.nan
    transform: str = "linear"  # "log": the fit is y = a + b·ln(x)

    def predict(self, x: float) -> float:
        return self.a + self.b * (math.log(x) if self.transform == "log" else x)

    def solve(self, y: float) -> float:
        """The x at which the fit reaches y (e.g. passes needed for a target delay)."""
        if self.b == 0:
            return math.nan
        u = (y - self.a) / self.b
        return math.exp(u) if self.transform == "log" else u

    def ci(self, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
        """Half-widths of the confidence intervals of a and b: t(n−2) · standard error;
        None when n ≤ 2 (a line through two points has no error estimate)."""
        if self.n <= 2 or not math.isfinite(self.stderr_b):
            return None, None
        t = float(sps.t.ppf((1 + confidence) / 2, df=self.n - 2))
        return t * self.stderr_a, t * self.stderr_b

    def formula(self) -> str:
        x = "ln(x)" if self.transform == "log" else "x"
        return f"y = a + b·{x}"


def linear_fit(x: Sequence[float], y: Sequence[float]) -> LinearFit:
    """Least-squares fit y = a + b·x with r² and the standard errors of a and b
    (scipy.stats.linregress)."""
    xs = np.asarray(list(x), dtype=float)
    ys = np.asarray(list(y), dtype=float)
    if xs.shape != ys.shape:
        raise ValueError(f"linear_fit: x has {len(xs)} values, y has {len(ys)}")
    keep = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    if len(xs) < 2 or np.ptp(xs) == 0:
        raise ValueError("linear_fit needs at least two distinct x values")
    if np.ptp(ys) == 0:  # a flat line fits exactly; linregress would give r = NaN
        return LinearFit(float(ys[0]), 0.0, 1.0, len(xs), 0.0, 0.0)
    res = sps.linregress(xs, ys)
    more = len(xs) > 2
    return LinearFit(
        float(res.intercept),
        float(res.slope),
        float(res.rvalue**2),
        len(xs),
        float(res.stderr) if more else math.nan,
        float(res.intercept_stderr) if more else math.nan,
    )


def log_fit(x: Sequence[float], y: Sequence[float]) -> LinearFit:
    """Least-squares fit y = a + b·ln(x) (x > 0): a linear fit against ln(x)."""
    xs = np.asarray(list(x), dtype=float)
    if np.any(xs[np.isfinite(xs)] <= 0):
        raise ValueError("log fit needs x > 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = linear_fit(np.log(xs), y)
    return LinearFit(fit.a, fit.b, fit.r2, fit.n, fit.stderr_b, fit.stderr_a, "log")


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values (None stays None and is not counted).

    Sorted ascending p(1) ≤ … ≤ p(m): adj(i) = max over j ≤ i of min(1, (m − j + 1)·p(j)),
    which keeps the family-wise error rate at α over the m comparisons."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None and math.isfinite(p)]
    present.sort()
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
