"""Statistics against values worked out by hand (and matching scipy's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from sdnperf.report import stats

A = [1, 2, 3, 4, 5]
B = [3, 4, 5, 6, 7, 8]


def test_mean_ci_student_t():
    ci = stats.mean_ci(A)
    # s = sqrt(2.5), t(0.975, df=4) = 2.776445
    assert ci.n == 5 and ci.mean == 3.0
    assert ci.std == pytest.approx(math.sqrt(2.5))
    assert ci.half_width == pytest.approx(2.776445 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert ci.low == pytest.approx(3 - 1.9632432) and ci.high == pytest.approx(3 + 1.9632432)


def test_mean_ci_single_value_has_no_ci_and_says_so():
    ci = stats.mean_ci([4.2])
    assert ci.mean == 4.2 and ci.half_width is None and ci.low is None
    assert "n=1" in ci.note


def test_mean_ci_drops_nan_and_handles_empty():
    assert stats.mean_ci([1.0, math.nan, 3.0]).n == 2
    empty = stats.mean_ci([])
    assert empty.n == 0 and math.isnan(empty.mean) and empty.note == "no data"


def test_welch_matches_the_formula():
    # means 3 and 5.5, variances 2.5 and 3.5: t = -2.5 / sqrt(2.5/5 + 3.5/6)
    se2 = 2.5 / 5 + 3.5 / 6
    t = -2.5 / math.sqrt(se2)
    df = se2**2 / ((2.5 / 5) ** 2 / 4 + (3.5 / 6) ** 2 / 5)
    expected = 2 * sps.t.sf(abs(t), df)
    res = stats.welch_p(A, B)
    assert res.test == "welch"
    assert res.p == pytest.approx(expected, rel=1e-9)
    assert res.p == pytest.approx(0.0398031, rel=1e-5)


def test_welch_needs_two_values_and_some_spread():
    assert stats.welch_p([1.0], [2.0, 3.0]).p is None
    assert stats.welch_p([1.0, 1.0], [1.0, 1.0]).p is None


def test_mann_whitney_reference_values():
    assert stats.mann_whitney_p(A, B).p == pytest.approx(0.066015431521231, rel=1e-9)
    # 3 vs 3 completely separated: the exact two-sided p is 2/C(6,3) = 0.1, never < 0.05
    assert stats.mann_whitney_p([1, 2, 3], [4, 5, 6]).p == pytest.approx(0.1)
    assert stats.mann_whitney_p([2, 2], [2, 2]).p is None


def test_compare_groups_rule():
    normal = [10.0, 10.1, 10.2, 10.3, 10.4]
    assert stats.compare_groups(normal, [11, 11.1, 11.2, 11.3, 11.4]).test == "welch"
    skewed = [1, 1, 1, 1, 1, 1, 50]
    assert stats.normality_doubtful(skewed)
    assert stats.compare_groups(skewed, normal).test == "mann-whitney"
    # too few values to doubt normality: Welch
    assert stats.compare_groups([1, 100], [2, 3]).test == "welch"


def test_significance_marks():
    assert [stats.significance_mark(p) for p in (0.0005, 0.005, 0.03, 0.2, None)] == [
        "***",
        "**",
        "*",
        "ns",
        "",
    ]


@pytest.mark.parametrize(
    "value, base, better, pct, verdict",
    [
        (110, 100, "lower", 10.0, "worse"),
        (90, 100, "lower", -10.0, "better"),
        (110, 100, "higher", 10.0, "better"),
        (90, 100, "higher", -10.0, "worse"),
        (100, 100, "higher", 0.0, "same"),
        (-5, -10, "higher", 50.0, "better"),  # relative to |baseline|
    ],
)
def test_pct_difference_direction(value, base, better, pct, verdict):
    d = stats.pct_difference(value, base, better)
    assert d.pct == pytest.approx(pct) and d.verdict == verdict


def test_pct_difference_words_and_unknown():
    assert stats.pct_difference(90, 100, "lower").words() == "-10.0 % (better)"
    from_zero = stats.pct_difference(5, 0, "lower")  # e.g. loss 0 % -> 5 %
    assert from_zero.pct is None and from_zero.words() == "worse (baseline 0)"
    assert stats.pct_difference(0, 0, "lower").words() == "±0 %"
    unknown = stats.pct_difference(math.nan, 1, "lower")
    assert unknown.pct is None and unknown.words() == ""


def test_ecdf():
    x, y = stats.ecdf([3, 1, 2, math.nan, 2])
    assert list(x) == [1, 2, 2, 3]
    assert list(y) == [0.25, 0.5, 0.75, 1.0]
    x, y = stats.ecdf([])
    assert len(x) == len(y) == 0


def test_linear_fit():
    fit = stats.linear_fit([0, 1, 2, 3], [1, 3, 5.5, 7])
    # Sxx = 5, Sxy = 10.25
    assert fit.b == pytest.approx(2.05) and fit.a == pytest.approx(1.05)
    r = 10.25 / math.sqrt(5 * np.sum((np.array([1, 3, 5.5, 7]) - 4.125) ** 2))
    assert fit.r2 == pytest.approx(r**2)
    assert fit.predict(10) == pytest.approx(21.55)
    assert fit.solve(21.55) == pytest.approx(10)


def test_linear_fit_edge_cases():
    flat = stats.linear_fit([1, 2, 3], [4, 4, 4])
    assert (flat.a, flat.b, flat.r2) == (4.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="two distinct x"):
        stats.linear_fit([1, 1], [2, 3])
    with pytest.raises(ValueError, match="x has 2 values, y has 3"):
        stats.linear_fit([1, 2], [1, 2, 3])


def test_linear_fit_recovers_known_a_b_and_r2_with_confidence_intervals():
    rng = np.random.default_rng(3)
    x = np.repeat(np.arange(1, 11, dtype=float), 5)
    noise = rng.normal(0, 0.5, x.size)
    y = 2.0 + 0.75 * x + noise
    fit = stats.linear_fit(x, y)
    half_a, half_b = fit.ci()
    # The CIs are t(n-2)·SE and cover the true values.
    assert fit.a - half_a < 2.0 < fit.a + half_a and fit.b - half_b < 0.75 < fit.b + half_b
    assert half_b == pytest.approx(stats.sps.t.ppf(0.975, 48) * fit.stderr_b)
    # R² = 1 − SS_res/SS_tot, computed here independently of scipy.
    resid = y - (fit.a + fit.b * x)
    assert fit.r2 == pytest.approx(1 - np.sum(resid**2) / np.sum((y - y.mean()) ** 2))
    # A noiseless line: exact a, b, R² = 1, zero-width intervals.
    exact = stats.linear_fit([1, 2, 3, 4], [5, 7, 9, 11])
    assert (exact.a, exact.b, exact.r2) == (pytest.approx(3), pytest.approx(2), pytest.approx(1))
    assert exact.ci() == (pytest.approx(0, abs=1e-9), pytest.approx(0, abs=1e-9))
    # Two points: a line, but no interval.
    assert stats.linear_fit([1, 2], [1, 3]).ci() == (None, None)


def test_log_fit_recovers_a_and_b():
    x = np.array([1, 10, 100, 1000, 10000], dtype=float)
    fit = stats.log_fit(x, 4.0 + 1.5 * np.log(x))
    assert (
        fit.a == pytest.approx(4.0) and fit.b == pytest.approx(1.5) and fit.r2 == pytest.approx(1)
    )
    assert fit.predict(100) == pytest.approx(4.0 + 1.5 * math.log(100))
    assert fit.solve(fit.predict(50)) == pytest.approx(50)
    with pytest.raises(ValueError, match="x > 0"):
        stats.log_fit([0, 1, 2], [1, 2, 3])


def test_holm_against_a_worked_example():
    # p = [0.01, 0.04, 0.03, 0.005], m = 4. Sorted: 0.005, 0.01, 0.03, 0.04.
    #   0.005 · 4 = 0.02
    #   0.01  · 3 = 0.03
    #   0.03  · 2 = 0.06
    #   0.04  · 1 = 0.04 -> raised to the running maximum 0.06 (adjusted p never decrease)
    # In the original order: [0.03, 0.06, 0.06, 0.02]. A missing p stays missing and does
    # not count in m.
    assert stats.holm([0.01, 0.04, None, 0.03, 0.005]) == pytest.approx(
        [0.03, 0.06, None, 0.06, 0.02]
    )
    assert stats.holm([0.6, 0.5]) == [1.0, 1.0]  # capped at 1
    assert stats.holm([]) == []
